"""ctxkit: context engineering for LLM agents, a Rust kernel.

Before every model call, ctxkit decides what the model sees: the system prompt for this turn,
the log compacted when it no longer fits (with tool calls kept paired), big tool outputs
offloaded to files, and history tools to read the rest back. ``Engine`` keeps whole sessions in
SQLite (or PostgreSQL); the free functions read, repair, validate and render messages in seven
formats (``ctxkit``, ``openai``, ``anthropic``, ``responses``, ``gemini``, ``ai-sdk``,
``langchain``). Adapters: ``ctxkit.pydantic_ai``, ``ctxkit.langchain``, ``ctxkit.agents``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from . import _ctxkit
from ._ctxkit import (
    __version__,
    cost,
    estimate_tokens,
    fidelity,
    import_transcript,
    parse,
    render,
    repair,
    validate,
)
from ._errors import (
    BudgetTooSmallError,
    CtxkitError,
    InvalidInputError,
    SessionNotFoundError,
    StoreError,
)

if TYPE_CHECKING:
    from ._ctxkit import Format

FORMATS = ("ctxkit", "openai", "anthropic", "responses", "gemini", "ai-sdk", "langchain")


class Engine(_ctxkit.Engine):
    """Sessions over a store (see the stubs, ``_ctxkit.pyi``, for every method)."""

    async def aprepare(
        self,
        session: str,
        *,
        format: Format = "openai",
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
        cached: bool = False,
        context_prompt: Optional[bool] = None,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Any:
        """``prepare`` off the event loop: the turn runs in a worker thread (the GIL released),
        and an async ``summarize`` runs on this loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None,
            lambda: self.prepare(
                session, format=format, summarize=summarize, timeout=timeout,
                cached=cached, event_loop=loop, context_prompt=context_prompt,
                tools=tools,
            ),
        )

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "FORMATS",
    "BudgetTooSmallError",
    "CtxkitError",
    "Engine",
    "InvalidInputError",
    "SessionNotFoundError",
    "StoreError",
    "__version__",
    "cost",
    "estimate_tokens",
    "fidelity",
    "import_transcript",
    "parse",
    "render",
    "repair",
    "validate",
]
