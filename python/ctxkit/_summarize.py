"""Calls a ``summarize`` callable for the engine (``python/src/summarize.rs``): a sync function
in a worker thread, a coroutine function on the caller's event loop (``aprepare``) or on a fresh
one, each bounded by the timeout. A timeout raises ``TimeoutError``; the engine then uses its
extractive summary. A hung sync function cannot be stopped: its daemon thread is left to end on
its own, and its answer is ignored."""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any, Callable, Dict, Optional


def call(fn: Callable[[Dict[str, Any]], Any], request: Dict[str, Any], timeout: float,
         loop: Optional[asyncio.AbstractEventLoop]) -> Any:
    if loop is not None and inspect.iscoroutinefunction(fn):
        future = asyncio.run_coroutine_threadsafe(fn(request), loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise
        except Exception as error:  # concurrent.futures.TimeoutError before 3.11
            if type(error).__name__ == "TimeoutError":
                future.cancel()
                raise TimeoutError(str(error)) from None
            raise
    box: Dict[str, Any] = {}

    def run() -> None:
        try:
            answer = fn(request)
            if inspect.isawaitable(answer):
                answer = asyncio.run(asyncio.wait_for(_awaited(answer), timeout))
            box["answer"] = answer
        except BaseException as error:  # handed to the caller's thread
            box["error"] = error

    worker = threading.Thread(target=run, name="ctxkit-summarize", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"summarize gave no answer within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box.get("answer")


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
