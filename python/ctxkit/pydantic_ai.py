"""pydantic-ai: a ``history_processors`` entry that gives the model ctxkit's view.

    from pydantic_ai import Agent
    from ctxkit.pydantic_ai import CtxkitHistory

    history = CtxkitHistory(ctxkit.Engine(window=128_000), session="chat-1")
    agent = Agent(model, history_processors=[history])

Each model request, pydantic-ai passes the run's messages; the processor appends the ones the
session's log does not have yet, prepares the turn (compaction, offloading, repair of tool
pairs) and returns the view as pydantic-ai's own ``ModelRequest``/``ModelResponse`` objects,
starting with ctxkit's system prompt. The conversion below is only the mapping between
pydantic-ai's parts and ctxkit's message dicts; every decision is the engine's.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from . import Engine
from ._log import text_of

__all__ = ["CtxkitHistory", "to_ctxkit", "from_ctxkit"]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(_content_text(item) for item in content)
    try:
        return json.dumps(content, default=str)
    except (TypeError, ValueError):
        return str(content)


def to_ctxkit(messages: List[ModelMessage]) -> List[Dict[str, Any]]:
    """pydantic-ai messages as ctxkit message dicts (system prompt parts included)."""
    out: List[Dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    out.append({"role": "system", "content": part.content})
                elif isinstance(part, UserPromptPart):
                    out.append({"role": "user", "content": _content_text(part.content)})
                elif isinstance(part, ToolReturnPart):
                    out.append({
                        "role": "tool",
                        "tool_call_id": part.tool_call_id,
                        "name": part.tool_name,
                        "content": part.model_response_str(),
                    })
                elif isinstance(part, RetryPromptPart):
                    if part.tool_name is None:
                        out.append({"role": "user", "content": part.model_response()})
                    else:
                        out.append({
                            "role": "tool",
                            "tool_call_id": part.tool_call_id,
                            "name": part.tool_name,
                            "content": part.model_response(),
                            "is_error": True,
                        })
        elif isinstance(message, ModelResponse):
            text = "\n".join(p.content for p in message.parts if isinstance(p, TextPart))
            calls = [
                {"id": p.tool_call_id, "name": p.tool_name, "arguments": p.args_as_json_str()}
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            entry: Dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
    return out


def from_ctxkit(view: List[Dict[str, Any]]) -> List[ModelMessage]:
    """ctxkit message dicts as pydantic-ai messages: neighbouring system, user and tool messages
    make one ``ModelRequest``, each assistant message a ``ModelResponse``."""
    out: List[ModelMessage] = []
    pending: List[Any] = []
    names: Dict[str, str] = {}

    def flush() -> None:
        if pending:
            out.append(ModelRequest(parts=list(pending)))
            pending.clear()

    for message in view:
        role = message.get("role")
        text = text_of(message.get("content"))
        if role == "system":
            pending.append(SystemPromptPart(content=text))
        elif role == "user":
            pending.append(UserPromptPart(content=text))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            pending.append(ToolReturnPart(
                tool_name=message.get("name") or names.get(call_id, "tool"),
                content=text,
                tool_call_id=call_id,
            ))
        elif role == "assistant":
            flush()
            parts: List[Any] = []
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "thinking":
                    parts.append(ThinkingPart(content=str(part.get("thinking", ""))))
            if text:
                parts.append(TextPart(content=text))
            for call in message.get("tool_calls") or []:
                names[call["id"]] = call["name"]
                parts.append(ToolCallPart(tool_name=call["name"], args=call["arguments"], tool_call_id=call["id"]))
            out.append(ModelResponse(parts=parts))
    flush()
    return out


class CtxkitHistory:
    """A pydantic-ai history processor over one ctxkit session (see the module doc).

    ``summarize`` (optional, sync or async ``(request) -> str``) writes the summaries; without
    it the engine's extractive summary is used. ``last_turn`` is the latest ``prepare`` result
    (its ``stats`` go to ``engine.record_usage`` with the usage the model reported).
    """

    def __init__(
        self,
        engine: Engine,
        session: str,
        *,
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
    ) -> None:
        self.engine = engine
        self.session = session
        self.summarize = summarize
        self.timeout = timeout
        self.last_turn: Optional[Dict[str, Any]] = None
        # The message objects already in the log (or made from it), by identity, each held so
        # its id cannot be reused while it is remembered. pydantic-ai keeps the list a
        # processor returns as the run's history, so the next call brings these objects back
        # with the new ones after them.
        self._seen: Dict[int, ModelMessage] = {}

    def __call__(self, messages: List[ModelMessage]) -> List[ModelMessage]:
        fresh = [m for m in messages if id(m) not in self._seen]
        # The system prompt is ctxkit's, rebuilt every turn: pydantic-ai's is not logged.
        new = [m for m in to_ctxkit(fresh) if m["role"] != "system"]
        if new:
            self.engine.append(self.session, new)
        turn = self.engine.prepare(
            self.session, format="ctxkit", summarize=self.summarize, timeout=self.timeout
        )
        self.last_turn = turn
        view = from_ctxkit(turn["messages"])
        self._seen = {id(m): m for m in [*messages, *view]}
        return view
