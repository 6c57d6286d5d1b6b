"""LangChain v1 and LangGraph: ctxkit's view as the model's input, one conversation per thread.

    from langchain.agents import create_agent
    from ctxkit.langchain import CtxkitMiddleware

    agent = create_agent(model, tools, middleware=[CtxkitMiddleware(engine)], checkpointer=saver)
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": user_id}})

``CtxkitMiddleware.wrap_model_call`` (and ``awrap_model_call``) appends what the state's
message list adds to the log under the conversation's key (the core's rule on the held ends,
converting only the new messages and three more, also in a new agent per request over the
same engine; a conversation's first call on an ``Engine`` object, as after a restart with
LangGraph's checkpointer, compares it once in full with ``Engine.append_new``: nothing is
appended twice), prepares the turn and calls the model with the view in place of the
request's messages (``request.override``): the view's messages it shares with the
conversation's last view are that call's LangChain objects again, so a step builds only its
new ones (a model must leave the messages it is given as they are). The state is left as it is: it keeps the whole
conversation, never ctxkit's summaries, so it stays the log followed by new messages; ctxkit
decides only what each model call receives.

The key: ``session=`` (a fixed key, one conversation), else ``key=`` (a callable of the
``ModelRequest``), else LangGraph's ``thread_id`` (``configurable.thread_id`` of the run's
config), else one made from the conversation's first message. The model receives the caller's
own system prompt, then ctxkit's parts about the context (``agent_prompt=True`` adds its
coding-agent role, ``system_prompt=False`` leaves them out), then the view.
The history tools (``search_history``, ``read_history``, ``read_offload``: the last one pages an
offloaded output, as its reference says) are added to the agent's tools, answered from the log
(``history_tools=False`` leaves them out). ``pre_model_hook(engine)`` is the same turn for LangGraph's ``create_react_agent``: it returns
``{"llm_input_messages": view}``. Messages stay LangChain's own objects; the dict forms are the
core's LangChain format, so the mapping is ``model_dump`` in and ``messages_from_dict`` out.
"""

from __future__ import annotations

import itertools
import uuid
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from langchain_core.messages import BaseMessage, SystemMessage, messages_from_dict

from . import Engine
from ._log import Turns, check_key, check_paging, derived_key

__all__ = ["CtxkitMiddleware", "pre_model_hook", "to_langchain_messages", "view_messages"]

# The ids given to the view's messages: this process's random prefix and a counter. uuid4 per
# message would read os.urandom, which releases the GIL: on an interpreter whose other threads
# are busy (LangGraph's executor saving a large state) each release waits up to the switch
# interval (5 ms) to take it back.
_ID_PREFIX = f"ctxkit-{uuid.uuid4().hex[:16]}-"
_ID_COUNTER = itertools.count(1)

# How many conversations' last views each adapter keeps as LangChain messages (see split).
VIEWS_KEPT = 64

try:  # LangChain v1's middleware base class; the adapter also works without it.
    from langchain.agents.middleware import AgentMiddleware as _Base
except ImportError:  # pragma: no cover - langchain < 1
    _Base = object  # type: ignore[misc,assignment]


def to_langchain_messages(view: Sequence[Dict[str, Any]]) -> List[BaseMessage]:
    """The core's LangChain dicts as LangChain message objects, each given an id."""
    out: List[BaseMessage] = []
    for data in view:
        data = dict(data)
        data.setdefault("id", f"{_ID_PREFIX}{next(_ID_COUNTER)}")
        kind = data.get("type")
        out.extend(messages_from_dict([{"type": kind, "data": data}]))
    return out


def thread_id() -> Optional[str]:
    """LangGraph's ``thread_id`` of the run this is called in, when there is one."""
    try:
        from langgraph.config import get_config

        config = get_config()
    except (ImportError, RuntimeError):
        return None
    value = (config.get("configurable") or {}).get("thread_id")
    return None if value is None else str(value)


def definitions(tools: Optional[List[Any]]) -> Optional[List[Dict[str, Any]]]:
    """A request's tools as OpenAI definitions, for the budget (``None`` when not known)."""
    if tools is None:
        return None
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out = []
    for tool in tools:
        try:
            out.append(convert_to_openai_tool(tool))
        except (TypeError, ValueError):  # a provider's built-in tool: no schema to count
            continue
    return out


class _Conversations:
    """The shared part: the key, the turn, the view as LangChain messages."""

    def __init__(
        self,
        engine: Engine,
        session: Optional[str],
        summarize: Optional[Callable[..., Any]],
        timeout: Optional[float],
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
    ) -> None:
        self.session = None if session is None else check_key(session, "session")
        self.turns = Turns(engine, summarize, timeout, on_turn, agent_prompt)
        # Per key (VIEWS_KEPT of them), the last view sent (the core's dicts) and its LangChain
        # messages: the next view repeats it up to the step's new messages (until a compaction
        # changes its start), so a step builds only the messages from the first that differs.
        self._views: "OrderedDict[str, Tuple[List[Dict[str, Any]], List[BaseMessage]]]" = OrderedDict()

    def key(self, messages: Sequence[BaseMessage]) -> str:
        if self.session is not None:
            return self.session
        thread = thread_id()
        if thread is not None:
            return check_key(thread, "configurable.thread_id")
        return derived_key("langchain-", messages[0].model_dump() if messages else None)

    @staticmethod
    def logged(messages: Sequence[BaseMessage]) -> List[Dict[str, Any]]:
        # The caller's system prompt is the agent's, sent every call: not logged.
        return [m.model_dump() for m in messages if m.type != "system"]

    def split(self, key: str, turn: Dict[str, Any]) -> List[BaseMessage]:
        """The view without its system prompt as LangChain messages, those it shares with the
        key's last view reused (the same objects, ids included: a model must not change them)."""
        view = [m for m in turn["messages"] if m.get("type") != "system"]
        before, built = self._views.get(key, ([], []))
        same = 0
        for old, new in zip(before, view):
            if old != new:
                break
            same += 1
        messages = built[:same] + to_langchain_messages(view[same:])
        self._views[key] = (view, messages)
        self._views.move_to_end(key)
        if len(self._views) > VIEWS_KEPT:
            self._views.popitem(last=False)
        return messages

    def view(self, key: str, messages: Sequence[BaseMessage], tools: Optional[List[Any]] = None) -> Dict[str, Any]:
        return self.turns.turn(key, messages, self.logged, "langchain", "langchain", definitions(tools))

    async def aview(self, key: str, messages: Sequence[BaseMessage], tools: Optional[List[Any]] = None) -> Dict[str, Any]:
        return await self.turns.aturn(key, messages, self.logged, "langchain", "langchain", definitions(tools))


def view_messages(engine: Engine, session: str, messages: Sequence[BaseMessage]) -> List[BaseMessage]:
    """One turn without an adapter object: append what the log lacks, return the view (ctxkit's
    system prompt first)."""
    turn = _Conversations(engine, session, None, None).view(session, messages)
    return to_langchain_messages(turn["messages"])


def _system(caller: Optional[SystemMessage], turn: Dict[str, Any], include: bool) -> Optional[SystemMessage]:
    """The caller's system prompt, then ctxkit's."""
    parts = [caller.text if caller is not None else "", turn["system_prompt"] if include else ""]
    text = "\n\n".join(part for part in parts if part)
    return SystemMessage(content=text) if text else None


class CtxkitMiddleware(_Base):
    """A LangChain v1 ``AgentMiddleware`` whose ``wrap_model_call`` gives the model ctxkit's
    view (see the module doc). ``last_turn`` is the latest ``prepare`` result; ``on_turn(key,
    turn)`` is called after each."""

    def __init__(
        self,
        engine: Engine,
        session: Optional[str] = None,
        *,
        key: Optional[Callable[[Any], str]] = None,
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
        system_prompt: bool = True,
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
        history_tools: bool = True,
    ) -> None:
        super().__init__()
        check_paging(engine, history_tools)
        self._conversations = _Conversations(engine, session, summarize, timeout, on_turn, agent_prompt)
        self._key = key
        self.system_prompt = system_prompt
        # LangChain adds a middleware's ``tools`` to the agent's.
        self.tools = self._history_tools(engine) if history_tools else []

    def _history_tools(self, engine: Engine) -> List[Any]:
        """The history tools as LangChain tools, answered from the log of the calling thread's
        conversation (its ``thread_id``, else the session or the last conversation served)."""
        from langchain_core.tools import StructuredTool

        conversations = self._conversations

        def key_now() -> str:
            if conversations.session is not None:
                return conversations.session
            return thread_id() or conversations.turns.last_key or ""

        tools = []
        for spec in engine.history_tools():
            name = str(spec["name"])

            def call(_name: str = name, **arguments: Any) -> str:
                return conversations.turns.answer(key_now(), _name, arguments)

            tools.append(StructuredTool.from_function(func=call, name=name, description=str(spec.get("description", "")), args_schema=spec["parameters"]))
        return tools

    @property
    def last_turn(self) -> Optional[Dict[str, Any]]:
        """The latest ``prepare`` result (its ``stats`` go to ``engine.record_usage``)."""
        return self._conversations.turns.last_turn

    def key(self, request: Any) -> str:
        """The conversation's key for this model call (see the module doc)."""
        if self._key is not None and self._conversations.session is None:
            return check_key(self._key(request), "key")
        return self._conversations.key(request.messages)

    def _override(self, request: Any, key: str, turn: Dict[str, Any]) -> Any:
        system = _system(request.system_message, turn, self.system_prompt)
        return request.override(messages=self._conversations.split(key, turn), system_message=system)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        key = self.key(request)
        turn = self._conversations.view(key, request.messages, request.tools)
        return handler(self._override(request, key, turn))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        key = self.key(request)
        turn = await self._conversations.aview(key, request.messages, request.tools)
        return await handler(self._override(request, key, turn))


def pre_model_hook(
    engine: Engine,
    session: Optional[str] = None,
    *,
    summarize: Optional[Callable[..., Any]] = None,
    timeout: Optional[float] = None,
    agent_prompt: bool = False,
) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """A function for LangGraph's ``pre_model_hook``: the state's messages appended as they
    come, ``{"llm_input_messages": view}`` returned (ctxkit's system prompt first; the state is
    left as it is). Keyed like the middleware: ``session``, else the ``thread_id``."""
    conversations = _Conversations(engine, session, summarize, timeout, agent_prompt=agent_prompt)

    def hook(state: Dict[str, Any]) -> Dict[str, Any]:
        messages = state["messages"]
        turn = conversations.view(conversations.key(messages), messages)
        return {"llm_input_messages": to_langchain_messages(turn["messages"])}

    hook.turns = conversations.turns  # type: ignore[attr-defined]
    return hook
