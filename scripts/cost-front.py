#!/usr/bin/env python3
"""The default cost marks on the cost/recall front: ctxkit's row of `ctxkit cost --json` for
several cost-mark pairs (and the window's percentages alone) on the corpus transcripts that
compact, at 32k, 100k and 200k windows. Prints the markdown table of docs/reports/economics.md,
"The default on the cost/recall front".

Run from the project root after `cargo build --release -p ctxkit`:
    python3 scripts/cost-front.py [CORPUS_DIR]
CORPUS_DIR defaults to $CTXKIT_CORPUS, else ../shared/corpus/raw.

Per transcript and window, a marks pair is on the front when no other pair costs at most as
much and holds at least as much needed-next recall, one of the two strictly. Cost is the
ctxkit row's input cost in units, as a share of the recorded session when the transcript
records one, else of the default marks' cost. The rows whose ctxkit never compacts under any
marks are left out (every pair is the same there).
"""
import json
import os
import subprocess
import sys

TRANSCRIPTS = [
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 0),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", 0),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", 0),
    ("swe-agent/pydicom-1458__gpt4_default.traj", 0),
    ("openhands/multi_swe_bench_examples_output.jsonl", 0),
    ("openhands/multi_swe_bench_examples_output.jsonl", 1),
    ("openhands/multi_swe_bench_examples_output.jsonl", 2),
    ("tau-bench/gpt-4o-airline.json", 0),
]
WINDOWS = [32_000, 100_000, 200_000]
MARKS = ["24000/12000", "30000/15000", "36000/18000", "42000/21000", "50000/25000", "72000/36000", "100000/50000", "window"]
DEFAULT = "36000/18000"


def ctxkit_row(binary, path, index, window, marks):
    args = [binary, "cost", path, "--json", "--window", str(window), "--index", str(index),
            "--cost-marks", marks]
    if "claude-code" not in path:
        args += ["--model", "gpt-4o"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, None
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    by_name = {r["strategy"]: r for r in rows}
    return by_name["ctxkit"], by_name.get("recorded")


def front(points):
    """The indices of the points (cost, recall) no other point dominates."""
    out = set()
    for i, (cost, recall) in enumerate(points):
        dominated = any(
            c <= cost and r >= recall and (c < cost or r > recall)
            for j, (c, r) in enumerate(points) if j != i)
        if not dominated:
            out.add(i)
    return out


def label(marks):
    if marks == "window":
        return "window % only"
    trigger, low = marks.split("/")
    return f"{int(trigger) // 1000}k/{int(low) // 1000}k"


def main():
    corpus = (sys.argv[1] if len(sys.argv) > 1
              else os.environ.get("CTXKIT_CORPUS", "../shared/corpus/raw"))
    binary = os.path.join("target", "release", "ctxkit")
    lines = ["| transcript | window | marks | compactions | input cost (units) | vs recorded | vs default | needed next | front |",
             "|---|---|---|---|---|---|---|---|---|"]
    for file, index in TRANSCRIPTS:
        name = file.split("/")[-1] + (f" #{index}" if "multi_swe" in file or "airline" in file else "")
        for window in WINDOWS:
            got = [(m, *ctxkit_row(binary, os.path.join(corpus, file), index, window, m)) for m in MARKS]
            got = [(m, row, rec) for m, row, rec in got if row is not None]
            if not got or all(row["compactions"] == 0 for _, row, _ in got):
                continue
            default = next((row for m, row, _ in got if m == DEFAULT), None)
            # Needed next where nothing was needed counts as full (nothing was lost).
            points = [(row["input_cost_units"],
                       1.0 if row["needed_next"] is None else row["needed_next"]) for _, row, _ in got]
            on_front = front(points)
            for i, (marks, row, recorded) in enumerate(got):
                versus = "–"
                if recorded and recorded["input_cost_units"] > 0:
                    versus = f"{row['input_cost_units'] * 100 / recorded['input_cost_units']:.1f}%"
                vs_default = "–"
                if default and default["input_cost_units"] > 0:
                    vs_default = f"{row['input_cost_units'] * 100 / default['input_cost_units']:.1f}%"
                needed = ("–" if row["needed_next"] is None else
                          f"{row['needed_next'] * 100:.1f}% ({row['needed_next_held']}/{row['needed_next_needed']})")
                mark = "yes" if i in on_front else ""
                shown = label(marks) + (" (default)" if marks == DEFAULT else "")
                lines.append(f"| {name} | {window // 1000}k | {shown} | {row['compactions']} | "
                             f"{row['input_cost_units']:,.0f} | {versus} | {vs_default} | {needed} | {mark} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
