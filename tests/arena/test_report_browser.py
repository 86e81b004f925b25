"""The results page in a real browser (Debian's Chromium, headless, driven by Selenium): a
tournament run with report=html, the page loads without console errors, its table sorts, and
an LLM game expands. The screenshot is kept as a test artefact (pytest's tmp dir, named in the
output). Skipped without Chromium unless ALEM_REQUIRE_BROWSER=1 (.ci/run sets it and installs
Chromium), where a missing browser fails."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_module

from alem.arena.command import run
from tests.browser import browser, console_problems

pytestmark = pytest.mark.integration


def test_the_report_page_loads_sorts_and_expands_in_chromium(tmp_path):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(
            config_name="evaluate",
            overrides=[
                "env.id=kuhn_poker-v0",
                "mode=round_robin",
                "players=[llm:first,cfr,random]",
                "llm=scripted",
                "episodes=6",
                "report=html",
            ],  # fmt: skip
        )
    run(cfg, tmp_path / "run")
    page = tmp_path / "run" / "report.html"  # report=html wrote it beside the results
    from selenium.webdriver.common.by import By

    d = browser()
    try:
        d.get(page.as_uri())
        names = lambda: [
            r.find_elements(By.TAG_NAME, "td")[0].text
            for r in d.find_elements(By.CSS_SELECTOR, "table.sortable tbody tr")
        ]
        heads = d.find_elements(By.CSS_SELECTOR, "table.sortable th")
        assert names()[0] == "cfr"  # the ranking's order
        col = [h.text for h in heads].index("exploitability")
        heads[col].click()  # descending first: the most exploitable on top
        values = [
            float(r.find_elements(By.TAG_NAME, "td")[col].text)
            for r in d.find_elements(By.CSS_SELECTOR, "table.sortable tbody tr")
        ]
        assert values == sorted(values, reverse=True) and names()[0] == "llm:first"
        heads[col].click()
        assert names()[0] == "cfr"
        details = d.find_elements(By.TAG_NAME, "details")
        assert details and not details[0].get_attribute("open")
        d.find_elements(By.TAG_NAME, "summary")[0].click()
        assert details[0].get_attribute("open") is not None and "Legal actions" in details[0].text
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        d.save_screenshot(str(tmp_path / "report.png"))
        print(f"screenshot: {tmp_path / 'report.png'}")
        assert console_problems(d) == []
    finally:
        d.quit()
