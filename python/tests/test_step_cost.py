"""A step's cost follows its new messages, not the conversation (issue 33 item 8): the adapters
convert and fingerprint, per model call, the framework messages the call added and three more
(the first, the last held, the new last; ``ctxkit._log.adapter_work`` counts them), never the
whole conversation. Counted, not timed, so the test is deterministic: each framework serves a
conversation of 2,000+ messages of history, then a tool loop whose every step is checked.

A conversation's first call on an ``Engine`` object (the first request, a restart) compares the
whole conversation once with the log (``Engine.append_new``); that call is counted too, to show
the counter sees a full pass. The Agents SDK's session hands the SDK ctxkit's view instead of
the log, so there even a run's first step, and every model call's input, follow the window. An adapter made per request over the same engine knows the held
ends (they are kept per engine), so its first step is a step like the others."""

from __future__ import annotations

import asyncio
import json
import pathlib
from typing import Any, Dict, List

import pytest

import ctxkit
import ctxkit.langchain
from ctxkit._log import adapter_work

HISTORY = 1_000  # exchanges: 2,000 messages of history
STEPS = 6  # tool calls in the loop after it
# What one step may touch: the messages it added (a tool call and its result, or a new prompt)
# and the three the rule and the held ends read; the Agents SDK also saves each step's items to
# the session (``add_items``), whose check finds them held by reading two fingerprints.
PER_STEP = 2 + 3
PER_AGENTS_STEP = PER_STEP + 2


def touched() -> int:
    return adapter_work["converted"] + adapter_work["fingerprinted"]


class StepCounter:
    """Records, at each model call, what the adapter touched since the previous call."""

    def __init__(self) -> None:
        self.mark = touched()
        self.steps: List[int] = []

    def step(self) -> None:
        now = touched()
        self.steps.append(now - self.mark)
        self.mark = now

    def reset(self) -> None:
        self.mark = touched()
        self.steps.clear()


def check(steps: List[int], calls: int, most: int = PER_STEP) -> None:
    assert len(steps) >= calls, steps
    assert all(0 < work <= most for work in steps), steps


# --- pydantic-ai -------------------------------------------------------------------------------

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from ctxkit.pydantic_ai import CtxkitHistory  # noqa: E402


def test_pydantic_ai_steps_touch_only_their_new_messages(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=200_000, offload=False)
    counter = StepCounter()

    def model(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        counter.step()
        last = messages[-1]
        done = sum(isinstance(p, ToolReturnPart) for p in getattr(last, "parts", []))
        if done and len(counter.steps) > STEPS:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("lookup", {"row": len(counter.steps)}, tool_call_id=f"c{len(counter.steps)}")])

    agent = Agent(FunctionModel(model), capabilities=[CtxkitHistory(engine, history_tools=False)])

    @agent.tool_plain
    def lookup(row: int) -> str:
        """A row of the table."""
        return f"row {row}: ok"

    history: List[ModelMessage] = []
    for i in range(HISTORY):
        history.append(ModelRequest(parts=[UserPromptPart(f"question {i}")]))
        history.append(ModelResponse(parts=[TextPart(f"answer {i}")]))
    first = agent.run_sync("start", message_history=history, conversation_id="big")
    # The first call met the conversation: the whole of it compared once.
    assert counter.steps[0] >= 2 * HISTORY
    counter.reset()
    result = agent.run_sync("go on", message_history=first.all_messages(), conversation_id="big")
    assert result.output == "done"
    check(counter.steps, STEPS)
    # Every message of the conversation is logged once (the last answer comes with the next call).
    assert engine.session_info("big")["messages"] == len(result.all_messages()) - 1
    # An agent (and capability) made per request over the same engine knows the held ends too.
    counter.reset()
    again = Agent(FunctionModel(model), capabilities=[CtxkitHistory(engine, history_tools=False)])
    again.tool_plain(lookup)
    final = again.run_sync("and again", message_history=result.all_messages(), conversation_id="big")
    check(counter.steps, STEPS)
    assert engine.session_info("big")["messages"] == len(final.all_messages()) - 1


# --- LangChain v1 / LangGraph ------------------------------------------------------------------

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from ctxkit.langchain import CtxkitMiddleware  # noqa: E402

LC_COUNTER: Dict[str, StepCounter] = {}


class CountingChat(GenericFakeChatModel):
    """A scripted chat model (tool calls, then an answer) that records each call's work."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "CountingChat":
        return self

    def _generate(self, messages: List[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        LC_COUNTER["c"].step()
        return super()._generate(messages, *args, **kwargs)


@tool
def lookup(row: int) -> str:
    """A row of the table."""
    return f"row {row}: ok"


def test_langchain_steps_touch_only_their_new_messages(workdir: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=200_000, offload=False)
    LC_COUNTER["c"] = counter = StepCounter()
    # The view (here the whole conversation: the window holds it) goes back to LangChain
    # messages: a step builds only those its last view lacked.
    built: List[int] = []
    build = ctxkit.langchain.to_langchain_messages

    def counted(view: Any) -> Any:
        built.append(len(view))
        return build(view)

    monkeypatch.setattr(ctxkit.langchain, "to_langchain_messages", counted)
    calls = [AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"row": i}, "id": f"c{i}"}]) for i in range(STEPS)]
    script = [AIMessage(content="ok")] + calls + [AIMessage(content="done")]
    agent = create_agent(
        CountingChat(messages=iter(script)), [lookup],
        middleware=[CtxkitMiddleware(engine, history_tools=False)], checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "big"}}
    history: List[BaseMessage] = []
    for i in range(HISTORY):
        history += [HumanMessage(f"question {i}"), AIMessage(f"answer {i}")]
    agent.invoke({"messages": [*history, HumanMessage("start")]}, config)
    assert counter.steps[0] >= 2 * HISTORY
    assert built[0] >= 2 * HISTORY  # the first view: built whole, and counted
    counter.reset()
    built.clear()
    state = agent.invoke({"messages": [HumanMessage("go on")]}, config)
    assert state["messages"][-1].content == "done"
    check(counter.steps, STEPS + 1)
    assert len(built) == STEPS + 1 and all(0 < n <= 2 for n in built), built
    assert engine.session_info("big")["messages"] == len(state["messages"]) - 1  # the last answer comes next call


# --- OpenAI Agents SDK -------------------------------------------------------------------------

from agents import Agent as OAgent, Runner, function_tool, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse as OModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from ctxkit.agents import CtxkitSession  # noqa: E402

set_tracing_disabled(True)


@function_tool
def table_row(row: int) -> str:
    """A row of the table."""
    return f"row {row}: ok"


class LoopModel(Model):
    """Calls ``table_row`` STEPS times, then answers; records each call's work."""

    def __init__(self, counter: StepCounter) -> None:
        self.counter = counter

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> OModelResponse:
        self.counter.step()
        step = len(self.counter.steps)
        if step <= STEPS:
            call = ResponseFunctionToolCall(type="function_call", call_id=f"c{step}", name="table_row", arguments=json.dumps({"row": step}), id=f"fc{step}", status="completed")
            return OModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        return OModelResponse(output=[ResponseOutputMessage(type="message", id="m", role="assistant", status="completed", content=[text])], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class CountingEngine(ctxkit.Engine):
    """An engine that counts the log messages the session reads back into Python."""

    read = 0
    exports = 0

    def export(self, session: str) -> Any:
        whole = super().export(session)
        CountingEngine.exports += 1
        CountingEngine.read += len(whole["entries"])
        return whole

    def tail(self, session: str, count: int) -> Any:
        tail = super().tail(session, count)
        CountingEngine.read += len(tail["entries"])
        return tail


def test_agents_sdk_steps_touch_only_their_new_messages_and_the_view(workdir: pathlib.Path) -> None:
    """The session gives the SDK ctxkit's view, not the log: every model call's input (what the
    SDK hands ``call_model_input_filter``) follows the window, not the 2,000 messages of history,
    and no step, the run's first included, converts or reads back the whole conversation."""
    engine = CountingEngine(workdir=workdir, window=4_000)
    history = []
    for i in range(HISTORY):
        history += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    engine.import_session("big", history)
    counter = StepCounter()
    agent = OAgent(name="rows", model=LoopModel(counter), tools=[table_row])
    inputs: List[int] = []

    async def run(text: str) -> Any:
        session = CtxkitSession("big", engine)  # per request, as the README shows
        inner = session.call_model_input_filter

        async def counted(data: Any) -> Any:
            inputs.append(len(data.model_data.input))
            return await inner(data)

        config = session.run_config()
        config.call_model_input_filter = counted
        return await Runner.run(agent, text, session=session, run_config=config)

    CountingEngine.read = CountingEngine.exports = 0
    result = asyncio.run(run("go on"))
    assert result.final_output == "done"
    view = inputs[0] - 1  # the run's input is the view and the new prompt
    assert 0 < view < HISTORY // 4, inputs
    assert inputs == [view + 1 + 2 * step for step in range(STEPS + 1)]
    # The first step too: the view's two ends fingerprinted, the prompt appended; nothing else.
    check(counter.steps[:1], 1, PER_AGENTS_STEP + 2)
    check(counter.steps[1:], STEPS, PER_AGENTS_STEP)
    assert CountingEngine.exports == 0 and CountingEngine.read == 0
    assert engine.session_info("big")["messages"] == 2 * HISTORY + 1 + 2 * STEPS + 1
    # The next request starts from the view again; every message is still logged once, in order.
    counter.reset()
    inputs.clear()
    result = asyncio.run(run("and again"))
    assert result.final_output == "done"
    assert max(inputs) < HISTORY // 4, inputs
    check(counter.steps[:1], 1, PER_AGENTS_STEP + 2)
    check(counter.steps[1:], STEPS, PER_AGENTS_STEP)
    logged = [entry["message"] for entry in engine.export("big")["entries"]]
    assert len(logged) == 2 * HISTORY + 2 * (1 + 2 * STEPS + 1)
    prompts = [m["content"] for m in logged if m["role"] == "user" and not str(m["content"]).startswith(("question", "["))]
    assert prompts == ["go on", "and again"]


def test_agents_sdk_session_reads_its_tail_from_the_logs_end_and_stays_held_after_a_pop(workdir: pathlib.Path) -> None:
    """``get_items(limit=n)`` reads the log's last messages only; after ``pop_item`` (a copy of
    the log without its last message) the SDK's list, the view less the popped item, stays held,
    so a new item is appended once, after the rest."""
    engine = CountingEngine(workdir=workdir, window=4_000)
    history = []
    for i in range(HISTORY):
        history += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    engine.import_session("big", history)
    session = CtxkitSession("big", engine)
    CountingEngine.read = 0
    tail = asyncio.run(session.get_items(limit=3))
    assert [(item["role"], item["content"]) for item in tail] == [("assistant", "answer 998"), ("user", "question 999"), ("assistant", "answer 999")]
    assert CountingEngine.read == 3
    with pytest.raises(ctxkit.InvalidInputError, match="count"):
        engine.tail("big", -1)
    assert engine.tail("big", 0) == {"last_seq": 2 * HISTORY, "entries": []}
    view = asyncio.run(session.get_items())
    assert 0 < len(view) < HISTORY // 4
    popped = asyncio.run(session.pop_item())
    assert popped is not None and "answer 999" in json.dumps(popped)
    asyncio.run(session.add_items([{"role": "user", "content": "after the pop"}]))
    logged = [entry["message"]["content"] for entry in engine.export(session.ctxkit_session)["entries"]]
    assert logged[-3:] == ["answer 998", "question 999", "after the pop"]
    assert len(logged) == 2 * HISTORY


# --- The binding: the core's rule, decided in Rust ----------------------------------------------

from ctxkit._ctxkit import held_prefix, message_fingerprint  # noqa: E402


def test_held_prefix_reads_two_fingerprints_and_decides_by_the_cores_rule() -> None:
    conversation = [[{"role": "user", "content": f"m{i}"}] for i in range(1_000)]
    prints = [message_fingerprint(m) for m in conversation]
    asked: List[int] = []

    def at(index: int) -> str:
        asked.append(index)
        return prints[index]

    held = {"count": 600, "first": prints[0], "last": prints[599]}
    assert held_prefix(held, 1_000, at) == {"held": 600}
    assert asked == [0, 599]
    assert "diverged" in held_prefix(held, 599, at)  # shorter than what is held
    assert "diverged" in held_prefix({**held, "last": prints[598]}, 1_000, at)
    assert held_prefix({"count": 0}, 5, at) == {"held": 0}
    # A framework message is its ctxkit messages, chained: ids left out, order kept.
    pair = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert message_fingerprint(pair) != message_fingerprint(pair[::-1])


def test_held_prefix_names_its_bad_arguments() -> None:
    with pytest.raises(ctxkit.InvalidInputError, match="held.count"):
        held_prefix({"count": -1}, 3, lambda i: "0")
    with pytest.raises(ctxkit.InvalidInputError, match="held.first"):
        held_prefix({"count": 1, "first": "not hex", "last": None}, 3, lambda i: "0")
    with pytest.raises(ctxkit.InvalidInputError, match="incoming"):
        held_prefix({"count": 1}, -2, lambda i: "0")

    def broken(index: int) -> str:
        raise KeyError("the framework's message")

    with pytest.raises(KeyError):
        held_prefix({"count": 1, "first": "00000000000000ff", "last": "00000000000000ff"}, 3, broken)
    with pytest.raises(ctxkit.InvalidInputError, match="message_fingerprint"):
        message_fingerprint([{"role": "nobody"}])


def test_an_adapter_without_the_history_tools_refuses_references_to_read_offload(workdir: pathlib.Path) -> None:
    """``history_tools=False`` with the default offload would leave references naming
    ``read_offload``, a tool the agent lacks: refused when the adapter is built, naming the
    parameter; an engine paging with the agent's own tool, or without offload, is taken."""
    from ctxkit.langchain import CtxkitMiddleware
    from ctxkit.pydantic_ai import CtxkitHistory

    default = ctxkit.Engine(workdir=workdir, window=16_000)
    assert default.paging_tool == "read_offload"
    for build in (CtxkitHistory, CtxkitMiddleware):
        with pytest.raises(ctxkit.InvalidInputError, match="^history_tools: False"):
            build(default, history_tools=False)
        build(default)  # with the history tools, read_offload is the agent's
    (workdir / "own").mkdir()
    (workdir / "off").mkdir()
    own = ctxkit.Engine(workdir=workdir / "own", window=16_000, offload={"paging_tool": "cat_file"})
    off = ctxkit.Engine(workdir=workdir / "off", window=16_000, offload=False)
    assert (own.paging_tool, off.paging_tool) == ("cat_file", None)
    for engine in (own, off):
        CtxkitHistory(engine, history_tools=False)
        CtxkitMiddleware(engine, history_tools=False)
