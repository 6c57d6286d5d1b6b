"""Side by side in one run (figures in docs/performance.md, "Python"):

1. a turn over a 10k-message session: ctxkit's ``Engine.prepare`` against LangChain's
   ``trim_messages`` and the Agents SDK's ``SQLiteSession.get_items`` on the same messages;
2. appending: ``Engine.append`` against ``SQLiteSession.add_items``, 100 messages a batch;
3. the cost of crossing into Rust: ``ctxkit.estimate_tokens("x")`` against a Python call.

Run: ``python bench/bench.py [MESSAGES]`` with the wheel and the pinned packages installed
(``requirements-test.txt``). Each figure is the median of several runs, in milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

from agents.memory import SQLiteSession
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages
from langchain_core.messages.utils import count_tokens_approximately

import ctxkit


def session(n: int) -> List[Dict[str, Any]]:
    messages: List[Dict[str, Any]] = [{"role": "user", "content": "Fix the failing test"}]
    i = 0
    while len(messages) < n:
        messages.append({"role": "assistant", "content": f"step {i}", "tool_calls": [
            {"id": f"c{i}", "name": "bash", "arguments": json.dumps({"cmd": f"cat f{i}.py"})}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"file {i}\n" + "".join(f"line {j} of f{i}: value = {i * j}\n" for j in range(12))})
        i += 1
    return messages[:n]


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    messages = session(n)
    work = tempfile.mkdtemp()
    engine = ctxkit.Engine(workdir=work, window=128_000)
    engine.append("bench", messages)
    engine.prepare("bench")  # the first turn compacts; the figure is a turn after it
    engine.append("bench", [{"role": "user", "content": "next"}])
    rows = []
    rows.append(("turn: ctxkit Engine.prepare (view, stored)", median_ms(lambda: engine.prepare("bench"), 20)))
    rows.append(("turn: ctxkit Engine.view (preview)", median_ms(lambda: engine.view("bench"), 20)))

    lc = [m for m in ctxkit.render(messages, to="langchain")]
    objects: List[Any] = []
    for m in lc:
        if m["type"] == "human":
            objects.append(HumanMessage(content=m["content"]))
        elif m["type"] == "ai":
            objects.append(AIMessage(content=m["content"], tool_calls=m.get("tool_calls", [])))
        elif m["type"] == "tool":
            objects.append(ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"]))
    rows.append(("turn: LangChain trim_messages (approximate counter)", median_ms(
        lambda: trim_messages(objects, max_tokens=100_000, token_counter=count_tokens_approximately, strategy="last", start_on="human"), 5)))

    items = ctxkit.render(messages, to="responses")["input"]
    sdk = SQLiteSession("bench", f"{work}/agents.db")
    asyncio.run(sdk.add_items(items))
    rows.append(("turn: Agents SDK SQLiteSession.get_items", median_ms(lambda: asyncio.run(sdk.get_items()), 5)))

    batch = session(100)
    counter = iter(range(10**9))
    rows.append(("append 100: ctxkit Engine.append", median_ms(lambda: engine.append(f"a{next(counter)}", batch), 20)))
    batch_items = ctxkit.render(batch, to="responses")["input"]
    rows.append(("append 100: Agents SDK SQLiteSession.add_items", median_ms(
        lambda: asyncio.run(SQLiteSession(f"a{next(counter)}", f"{work}/agents.db").add_items(batch_items)), 20)))

    def python_call(text: str) -> int:
        return len(text)

    calls = 100_000
    rust = median_ms(lambda: [ctxkit.estimate_tokens("x") for _ in range(calls)], 5) / calls * 1e6
    plain = median_ms(lambda: [python_call("x") for _ in range(calls)], 5) / calls * 1e6
    width = max(len(r[0]) for r in rows)
    print(f"{n:,} messages, median ms")
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:10.2f}")
    print(f"crossing into Rust (estimate_tokens('x')): {rust:.0f} ns a call; a Python function call: {plain:.0f} ns")


if __name__ == "__main__":
    main()
