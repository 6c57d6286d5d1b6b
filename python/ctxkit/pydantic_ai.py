"""pydantic-ai: a capability that gives the model ctxkit's view at every model request.

    from pydantic_ai import Agent
    from ctxkit.pydantic_ai import CtxkitHistory

    engine = ctxkit.Engine(window=128_000)
    agent = Agent(model, capabilities=[CtxkitHistory(engine)])  # once, at module scope
    result = agent.run_sync(prompt, message_history=history)     # per user, per request

Before each model request (``before_model_request``), the capability appends what the run's
message list adds to the log under the conversation's key (the core's rule on the held ends,
converting only the new messages and three more, also in a capability made per request over
the same engine; a conversation's first call on an ``Engine`` object, as after a restart from
pydantic-ai's own persisted history, compares it once in full with ``Engine.append_new``:
nothing is appended twice), prepares the turn
(compaction, offloading, repair of tool pairs) and replaces *the request's* messages with the
view. pydantic-ai's own history (``result.all_messages()``) is left as it is: it never holds
ctxkit's summaries or system prompt, so it stays the log followed by new messages.

The key, so one agent serves many users: ``session=`` (a fixed key, one conversation), else
``conversation_id=`` (a str or a callable ``(ctx) -> str``), else a ``conversation_id`` field
(or dict key) of the run's ``deps``, else pydantic-ai's own ``ctx.conversation_id`` (the
``conversation_id=`` of ``run``, or the one stamped on ``message_history``). The model receives
the caller's own system prompt parts and instructions, then ctxkit's parts about the
context (the date, offload and history-tool guidance, memory; ``agent_prompt=True`` adds its
coding-agent role, ``system_prompt=False`` leaves them out), then the view. The conversion below is only the
mapping between pydantic-ai's parts and ctxkit's message dicts; every decision is the engine's.
The history tools (``search_history``, ``read_history``, ``read_offload``: the last one pages
an offloaded output, as its reference says) are the agent's own tools, answered from the log
(``history_tools=False`` leaves them out).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

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

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, Tool
from pydantic_ai.toolsets import FunctionToolset

from . import Engine
from ._log import Turns, check_key, check_paging, derived_key, text_of

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


class CtxkitHistory(AbstractCapability[Any]):
    """A pydantic-ai capability over one conversation per key (see the module doc).

    ``summarize`` (optional, sync or async ``(request) -> str``) writes the summaries; without
    it the engine's extractive summary is used. ``last_turn`` is the latest ``prepare`` result
    (its ``stats`` go to ``engine.record_usage`` with the usage the model reported);
    ``on_turn(key, turn)`` is called after each.
    """

    def __init__(
        self,
        engine: Engine,
        session: Optional[str] = None,
        *,
        conversation_id: Union[str, Callable[[RunContext[Any]], str], None] = None,
        summarize: Optional[Callable[..., Any]] = None,
        timeout: Optional[float] = None,
        system_prompt: bool = True,
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
        history_tools: bool = True,
    ) -> None:
        super().__init__()
        check_paging(engine, history_tools)
        self.history_tools = history_tools
        self.engine = engine
        self.session = None if session is None else check_key(session, "session")
        self.conversation_id = conversation_id
        self.system_prompt = system_prompt
        self._turns = Turns(engine, summarize, timeout, on_turn, agent_prompt)

    @property
    def last_turn(self) -> Optional[Dict[str, Any]]:
        return self._turns.last_turn

    def key(self, ctx: RunContext[Any], messages: List[ModelMessage]) -> str:
        """The conversation's key for this run (see the module doc)."""
        if self.session is not None:
            return self.session
        chosen = self.conversation_id
        if callable(chosen):
            return check_key(chosen(ctx), "conversation_id")
        if chosen is not None:
            return check_key(chosen, "conversation_id")
        deps = ctx.deps
        from_deps = deps.get("conversation_id") if isinstance(deps, dict) else getattr(deps, "conversation_id", None)
        if from_deps is not None:
            return check_key(from_deps, "deps.conversation_id")
        own = getattr(ctx, "conversation_id", None)
        if own:
            return check_key(own, "ctx.conversation_id")
        first = next(iter(to_ctxkit(messages[:1])), None)
        return derived_key("pydantic-ai-", first)

    def get_toolset(self) -> Optional[FunctionToolset[Any]]:
        """The history tools (``search_history``, ``read_history``, ``read_offload``) as the
        agent's own, answered from the log of the calling run's conversation; none with
        ``history_tools=False``."""
        if not self.history_tools:
            return None
        tools = []
        for spec in self.engine.history_tools():
            name = str(spec["name"])

            def call(ctx: RunContext[Any], _name: str = name, **arguments: Any) -> str:
                return self._turns.answer(self.key(ctx, list(ctx.messages)), _name, arguments)

            tools.append(Tool.from_schema(call, name=name, description=spec.get("description"), json_schema=spec["parameters"], takes_ctx=True))
        return FunctionToolset(tools)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = list(request_context.messages)
        # The caller's system prompt is rebuilt by pydantic-ai every run, in the run's first
        # request: sent first, never logged (so its parts are left out of what is logged).
        caller = [m for m in to_ctxkit(messages[:1]) if m["role"] == "system"]
        parameters = request_context.model_request_parameters
        tools = [
            {"name": t.name, "description": t.description or "", "input_schema": t.parameters_json_schema}
            for t in [*parameters.function_tools, *parameters.output_tools]
        ]
        turn = await self._turns.aturn(self.key(ctx, messages), messages, _logged, "ctxkit", "ctxkit", tools)
        view = [m for m in turn["messages"] if m.get("role") != "system"]
        system = caller + ([{"role": "system", "content": turn["system_prompt"]}] if self.system_prompt else [])
        request_context.messages = from_ctxkit(system + view)
        return request_context


def _logged(messages: Sequence[ModelMessage]) -> List[Dict[str, Any]]:
    """What the log keeps of ``messages``: all but the system prompt parts."""
    return [m for m in to_ctxkit(list(messages)) if m["role"] != "system"]
