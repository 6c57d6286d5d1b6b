"""What the adapters share: the conversation's key, and one turn over it.

A framework hands the adapter its whole conversation at every model call. The adapter never
remembers what it appended: ``Engine.append_new`` decides by content, from the session's log,
which messages are new (the core's ``held_prefix`` rule, a cost that does not grow with the
conversation), so an adapter built per request or after a restart appends nothing twice, and
a conversation that diverged from the log (another user's, an edited one) continues in a fork
of its own and never sees the log's messages. The adapters leave the framework's own history
as it is and shape only the model's input, so that history is always the log followed by new
messages."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any, Callable, Dict, List, Optional, Sequence

from ._errors import InvalidInputError


def text_of(content: Any) -> str:
    """A ctxkit message's content (a str or a list of parts) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: List[str] = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                pieces.append(str(part.get("text", "")))
        return "\n".join(pieces)
    return ""


def messages_after_system(view: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The view's conversation, without the system prompt it starts with."""
    return [m for m in view if m.get("role") != "system"]


def system_of(view: Sequence[Dict[str, Any]]) -> str:
    """The system prompt the view starts with ("" when it has none)."""
    for message in view:
        if message.get("role") == "system":
            return text_of(message.get("content"))
    return ""


def check_key(key: Any, parameter: str) -> str:
    """A conversation key as a session name: a non-empty str without NUL, else
    ``InvalidInputError`` naming ``parameter``."""
    if not isinstance(key, str) or not key or "\0" in key:
        raise InvalidInputError(
            f"{parameter}: expected a non-empty str without NUL characters, found {key!r}"
        )
    return key


def derived_key(prefix: str, first: Any) -> str:
    """A key made from a conversation's first message, for a framework that gives none: the same
    first message gives the same key, so conversations that begin alike share it until they
    differ, and then each continues in its own fork (``Engine.append_new``)."""
    text = json.dumps(first, sort_keys=True, default=str)
    return f"{prefix}{hashlib.sha256(text.encode()).hexdigest()[:16]}"


class Turns:
    """One turn of a keyed conversation: append what is new, prepare the view. ``last_turn`` is
    the latest ``prepare`` result (with ``"appended"``, what ``append_new`` did); ``on_turn``,
    when given, is called with ``(key, turn)`` after each. ``agent_prompt`` keeps ctxkit's
    coding-agent prompt (its role, working directory, AGENTS.md); by default the system prompt is
    only ctxkit's parts about the context (``Engine.prepare(context_prompt=True)``)."""

    def __init__(
        self,
        engine: Any,
        summarize: Optional[Callable[..., Any]],
        timeout: Optional[float],
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
    ) -> None:
        self.engine = engine
        self.context_prompt = not agent_prompt
        self.summarize = summarize
        self.timeout = timeout
        self.on_turn = on_turn
        self.last_turn: Optional[Dict[str, Any]] = None
        self.last_key: Optional[str] = None
        # Where each key's conversation is (a fork, when it diverged), for the history tools.
        self._sessions: Dict[str, str] = {}

    def session_of(self, key: str) -> str:
        """The session ``key``'s conversation is in (the key itself, or the fork it went to)."""
        return self._sessions.get(key, key)

    def answer(self, key: str, name: str, arguments: Dict[str, Any]) -> str:
        """A history tool's answer (``search_history``, ``read_history``, ``read_offload``) from
        the log of ``key``'s conversation, as the text the model reads."""
        call = {"id": "ctxkit-history", "name": name, "arguments": arguments}
        message = self.engine.execute_tool(self.session_of(key), call)
        return text_of(message.get("content"))

    def _done(self, key: str, appended: Dict[str, Any], turn: Dict[str, Any]) -> Dict[str, Any]:
        self._sessions[key] = appended["session"]
        self.last_key = key
        turn["appended"] = appended
        self.last_turn = turn
        if self.on_turn is not None:
            self.on_turn(key, turn)
        return turn

    def turn(
        self, key: str, messages: List[Dict[str, Any]], format: str, view_format: str,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """``tools``: the definitions the request carries, reserved in the budget."""
        appended = self.engine.append_new(key, messages, format)
        turn = self.engine.prepare(
            appended["session"], format=view_format, summarize=self.summarize, timeout=self.timeout,
            context_prompt=self.context_prompt, tools=tools,
        )
        return self._done(key, appended, turn)

    async def aturn(
        self, key: str, messages: List[Dict[str, Any]], format: str, view_format: str,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        appended = await asyncio.to_thread(self.engine.append_new, key, messages, format)
        turn = await self.engine.aprepare(
            appended["session"], format=view_format, summarize=self.summarize, timeout=self.timeout,
            context_prompt=self.context_prompt, tools=tools,
        )
        return self._done(key, appended, turn)
