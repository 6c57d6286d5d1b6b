#!/usr/bin/env python3
"""Reconstructed Claude token counts of the estimator samples, for fitting and the report.

Usage:
    cargo run --release -p ctxkit-tests --example estimator_fit -- dump
    python3 scripts/ctok_counts.py target/estimator/samples.jsonl \
        tests/fixtures/estimator/ctok_counts.json

Needs `ctok` (PyPI, MIT, Sander Land): an unofficial offline reconstruction of Claude's
tokenizer counts ("v3" = Claude 3 ... Opus 4.6, "4.7" = Opus 4.7+), which its author reports
exact on held-out count_tokens measurements. Output: {key: [v3, v4.7]}, content tokens only
(the single-message frame ctok adds is subtracted). Keys are FNV-1a 64 of the sample text in
hex, as `ctxkit_tests::estimator_corpus::fnv1a64` computes them. Samples already in the
target file keep their cached counts.

ctok 1.3.0 declares Python >= 3.12 but runs on 3.11 too; where pip refuses it:
    pip download ctok==1.3.0 --python-version 3.12 --only-binary=:all: --no-deps -d /tmp/ctok
    (cd /tmp/ctok && unzip -q ctok-1.3.0-py3-none-any.whl) && pip install regex
    PYTHONPATH=/tmp/ctok python3 scripts/ctok_counts.py ...
"""
import json
import sys

from ctok import token_count
from ctok.main import _family, _model


def content_tokens(text, version):
    return token_count(text, version) - _model(_family(version)).message_overhead


def main():
    source, target = sys.argv[1], sys.argv[2]
    try:  # keep the counts already cached: ctok is slow
        with open(target, encoding="utf-8") as cached:
            previous = json.load(cached)
    except (OSError, ValueError):
        previous = {}
    counts = {}
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            sample = json.loads(line)
            if sample["key"] in previous:
                counts[sample["key"]] = previous[sample["key"]]
                continue
            counts[sample["key"]] = [content_tokens(sample["text"], "3.0"), content_tokens(sample["text"], "4.7")]
    with open(target, "w", encoding="utf-8") as out:
        json.dump(dict(sorted(counts.items())), out, indent=0, separators=(",", ":"))
        out.write("\n")
    print(f"{len(counts)} samples counted", file=sys.stderr)


if __name__ == "__main__":
    main()
