"""Every corpus transcript through the Python API gives what the Rust CLI gives: imports, views
in every format, session numbers and checkpoints, and the cost and fidelity reports."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Dict, List

import pytest

import ctxkit
import subprocess

from conftest import cli, corpus_files, run_cli

FILES = corpus_files()
IDS = [str(p.relative_to(p.parents[1])) for p in FILES]


# The CLI's offload policy: the Python Engine's default pages offloaded outputs with
# read_offload (a tool it answers itself) where the CLI names read_file.
CLI_OFFLOAD = {"paging_tool": "read_file", "excluded_tools": ["read_file", "write_file", "edit_file"]}


def jsonl(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_views_and_checkpoints_equal_the_clis(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    imported = ctxkit.import_transcript(path)
    assert imported["sessions"], path
    db = tmp_path / "py.db"
    with ctxkit.Engine(db, workdir=tmp_path, window=32_000, offload=CLI_OFFLOAD) as engine:
        for index, conversation in enumerate(imported["sessions"][:3]):
            name = f"s{index}"
            engine.import_session(name, conversation["messages"])
            # Every message comes back as it went in.
            stored = [e["message"] for e in engine.export(name)["entries"]]
            assert stored == ctxkit.parse(ctxkit.render(conversation["messages"], to="ctxkit"), format="ctxkit")
            for fmt in ("ctxkit", "openai", "anthropic", "responses", "gemini", "ai-sdk", "langchain"):
                ours = engine.view(name, format=fmt)
                theirs = json.loads(run_cli("--db", str(db), "--workdir", str(tmp_path), "view", name, "--window", "32000", "--format", fmt, cwd=tmp_path))
                assert ours == theirs, f"{path} {name} {fmt}"
            # Prepared turns store the same checkpoints the CLI's replay of the log would read.
            engine.prepare(name)
            info = engine.session_info(name)
            cli_info = json.loads(run_cli("--db", str(db), "--workdir", str(tmp_path), "stats", name, "--json", cwd=tmp_path))
            assert info["messages"] == cli_info["messages"] and info["checkpoints"] == cli_info["checkpoints"]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_cost_and_fidelity_rows_equal_the_clis(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    done = subprocess.run([str(cli()), "cost", str(path), "--window", "100000", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    if done.returncode == 0:
        assert ctxkit.cost(path, window=100_000) == jsonl(done.stdout)
    else:
        # The CLI refuses the file (exit 2): so does Python, with the same message.
        assert done.returncode == 2, done.stderr
        with pytest.raises(ctxkit.InvalidInputError) as error:
            ctxkit.cost(path, window=100_000)
        assert str(error.value) in done.stderr
    fidelity = ctxkit.fidelity(path, window=32_000)
    assert fidelity == jsonl(run_cli("fidelity", str(path), "--window", "32000", "--json", cwd=tmp_path))
    checkpoints = [row for row in fidelity[:-1] if row["method"] != "transcript"]
    assert fidelity[-1]["checkpoints"] == len(checkpoints)
    assert fidelity[-1]["transcript_compactions"] == len(fidelity) - 1 - len(checkpoints)
    assert all("needed_next" in row for row in fidelity)
