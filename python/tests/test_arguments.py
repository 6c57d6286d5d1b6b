"""Every argument error is a CtxkitError naming the parameter (issue 33, item 6): negative
numbers (formerly a bare OverflowError) and session names with NUL, which the store would
otherwise keep under a name no other tool can type."""

from __future__ import annotations

import pathlib
from typing import Any, Callable

import pytest

import ctxkit


def refused(call: Callable[[], Any], parameter: str) -> None:
    with pytest.raises(ctxkit.InvalidInputError) as raised:
        call()
    assert parameter in str(raised.value), str(raised.value)


def test_negative_numbers_name_their_parameter(workdir: pathlib.Path) -> None:
    refused(lambda: ctxkit.Engine(workdir=workdir, window=-1), "window")
    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    user = [{"role": "user", "content": "hi"}]
    refused(lambda: engine.append("s", user, max_input_bytes=-1), "max_input_bytes")
    refused(lambda: engine.append_new("s", user, max_input_bytes=-5), "max_input_bytes")
    engine.append("s", user)
    turn = engine.prepare("s")
    refused(lambda: engine.record_usage("s", turn, -10), "input_tokens")
    refused(lambda: engine.read_offload("s", -1), "seq")
    refused(lambda: engine.read_offload("s", 1, -1), "offset")
    refused(lambda: engine.read_offload("s", 1, 0, -1), "limit")
    refused(lambda: engine.memories(limit=-1), "limit")
    refused(lambda: ctxkit.cost("{}", window=-1), "window")
    refused(lambda: ctxkit.fidelity("{}", index=-1), "index")
    assert engine.session_info("s")["messages"] == 1


def test_session_names_with_nul_are_refused(workdir: pathlib.Path) -> None:
    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    user = [{"role": "user", "content": "hi"}]
    refused(lambda: engine.append("a\0b", user), "session")
    refused(lambda: engine.append_new("a\0b", user), "session")
    refused(lambda: engine.create_session("a\0b"), "session")
    assert engine.sessions() == []


def test_adapters_refuse_bad_keys(workdir: pathlib.Path) -> None:
    from ctxkit.agents import CtxkitSession
    from ctxkit.langchain import CtxkitMiddleware
    from ctxkit.pydantic_ai import CtxkitHistory

    engine = ctxkit.Engine(workdir=workdir, window=16_000)
    refused(lambda: CtxkitHistory(engine, session="x\0y"), "session")
    refused(lambda: CtxkitMiddleware(engine, session=""), "session")
    refused(lambda: CtxkitSession("x\0", engine), "session_id")


def test_the_offload_policy_is_a_bool_or_a_dict_of_its_fields(workdir: pathlib.Path) -> None:
    refused(lambda: ctxkit.Engine(workdir=workdir, offload={"paging_tol": "x"}), "offload")
    refused(lambda: ctxkit.Engine(workdir=workdir, offload=3), "offload")
    engine = ctxkit.Engine(workdir=workdir, window=16_000, offload={"threshold_bytes": 100, "paging_tool": "pager"})
    engine.append("s", [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "ls", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x\n" * 200},
    ])
    reference = engine.export("s")["entries"][1]["message"]["content"]
    assert "pager" in str(reference) and engine.session_info("s")["offloads"] == 1


def test_a_transcript_path_may_be_a_str(workdir: pathlib.Path) -> None:
    path = workdir / "session.json"
    path.write_text('[{"role": "user", "content": "hello"}]')
    from_str = ctxkit.import_transcript(str(path), format="openai")
    assert from_str == ctxkit.import_transcript(path, format="openai")
    assert from_str["sessions"][0]["messages"][0]["content"] == "hello"
    with pytest.raises(ctxkit.StoreError) as missing:
        ctxkit.import_transcript(str(workdir / "missing.jsonl"))
    assert "missing.jsonl" in str(missing.value)
