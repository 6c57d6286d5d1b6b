"""The adapters with the real frameworks, in tool loops of 30+ steps driven by each framework's
own test models (no network): the model sees ctxkit's view (compacted, offloaded, tool calls
paired), and the framework's message objects go in and come out."""

from __future__ import annotations

import asyncio
import json
import pathlib
from typing import Any, Dict, List

import ctxkit

STEPS = 36
PER_RUN = 3
OUTPUT = ("0123456789abcdef" * 8 + "\n") * 40  # 5 KB a call
BIG = "".join(f"test_{i} ... FAILED at src/f{i}.py:{i}\n" for i in range(2_000))  # 70 KB: offloaded


def output(path: str) -> str:
    """What run_tests returns: one big output (src/f5.py), the rest 5 KB."""
    return BIG if path == "src/f5.py" else f"# {path}\n" + OUTPUT


def assert_offloaded(engine: ctxkit.Engine, session: str, seen: str) -> None:
    assert engine.session_info(session)["offloads"] == 1
    # The reference keeps the head and the tail; the middle is in the file.
    assert BIG not in seen and "test_1000 ... FAILED" not in seen and "test_1999 ... FAILED" in seen


def assert_paired_openai(messages: List[Dict[str, Any]]) -> None:
    assert ctxkit.validate(messages, format="openai") == []


# --- pydantic-ai -------------------------------------------------------------------------------

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from ctxkit.pydantic_ai import CtxkitHistory, to_ctxkit  # noqa: E402


def test_pydantic_ai_history_processor(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    history = CtxkitHistory(engine, "pyd")
    seen: List[List[ModelMessage]] = []

    def model(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        assert all(isinstance(m, (ModelRequest, ModelResponse)) for m in messages)
        calls = sum(1 for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolCallPart))
        step = len(seen)
        if step <= STEPS:
            return ModelResponse(parts=[ToolCallPart("run_tests", {"path": f"src/f{step}.py"}, tool_call_id=f"c{step}")])
        return ModelResponse(parts=[TextPart(f"done after {calls} visible calls")])

    agent = Agent(FunctionModel(model), capabilities=[history])

    @agent.tool_plain
    def run_tests(path: str) -> str:
        return output(path)

    result = agent.run_sync("Read every file under src/", )
    assert result.output.startswith("done after")
    assert len(seen) == STEPS + 1
    last = seen[-1]
    # The model saw ctxkit's system prompt, a compacted view, every call answered.
    assert to_ctxkit(last)[0]["role"] == "system" and "Current date" in to_ctxkit(last)[0]["content"]
    assert_paired_openai(ctxkit.render(to_ctxkit(last), to="openai"))
    info = engine.session_info("pyd")
    assert info["messages"] >= 2 * STEPS + 1
    assert info["checkpoints"] >= 1
    assert len(to_ctxkit(last)) < 2 * STEPS
    assert_offloaded(engine, "pyd", json.dumps([to_ctxkit(m) for m in seen]))
    # pydantic-ai's own history is left whole (the view only went to the model), and a second
    # run with it appends only its new messages.
    assert len(to_ctxkit(result.all_messages())) == 2 * STEPS + 2
    seen.clear()
    again = agent.run_sync("and once more", message_history=result.all_messages())
    assert again.output.startswith("done after")
    assert engine.session_info("pyd")["messages"] == info["messages"] + 1 + 2 * STEPS + 1


# --- LangChain v1 and LangGraph ----------------------------------------------------------------

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from ctxkit.langchain import CtxkitMiddleware, pre_model_hook  # noqa: E402


class ToolLoopModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording what it is sent; tools bound as given."""

    seen: List[List[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ToolLoopModel":
        return self

    def _generate(self, messages: List[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted() -> List[AIMessage]:
    calls = [AIMessage(content="", tool_calls=[{"name": "run_tests", "args": {"path": f"src/f{i}.py"}, "id": f"c{i}"}]) for i in range(STEPS)]
    return [*calls, AIMessage(content="all read")]


@tool
def run_tests(path: str) -> str:
    """Reads a file."""
    return output(path)


def check_langchain_view(messages: List[BaseMessage]) -> None:
    assert all(isinstance(m, BaseMessage) for m in messages)
    dicts = [m.model_dump() for m in messages]
    assert_paired_openai(ctxkit.render(ctxkit.parse(dicts, format="langchain"), to="openai"))


def test_langchain_agent_middleware(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    model = ToolLoopModel(messages=iter(scripted()))
    model.seen = []
    middleware = CtxkitMiddleware(engine, "lc")
    agent = create_agent(model, [run_tests], middleware=[middleware])
    state = agent.invoke({"messages": [{"role": "user", "content": "Read every file under src/"}]}, {"recursion_limit": 200})
    assert state["messages"][-1].content == "all read"
    assert len(model.seen) == STEPS + 1
    for sent in model.seen:
        check_langchain_view(sent)
    info = engine.session_info("lc")
    assert info["messages"] == 1 + 2 * STEPS and info["checkpoints"] >= 1
    assert len(model.seen[-1]) < 2 * STEPS
    assert_offloaded(engine, "lc", json.dumps([[m.model_dump() for m in sent] for sent in model.seen], default=str))


def test_langgraph_pre_model_hook(workdir: pathlib.Path) -> None:
    from langgraph.prebuilt import create_react_agent

    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    model = ToolLoopModel(messages=iter(scripted()))
    model.seen = []
    agent = create_react_agent(model, [run_tests], pre_model_hook=pre_model_hook(engine, "lg"))
    state = agent.invoke({"messages": [{"role": "user", "content": "Read every file"}]}, {"recursion_limit": 200})
    assert state["messages"][-1].content == "all read"
    # The state keeps everything; the model saw the compacted view.
    assert len(state["messages"]) == 2 + 2 * STEPS
    assert len(model.seen[-1]) < 2 * STEPS
    for sent in model.seen:
        check_langchain_view(sent)
    assert engine.session_info("lg")["messages"] == 1 + 2 * STEPS
    assert_offloaded(engine, "lg", json.dumps([[m.model_dump() for m in sent] for sent in model.seen], default=str))


# --- OpenAI Agents SDK -------------------------------------------------------------------------

from agents import Agent as OAgent, Runner, function_tool, set_tracing_disabled  # noqa: E402

set_tracing_disabled(True)
from agents.items import ModelResponse as OModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from ctxkit.agents import CtxkitSession  # noqa: E402


class ScriptedModel(Model):
    """An Agents SDK ``Model``: calls run_tests PER_RUN times in each run, then answers."""

    def __init__(self) -> None:
        self.seen: List[Any] = []
        self.step = 0
        self.in_run = 0

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> OModelResponse:
        self.seen.append(input)
        if self.in_run < PER_RUN:
            self.in_run += 1
            self.step += 1
            step = self.step
            output: List[Any] = [ResponseFunctionToolCall(type="function_call", call_id=f"c{step}", name="run_tests", arguments=json.dumps({"path": f"src/f{step}.py"}), id=f"fc{step}", status="completed")]
        else:
            self.in_run = 0
            output = [ResponseOutputMessage(type="message", id=f"m{self.step}", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="all read", annotations=[])])]
        return OModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool(name_override="run_tests")
def orun_tests(path: str) -> str:
    """Reads a file."""
    return output(path)


def test_openai_agents_session(workdir: pathlib.Path) -> None:
    """12 runs of 3 tool steps each (36 in all): every model call of a run gets ctxkit's view
    through the session's call_model_input_filter, and the session keeps the whole conversation
    once."""
    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    session = CtxkitSession("oa", engine)
    model = ScriptedModel()
    agent = OAgent(name="reader", instructions="Read files.", model=model, tools=[orun_tests])

    async def main() -> Any:
        result = None
        for run in range(STEPS // PER_RUN):
            result = await Runner.run(agent, f"Run the tests, round {run}", session=session, max_turns=PER_RUN + 3, run_config=session.run_config())
        return result

    result = asyncio.run(main())
    assert result.final_output == "all read"
    info = engine.session_info("oa")
    assert info["messages"] == (STEPS // PER_RUN) * 2 + 2 * STEPS
    assert info["checkpoints"] >= 1
    items = asyncio.run(session.get_items())
    assert ctxkit.validate({"input": items}, format="responses") == []
    # The SDK's history is ctxkit's view (each run started from it), the log the whole of it:
    # every message of the 12 runs once (the count above), as it was added.
    assert 0 < len(items) < info["messages"]
    assert "[Context checkpoint]" in json.dumps(items[0])
    logged = [entry["message"] for entry in engine.export("oa")["entries"]]
    whole = CtxkitSession.engine_render(logged)
    assert asyncio.run(session.get_items(limit=len(whole))) == whole
    for limit in (1, 2, 5, 17):  # read from the log's end, the same items
        assert asyncio.run(session.get_items(limit=limit)) == whole[-limit:]
    for sent in model.seen:
        assert ctxkit.validate({"input": sent}, format="responses") == []
    # The calls late in the loop got the compacted view, not the whole conversation.
    assert len(model.seen[-1]) < 2 * STEPS
    assert_offloaded(engine, "oa", json.dumps(model.seen, default=str))
    # pop_item and clear_session start a new generation; the old one stays stored.
    last = asyncio.run(session.pop_item())
    assert last is not None and "all read" in json.dumps(last)
    assert session.ctxkit_session == "oa#2"
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    assert CtxkitSession("oa", engine).ctxkit_session == "oa#3"
