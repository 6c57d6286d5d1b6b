"""Shared fixtures: a fresh engine in a temporary working directory, the corpus, the CLI."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from typing import Iterator, List

import pytest

import ctxkit

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("CTXKIT_CORPUS", "/work/shared/corpus"))


@pytest.fixture
def workdir(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path


@pytest.fixture
def engine(workdir: pathlib.Path) -> Iterator[ctxkit.Engine]:
    with ctxkit.Engine(workdir=workdir, window=16_000) as e:
        yield e


def corpus_files() -> List[pathlib.Path]:
    raw = CORPUS / "raw"
    if not raw.is_dir():
        if os.environ.get("CI") == "true":
            raise RuntimeError(f"the corpus is missing at {raw}")
        return []
    return sorted(
        p for p in raw.rglob("*")
        if p.is_file() and p.suffix in {".jsonl", ".json", ".traj"}
    )


def cli() -> pathlib.Path:
    """The ctxkit CLI of this checkout (scripts/test-python.sh builds it)."""
    path = os.environ.get("CTXKIT_CLI")
    if path:
        return pathlib.Path(path)
    for candidate in (ROOT / "target/release/ctxkit", ROOT / "target/debug/ctxkit"):
        if candidate.exists():
            return candidate
    found = shutil.which("ctxkit")
    if found is None:
        raise RuntimeError("no ctxkit CLI: set CTXKIT_CLI or build it (cargo build --release -p ctxkit)")
    return pathlib.Path(found)


def run_cli(*args: str, cwd: pathlib.Path) -> str:
    done = subprocess.run([str(cli()), *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout
