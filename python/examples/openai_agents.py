# examples/openai_agents.py: an Agents SDK session per user, ctxkit's view on every model call.
import asyncio
import tempfile
from typing import Any

from agents import Agent, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

import ctxkit
from ctxkit.agents import CtxkitSession


class EchoModel(Model):
    """A stand-in for a real model (no network)."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        text = ResponseOutputText(type="output_text", text="hello", annotations=[])
        message = ResponseOutputMessage(type="message", id="m", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
agent = Agent(name="assistant", instructions="Be brief.", model=EchoModel())


async def handle(user: str, text: str) -> str:
    session = CtxkitSession(user, engine)  # per request, like SQLiteSession
    result = await Runner.run(agent, text, session=session, run_config=session.run_config())
    return str(result.final_output)


async def main() -> None:
    print(await asyncio.gather(handle("alice", "Hi"), handle("bob", "Hello")))
    print(len(await CtxkitSession("alice", engine).get_items()))


asyncio.run(main())
