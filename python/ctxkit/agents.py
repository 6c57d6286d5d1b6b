"""OpenAI Agents SDK: a ``Session`` that keeps the conversation in ctxkit, and a model-input filter
that gives every model call of a run ctxkit's view.

    from agents import Agent, Runner
    from ctxkit.agents import CtxkitSession

    engine = ctxkit.Engine(window=128_000)             # once, at module scope
    session = CtxkitSession(user_id, engine)           # per user, per request
    await Runner.run(agent, "hello", session=session, run_config=session.run_config())

The session implements the protocol ``SQLiteSession`` implements (``get_items``, ``add_items``,
``pop_item``, ``clear_session``) over the session's log, in the core's ``responses`` format.
``get_items()`` returns ctxkit's view of the conversation (what the model would see: the
compacted, repaired view, without ctxkit's instructions), not the whole log: the SDK builds a
run's input from it and hands that list to ``call_model_input_filter`` at every model call,
so a whole log there would make every step of the run cost the conversation's length. The
whole conversation stays in the log (the history tools read it; ``engine.export`` gives it).
The items ``get_items()`` returns become the conversation's held ends, so what the SDK adds
after them (the run's input, tool outputs, the model's items) is found as new and appended
once, by ``add_items`` or by the filter, whichever sees it first. ``get_items(limit=n)``
returns the log's last ``n`` items as they were added (read from the log's end: the SDK
checks its own writes with it); ``pop_item`` copies the log into its next generation (see
below), so it reads the whole log. ``call_model_input_filter`` (given to
``RunConfig(call_model_input_filter=...)``, which ``run_config()`` does) runs before *every*
model call of a run: it appends what the run added since (tool outputs, the model's own items)
(the core's rule on the held ends, converting only the new items and three more, also in a
session object made per request over the same engine; a conversation's first call on an
``Engine`` object, as after a restart, compares it once in full with ``Engine.append_new``, so
nothing is logged twice by the filter and by ``add_items``), prepares the turn
and sends the view: the agent's own instructions, then ctxkit's parts about the
context (``agent_prompt=True`` adds its coding-agent role, ``system_prompt=False`` leaves them
out), and the compacted, repaired view as ``input``. ``history_tools(engine)`` gives an agent built once the
history tools (``read_offload`` pages an offloaded output, as its reference says), each answered
from the log of the run's own session.

The log is append-only, so ``pop_item`` and ``clear_session`` start a new generation of the
session (``chat-1#2``, ``chat-1#3``...): a copy of the log without its last message, or an
empty one; earlier generations stay in the store. ``pop_item`` removes the last *message*,
which may be several items (an assistant message and the calls it made). The engine's calls
run in a worker thread, so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any, Callable, Dict, List, Optional

from . import Engine, SessionNotFoundError, render
from ._log import Turns, check_key

__all__ = ["CtxkitSession", "history_tools"]

# The session of the run this task belongs to, set by its call_model_input_filter: the history
# tools live on an agent built once, so they find the conversation here, never on the agent.
_CURRENT: "contextvars.ContextVar[Optional[CtxkitSession]]" = contextvars.ContextVar("ctxkit_session", default=None)


def history_tools(engine: Engine) -> List[Any]:
    """The history tools (``search_history``, ``read_history``, ``read_offload``) as Agents SDK
    ``FunctionTool``s for an agent built once: each answers from the log of the run's own
    session (the one whose ``call_model_input_filter`` the run uses)."""
    from agents import FunctionTool

    tools = []
    for spec in engine.history_tools():
        name = str(spec["name"])

        async def invoke(context: Any, arguments: str, _name: str = name) -> str:
            session = _CURRENT.get()
            if session is None:
                return f"{_name}: no ctxkit session in this run (pass run_config=session.run_config())"
            parsed = json.loads(arguments or "{}")
            return await asyncio.to_thread(session._turns.answer, session._name, _name, parsed)

        tools.append(FunctionTool(name=name, description=str(spec.get("description", "")), params_json_schema=spec["parameters"], on_invoke_tool=invoke, strict_json_schema=False))
    return tools


def _item_dict(item: Any) -> Dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(exclude_unset=True))
    raise TypeError(f"a Responses input item must be a dict, found {type(item).__name__}")


def _item_dicts(items: Any) -> List[Dict[str, Any]]:
    return [_item_dict(item) for item in items]


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
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
    ) -> None:
        self.session_id = check_key(session_id, "session_id")
        self.engine = engine
        self.system_prompt = system_prompt
        self._turns = Turns(engine, summarize, timeout, on_turn, agent_prompt)
        self._name = self._current_generation()
        # The framework's history as the SDK holds it (what get_items gave, then each
        # add_items): the list append_new compares with the log.
        self._history: Optional[List[Dict[str, Any]]] = None

    @property
    def last_turn(self) -> Optional[Dict[str, Any]]:
        """The latest ``prepare`` result (its ``stats`` go to ``engine.record_usage``)."""
        return self._turns.last_turn

    def _current_generation(self) -> str:
        # Generations are numbered without gaps (#2, #3...), so the latest is found by asking
        # for each in turn: a few lookups, never a listing of every session in the store.
        name, number = self.session_id, 2
        while True:
            try:
                self.engine.session_info(f"{self.session_id}#{number}")
            except SessionNotFoundError:
                return name
            name, number = f"{self.session_id}#{number}", number + 1

    def _next_generation(self) -> str:
        current = self._name[len(self.session_id) + 1:] if self._name != self.session_id else "1"
        return f"{self.session_id}#{int(current) + 1}"

    @property
    def ctxkit_session(self) -> str:
        """The ctxkit session this one writes to now."""
        return self._name

    def _view_items(self) -> List[Dict[str, Any]]:
        """ctxkit's view of the session as Responses input items, made the held ends of the
        conversation (see the module doc): its size follows the window, not the log."""
        try:
            body = self.engine.view(self._name, format="responses")
            # Read after the view: a message another writer appended meanwhile is in the log
            # and not in the items, so the next append follows it (nothing twice, nothing lost).
            logged = int(self.engine.tail(self._name, 0)["last_seq"])
        except SessionNotFoundError:
            self._history = []
            return []
        items = list(body.get("input", []))
        self._history = list(items)
        self._turns.hold(self._name, self._name, items, _item_dicts, "responses", logged)
        return items

    def _tail_items(self, limit: int) -> List[Dict[str, Any]]:
        """The log's last ``limit`` items, reading the log from its end only as far as they
        need (a message may be several items, or none)."""
        count = limit
        while limit > 0:
            try:
                entries = self.engine.tail(self._name, count)["entries"]
            except SessionNotFoundError:
                return []
            items = self.engine_render([entry["message"] for entry in entries])
            if len(items) >= limit or len(entries) < count:
                return items[-limit:]
            count *= 2
        return []

    def _get_items(self, limit: Optional[int]) -> List[Dict[str, Any]]:
        return self._view_items() if limit is None else self._tail_items(limit)

    async def get_items(self, limit: Optional[int] = None) -> List[Any]:
        """ctxkit's view of the conversation (``limit=None``), else the log's last ``limit``
        items (see the module doc)."""
        return await asyncio.to_thread(self._get_items, limit)

    def _add(self, items: List[Dict[str, Any]]) -> None:
        if self._history is None:
            self._view_items()
        assert self._history is not None
        self._history.extend(items)
        appended = self._turns.append(self._name, self._history, _item_dicts, "responses")
        self._name = appended["session"]

    async def add_items(self, items: List[Any]) -> None:
        if not items:
            return
        dicts = [_item_dict(item) for item in items]
        await asyncio.to_thread(self._add, dicts)

    def run_config(self, **settings: Any) -> Any:
        """An Agents SDK ``RunConfig`` whose ``call_model_input_filter`` is this session's (the
        other settings as given)."""
        from agents import RunConfig

        return RunConfig(call_model_input_filter=self.call_model_input_filter, **settings)

    async def call_model_input_filter(self, data: Any) -> Any:
        """The ``RunConfig.call_model_input_filter`` of a run over this session: the model input
        appended where new, the view returned (see the module doc)."""
        from agents.run_config import ModelInputData

        _CURRENT.set(self)
        items = list(data.model_data.input)
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.params_json_schema}
            for t in getattr(data.agent, "tools", []) if hasattr(t, "params_json_schema")
        ]
        turn = await self._turns.aturn(self._name, items, _item_dicts, "responses", "responses", tools)
        self._name = turn["appended"]["session"]
        body = turn["messages"]
        parts = [data.model_data.instructions or "", body.get("instructions") or "" if self.system_prompt else ""]
        instructions = "\n\n".join(part for part in parts if part) or None
        return ModelInputData(input=list(body.get("input", [])), instructions=instructions)

    def _pop(self) -> Optional[Dict[str, Any]]:
        # The log is append-only: the next generation is a copy of it without its last
        # message, so an undo reads and writes the whole log (get_items reads only its end).
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
        # The SDK's list loses the popped message's items too: the rest stays held.
        history, self._history = self._history, None
        if history is not None and len(history) >= len(rendered):
            self._history = history[:len(history) - len(rendered)]
            self._turns.hold(name, name, self._history, _item_dicts, "responses", len(messages))
        return rendered[-1] if rendered else None

    @staticmethod
    def engine_render(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        body = render(messages, to="responses")
        return list(body.get("input", []))

    async def pop_item(self) -> Optional[Any]:
        return await asyncio.to_thread(self._pop)

    def _clear(self) -> None:
        name = self._next_generation()
        self.engine.create_session(name)
        self._name = name
        self._history = []

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._clear)
