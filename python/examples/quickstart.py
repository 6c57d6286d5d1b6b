# examples/quickstart.py: one session, a turn before each model call.
import tempfile

import ctxkit

workdir = tempfile.mkdtemp()
engine = ctxkit.Engine(workdir=workdir, window=128_000)  # SQLite under workdir/.ctxkit/

engine.append("demo", [{"role": "user", "content": "What is in src/?"}])
turn = engine.prepare("demo", format="openai")  # the view to send, system prompt first
print(turn["messages"][0]["content"][:60], turn["stats"]["total_tokens"])

engine.append("demo", [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "name": "bash", "arguments": '{"cmd": "ls src"}'}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "main.rs\n" * 5_000},  # offloaded
])
engine.record_usage("demo", turn, 1_234)  # the input tokens the API reported
print(ctxkit.validate(engine.view("demo", format="anthropic"), format="anthropic"))  # []
