# examples/langchain_agent.py: LangChain v1 middleware, one conversation per LangGraph thread.
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import ctxkit
from ctxkit.langchain import CtxkitMiddleware, pre_model_hook


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> "FakeModel":
        return self


@tool
def read_file(path: str) -> str:
    """Reads a file."""
    return f"contents of {path}"


def script() -> FakeModel:
    call = AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"path": "README.md"}, "id": "c1"}])
    return FakeModel(messages=iter([call, AIMessage(content="done"), AIMessage(content="hello")]))


engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
agent = create_agent(
    script(), [read_file], system_prompt="You are a billing bot.",
    middleware=[CtxkitMiddleware(engine)], checkpointer=InMemorySaver(),
)
for user, text in [("alice", "Read README.md"), ("bob", "Hi")]:  # the thread_id is the key
    state = agent.invoke({"messages": [{"role": "user", "content": text}]}, {"configurable": {"thread_id": user}})
    print(user, state["messages"][-1].content)

# LangGraph's prebuilt agent: the hook returns {"llm_input_messages": view}.
hook = pre_model_hook(engine, session="chat-2")
print(len(hook({"messages": state["messages"]})["llm_input_messages"]))
