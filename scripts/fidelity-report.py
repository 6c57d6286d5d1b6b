#!/usr/bin/env python3
"""Writes docs/reports/fidelity.md: `ctxkit fidelity --json` for every transcript of the corpus
at 32k, 100k and 200k windows (every conversation, but the first three of tau-bench's and of
OpenHands' benchmark output), with
the needed-next figure beside the pinned facts. The hand-written sections between the tables
(from "## Needed next" to the small windows' section) are kept as the doc has them.

Run from the project root after `cargo build --release -p ctxkit`:
    python3 scripts/fidelity-report.py [CORPUS_DIR]
CORPUS_DIR defaults to $CTXKIT_CORPUS, else ../shared/corpus/raw.
"""
import json
import os
import subprocess
import sys
import tempfile

# Every transcript of the corpus, with how many of its conversations are reported: all of
# them, except the first three of tau-bench's 200 and of OpenHands' benchmark output.
FILES = [
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 1),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", 1),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", 1),
    ("claude-code_d-kimuson-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 3),
    ("claude-code_d-kimuson-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", 6),
    ("claude-code_entelligentsia-tokbench/1ccb9ecf-7a37-45bb-ae84-da07f65760ad.jsonl", 1),
    ("claude-code_entelligentsia-tokbench/subagents/agent-a02408762e87f0c10.jsonl", 1),
    ("claude-code_entelligentsia-tokbench/subagents/agent-a0f9441627a43bbf9.jsonl", 1),
    ("codex_jnarowski-agentcmd/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl", 1),
    ("codex_jnarowski-agentcmd/rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl", 1),
    ("codex_jnarowski-agentcmd/rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl", 1),
    ("pi_entelligentsia-tokbench/2026-06-05T11-30-11-277Z_019e978c-3ecd-76c2-9120-b324e2636162.jsonl", 1),
    ("pi_entelligentsia-tokbench/2026-06-05T11-35-05-276Z_019e9790-bb3c-76a6-b65a-512995c95692.jsonl", 1),
    ("tau-bench/gpt-4o-airline.json", 3),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", 1),
    ("swe-agent/pydicom-1458__gpt4_default.traj", 1),
    ("openhands/multi_swe_bench_examples_output.jsonl", 3),
    ("openhands/runtime_trajs_basic.json", 1),
]
WINDOWS = [32_000, 100_000, 200_000]
# Windows so small that summary caps must drop facts: what `search_history` finds again.
SMALL_WINDOWS = [6_000, 12_000]
KINDS = ["path", "request", "error", "identifier", "task", "next_step"]


def run(binary, corpus, file, index, window, workdir):
    out = subprocess.run(
        [binary, "--workdir", workdir, "--db", os.path.join(workdir, "f.db"), "fidelity",
         os.path.join(corpus, file), "--index", str(index), "--window", str(window), "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def share(figure):
    """`held/needed (pct)` of a needed-next figure, `–` when nothing was needed."""
    if not figure or not figure["needed"]:
        return "–"
    return f"{figure['held']}/{figure['needed']} ({figure['held'] * 100 / figure['needed']:.0f}%)"


def cell(kinds, kind):
    k = kinds[kind]
    return f"{k['kept']}/{k['expected']}" if k["expected"] else "–"


def table(binary, corpus, windows):
    """The rows for `windows`, and the totals: per kind [kept, expected], dropped, found."""
    rows = []
    totals = {kind: [0, 0] for kind in KINDS}
    dropped = found = 0
    needed = {"ctxkit": [0, 0], "transcript": [0, 0]}
    per_agent = {}
    for file, sessions in FILES:
        for index in range(sessions):
            for window in windows:
                with tempfile.TemporaryDirectory() as workdir:
                    total = run(binary, corpus, file, index, window, workdir)
                kinds = total["kinds"]
                for kind in KINDS:
                    totals[kind][0] += kinds[kind]["kept"]
                    totals[kind][1] += kinds[kind]["expected"]
                for who, key in [("ctxkit", "needed_next"), ("transcript", "transcript_needed_next")]:
                    figure = total.get(key) or {"held": 0, "needed": 0}
                    needed[who][0] += figure["held"]
                    needed[who][1] += figure["needed"]
                    if who == "ctxkit":
                        agent = per_agent.setdefault(agent_of(file), [0, 0])
                        agent[0] += figure["held"]
                        agent[1] += figure["needed"]
                d = sum(kinds[k]["dropped"] for k in KINDS)
                f = sum(kinds[k]["found_again"] for k in KINDS)
                dropped += d
                found += f
                name = file.split("/")[-1]
                if sessions > 1:
                    name += f" #{index}"
                rows.append(f"| {name} | {window // 1000}k | {total['checkpoints']} | "
                            + " | ".join(cell(kinds, k) for k in KINDS)
                            + f" | {share(total.get('needed_next'))} | {share(total.get('transcript_needed_next'))}"
                            + f" | {d} ({f}) | {total['max_summary_bytes']:,} |")
    return rows, totals, dropped, found, needed, per_agent


def agent_of(file):
    """The agent kind of a corpus file: its folder's name before `_` (`codex`, `pi`...)."""
    return file.split("/")[0].split("_")[0]


def write_table(doc, rows, totals, dropped, found, needed, per_agent):
    doc.write("| transcript | window | checkpoints | " + " | ".join(KINDS)
              + " | needed next | the transcript's own compactions, needed next"
              + " | dropped (found again) | largest summary (bytes) |\n")
    doc.write("|---|---|---|" + "---|" * len(KINDS) + "---|---|---|---|\n")
    doc.write("\n".join(rows) + "\n")
    figures = {who: {"held": h, "needed": n} for who, (h, n) in needed.items()}
    doc.write("\nAll rows: " + ", ".join(f"{k} {totals[k][0]}/{totals[k][1]}" for k in KINDS)
              + f"; needed next {share(figures['ctxkit'])}, the transcripts' own compactions"
              + f" {share(figures['transcript'])}; dropped {dropped}, found again {found}.\n")
    doc.write("Needed next per agent (a sum over its rows, beside the rows themselves): "
              + ", ".join(f"{agent} {share({'held': h, 'needed': n})}"
                          for agent, (h, n) in per_agent.items()) + ".\n")


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CTXKIT_CORPUS", "../shared/corpus/raw")
    binary = os.path.abspath("target/release/ctxkit")
    with open("docs/reports/fidelity.md") as old:
        text = old.read()
    start = text.index(NEEDED_HEADING)
    kept = text[start:text.index(SMALL_HEADING, start)]
    with open("docs/reports/fidelity.md", "w") as doc:
        doc.write(HEADER)
        write_table(doc, *table(binary, corpus, WINDOWS))
        doc.write("\n" + kept.rstrip() + "\n")
        doc.write(SMALL)
        write_table(doc, *table(binary, corpus, SMALL_WINDOWS))
        doc.write(FOOTER)


NEEDED_HEADING = "## Needed next: graded by what the agent did next"
SMALL_HEADING = "## Windows too small for every fact"

HEADER = """# Fidelity: what checkpoints keep

> A generated report: `python3 scripts/fidelity-report.py` writes it (after `cargo build
> --release -p ctxkit`, with the corpus), keeping the hand-written sections between its tables.

Every checkpoint must carry its *pinned facts* verbatim (see
`core/src/compaction/pinned/mod.rs`): the file paths read, written or edited, the error line of
each failed tool result, every real user request (one line, long ones head and tail), the
identifiers the user wrote in backticks, the active tasks and the last stated next step, of what
it covers and of the checkpoint before. A summary cap may drop the oldest of them (counted in
the view's `dropped_facts`); the log keeps everything, and `search_history` finds them again.

`ctxkit fidelity FILE --window N [--summarizer extractive|openai|anthropic] [--json]` replays a
transcript through the engine, as `ctxkit replay` does, and prints for every checkpoint how many
facts of each kind its summary holds verbatim (`kept/expected`, measured on the summary text the
model sees), how many it dropped and how many of those `search_history` finds again, and the
summary's size, and the needed-next figure (below) for ctxkit's summaries and for the
transcript's own compactions where it has them. The table below is every corpus transcript with
the extractive summarizer (Claude Code, Codex, pi, tau-bench, SWE-agent, OpenHands; every
conversation of a file that holds several, Claude Code's inline sub-agents each their own row,
except the first three of tau-bench's 200 and of OpenHands' benchmark output; a `–` is a kind
with no facts), made by:

```sh
cargo build --release -p ctxkit && python3 scripts/fidelity-report.py
```

"""

SMALL = """
""" + SMALL_HEADING + """

At 6k and 12k tokens a summary's cap (a tenth of the budget) cannot hold every pinned fact: the
oldest are dropped, counted in the view's `dropped_facts`. "Found again" counts a dropped fact
only when `search_history`, run by the engine over the store's trigram index with the query the
core makes of the fact (`core/src/recall/fact_search.rs`: its text, or the head of a long one),
finds it, which is what an agent gets when it looks the fact up.

"""

FOOTER = """
The same properties are tests: `tests/tests/all/fidelity_corpus.rs` replays every conversation of
every corpus file at 32k, 64k and 100k windows and asserts that every checkpoint keeps 100% of
its paths and requests, at least 95% of its error lines (all of them, today), stays within the
summary cap, and that at 6k and 12k windows, where caps do drop facts, a search of the log finds
at least 99% of them again (all of them, today); `tests/tests/all/pinned_properties.rs` checks the
same on generated logs full of ctxkit's own markup, with LLM answers that are good, echoed or
empty.
"""

if __name__ == "__main__":
    main()
