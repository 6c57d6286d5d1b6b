# examples/openai_agents.py: ctxkit as an OpenAI Agents SDK Session.
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


async def main() -> None:
    engine = ctxkit.Engine(workdir=tempfile.mkdtemp(), window=128_000)
    session = CtxkitSession("chat-1", engine)
    agent = Agent(name="assistant", instructions="Be brief.", model=EchoModel())
    result = await Runner.run(agent, "Hi", session=session)
    print(result.final_output, len(await session.get_items()))


asyncio.run(main())
