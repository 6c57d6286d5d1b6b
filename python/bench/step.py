"""The adapters' per-step overhead (issue 33 item 8), in one run: each framework's agent runs a
tool loop after 100, 1,000 and 10,000 messages of history, once with ctxkit's adapter and once
without it (the same agent, the same scripted model, the same history). A step's figure is the
median over the loop's steps (the first, which loads the request's history, left out) of:

- the time between two model calls, with and without ctxkit (the framework's own work too),
  and the difference (what ctxkit adds to a step, or saves it when the view is smaller);
- ctxkit's work in the step, the calls the adapter makes (``Turns.append``: the new messages
  converted, fingerprinted and appended; ``Engine.prepare``; the view converted back to the
  framework's messages), as wall time and as the CPU time of the threads that ran them
  (``time.thread_time``), which waiting for the disk or for a shared machine's cores leaves out.

The adapter meets the conversation in a first request (compared once in full with the log);
the measured request follows it with the history the framework keeps, as a server's next
request does. The window is 16k tokens and each history message about 150 tokens, so from 100
messages on the view is a compacted one of about the window's size: the figures show what a
step costs as the conversation grows, not a view that grows with it.

Run: ``python bench/step.py [STEPS] [ADAPTER]`` (ADAPTER: run only the adapters whose name has
it, e.g. ``"Agents SDK"``) with the wheel and the pinned packages installed
(``requirements-test.txt``). Milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional

import ctxkit
import ctxkit.langchain
import ctxkit.pydantic_ai
from ctxkit._log import Turns

SIZES = [100, 1_000, 10_000]
WINDOW = 16_000
FILLER = " ".join(f"word{i}" for i in range(100))  # about 150 tokens a message


class Meter:
    """ctxkit's work since the last model call: wall and CPU milliseconds of the adapter's calls."""

    wall = 0.0
    cpu = 0.0

    @classmethod
    def wrap(cls, owner: Any, name: str) -> None:
        inner = getattr(owner, name)

        def measured(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                cls.wall += (time.perf_counter() - wall) * 1000
                cls.cpu += (time.thread_time() - cpu) * 1000

        setattr(owner, name, measured)


Meter.wrap(Turns, "append")
Meter.wrap(ctxkit.Engine, "prepare")
Meter.wrap(ctxkit.pydantic_ai, "from_ctxkit")
Meter.wrap(ctxkit.langchain._Conversations, "split")


class Clock:
    """The times of the model's calls in the measured request, and ctxkit's work before each."""

    def __init__(self) -> None:
        self.times: List[float] = []
        self.work: List[tuple] = []

    def tick(self) -> int:
        self.times.append(time.perf_counter())
        self.work.append((Meter.wall, Meter.cpu))
        Meter.wall = Meter.cpu = 0.0
        return len(self.times)

    def clear(self) -> None:
        self.times.clear()
        self.work.clear()

    def step_ms(self) -> Dict[str, float]:
        gaps = [(b - a) * 1000 for a, b in zip(self.times[1:], self.times[2:])]
        steps = self.work[2:]
        return {
            "step": statistics.median(gaps),
            "wall": statistics.median(w for w, _ in steps),
            "cpu": statistics.median(c for _, c in steps),
        }


def pydantic_ai(history_size: int, steps: int, with_ctxkit: bool) -> Dict[str, float]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    from ctxkit.pydantic_ai import CtxkitHistory

    clock = Clock()

    def model(messages: List[Any], info: Any) -> Any:
        step = clock.tick()
        if step > steps:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("lookup", {"row": step}, tool_call_id=f"c{len(messages)}")])

    capabilities = [CtxkitHistory(ctxkit.Engine(workdir=tempfile.mkdtemp(), window=WINDOW))] if with_ctxkit else []
    agent = Agent(FunctionModel(model), capabilities=capabilities)

    @agent.tool_plain
    def lookup(row: int) -> str:
        """A row."""
        return f"row {row}: " + FILLER[:200]

    history: List[Any] = []
    for i in range(history_size // 2):
        history += [ModelRequest(parts=[UserPromptPart(f"question {i} {FILLER}")]), ModelResponse(parts=[TextPart(f"answer {i} {FILLER}")])]
    limits = UsageLimits(request_limit=None)
    first = agent.run_sync("start", message_history=history, conversation_id="bench", usage_limits=limits)
    clock.clear()
    agent.run_sync("go on", message_history=first.all_messages(), conversation_id="bench", usage_limits=limits)
    return clock.step_ms()


def langchain(history_size: int, steps: int, with_ctxkit: bool) -> Dict[str, float]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from ctxkit.langchain import CtxkitMiddleware

    clock = Clock()

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

        def _generate(self, messages: List[Any], *args: Any, **kwargs: Any) -> ChatResult:
            step = clock.tick()
            if step > steps:
                message = AIMessage(content="done")
            else:
                message = AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"row": step}, "id": f"c{step}-{len(messages)}"}])
            return ChatResult(generations=[ChatGeneration(message=message)])

    @tool
    def lookup(row: int) -> str:
        """A row."""
        return f"row {row}: " + FILLER[:200]

    middleware = [CtxkitMiddleware(ctxkit.Engine(workdir=tempfile.mkdtemp(), window=WINDOW))] if with_ctxkit else []
    agent = create_agent(Scripted(messages=iter([])), [lookup], middleware=middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "bench"}, "recursion_limit": 10 * steps + 20}
    history: List[Any] = []
    for i in range(history_size // 2):
        history += [HumanMessage(f"question {i} {FILLER}"), AIMessage(f"answer {i} {FILLER}")]
    agent.invoke({"messages": [*history, HumanMessage("start")]}, config)
    clock.clear()
    agent.invoke({"messages": [HumanMessage("go on")]}, config)
    return clock.step_ms()


def agents_sdk(history_size: int, steps: int, with_ctxkit: bool) -> Dict[str, float]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from agents import SQLiteSession

    from ctxkit.agents import CtxkitSession

    set_tracing_disabled(True)
    clock = Clock()

    class Scripted(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            step = clock.tick()
            if step > steps:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                return ModelResponse(output=[ResponseOutputMessage(type="message", id="m", role="assistant", status="completed", content=[text])], usage=Usage(), response_id=None)
            call = ResponseFunctionToolCall(type="function_call", call_id=f"c{step}-{len(input)}", name="lookup", arguments=json.dumps({"row": step}), id=f"fc{step}", status="completed")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def lookup(row: int) -> str:
        """A row."""
        return f"row {row}: " + FILLER[:200]

    agent = Agent(name="bench", model=Scripted(), tools=[lookup])
    history: List[Dict[str, Any]] = []
    for i in range(history_size // 2):
        history += [{"role": "user", "content": f"question {i} {FILLER}"}, {"role": "assistant", "content": f"answer {i} {FILLER}"}]
    engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=WINDOW)
    if with_ctxkit:
        engine.import_session("bench", history)

    # Without ctxkit, the SDK's own session keeps the history (in memory), as an app that
    # persists its conversations does: the SDK's work per step with a session (it converts the
    # run's input once more than without one) is then in both columns, not only in ctxkit's.
    own_session = SQLiteSession("bench")
    if not with_ctxkit:
        asyncio.run(own_session.add_items(history))

    async def request(text: str) -> Any:
        if with_ctxkit:
            session = CtxkitSession("bench", engine)  # per request, as the README shows
            return await Runner.run(agent, text, session=session, run_config=session.run_config(), max_turns=10 * steps)
        return await Runner.run(agent, text, session=own_session, max_turns=10 * steps)

    asyncio.run(request("start"))
    clock.clear()
    asyncio.run(request("go on"))
    return clock.step_ms()


FRAMEWORKS: Dict[str, Callable[[int, int, bool], Dict[str, float]]] = {
    "pydantic-ai (CtxkitHistory)": pydantic_ai,
    "LangChain (CtxkitMiddleware)": langchain,
    "Agents SDK (CtxkitSession, call_model_input_filter)": agents_sdk,
}


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    only = sys.argv[2] if len(sys.argv) > 2 else ""  # run only the adapters whose name has it
    print(f"median ms per step of a {steps}-step tool loop, {WINDOW:,}-token window")
    print("| adapter | history | step without ctxkit | step with ctxkit | with - without | ctxkit's work: wall | ctxkit's work: CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, run in FRAMEWORKS.items():
        if only not in name:
            continue
        work: Dict[int, Dict[str, float]] = {}
        for size in SIZES:
            without = run(size, steps, False)
            work[size] = run(size, steps, True)
            extra = work[size]["step"] - without["step"]
            print(f"| {name} | {size:,} | {without['step']:.2f} | {work[size]['step']:.2f} | {extra:+.2f} | {work[size]['wall']:.2f} | {work[size]['cpu']:.2f} |", flush=True)
        ratios = [work[SIZES[-1]][k] / work[SIZES[0]][k] for k in ("wall", "cpu")]
        print(f"| {name}: at {SIZES[-1]:,} / at {SIZES[0]:,} | | | | | {ratios[0]:.2f}x | {ratios[1]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
