"""LangChain v1 and LangGraph: ctxkit's view as the model's input.

    from langchain.agents import create_agent
    from ctxkit.langchain import CtxkitMiddleware

    agent = create_agent(model, tools, middleware=[CtxkitMiddleware(engine, session="chat-1")])

``CtxkitMiddleware.before_model`` appends the state's new messages to the session's log,
prepares the turn and replaces the state's messages with the view (as LangChain's own
``SummarizationMiddleware`` does: ``RemoveMessage(REMOVE_ALL_MESSAGES)`` then the view), so the
complete log lives in ctxkit's store and the state stays the size of the window.
``pre_model_hook(engine, session)`` is the same turn as a plain function for LangGraph's
``create_react_agent(pre_model_hook=...)``: it returns ``{"llm_input_messages": view}``, leaving
the state as it is. Messages stay LangChain's own objects; the dict forms are the core's
LangChain format, so the mapping is ``model_dump`` in and ``messages_from_dict`` out.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Set

from langchain_core.messages import BaseMessage, RemoveMessage, messages_from_dict
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from . import Engine

__all__ = ["CtxkitMiddleware", "pre_model_hook", "to_langchain_messages", "view_messages"]

try:  # LangChain v1's middleware base class; the adapter also works without it.
    from langchain.agents.middleware import AgentMiddleware as _Base
except ImportError:  # pragma: no cover - langchain < 1
    _Base = object  # type: ignore[misc,assignment]


def to_langchain_messages(view: Sequence[Dict[str, Any]]) -> List[BaseMessage]:
    """The core's LangChain dicts as LangChain message objects, each given an id."""
    out: List[BaseMessage] = []
    for data in view:
        data = dict(data)
        data.setdefault("id", f"ctxkit-{uuid.uuid4().hex}")
        kind = data.get("type")
        out.extend(messages_from_dict([{"type": kind, "data": data}]))
    return out


class _Turns:
    """The shared part: which messages the log has, and the turn."""

    def __init__(
        self,
        engine: Engine,
        session: str,
        summarize: Optional[Callable[..., Any]],
        timeout: Optional[float],
        system_prompt: bool,
    ) -> None:
        self.engine = engine
        self.session = session
        self.summarize = summarize
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.last_turn: Optional[Dict[str, Any]] = None
        self._seen: Set[str] = set()

    def view(self, messages: Sequence[BaseMessage]) -> List[BaseMessage]:
        fresh = [m for m in messages if not (m.id and m.id in self._seen)]
        new = [m.model_dump() for m in fresh if m.type != "system"]
        if new:
            self.engine.append(self.session, new, format="langchain")
        turn = self.engine.prepare(
            self.session, format="langchain", summarize=self.summarize, timeout=self.timeout
        )
        self.last_turn = turn
        view = turn["messages"]
        if not self.system_prompt:
            view = [m for m in view if m.get("type") != "system"]
        out = to_langchain_messages(view)
        self._seen = {m.id for m in [*messages, *out] if m.id}
        return out


def view_messages(engine: Engine, session: str, messages: Sequence[BaseMessage]) -> List[BaseMessage]:
    """One turn without an adapter object: append what the log lacks (by message id), return
    the view."""
    return _Turns(engine, session, None, None, True).view(messages)


class CtxkitMiddleware(_Base):
    """A LangChain v1 ``AgentMiddleware`` whose ``before_model`` puts ctxkit's view in the
    state (see the module doc). ``system_prompt=False`` leaves ctxkit's system prompt out, for
    an agent that sends its own."""

    def __init__(
        self,
        engine: Engine,
        session: str,
        *,
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
        system_prompt: bool = True,
    ) -> None:
        super().__init__()
        self._turns = _Turns(engine, session, summarize, timeout, system_prompt)

    @property
    def last_turn(self) -> Optional[Dict[str, Any]]:
        """The latest ``prepare`` result (its ``stats`` go to ``engine.record_usage``)."""
        return self._turns.last_turn

    def before_model(self, state: Any, runtime: Any = None) -> Optional[Dict[str, Any]]:
        view = self._turns.view(state["messages"])
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *view]}


def pre_model_hook(
    engine: Engine,
    session: str,
    *,
    summarize: Optional[Callable[..., Any]] = None,
    timeout: Optional[float] = None,
) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """A function for LangGraph's ``pre_model_hook``: the state's messages appended as they
    come, ``{"llm_input_messages": view}`` returned (the state is left as it is)."""
    turns = _Turns(engine, session, summarize, timeout, True)

    def hook(state: Dict[str, Any]) -> Dict[str, Any]:
        return {"llm_input_messages": turns.view(state["messages"])}

    hook.turns = turns  # type: ignore[attr-defined]
    return hook
