# examples/pydantic_ai_agent.py: one agent at module scope, one conversation per user.
import tempfile

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.test import TestModel

import ctxkit
from ctxkit.pydantic_ai import CtxkitHistory

engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
agent = Agent(TestModel(), instructions="You are a billing bot.", capabilities=[CtxkitHistory(engine)])


@agent.tool_plain
def read_file(path: str) -> str:
    """Reads a file."""
    return f"contents of {path}"


stored = {"alice": b"[]", "bob": b"[]"}  # your own persistence of each user's history


def handle(user: str, prompt: str) -> str:
    """A request: the history comes back from storage; ctxkit appends only what is new."""
    history = ModelMessagesTypeAdapter.validate_json(stored[user])
    result = agent.run_sync(prompt, message_history=history, conversation_id=f"user-{user}")
    stored[user] = ModelMessagesTypeAdapter.dump_json(result.all_messages())
    return result.output


handle("alice", "Read README.md")
handle("bob", "Read setup.py")
print(handle("alice", "And then?"), engine.session_info("user-alice")["messages"])
