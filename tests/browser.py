"""Headless Chromium for the browser tests (Debian's ``chromium`` and ``chromium-driver``, driven
by Selenium): the arena's results page and the documentation site."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def browser(width: int = 1280, height: int = 1000) -> Any:
    """A headless Chromium of ``width`` x ``height`` that keeps the console log; the test skips
    without Chromium, unless ALEM_REQUIRE_BROWSER=1 (.ci/run sets it and installs Chromium),
    where a missing browser fails."""
    if not (CHROMIUM and DRIVER):
        if os.environ.get("ALEM_REQUIRE_BROWSER") == "1":
            pytest.fail(
                "ALEM_REQUIRE_BROWSER=1 but chromium/chromedriver are not installed (apt-get install chromium chromium-driver)"
            )
        pytest.skip("needs Debian's chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(a)
    opts.binary_location = CHROMIUM
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def console_problems(driver: Any) -> list[dict[str, Any]]:
    """The console's errors and warnings since the last call."""
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
