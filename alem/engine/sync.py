"""Running the text bridge's coroutines from synchronous code.

:func:`run_sync` runs a coroutine on this thread's persistent event loop (so HTTP clients stay
bound to one loop), or on one shared worker thread where a loop is already running (Jupyter,
an async app); :func:`gather_or_cancel` gathers coroutines and cancels the rest when one fails.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync", "gather_or_cancel"]

T = TypeVar("T")

_LOCAL = threading.local()


_WORKER: Any = None  # one thread for calls made inside a running loop (see run_sync)
_WORKER_LOCK = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this thread's persistent event loop (HTTP clients stay bound to one loop).

    Called where a loop is already running on this thread (a Jupyter notebook, an async
    app), it runs on one persistent worker thread and its loop instead, and blocks until done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        global _WORKER
        with _WORKER_LOCK:
            if _WORKER is None:
                from concurrent.futures import ThreadPoolExecutor

                _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="alem-run-sync")
        return _WORKER.submit(run_sync, coro).result()
    loop = getattr(_LOCAL, "loop", None)
    if loop is None or loop.is_closed():
        loop = _LOCAL.loop = asyncio.new_event_loop()
    return loop.run_until_complete(coro)


async def gather_or_cancel(*coros: Coroutine[Any, Any, T]) -> list[T]:
    """``asyncio.gather`` that cancels the other tasks when one fails (nothing left running after)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
