# examples/pydantic_ai_agent.py: ctxkit as a pydantic-ai history processor.
import tempfile

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.models.test import TestModel

import ctxkit
from ctxkit.pydantic_ai import CtxkitHistory

engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
history = CtxkitHistory(engine, session="chat-1")
# pydantic-ai 2: capabilities=[ProcessHistory(history)]; pydantic-ai 1: history_processors=[history]
agent = Agent(TestModel(), capabilities=[ProcessHistory(history)])


@agent.tool_plain
def read_file(path: str) -> str:
    """Reads a file."""
    return f"contents of {path}"


result = agent.run_sync("Read README.md")
print(result.output, engine.session_info("chat-1")["messages"])
