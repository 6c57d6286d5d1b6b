"""The README's recipes are the files in examples/, and each of them runs."""

from __future__ import annotations

import pathlib
import re
import runpy

import pytest

HERE = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = sorted((HERE / "examples").glob("*.py"))


def readme_blocks() -> dict[str, str]:
    text = (HERE / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        match = re.match(r"# (examples/\w+\.py)", first)
        if match:
            named[match.group(1)] = block
    return named


def test_every_recipe_is_an_example_file() -> None:
    blocks = readme_blocks()
    assert sorted(blocks) == sorted(f"examples/{p.name}" for p in EXAMPLES)
    for path in EXAMPLES:
        assert blocks[f"examples/{path.name}"] == path.read_text(), path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_recipe_runs(path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
