"""The Engine: a session appended, prepared, compacted and offloaded; summarize callables that
work, raise, hang or return junk; bad input leaves the store as it was."""

from __future__ import annotations

import asyncio
import json
import pathlib
import threading
import time
from typing import Any, Dict, List

import pytest

import ctxkit


def tool_loop(steps: int, output_bytes: int = 2_000) -> List[Dict[str, Any]]:
    messages: List[Dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in src/parser.rs"}]
    for i in range(steps):
        messages.append({"role": "assistant", "content": f"step {i}", "tool_calls": [
            {"id": f"call_{i}", "name": "bash", "arguments": json.dumps({"cmd": f"cat file_{i}.rs"})}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"// file {i}\n" + "".join(f"let v{i}_{j} = compute({i * j}, \"k{j}\");\n" for j in range(output_bytes // 36))})
    return messages


def store_snapshot(engine: ctxkit.Engine, session: str) -> Any:
    return engine.export(session)


def test_a_long_session_compacts_and_stays_valid(engine: ctxkit.Engine) -> None:
    engine.append("s", tool_loop(40))
    turn = engine.prepare("s", format="openai")
    assert turn["compacted"] is not None
    assert turn["stats"]["total_tokens"] <= 16_000
    assert ctxkit.validate(turn["messages"], format="openai") == []
    assert turn["messages"][0]["role"] == "system"
    info = engine.session_info("s")
    assert info["messages"] == 81 and info["checkpoints"] == 1
    # The complete log is kept.
    assert len(engine.export("s")["entries"]) == 81
    event = engine.record_usage("s", turn, 9_000)
    assert event["input_tokens"] == 9_000


@pytest.mark.parametrize("fmt", ctxkit.FORMATS)
def test_view_in_every_format(engine: ctxkit.Engine, fmt: str) -> None:
    engine.append("s", tool_loop(3))
    view = engine.view("s", format=fmt)
    back = ctxkit.parse(view, format=fmt)
    assert back[-1]["role"] == "tool"
    # A view stores nothing.
    assert engine.session_info("s")["checkpoints"] == 0


def test_big_outputs_are_offloaded_and_read_back(engine: ctxkit.Engine, workdir: pathlib.Path) -> None:
    big = "line of output\n" * 5_000
    engine.append("s", [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
    ])
    offloads = engine.offloads("s")
    assert len(offloads) == 1
    assert (workdir / offloads[0]["relative_path"]).read_text() == big
    page = engine.read_offload("s", offloads[0]["seq"], offset=10, limit=5)
    assert page["text"] == "line of output\n" * 5 and page["more"]
    view = engine.view("s", format="ctxkit")
    assert len(json.dumps(view)) < len(big)


def test_history_tools_answer_from_the_whole_log(engine: ctxkit.Engine) -> None:
    engine.append("s", tool_loop(40) + [{"role": "user", "content": "the unicorn-token is 4242"}])
    engine.prepare("s")
    names = {tool["name"] for tool in engine.history_tools()}
    assert {"search_history", "read_history", "read_offload"} <= names
    answer = engine.execute_tool("s", {"id": "h1", "name": "search_history", "arguments": {"query": "unicorn-token"}})
    assert answer["role"] == "tool" and answer["tool_call_id"] == "h1"
    assert "4242" in json.dumps(answer)
    read = engine.execute_tool("s", {"id": "h2", "name": "read_history", "arguments": json.dumps({"from": 1, "to": 2})})
    assert "Fix the failing test" in json.dumps(read)


def test_memory(engine: ctxkit.Engine) -> None:
    added = engine.add_memory({"title": "Tests", "content": "Run cargo test before committing", "category": "workflow", "importance": 7})
    assert engine.add_memory({"title": "Tests", "content": "Run cargo test before committing", "category": "workflow", "importance": 7})["id"] == added["id"]
    assert [m["id"] for m in engine.search_memories("cargo")] == [added["id"]]
    assert "cargo test" in engine.memory_precis()
    assert engine.remove_memory(added["id"]) and not engine.memories()
    with pytest.raises(ctxkit.InvalidInputError, match="memory.colour"):
        engine.add_memory({"title": "x", "content": "y", "colour": "red"})


def test_sync_summarize_writes_the_checkpoint(engine: ctxkit.Engine) -> None:
    requests: List[Dict[str, Any]] = []

    def summarize(request: Dict[str, Any]) -> str:
        requests.append(request)
        return "## Goal\nFix the failing parser test.\n## Next step\nRun the tests."

    engine.append("s", tool_loop(40))
    turn = engine.prepare("s", summarize=summarize)
    assert turn["compacted"] == "llm"
    assert requests and requests[0]["max_tokens"] > 0 and "prompt" in requests[0]
    checkpoint = engine.export("s")["checkpoints"][-1]
    assert "Fix the failing parser test." in checkpoint["summary"]


def test_async_summarize_on_the_callers_loop(engine: ctxkit.Engine) -> None:
    loops: List[Any] = []

    async def summarize(request: Dict[str, Any]) -> str:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0.01)
        return "## Goal\nAsync summary."

    async def main() -> Dict[str, Any]:
        engine.append("s", tool_loop(40))
        turn = await engine.aprepare("s", summarize=summarize)
        assert loops == [asyncio.get_running_loop()]
        return turn

    assert asyncio.run(main())["compacted"] == "llm"
    # Also from sync code: the coroutine runs on a loop of its own.
    engine.append("t", tool_loop(40))
    assert engine.prepare("t", summarize=summarize)["compacted"] == "llm"


def raises(request: Dict[str, Any]) -> str:
    raise RuntimeError("the model is down")


def hangs(request: Dict[str, Any]) -> str:
    time.sleep(30)
    return "too late"


def junk(request: Dict[str, Any]) -> Any:
    return {"not": "a str"}


def surrogate(request: Dict[str, Any]) -> str:
    return "\udc80"


async def async_hangs(request: Dict[str, Any]) -> str:
    await asyncio.sleep(30)
    return "too late"


@pytest.mark.parametrize("bad, said", [(raises, "the model is down"), (hangs, "within"), (junk, "dict"), (surrogate, "Unicode"), (async_hangs, "within")])
def test_a_failing_summarize_falls_back_to_the_extractive_summary(engine: ctxkit.Engine, bad: Any, said: str) -> None:
    engine.append("s", tool_loop(40))
    started = time.monotonic()
    turn = engine.prepare("s", summarize=bad, timeout=0.5)
    assert time.monotonic() - started < 20
    assert turn["compacted"] == "extractive"
    warnings = [e for e in turn["events"] if e["event"] == "warning"]
    assert warnings and said in warnings[0]["message"]
    # The engine is usable after.
    engine.append("s", [{"role": "user", "content": "next"}])
    assert engine.prepare("s")["messages"][-1]["content"] == "next"


def test_input_over_the_cap_is_refused_naming_the_parameter(engine: ctxkit.Engine) -> None:
    engine.append("s", [{"role": "user", "content": "first"}])
    before = store_snapshot(engine, "s")
    big = [{"role": "user", "content": "x" * 2_000}]
    with pytest.raises(ctxkit.InvalidInputError, match="max_input_bytes"):
        engine.append("s", big, max_input_bytes=1_999)
    with pytest.raises(ctxkit.InvalidInputError, match="max_input_bytes"):
        engine.import_session("t", big, max_input_bytes=1_000)
    assert store_snapshot(engine, "s") == before
    # At the cap it is stored; the default cap is the CLI's 256 MiB.
    assert len(engine.append("s", big, max_input_bytes=2_000)) == 1
    assert engine.import_session("t", big)["messages"] == 1


def test_bad_input_leaves_the_store_unchanged(engine: ctxkit.Engine) -> None:
    engine.append("s", tool_loop(2))
    before = store_snapshot(engine, "s")
    bad_batches: List[Any] = [
        None,
        [{"role": "user", "content": "ok"}, {"role": "tool", "tool_call_id": None, "content": 3}],
        [{"role": "user", "content": "ok"}, {"role": "user", "content": "\ud83d"}],
        [{"role": "user", "content": "ok"}, "not a dict"],
    ]
    for batch in bad_batches:
        with pytest.raises(ctxkit.InvalidInputError):
            engine.append("s", batch)
    assert store_snapshot(engine, "s") == before
    with pytest.raises(ctxkit.InvalidInputError, match="summarize"):
        engine.prepare("s", summarize=42)  # type: ignore[arg-type]
    with pytest.raises(ctxkit.InvalidInputError, match="timeout"):
        engine.prepare("s", timeout=-1)
    with pytest.raises(ctxkit.InvalidInputError, match="format"):
        engine.prepare("s", format="xml")  # type: ignore[arg-type]
    with pytest.raises(ctxkit.SessionNotFoundError):
        engine.prepare("nobody")
    with pytest.raises(TypeError):
        engine.append(3, [])  # type: ignore[arg-type]
    assert store_snapshot(engine, "s") == before


def test_budget_errors(workdir: pathlib.Path) -> None:
    with pytest.raises(ctxkit.BudgetTooSmallError, match="output_reserve"):
        ctxkit.Engine(workdir=workdir, budget={"context_window": 1000, "output_reserve": 2000})
    with ctxkit.Engine(workdir=workdir, window=2_000, prompt={"base": "Be careful. " * 2_000}) as tiny:
        tiny.append("s", [{"role": "user", "content": "hello"}])
        with pytest.raises(ctxkit.BudgetTooSmallError, match="window of 2000"):
            tiny.prepare("s")
    with pytest.raises(ctxkit.InvalidInputError, match="policy.keep_everything"):
        ctxkit.Engine(workdir=workdir, policy={"keep_everything": True})


def test_closed_engine_raises(workdir: pathlib.Path) -> None:
    e = ctxkit.Engine(workdir=workdir)
    e.close()
    with pytest.raises(ctxkit.StoreError, match="closed"):
        e.sessions()


def test_long_calls_release_the_gil(workdir: pathlib.Path) -> None:
    """A Python thread keeps running while the engine works in Rust on a turn."""
    with ctxkit.Engine(workdir=workdir, window=16_000) as e:
        e.append("s", tool_loop(300))
        ticks = 0
        stop = threading.Event()
        inside = threading.Event()

        def summarize(request: Dict[str, Any]) -> str:
            inside.set()
            return "## Goal\nx"

        def count() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                time.sleep(0)

        worker = threading.Thread(target=count)
        worker.start()
        try:
            before = ticks
            for _ in range(5):
                e.prepare("s", format="anthropic", summarize=summarize)
            during = ticks - before
        finally:
            stop.set()
            worker.join()
        assert during > 0


def test_a_turn_over_a_long_tail_releases_the_gil(workdir: pathlib.Path) -> None:
    """A sync turn without a summarizer keeps the GIL only on a short tail (a step's); the first
    turn over a whole imported conversation compacts it with the GIL released: another thread
    runs while it works."""
    with ctxkit.Engine(workdir=workdir, window=16_000) as e:
        words = " ".join(f"word{i}" for i in range(100))
        e.import_session("s", [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{i} {words}"} for i in range(3_000)])
        stamps: List[float] = []
        stop = threading.Event()

        def tick() -> None:
            while not stop.is_set():
                stamps.append(time.perf_counter())
                time.sleep(0.001)

        worker = threading.Thread(target=tick)
        worker.start()
        try:
            time.sleep(0.05)
            start = time.perf_counter()
            turn = e.prepare("s")
            end = time.perf_counter()
        finally:
            stop.set()
            worker.join()
        assert turn["compacted"] and end - start > 0.02
        # The other thread kept stamping while the turn ran (holding the GIL would leave it at
        # most the one stamp it gets as the call returns, before `end` is read).
        assert sum(start < t < end for t in stamps) >= 5, (end - start, len(stamps))


def test_a_short_call_waits_for_a_busy_engine_with_the_gil_released(workdir: pathlib.Path) -> None:
    """A short call (a step's append) keeps the GIL only when the engine is free: while another
    thread's turn holds the engine and runs Python (its summarizer), the call waits for it with
    the GIL released, so the turn finishes (waiting with the GIL held would block both)."""
    with ctxkit.Engine(workdir=workdir, window=16_000) as e:
        e.append("s", tool_loop(300))
        inside = threading.Event()

        def summarize(request: Dict[str, Any]) -> str:
            inside.set()
            time.sleep(0.3)  # the GIL released: the summarizer needs it back to answer
            return "## Goal\nx"

        turn = threading.Thread(target=lambda: e.prepare("s", summarize=summarize), daemon=True)
        turn.start()
        assert inside.wait(10)
        appended: List[Any] = []
        step = threading.Thread(target=lambda: appended.append(e.append("t", [{"role": "user", "content": "hi"}])), daemon=True)
        step.start()
        step.join(10)
        turn.join(10)
        assert not step.is_alive() and not turn.is_alive()
        assert [r["seq"] for r in appended[0]] == [1]
        assert e.session_info("s")["checkpoints"] >= 1


def test_threads_share_an_engine(workdir: pathlib.Path) -> None:
    with ctxkit.Engine(workdir=workdir) as e:
        errors: List[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(20):
                    e.append(f"s{n}", [{"role": "user", "content": f"{n}-{i}"}])
                    e.prepare(f"s{n}")
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert sorted(s["messages"] for s in e.sessions()) == [20, 20, 20, 20]
