"""OpenAI Agents SDK: a ``Session`` whose ``get_items`` returns ctxkit's view.

    from agents import Agent, Runner
    from ctxkit.agents import CtxkitSession

    session = CtxkitSession("chat-1", ctxkit.Engine(window=128_000))
    await Runner.run(agent, "hello", session=session)

It implements the protocol ``SQLiteSession`` implements (``get_items``, ``add_items``,
``pop_item``, ``clear_session``). Items are Responses input items, the core's ``responses``
format: ``add_items`` appends them to the session's log (big tool outputs offloaded), and
``get_items`` prepares the turn and returns the compacted, repaired view's ``input``, after
ctxkit's system prompt as a ``system`` message (``system_prompt=False`` leaves it out).

The log is append-only, so ``pop_item`` and ``clear_session`` start a new generation of the
session (``chat-1#2``, ``chat-1#3``...): a copy of the log without its last message, or an
empty one; earlier generations stay in the store. ``pop_item`` removes the last *message*,
which may be several items (an assistant message and the calls it made). The engine's calls
run in a worker thread, so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, List, Optional

from . import Engine, SessionNotFoundError

__all__ = ["CtxkitSession"]


def _item_dict(item: Any) -> Dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(exclude_unset=True))
    raise TypeError(f"a Responses input item must be a dict, found {type(item).__name__}")


class CtxkitSession:
    """An Agents SDK session over one ctxkit session (see the module doc)."""

    session_settings: Any = None

    def __init__(
        self,
        session_id: str,
        engine: Engine,
        *,
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
        system_prompt: bool = True,
    ) -> None:
        self.session_id = session_id
        self.engine = engine
        self.summarize = summarize
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.last_turn: Optional[Dict[str, Any]] = None
        self._name = self._current_generation()

    def _current_generation(self) -> str:
        best, name = 1, self.session_id
        prefix = f"{self.session_id}#"
        for info in self.engine.sessions():
            suffix = str(info["name"])[len(prefix):] if str(info["name"]).startswith(prefix) else ""
            if suffix.isdigit() and int(suffix) > best:
                best, name = int(suffix), str(info["name"])
        return name

    def _next_generation(self) -> str:
        current = self._name[len(self.session_id) + 1:] if self._name != self.session_id else "1"
        return f"{self.session_id}#{int(current) + 1}"

    @property
    def ctxkit_session(self) -> str:
        """The ctxkit session this one writes to now."""
        return self._name

    def _get_items(self, limit: Optional[int]) -> List[Dict[str, Any]]:
        try:
            turn = self.engine.prepare(
                self._name, format="responses", summarize=self.summarize, timeout=self.timeout
            )
        except SessionNotFoundError:
            return []
        self.last_turn = turn
        body = turn["messages"]
        items: List[Dict[str, Any]] = list(body.get("input", []))
        if self.system_prompt and body.get("instructions"):
            items.insert(0, {"role": "system", "content": body["instructions"]})
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return items

    async def get_items(self, limit: Optional[int] = None) -> List[Any]:
        return await asyncio.to_thread(self._get_items, limit)

    async def add_items(self, items: List[Any]) -> None:
        if not items:
            return
        dicts = [_item_dict(item) for item in items]
        await asyncio.to_thread(self.engine.append, self._name, dicts, "responses")

    def _pop(self) -> Optional[Dict[str, Any]]:
        try:
            entries = self.engine.export(self._name)["entries"]
        except SessionNotFoundError:
            return None
        if not entries:
            return None
        messages = [entry["message"] for entry in entries]
        last = messages.pop()
        name = self._next_generation()
        self.engine.import_session(name, messages)
        self._name = name
        rendered = self.engine_render([last])
        return rendered[-1] if rendered else None

    @staticmethod
    def engine_render(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        from . import render

        body = render(messages, to="responses")
        return list(body.get("input", []))

    async def pop_item(self) -> Optional[Any]:
        return await asyncio.to_thread(self._pop)

    def _clear(self) -> None:
        name = self._next_generation()
        self.engine.create_session(name)
        self._name = name

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)
