"""The stubs (ctxkit/_ctxkit.pyi) against the built module: mypy's stubtest finds no difference
in names, parameters and defaults (and finds one in a stub broken on purpose), and the dicts the
module returns have the keys of the stub's TypedDicts (read from the stub with ast)."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Dict, Optional, Tuple

import ctxkit

PYTHON = pathlib.Path(__file__).resolve().parents[1]
STUB = PYTHON / "ctxkit" / "_ctxkit.pyi"
# Type aliases that exist only in the stub (stubtest reports every name missing at runtime).
STUB_ONLY = ["Event", "Family", "FidelityRow", "Fork", "Format", "Json", "Messages", "Source", "Summarize"]


def stubtest(package_parent: pathlib.Path, scratch: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """stubtest of the stub under `package_parent` against the installed module (run outside
    python/, so the import finds the built extension and MYPYPATH the stub)."""
    allowlist = scratch / "allowlist.txt"
    allowlist.write_text("".join(f"ctxkit._ctxkit.{name}\n" for name in STUB_ONLY))
    env = dict(os.environ, MYPYPATH=str(package_parent))
    command = [sys.executable, "-m", "mypy.stubtest", "--concise", "--allowlist", str(allowlist), "ctxkit._ctxkit"]
    return subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True, timeout=600)


def test_the_stub_matches_the_module(tmp_path: pathlib.Path) -> None:
    done = stubtest(PYTHON, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_stubtest_finds_a_stub_that_does_not_match(tmp_path: pathlib.Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(PYTHON / "ctxkit", broken / "ctxkit")
    stub = broken / "ctxkit" / "_ctxkit.pyi"
    text = stub.read_text()
    assert 'def parse(messages: Messages, format: Format = "openai")' in text
    stub.write_text(text.replace('def parse(messages: Messages, format: Format = "openai")', "def parse(messages: Messages)"))
    done = stubtest(broken, tmp_path)
    assert done.returncode != 0
    assert 'ctxkit._ctxkit.parse is inconsistent, stub does not have parameter "format"' in done.stdout


Fields = Dict[str, Tuple[ast.expr, bool]]


def stub_types() -> Tuple[Dict[str, Fields], Dict[str, ast.expr]]:
    """The stub's TypedDicts (name: key: (annotation, required)) and its type aliases."""
    typed: Dict[str, Fields] = {}
    aliases: Dict[str, ast.expr] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "TypedDict" for b in node.bases):
            fields: Fields = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    ann = item.annotation
                    optional = isinstance(ann, ast.Subscript) and ast.unparse(ann.value) == "NotRequired"
                    fields[item.target.id] = (ann.slice if optional else ann, not optional)  # type: ignore[attr-defined]
            typed[node.name] = fields
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.Call) and ast.unparse(value.func) == "TypedDict":
                keys = value.args[1]
                assert isinstance(keys, ast.Dict)
                typed[name] = {ast.literal_eval(k): (v, True) for k, v in zip(keys.keys, keys.values) if k is not None}
            else:
                aliases[name] = value
    return typed, aliases


TYPED, ALIASES = stub_types()


def mismatch(value: Any, ann: ast.expr, at: str) -> Optional[str]:
    """Why `value` does not have the shape `ann` names (only TypedDict keys are checked)."""
    if isinstance(ann, ast.Name) and ann.id in ALIASES:
        return mismatch(value, ALIASES[ann.id], at)
    if isinstance(ann, ast.Name) and ann.id in TYPED:
        if not isinstance(value, dict):
            return f"{at}: not a dict"
        fields = TYPED[ann.id]
        missing = [k for k, (_, required) in fields.items() if required and k not in value]
        extra = [k for k in value if k not in fields]
        if missing or extra:
            return f"{at} ({ann.id}): missing {missing}, not in the stub {extra}"
        for key, item in value.items():
            why = mismatch(item, fields[key][0], f"{at}.{key}")
            if why:
                return why
        return None
    if isinstance(ann, ast.Subscript):
        outer = ast.unparse(ann.value)
        inner = ann.slice
        if outer == "List" and isinstance(value, list):
            return next((w for i, v in enumerate(value) if (w := mismatch(v, inner, f"{at}[{i}]"))), None)
        if outer == "Optional":
            return None if value is None else mismatch(value, inner, at)
        if outer == "Union":
            members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            whys = [mismatch(value, m, at) for m in members]
            return None if any(w is None for w in whys) else "; ".join(w for w in whys if w)
    return None


def check(value: Any, annotation: str) -> None:
    why = mismatch(value, ast.parse(annotation, mode="eval").body, "result")
    assert why is None, why


def test_the_results_have_the_keys_of_their_typed_dicts(tmp_path: pathlib.Path) -> None:
    assert {"Prepared", "ViewStats", "SessionInfo", "Fork", "MemoryRecord"} <= set(TYPED)
    transcript = json.dumps({"messages": [
        {"role": "user", "content": "Edit src/main.rs please " * 300},
        {"role": "assistant", "content": "Done, edited src/main.rs " * 300},
    ] * 10})
    check(ctxkit.import_transcript(transcript), "ImportedTranscript")
    check(ctxkit.cost(transcript, window=20_000), "List[CostRow]")
    check(ctxkit.fidelity(transcript, window=3_000), "List[FidelityRow]")
    check(ctxkit.parse([{"role": "user", "content": "hi"}]), "List[Message]")
    check(ctxkit.validate({"model": "m", "messages": [{"role": "tool", "content": "x"}]}), "List[Violation]")
    with ctxkit.Engine(workdir=tmp_path, window=16_000) as engine:
        check(engine.create_session("s"), "SessionInfo")
        check(engine.append("s", [{"role": "user", "content": "List the files"}]), "List[Recorded]")
        recorded = engine.append("s", [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "main.rs\n" * 5_000},
        ])
        check(recorded, "List[Recorded]")
        assert recorded[1]["offload"] is not None
        turn = engine.prepare("s")
        check(turn, "Prepared")
        check(engine.record_usage("s", turn, 1_234), "Event")
        check(engine.append_new("s", [{"role": "user", "content": "Thanks"}]), "AppendedNew")
        check(engine.sessions(), "List[SessionInfo]")
        check(engine.session_info("s"), "SessionInfo")
        check(engine.import_session("t", [{"role": "user", "content": "hi"}]), "SessionInfo")
        check(engine.history_tools(), "List[ToolDefinition]")
        check(engine.offloads("s"), "List[OffloadRecord]")
        check(engine.read_offload("s", recorded[1]["seq"]), "OffloadPage")
        check(engine.export("s"), "SessionExport")
        check(engine.add_memory({"title": "Tests", "content": "Run cargo test"}), "MemoryRecord")
        check(engine.memories(), "List[MemoryRecord]")
        check(engine.search_memories("cargo"), "List[MemoryRecord]")
        call = {"id": "h1", "name": "search_history", "arguments": {"query": "main.rs"}}
        check(engine.execute_tool("s", call), "Message")


def test_the_checker_finds_a_missing_key() -> None:
    assert mismatch({"at": "x"}, ast.parse("Violation", mode="eval").body, "r") is not None
    assert mismatch([{"at": "x", "message": "m", "more": 1}], ast.parse("List[Violation]", mode="eval").body, "r")
