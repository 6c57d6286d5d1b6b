"""A corpus transcript replayed through the Python API turn by turn, as an agent loop would
(append what arrived, prepare the turn, append the reply and its tool results), gives exactly
what `ctxkit replay --json` gives: every turn's whole stats, the stored log and checkpoints, and
the final view in all seven formats."""

from __future__ import annotations

import datetime
import json
import pathlib
import shutil
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ctxkit

from conftest import corpus_files, run_cli

FILES = corpus_files()
IDS = [str(p.relative_to(p.parents[1])) for p in FILES]
FORMATS = ("ctxkit", "openai", "anthropic", "responses", "gemini", "ai-sdk", "langchain")
WINDOW = 32_000


# The CLI's offload policy: the Python Engine's default pages offloaded outputs with
# read_offload (a tool it answers itself) where the CLI names read_file.
CLI_OFFLOAD = {"paging_tool": "read_file", "excluded_tools": ["read_file", "write_file", "edit_file"]}


def steps(messages: List[Dict[str, Any]]) -> List[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]]:
    """An agent loop's steps: what came before each assistant message, then the reply and the
    tool results right after it (the CLI's own split, `ctxkit::reports::split_steps`)."""
    out: List[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]] = []
    pending: List[Dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant":
            out.append((pending, [message]))
            pending = []
        elif message["role"] == "tool" and out and not pending:
            out[-1][1].append(message)
        else:
            pending.append(message)
    if pending:
        out.append((pending, []))
    return out


def replay_in_python(messages: List[Dict[str, Any]], agent_dir: Optional[str], db: pathlib.Path, workdir: pathlib.Path) -> List[Dict[str, Any]]:
    stats = []
    # The CLI's replay estimates for Claude by default (`--model-family claude`), and its
    # summaries name the directory the transcript records the agent ran in.
    policy = {"family": "claude", "working_directory": agent_dir}
    with ctxkit.Engine(db, workdir=workdir, window=WINDOW, offload=CLI_OFFLOAD, policy=policy) as engine:
        engine.create_session("r")
        for inputs, reply in steps(messages):
            if inputs:
                engine.append("r", inputs, format="ctxkit")
            stats.append(engine.prepare("r", format="ctxkit")["stats"])
            if reply:
                engine.append("r", reply, format="ctxkit")
    return stats


def exported(db: pathlib.Path, workdir: pathlib.Path) -> Dict[str, Any]:
    with ctxkit.Engine(db, workdir=workdir, window=WINDOW, offload=CLI_OFFLOAD) as engine:
        return engine.export("r")  # type: ignore[no-any-return]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_a_replay_through_python_equals_the_clis(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    session = ctxkit.import_transcript(path)["sessions"][0]
    conversation = session["messages"]
    for attempt in range(2):
        day = datetime.datetime.now(datetime.timezone.utc).date()
        cli_db, py_db = tmp_path / f"cli{attempt}.db", tmp_path / f"py{attempt}.db"
        rows = [json.loads(line) for line in run_cli(
            "--db", str(cli_db), "--workdir", str(workdir),
            "replay", str(path), "--window", str(WINDOW), "--session", "r", "--json",
            cwd=tmp_path,
        ).splitlines() if line.strip()]
        # The offload files are named after the session: the CLI's go before Python writes its own.
        shutil.rmtree(workdir / ".ctxkit" / "tool_results", ignore_errors=True)
        ours = replay_in_python(conversation, session["working_directory"], py_db, workdir)
        # The system prompt carries today's date: a run across midnight (UTC) is run again.
        if datetime.datetime.now(datetime.timezone.utc).date() == day:
            break
    turns = [row for row in rows if row["type"] == "turn"]
    assert len(ours) == len(turns) and turns, path
    for turn, (cli_row, py_stats) in enumerate(zip(turns, ours), start=1):
        assert py_stats == cli_row["stats"], f"{path}: turn {turn}"

    cli_session, py_session = exported(cli_db, workdir), exported(py_db, workdir)
    assert py_session["entries"] == cli_session["entries"]
    assert py_session["checkpoints"] == cli_session["checkpoints"]
    assert py_session["checkpoints"] or not any(t["stats"]["checkpoint_through"] for t in turns)

    # The final view, in every format, from both stores.
    with ctxkit.Engine(py_db, workdir=workdir, window=WINDOW, offload=CLI_OFFLOAD) as engine:
        for fmt in FORMATS:
            theirs = json.loads(run_cli(
                "--db", str(cli_db), "--workdir", str(workdir),
                "view", "r", "--window", str(WINDOW), "--format", fmt, cwd=tmp_path,
            ))
            assert engine.view("r", format=fmt) == theirs, f"{path}: {fmt}"
