"""The conformance suite (issue 33 item 7): each framework's agent, with the real package and a
scripted model (a fake only for the provider's API), runs a 60-step tool loop whose tool returns
about 30 KB each, at an 8k and a 200k window, through the adapter as its README shows it. EVERY
request the framework's model receives is checked:

- tool calls and results are paired (each result answers a call before it, each call answered);
- it fits the window by ctxkit's own estimate (``estimate_tokens``: the messages and the tool
  definitions the request carries);
- no tool is named in it (an offload reference, the system prompt) that the agent does not have;
- and the agent finds an offloaded output again with its own tool (``read_offload``, registered
  by the adapter), the page holding the output's own lines.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import re
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

import pytest

import ctxkit

STEPS = 60
PAGE_AT = 5  # the dump whose offloaded output the agent pages back
WINDOWS = [8_000, 200_000]
# Tools ctxkit's texts could name (its default paging tool, the history tools, a coding
# agent's): any of them named in a request must be one of the agent's.
NAMEABLE = ("read_file", "write_file", "edit_file", "read_offload", "search_history", "read_history", "bash")
NAMED = re.compile(r"\b(" + "|".join(NAMEABLE) + r")\b")
OFFLOADED = "[ctxkit: tool output offloaded]"  # an offload reference's first line
REFERENCE = re.compile(r"\.ctxkit/tool_results/[^\s`'\")]+")


def dump_output(step: int) -> str:
    """About 30 KB, every line its own."""
    return "".join(f"dump {step} line {j}: value {j * 7 + step}\n" for j in range(1_000))


Action = Union[str, Tuple[str, Dict[str, Any], str]]


class Script:
    """The scripted agent and the checks of every request it receives."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.requests = 0
        self.dumps = 0
        self.paged: Optional[Tuple[str, int]] = None  # (call id, the dump it pages)
        self.found = ""
        self.problems: List[str] = []
        self.largest = 0

    def problem(self, text: str) -> None:
        self.problems.append(f"request {self.requests}: {text}")

    def check(self, view: List[Dict[str, Any]], tools: Set[str], definitions: List[Any]) -> None:
        called: Set[str] = set()
        answered: Set[str] = set()
        for message in view:
            for call in message.get("tool_calls") or []:
                called.add(call["id"])
            if message.get("role") == "tool":
                if message.get("tool_call_id") not in called:
                    self.problem(f"a result without its call: {message.get('tool_call_id')}")
                answered.add(str(message.get("tool_call_id")))
        if called - answered:
            self.problem(f"calls without results: {sorted(called - answered)}")
        tokens = ctxkit.estimate_tokens(view) + ctxkit.estimate_tokens(json.dumps(definitions, default=str))
        self.largest = max(self.largest, tokens)
        if tokens > self.window:
            self.problem(f"{tokens} tokens over the {self.window} window")
        text = "\n".join(ctxkit._log.text_of(m.get("content")) for m in view)
        for name in set(NAMED.findall(text)) - tools:
            self.problem(f"names {name}, which the agent does not have ({sorted(tools)})")

    def step(self, view: List[Dict[str, Any]], tools: Set[str], definitions: List[Any]) -> Action:
        """The next action: check the request, then dump, page one offloaded output back, or
        answer."""
        self.requests += 1
        self.check(view, tools, definitions)
        last = view[-1] if view else {}
        text = ctxkit._log.text_of(last.get("content"))
        if self.paged is not None and last.get("tool_call_id") == self.paged[0]:
            # The page: the offloaded output's own lines, read back (and not offloaded again).
            if re.search(rf"\bdump {self.paged[1]} line \d+:", text) and OFFLOADED not in text:
                self.found = text
        if self.dumps == PAGE_AT and self.paged is None:
            path = REFERENCE.search(text)
            if path is None:
                self.problem(f"dump {self.dumps}'s output was not offloaded: {text[:200]!r}")
            else:
                self.paged = ("page-1", self.dumps)
                return ("read_offload", {"path": path.group(0), "offset": 100, "limit": 5}, "page-1")
        if self.dumps < STEPS:
            self.dumps += 1
            return ("dump", {"step": self.dumps}, f"dump-{self.dumps}")
        return "done"

    def verdict(self) -> None:
        assert not self.problems, self.problems[:5]
        assert self.dumps == STEPS and self.requests >= STEPS + 2, (self.dumps, self.requests)
        assert self.found, "the offloaded output was never read back through read_offload"


# --- pydantic-ai -------------------------------------------------------------------------------

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.usage import UsageLimits  # noqa: E402

from ctxkit.pydantic_ai import CtxkitHistory, to_ctxkit  # noqa: E402


def run_pydantic_ai(engine: ctxkit.Engine, script: Script) -> None:
    def model(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        view = to_ctxkit(messages)
        instructions = [getattr(m, "instructions", None) for m in messages]
        view[:0] = [{"role": "system", "content": text} for text in instructions if text]
        definitions = [[t.name, t.description, t.parameters_json_schema] for t in info.function_tools]
        action = script.step(view, {t.name for t in info.function_tools}, definitions)
        if isinstance(action, str):
            return ModelResponse(parts=[TextPart(action)])
        name, arguments, call_id = action
        return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=call_id)])

    agent = Agent(FunctionModel(model), capabilities=[CtxkitHistory(engine)])

    @agent.tool_plain
    def dump(step: int) -> str:
        """Dumps a table."""
        return dump_output(step)

    result = agent.run_sync("dump the tables", conversation_id="conformance", usage_limits=UsageLimits(request_limit=None))
    assert result.output == "done"


# --- LangChain v1 (create_agent with the middleware) -------------------------------------------

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from ctxkit.langchain import CtxkitMiddleware  # noqa: E402

LC: Dict[str, Any] = {}  # the script and the tools bound for the call (a pydantic model keeps no state)


class ScriptedChat(GenericFakeChatModel):
    """A LangChain chat model answering from the script."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
        LC["definitions"] = [convert_to_openai_tool(t) for t in tools]
        return self

    def _generate(self, messages: List[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        view = ctxkit.parse([m.model_dump() for m in messages], format="langchain")
        definitions = LC["definitions"]
        action = LC["script"].step(view, {d["function"]["name"] for d in definitions}, definitions)
        if isinstance(action, str):
            message = AIMessage(content=action)
        else:
            name, arguments, call_id = action
            message = AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": call_id}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def dump(step: int) -> str:
    """Dumps a table."""
    return dump_output(step)


def run_langchain(engine: ctxkit.Engine, script: Script) -> None:
    LC["script"] = script
    agent = create_agent(ScriptedChat(messages=iter([])), [dump], middleware=[CtxkitMiddleware(engine)], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "conformance"}, "recursion_limit": 4 * STEPS}
    state = agent.invoke({"messages": [{"role": "user", "content": "dump the tables"}]}, config)
    assert state["messages"][-1].content == "done"


# --- OpenAI Agents SDK (the session and call_model_input_filter) -------------------------------

from agents import Agent as OAgent, RunConfig, Runner, function_tool, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse as OModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from ctxkit.agents import CtxkitSession, history_tools  # noqa: E402

set_tracing_disabled(True)


@function_tool(name_override="dump")
def dump_table(step: int) -> str:
    """Dumps a table."""
    return dump_output(step)


class ScriptedModel(Model):
    """An Agents SDK model answering from the script."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, *args: Any, **kwargs: Any) -> OModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        view = ctxkit.parse(items, format="responses")
        if system_instructions:
            view.insert(0, {"role": "system", "content": system_instructions})
        definitions = [[t.name, t.description, t.params_json_schema] for t in tools]
        action = self.script.step(view, {t.name for t in tools}, definitions)
        if isinstance(action, str):
            text = ResponseOutputText(type="output_text", text=action, annotations=[])
            message = ResponseOutputMessage(type="message", id="m-done", role="assistant", status="completed", content=[text])
            return OModelResponse(output=[message], usage=Usage(), response_id=None)
        name, arguments, call_id = action
        call = ResponseFunctionToolCall(type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments), id=f"fc-{call_id}", status="completed")
        return OModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def run_agents_sdk(engine: ctxkit.Engine, script: Script) -> None:
    agent = OAgent(name="tables", model=ScriptedModel(script), tools=[dump_table, *history_tools(engine)])

    async def run() -> Any:
        session = CtxkitSession("conformance", engine)
        return await Runner.run(agent, "dump the tables", session=session, run_config=session.run_config(), max_turns=4 * STEPS)

    assert asyncio.run(run()).final_output == "done"
    assert isinstance(CtxkitSession("x", engine).run_config(), RunConfig)


FRAMEWORKS: Dict[str, Callable[[ctxkit.Engine, Script], None]] = {
    "pydantic-ai": run_pydantic_ai,
    "langchain": run_langchain,
    "agents-sdk": run_agents_sdk,
}


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_every_model_request_of_a_60_step_tool_loop_conforms(workdir: pathlib.Path, framework: str, window: int) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=window)
    script = Script(window)
    FRAMEWORKS[framework](engine, script)
    script.verdict()
    # The loop outgrew the small window: the adapter compacted or offloaded to keep it.
    if window == WINDOWS[0]:
        assert script.largest > window // 4, script.largest


