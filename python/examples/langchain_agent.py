# examples/langchain_agent.py: ctxkit as LangChain v1 middleware, and as LangGraph's pre_model_hook.
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

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
    return FakeModel(messages=iter([call, AIMessage(content="done")]))


engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
agent = create_agent(script(), [read_file], middleware=[CtxkitMiddleware(engine, session="chat-1")])
state = agent.invoke({"messages": [{"role": "user", "content": "Read README.md"}]})
print(state["messages"][-1].content)

# LangGraph's prebuilt agent: the hook returns {"llm_input_messages": view}.
hook = pre_model_hook(engine, session="chat-2")
print(len(hook({"messages": state["messages"]})["llm_input_messages"]))
