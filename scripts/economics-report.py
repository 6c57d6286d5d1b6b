#!/usr/bin/env python3
"""Writes docs/reports/economics.md: `ctxkit cost --json` for every corpus transcript (Claude Code ones at
their real 200k window and at 100k, the others at 128k priced as gpt-4o).

Run from the project root after `cargo build --release -p ctxkit --bin ctxkit --example proxy_replay`:
    python3 scripts/economics-report.py [CORPUS_DIR]
CORPUS_DIR defaults to $CTXKIT_CORPUS, else ../shared/corpus/raw.
"""
import importlib.util
import json
import os
import subprocess
import sys

from economics_prose import (BOTH_HEADER, EVERY_HEADER, FOOTER, FRONT_HEADER, FRONT_NOTES, HEADER, IDLE_HEADER,
                             IDLE_NOTES, PROXY_HEADER, PROXY_NOTES, SERVER_HEADER)

CLAUDE = [
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl",
]
OTHERS = [
    ("tau-bench/gpt-4o-airline.json", 3),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", 1),
    ("swe-agent/pydicom-1458__gpt4_default.traj", 1),
    ("openhands/multi_swe_bench_examples_output.jsonl", 3),
    ("openhands/runtime_trajs_basic.json", 1),
]


def cost(binary, path, args):
    out = subprocess.run([binary, "cost", path, "--json", *args], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def table(rows):
    recorded = next((r for r in rows if r["strategy"] == "recorded"), None)
    lines = ["| strategy | input cost (units) | USD | vs recorded | cache read | prefix breaks /100 calls | mean tokens | peak tokens | compactions | overflowing calls | pinned recall | needed next |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        versus = "–"
        if recorded and r is not recorded and recorded["input_cost_units"] > 0:
            versus = f"{r['input_cost_units'] * 100 / recorded['input_cost_units']:.0f}%"
        recall = "–" if r["pinned_recall"] is None else f"{r['pinned_recall'] * 100:.1f}%"
        needed = ("–" if r.get("needed_next") is None else
                  f"{r['needed_next'] * 100:.1f}% ({r['needed_next_held']}/{r['needed_next_needed']})")
        lines.append(f"| {r['strategy']} | {r['input_cost_units']:,.0f} | {r['input_cost_dollars']:.2f} | {versus} | "
                     f"{r['cache_read_share'] * 100:.1f}% | {r['prefix_breaks_per_100']:.1f} | {r['mean_tokens']:,} | "
                     f"{r['peak_tokens']:,} | {r['compactions']} | {r['overflow_calls']} | {recall} | {needed} |")
    return "\n".join(lines) + "\n"


# Both providers on the same transcripts: each priced as the model it ran on (or gpt-4o), as an
# OpenAI model with automatic caching (gpt-5.5) and as one with explicit breakpoints (gpt-5.6).
BOTH = [
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 0, 200_000, None),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", 0, 200_000, None),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", 0, 128_000, "gpt-4o"),
    ("openhands/runtime_trajs_basic.json", 0, 128_000, "gpt-4o"),
]
BOTH_MODELS = ["gpt-5.5", "gpt-5.6"]
BOTH_STRATEGIES = ["ctxkit", "no-compaction", "claude-code-like", "sliding-window", "observation-masking"]


def both_providers(binary, corpus):
    lines = ["| transcript | model | cache | " + " | ".join(BOTH_STRATEGIES) + " | ctxkit cache read | recorded |",
             "|---|---|---|" + "---|" * len(BOTH_STRATEGIES) + "---|---|"]
    for file, index, window, own in BOTH:
        for model in [own] + BOTH_MODELS:
            args = ["--window", str(window), "--index", str(index)] + (["--model", model] if model else [])
            rows = {r["strategy"]: r for r in cost(binary, os.path.join(corpus, file), args)}
            name = rows["ctxkit"]["model"]
            kind = ("explicit breakpoints, 1.25x writes, 5 min" if name.startswith("claude")
                    else "exact breakpoints, 1.25x writes, 30 min" if name.startswith("gpt-5.6")
                    else "automatic, free writes")
            cells = [f"${rows[s]['input_cost_dollars']:.2f}" for s in BOTH_STRATEGIES]
            recorded = f"${rows['recorded']['input_cost_dollars']:.2f}" if "recorded" in rows else "–"
            lines.append(f"| {file.split('/')[-1]} at {window // 1000}k | {name} | {kind} | " + " | ".join(cells)
                         + f" | {rows['ctxkit']['cache_read_share'] * 100:.1f}% | {recorded} |")
    return "\n".join(lines) + "\n"


# The idle strategy beside the cold trigger: the main session at windows where its pauses do
# and do not find the view above the idle floor, priced as its model and as gpt-5.6.
IDLE = [
    (CLAUDE[0], 200_000, None), (CLAUDE[0], 100_000, None), (CLAUDE[0], 80_000, None),
    (CLAUDE[0], 60_000, None), (CLAUDE[0], 50_000, None), (CLAUDE[0], 200_000, "gpt-5.6"),
    (CLAUDE[1], 200_000, None),
]


def idle_table(binary, corpus):
    lines = ["| transcript | window | model | ctxkit | ctxkit-no-cold-trigger | ctxkit-idle | idle compactions |",
             "|---|---|---|---|---|---|---|"]
    for file, window, model in IDLE:
        args = ["--window", str(window)] + (["--model", model] if model else [])
        rows = {r["strategy"]: r for r in cost(binary, os.path.join(corpus, file), args)}
        recorded = rows.get("recorded")

        def cell(name):
            units = rows[name]["input_cost_units"]
            if recorded:
                return f"{units:,.0f} ({units * 100 / recorded['input_cost_units']:.1f}%)"
            return f"{units:,.0f}"
        lines.append(f"| {file.split('/')[-1]} | {window // 1000}k | {rows['ctxkit']['model']} | {cell('ctxkit')} | "
                     f"{cell('ctxkit-no-cold-trigger')} | {cell('ctxkit-idle')} | {rows['ctxkit-idle']['idle_compactions']} |")
    return "\n".join(lines) + "\n"


def server_table(server_rows):
    """The server summary's cost beside the extractive default and ctxkit's own LLM prompts."""
    lines = ["| transcript | window | compactions | ctxkit (extractive) | ctxkit's LLM prompt, fresh | server compaction (the cache-safe request) | vs recorded | summary output |",
             "|---|---|---|---|---|---|---|---|"]
    for name, window, rows in server_rows:
        by = {r["strategy"]: r for r in rows}
        base, fresh, safe = by["ctxkit"], by["ctxkit-llm-fresh"], by["ctxkit-llm-cache-safe"]
        recorded = by.get("recorded")
        versus = "–"
        if recorded and recorded["input_cost_units"] > 0:
            versus = f"{safe['input_cost_units'] * 100 / recorded['input_cost_units']:.0f}%"
        lines.append(f"| {name} | {window // 1000}k | {safe['compactions']} | {base['input_cost_units']:,.0f} | "
                     f"{fresh['input_cost_units']:,.0f} | {safe['input_cost_units']:,.0f} | {versus} | "
                     f"{safe['summary_output_units']:,.0f} |")
    return "\n".join(lines) + "\n"


def front_table(corpus):
    """The table of scripts/cost-front.py: ctxkit's row at several cost marks."""
    return subprocess.run([sys.executable, "scripts/cost-front.py", corpus], check=True,
                          capture_output=True, text=True).stdout


def proxy_table(corpus):
    """The table of native/examples/proxy_replay.rs: the corpus's Claude Code and Codex calls
    through `ctxkit proxy` at 200k (its first line, the window and units, is said by the
    prose)."""
    out = subprocess.run([os.path.abspath("target/release/examples/proxy_replay"), "--corpus", corpus],
                         check=True, capture_output=True, text=True).stdout
    return "\n".join(line for line in out.splitlines() if line.startswith("|")) + "\n"


def fidelity_files():
    """The corpus list of scripts/fidelity-report.py (every transcript, every conversation of a
    file that holds several but the first three of tau-bench's and OpenHands' benchmark
    output), so both reports cover the same transcripts."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fidelity-report.py")
    spec = importlib.util.spec_from_file_location("fidelity_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FILES, module.WINDOWS


def agent_of(file):
    """The agent a corpus folder holds, from its name (`codex_jnarowski-agentcmd` -> `codex`)."""
    return file.split("/")[0].split("_")[0]


def every_transcript_table(binary, corpus):
    """One row per transcript, conversation and window: ctxkit against the recorded cost (where
    the transcript has its usage), no compaction and the sliding window, priced as the model the
    transcript names (or the cost command's default), with ctxkit's needed-next."""
    files, windows = fidelity_files()
    lines = ["| transcript | agent | window | model | recorded | ctxkit | vs recorded | vs no compaction | sliding window | ctxkit compactions | ctxkit needed next |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for file, sessions in files:
        for index in range(sessions):
            name = file.split("/")[-1] + (f" #{index}" if sessions > 1 else "")
            for window in windows:
                run = subprocess.run([binary, "cost", os.path.join(corpus, file), "--json", "--window",
                                      str(window), "--index", str(index)], capture_output=True, text=True)
                if run.returncode != 0:
                    # A transcript whose calls outgrow the window cannot be replayed at it: said, not hidden.
                    reason = (run.stderr.strip().splitlines() or ["no message"])[-1].replace("|", "/")
                    # The message names the file by this machine's path first: keep what follows it.
                    reason = reason[reason.find("window: "):] if "window: " in reason else reason
                    lines.append(f"| {name} | {agent_of(file)} | {window // 1000}k | not run: {reason} |||||||| ")
                    continue
                rows = {r["strategy"]: r for r in (json.loads(line) for line in run.stdout.splitlines() if line.strip())}
                ours, full, sliding = rows["ctxkit"], rows["no-compaction"], rows["sliding-window"]
                recorded = rows.get("recorded")
                def units(row):
                    return "–" if row is None else f"{row['input_cost_units']:,.0f}"
                def ratio(row):
                    if row is None or row["input_cost_units"] <= 0:
                        return "–"
                    return f"{ours['input_cost_units'] * 100 / row['input_cost_units']:.1f}%"
                needed = ("–" if ours.get("needed_next") is None else
                          f"{ours['needed_next_held']}/{ours['needed_next_needed']} ({ours['needed_next'] * 100:.0f}%)")
                lines.append(f"| {name} | {agent_of(file)} | {window // 1000}k | {ours['model']} | {units(recorded)} | "
                             f"{units(ours)} | {ratio(recorded)} | {ratio(full)} | {units(sliding)} | "
                             f"{ours['compactions']} | {needed} |")
    return "\n".join(lines) + "\n"


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CTXKIT_CORPUS", "../shared/corpus/raw")
    binary = os.path.abspath("target/release/ctxkit")
    sections = []
    server_rows = []
    for file in CLAUDE:
        for window in [200_000, 100_000]:
            if "acompact" in file and window < 200_000:
                sections.append(f"### {file.split('/')[-1]} at {window // 1000}k\n\n"
                                "Not run: its one call sent 170k tokens, more than the window holds.\n")
                continue
            rows = cost(binary, os.path.join(corpus, file), ["--window", str(window)])
            server_rows.append((file.split('/')[-1], window, rows))
            head = rows[0]
            sections.append(f"### {file.split('/')[-1]} at {window // 1000}k\n\n"
                            f"{head['model']}, {head['reserve_tokens']:,} tokens of tools and system prompt reserved "
                            f"(read from the first call's recorded usage).\n\n" + table(rows))
    for file, count in OTHERS:
        for index in range(count):
            rows = cost(binary, os.path.join(corpus, file),
                        ["--window", "128000", "--model", "gpt-4o", "--index", str(index)])
            name = file.split("/")[-1] + (f" #{index}" if count > 1 else "")
            sections.append(f"### {name} at 128k (gpt-4o prices, no recorded usage)\n\n" + table(rows))
    with open("docs/reports/economics.md", "w") as doc:
        doc.write(HEADER)
        doc.write("\n".join(sections))
        doc.write(EVERY_HEADER)
        doc.write(every_transcript_table(binary, corpus))
        doc.write(BOTH_HEADER)
        doc.write(both_providers(binary, corpus))
        doc.write(SERVER_HEADER)
        doc.write(server_table(server_rows))
        doc.write(IDLE_HEADER)
        doc.write(idle_table(binary, corpus))
        doc.write(IDLE_NOTES)
        doc.write(FRONT_HEADER)
        doc.write(front_table(corpus))
        doc.write(FRONT_NOTES)
        doc.write(PROXY_HEADER)
        doc.write(proxy_table(corpus))
        doc.write(PROXY_NOTES)
        doc.write(FOOTER)


if __name__ == "__main__":
    main()
