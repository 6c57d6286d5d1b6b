"""The adapters in the frameworks' real lifecycles (issue 33), with the real packages and their
test models, every model call checked:

- the server pattern: one agent at module scope, two users interleaved (threads and asyncio),
  each keyed by the framework's own id: no model call of one user carries the other's secret;
- a new adapter (and agent) per request, rebuilt from the framework's own persisted history
  (pydantic-ai's ``ModelMessagesTypeAdapter``, LangGraph's checkpointer, the Agents SDK's
  session), then a restart (a new Engine on the same database): every message logged once;
- every model call got ctxkit's view (its system prompt, after the caller's own)."""

from __future__ import annotations

import asyncio
import json
import pathlib
import threading
from typing import Any, Dict, List

import ctxkit

SECRETS = {"alice": "the vault code is 1111", "bob": "the vault code is 2222"}
MARK = "Current date"  # in ctxkit's system prompt
CODING_AGENT = "capable software agent"  # ctxkit's coding-agent role, opt-in in the adapters


def other_secret(user: str) -> str:
    return next(secret for name, secret in SECRETS.items() if name != user)


def logged_texts(engine: ctxkit.Engine, session: str) -> List[str]:
    return [json.dumps(entry["message"].get("content")) for entry in engine.export(session)["entries"]]


def assert_once(texts: List[str], *needles: str) -> None:
    for needle in needles:
        assert sum(needle in text for text in texts) == 1, (needle, texts)


# --- pydantic-ai -------------------------------------------------------------------------------

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from ctxkit.pydantic_ai import CtxkitHistory, to_ctxkit  # noqa: E402


class Recorder:
    """A FunctionModel's function: records each call's messages and answers by its user."""

    def __init__(self) -> None:
        self.calls: List[str] = []
        self.lock = threading.Lock()

    def __call__(self, messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent = json.dumps([to_ctxkit([m]) for m in messages], default=str)
        with self.lock:
            self.calls.append(sent)
        return ModelResponse(parts=[TextPart(f"noted ({len(self.calls)})")])


def pydantic_agent(engine: ctxkit.Engine, recorder: Recorder) -> Agent[None, str]:
    return Agent(FunctionModel(recorder), instructions="You are a billing bot.", capabilities=[CtxkitHistory(engine)])


def check_pydantic_calls(recorder: Recorder) -> None:
    assert recorder.calls
    for sent in recorder.calls:
        assert MARK in sent and CODING_AGENT not in sent and "Working directory" not in sent
        for user, secret in SECRETS.items():
            if secret in sent:
                assert other_secret(user) not in sent, sent


def test_pydantic_ai_one_agent_serves_two_users_interleaved(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    recorder = Recorder()
    agent = pydantic_agent(engine, recorder)  # module scope, in a server
    histories: Dict[str, List[ModelMessage]] = {user: [] for user in SECRETS}
    ids = {user: f"conv-{user}" for user in SECRETS}

    def request(user: str, prompt: str) -> None:
        result = agent.run_sync(prompt, message_history=histories[user], conversation_id=ids[user])
        histories[user] = result.all_messages()

    for round_ in range(3):
        threads = [
            threading.Thread(target=request, args=(user, SECRETS[user] if round_ == 0 else f"{user} asks {round_}"))
            for user in SECRETS
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    async def both() -> None:
        async def one(user: str) -> None:
            result = await agent.run("and what is my code?", message_history=histories[user], conversation_id=ids[user])
            histories[user] = result.all_messages()

        await asyncio.gather(*(one(user) for user in SECRETS))

    asyncio.run(both())
    check_pydantic_calls(recorder)
    assert len(recorder.calls) == 8
    for user in SECRETS:
        texts = logged_texts(engine, ids[user])
        # 4 questions, 3 answers: an answer reaches the log with the request after it.
        assert len(texts) == 7
        assert_once(texts, SECRETS[user])
        assert not any(other_secret(user) in text for text in texts)


def test_pydantic_ai_rebuilt_per_request_and_after_a_restart(workdir: pathlib.Path) -> None:
    stored = b"[]"  # the app's own persistence, as pydantic-ai documents it
    recorder = Recorder()
    questions = ["first question", "second question", "third question"]
    for index, question in enumerate(questions):
        engine = ctxkit.Engine(workdir=workdir, window=32_000)  # a new process each time
        agent = pydantic_agent(engine, recorder)
        history = ModelMessagesTypeAdapter.validate_json(stored)
        result = agent.run_sync(question, message_history=history)
        stored = ModelMessagesTypeAdapter.dump_json(result.all_messages())
        # pydantic-ai's history is its own: no ctxkit summary or system prompt in it.
        assert MARK not in stored.decode()
        engine.close()
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    (session,) = [info["name"] for info in engine.sessions()]
    texts = logged_texts(engine, session)
    assert len(texts) == 5
    assert_once(texts, *questions)
    check_pydantic_calls(recorder)


# --- LangChain v1 / LangGraph ------------------------------------------------------------------

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from ctxkit.langchain import CtxkitMiddleware  # noqa: E402


LC_CALLS: List[str] = []  # what every EchoChat was sent (a pydantic model keeps no class state)
LC_LOCK = threading.Lock()


class EchoChat(GenericFakeChatModel):
    """Answers every call, recording what it was sent (shared by every instance)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "EchoChat":
        return self

    def _generate(self, messages: List[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        sent = json.dumps([m.model_dump() for m in messages], default=str)
        with LC_LOCK:
            LC_CALLS.append(sent)
        return super()._generate(messages, *args, **kwargs)


def echo() -> EchoChat:
    return EchoChat(messages=iter([AIMessage(content=f"noted {i}") for i in range(100)]))


def check_langchain_calls() -> None:
    assert LC_CALLS
    for sent in LC_CALLS:
        assert MARK in sent and "You are a billing bot." in sent and CODING_AGENT not in sent
        for user, secret in SECRETS.items():
            if secret in sent:
                assert other_secret(user) not in sent, sent


def test_langchain_one_agent_two_threads_interleaved(workdir: pathlib.Path) -> None:
    LC_CALLS.clear()
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    agent = create_agent(echo(), [], system_prompt="You are a billing bot.", middleware=[CtxkitMiddleware(engine)], checkpointer=InMemorySaver())

    def request(user: str, text: str) -> None:
        agent.invoke({"messages": [{"role": "user", "content": text}]}, {"configurable": {"thread_id": user}})

    for round_ in range(3):
        threads = [threading.Thread(target=request, args=(user, SECRETS[user] if round_ == 0 else f"{user} asks {round_}")) for user in SECRETS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    async def both() -> None:
        await asyncio.gather(*(agent.ainvoke({"messages": [{"role": "user", "content": "my code?"}]}, {"configurable": {"thread_id": user}}) for user in SECRETS))

    asyncio.run(both())
    check_langchain_calls()
    assert len(LC_CALLS) == 8
    for user in SECRETS:
        texts = logged_texts(engine, user)
        assert len(texts) == 7
        assert_once(texts, SECRETS[user])
        assert not any(other_secret(user) in text for text in texts)


def test_langgraph_checkpointer_rebuilt_per_request_and_after_a_restart(workdir: pathlib.Path) -> None:
    LC_CALLS.clear()
    saver = InMemorySaver()  # the framework's persisted history, kept across "processes"
    questions = ["first question", "second question", "third question"]
    for question in questions:
        engine = ctxkit.Engine(workdir=workdir, window=32_000)
        agent = create_agent(echo(), [], system_prompt="You are a billing bot.", middleware=[CtxkitMiddleware(engine)], checkpointer=saver)
        state = agent.invoke({"messages": [{"role": "user", "content": question}]}, {"configurable": {"thread_id": "t1"}})
        # The state is LangGraph's own: the whole conversation, no ctxkit view in it.
        assert [m.type for m in state["messages"]].count("human") == questions.index(question) + 1
        engine.close()
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    texts = logged_texts(engine, "t1")
    assert len(texts) == 5
    assert_once(texts, *questions)
    check_langchain_calls()


# --- OpenAI Agents SDK -------------------------------------------------------------------------

from agents import Agent as OAgent, Runner, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse as OModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseOutputMessage, ResponseOutputText  # noqa: E402

from ctxkit.agents import CtxkitSession  # noqa: E402

set_tracing_disabled(True)


class RecordingModel(Model):
    """An Agents SDK model: records instructions and input of every call, answers."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> OModelResponse:
        self.calls.append(json.dumps([system_instructions, input], default=str))
        text = ResponseOutputText(type="output_text", text=f"noted {len(self.calls)}", annotations=[])
        message = ResponseOutputMessage(type="message", id=f"m{len(self.calls)}", role="assistant", status="completed", content=[text])
        return OModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_agents_sdk_two_users_and_a_restart(workdir: pathlib.Path) -> None:
    model = RecordingModel()
    agent = OAgent(name="billing", instructions="You are a billing bot.", model=model)  # module scope

    async def request(engine: ctxkit.Engine, user: str, text: str) -> None:
        session = CtxkitSession(user, engine)  # per request, as SQLiteSession is
        await Runner.run(agent, text, session=session, run_config=session.run_config())

    async def rounds() -> None:
        engine = ctxkit.Engine(workdir=workdir, window=32_000)
        await asyncio.gather(*(request(engine, user, SECRETS[user]) for user in SECRETS))
        await asyncio.gather(*(request(engine, user, f"{user} asks") for user in SECRETS))
        engine.close()
        restarted = ctxkit.Engine(workdir=workdir, window=32_000)
        await asyncio.gather(*(request(restarted, user, "my code?") for user in SECRETS))
        restarted.close()

    asyncio.run(rounds())
    assert len(model.calls) == 6
    for sent in model.calls:
        assert MARK in sent and "You are a billing bot." in sent and CODING_AGENT not in sent
        for user, secret in SECRETS.items():
            if secret in sent:
                assert other_secret(user) not in sent, sent
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    for user in SECRETS:
        texts = logged_texts(engine, user)
        assert len(texts) == 6, texts
        assert_once(texts, SECRETS[user], f"{user} asks", "my code?")


def test_the_coding_agent_prompt_is_opt_in(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder), capabilities=[CtxkitHistory(engine, agent_prompt=True)])
    agent.run_sync("hello", conversation_id="c1")
    assert CODING_AGENT in recorder.calls[-1] and "Working directory" in recorder.calls[-1]
    plain = Agent(FunctionModel(recorder), capabilities=[CtxkitHistory(engine)])
    plain.run_sync("hello", conversation_id="c2")
    assert CODING_AGENT not in recorder.calls[-1] and MARK in recorder.calls[-1]


# --- The history tools are the agent's own -------------------------------------------------------

import re  # noqa: E402

from pydantic_ai.messages import ToolCallPart, ToolReturnPart  # noqa: E402

BIG = "".join(f"line {i}: result row {i}\n" for i in range(2_000))  # about 46 KB: offloaded


def test_pydantic_ai_agent_pages_an_offloaded_output_with_its_own_tool(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    returns: List[str] = []

    def model(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        names = {tool.name for tool in info.function_tools}
        assert {"search_history", "read_history", "read_offload", "dump"} <= names
        last = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)] if hasattr(messages[-1], "parts") else []
        returns.extend(str(p.content) for p in last)
        step = len(returns)
        if step == 0:
            return ModelResponse(parts=[ToolCallPart("dump", {}, tool_call_id="d1")])
        if step == 1:
            reference = returns[0]
            assert "read_offload" in reference and "read_file" not in reference, reference
            path = re.search(r"\.ctxkit/tool_results/[^\s`'\"]+", reference)
            assert path is not None, reference
            return ModelResponse(parts=[ToolCallPart("read_offload", {"path": path.group(0), "offset": 1000, "limit": 5}, tool_call_id="r1")])
        if step == 2:
            return ModelResponse(parts=[ToolCallPart("search_history", {"query": "alice's code 7"}, tool_call_id="s1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), capabilities=[CtxkitHistory(engine)])

    @agent.tool_plain
    def dump() -> str:
        """Dumps the table."""
        return BIG

    result = agent.run_sync("alice's code 7: dump the table", conversation_id="alice")
    assert result.output == "done"
    assert "line 1000: result row 1000" in returns[1]
    assert "alice's code 7" in returns[2]
    # The page read back was not offloaded again: one offload, the dump.
    assert engine.session_info("alice")["offloads"] == 1


def test_langchain_history_tools_answer_from_the_threads_own_log(workdir: pathlib.Path) -> None:
    from langchain_core.messages import ToolMessage

    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    search = {"name": "search_history", "args": {"query": "vault code"}, "id": "s1"}
    script = [AIMessage(content="", tool_calls=[search]), AIMessage(content="ok")] * 2
    agent = create_agent(EchoChat(messages=iter(script)), [], middleware=[CtxkitMiddleware(engine)], checkpointer=InMemorySaver())
    found = {}
    for user in SECRETS:
        state = agent.invoke({"messages": [{"role": "user", "content": SECRETS[user]}]}, {"configurable": {"thread_id": user}})
        found[user] = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    for user in SECRETS:
        assert any(SECRETS[user] in text for text in found[user]), found[user]
        assert not any(other_secret(user) in text for text in found[user]), found[user]


def test_agents_sdk_history_tools_answer_from_the_runs_own_session(workdir: pathlib.Path) -> None:
    from agents.items import ModelResponse as Response
    from openai.types.responses import ResponseFunctionToolCall

    from ctxkit.agents import history_tools

    engine = ctxkit.Engine(workdir=workdir, window=32_000)
    outputs: Dict[str, List[str]] = {user: [] for user in SECRETS}

    class SearchingModel(Model):
        """First call: search the history for "vault code"; second: answer."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Response:
            user = next(u for u in SECRETS if SECRETS[u] in json.dumps(input, default=str))
            results = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
            if not results:
                call = ResponseFunctionToolCall(type="function_call", call_id=f"s-{user}", name="search_history", arguments=json.dumps({"query": "vault code"}), id=f"fc-{user}", status="completed")
                return Response(output=[call], usage=Usage(), response_id=None)
            outputs[user].extend(str(r.get("output")) for r in results)
            text = ResponseOutputText(type="output_text", text="found", annotations=[])
            return Response(output=[ResponseOutputMessage(type="message", id=f"m-{user}", role="assistant", status="completed", content=[text])], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = OAgent(name="billing", instructions="You are a billing bot.", model=SearchingModel(), tools=history_tools(engine))

    async def request(user: str) -> None:
        session = CtxkitSession(user, engine)
        await Runner.run(agent, SECRETS[user], session=session, run_config=session.run_config())

    async def both() -> None:
        await asyncio.gather(*(request(user) for user in SECRETS))

    asyncio.run(both())
    for user in SECRETS:
        assert any(SECRETS[user] in text for text in outputs[user]), outputs[user]
        assert not any(other_secret(user) in text for text in outputs[user]), outputs[user]


def test_the_agents_tool_definitions_are_reserved_in_the_budget(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=32_000, offload={"paging_tool": "read_file"})
    budgets = {}
    for tools in (True, False):
        history = CtxkitHistory(engine, history_tools=tools)
        agent = Agent(FunctionModel(Recorder()), capabilities=[history])
        agent.run_sync("hello", conversation_id=f"tools-{tools}")
        assert history.last_turn is not None
        budgets[tools] = history.last_turn["stats"]["budget_tokens"]
    # The three history tools' definitions cost several hundred tokens of every request.
    assert budgets[False] - budgets[True] >= 300, budgets
