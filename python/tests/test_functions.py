"""The free functions: every format in and out, errors that name the path, hostile input."""

from __future__ import annotations

import pathlib

import pytest

import ctxkit

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "List src/"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "ls", "arguments": "{\"path\":\"src\"}"}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "main.rs\nlib.rs"},
    {"role": "assistant", "content": "Two files."},
]


@pytest.mark.parametrize("fmt", ctxkit.FORMATS)
def test_every_format_round_trips(fmt: str) -> None:
    rendered = ctxkit.render(CONVERSATION, to=fmt)
    back = ctxkit.parse(rendered, format=fmt)
    assert ctxkit.render(back, to=fmt) == rendered
    assert [m["role"] for m in back] == [m["role"] for m in CONVERSATION]


def test_validate_finds_an_orphaned_call_and_repair_fixes_it() -> None:
    broken = CONVERSATION[:3] + [{"role": "user", "content": "go on"}]
    request = {"model": "m", "messages": ctxkit.render(broken, to="openai")}
    assert ctxkit.validate(request["messages"], format="openai") or ctxkit.validate(request, format="openai")
    repaired = ctxkit.repair(broken)
    assert ctxkit.validate(ctxkit.render(repaired, to="openai"), format="openai") == []
    assert ctxkit.validate(ctxkit.render(repaired, to="anthropic"), format="anthropic") == []
    # In a provider's format, repair answers in that format.
    openai = ctxkit.repair(ctxkit.render(broken, to="openai"), format="openai")
    assert any(m.get("role") == "tool" and m.get("tool_call_id") == "call_1" for m in openai)


def test_validate_refuses_a_library_format() -> None:
    with pytest.raises(ctxkit.InvalidInputError, match="library"):
        ctxkit.validate([], format="langchain")


def test_errors_name_the_field_path() -> None:
    bad = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": 5, "content": "x"}]
    with pytest.raises(ctxkit.InvalidInputError) as error:
        ctxkit.parse(bad, format="openai")
    assert "messages[1].tool_call_id" in str(error.value)
    with pytest.raises(ctxkit.InvalidInputError) as error:
        ctxkit.render(bad, to="openai")
    assert "messages[1]" in str(error.value) and "tool_call_id" in str(error.value)
    with pytest.raises(ValueError):  # InvalidInputError is a ValueError
        ctxkit.render([{"role": "wizard"}])


@pytest.mark.parametrize(
    "value, where",
    [
        (None, "messages"),
        ("not a list", "messages"),
        ([{"role": "user", "content": b"bytes"}], "messages[0].content"),
        ([{"role": "user", "content": "\ud800"}], "messages[0].content"),
        ([{"role": "user", "content": {1, 2}}], "messages[0].content"),
        ([{"role": "user", "content": float("nan")}], "messages[0].content"),
        ([{1: "x"}], "messages[0]"),
        ([{"role": "user", "content": 2**80}], "messages[0].content"),
    ],
)
def test_hostile_values_are_refused_by_path(value: object, where: str) -> None:
    with pytest.raises(ctxkit.InvalidInputError) as error:
        ctxkit.render(value)  # type: ignore[arg-type]
    assert str(error.value).startswith(f"render: {where}")


def test_deep_nesting_is_refused_not_a_crash() -> None:
    deep: object = "x"
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(ctxkit.InvalidInputError, match="nested deeper"):
        ctxkit.render([{"role": "user", "content": deep}])


def test_a_huge_string_comes_back_byte_for_byte() -> None:
    text = "é" * 5_000_000 + "\U0001f600"
    back = ctxkit.parse(ctxkit.render([{"role": "user", "content": text}], to="openai"), format="openai")
    assert back[0]["content"] == text


def test_estimate_tokens() -> None:
    assert ctxkit.estimate_tokens("") == 0
    one = ctxkit.estimate_tokens("hello world " * 100)
    assert one > 100
    assert ctxkit.estimate_tokens(CONVERSATION) > ctxkit.estimate_tokens(CONVERSATION[0])
    assert ctxkit.estimate_tokens(ctxkit.render(CONVERSATION, to="openai"), format="openai") > 0
    with pytest.raises(ctxkit.InvalidInputError, match="family"):
        ctxkit.estimate_tokens("x", family="gpt-9")  # type: ignore[arg-type]
    with pytest.raises(ctxkit.InvalidInputError, match="input"):
        ctxkit.estimate_tokens(3)  # type: ignore[arg-type]


def test_import_transcript_from_text_and_path(tmp_path: pathlib.Path) -> None:
    import json

    path = tmp_path / "chat.json"
    path.write_text(json.dumps(ctxkit.render(CONVERSATION, to="openai")))
    from_path = ctxkit.import_transcript(path)
    from_text = ctxkit.import_transcript(path.read_text(), format="openai")
    assert from_path == from_text
    assert from_path["format"] == "openai"
    assert len(from_path["sessions"][0]["messages"]) == len(CONVERSATION)
    with pytest.raises(ctxkit.InvalidInputError, match="format"):
        ctxkit.import_transcript("[]", format="nope")
    with pytest.raises(ctxkit.StoreError):
        ctxkit.import_transcript(tmp_path / "missing.json")


def test_import_transcript_gives_the_directory_the_transcript_records() -> None:
    import json

    pi = "\n".join(json.dumps(line) for line in [
        {"type": "session", "version": 3, "id": "s", "cwd": "/home/u/app"},
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    ])
    assert ctxkit.import_transcript(pi)["sessions"][0]["working_directory"] == "/home/u/app"
    openai = json.dumps([{"role": "user", "content": "hi"}])
    assert ctxkit.import_transcript(openai)["sessions"][0]["working_directory"] is None


def test_policy_working_directory_is_what_summaries_state(tmp_path: pathlib.Path) -> None:
    import json
    import re

    # Calls that name files relative to where the agent runs: the log alone does not say where.
    messages: list = [{"role": "user", "content": "Make the parser accept empty lists"}]
    for i in range(14):
        call = {"id": f"c{i}", "name": "read", "arguments": json.dumps({"path": f"src/m{i}.rs"})}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": " ".join(f"v{i}x{w}" for w in range(700))})
    stated = []
    for name, directory in (("known", "/srv/agent/app"), ("unknown", None)):
        with ctxkit.Engine(tmp_path / f"{name}.db", workdir=tmp_path, window=16_000, offload=False,
                           policy={"working_directory": directory}) as engine:
            engine.create_session("r")
            engine.append("r", messages)
            engine.prepare("r", format="ctxkit")
            summaries = [c["summary"] for c in engine.export("r")["checkpoints"]]
            assert summaries, name
            stated.append(re.findall(r"^Working directory: `([^`]*)`", summaries[-1], re.M))
    assert stated == [["/srv/agent/app"], []]
    with pytest.raises(ctxkit.InvalidInputError, match="working_directory"):
        ctxkit.Engine(tmp_path / "bad.db", workdir=tmp_path, policy={"working_directory": 7})
