"""Appends that can be retried (issue 34 item 4): `append(..., key=)` or `append(..., after=)`
stores a batch once, however often it is run; the retry returns the seqs stored the first time."""

from __future__ import annotations

import pytest

import ctxkit


def batch(text: str) -> list:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "On it."}]


def test_a_keyed_append_is_stored_once(engine: ctxkit.Engine) -> None:
    first = engine.append("s", batch("fix it"), key="turn-1")
    again = engine.append("s", batch("fix it"), key="turn-1")
    assert [m["seq"] for m in first] == [1, 2]
    assert again == first
    assert engine.session_info("s")["messages"] == 2


def test_a_key_derived_from_the_seq_it_follows(engine: ctxkit.Engine) -> None:
    engine.append("s", batch("start"))
    after = engine.append("s", batch("go on"), after=2)
    assert engine.append("s", batch("go on"), after=2) == after
    assert [m["seq"] for m in after] == [3, 4]
    # The log moved past seq 2, and this batch is not the one stored there: refused.
    with pytest.raises(ctxkit.StoreError):
        engine.append("s", batch("something else"), after=2)
    assert engine.session_info("s")["messages"] == 4


def test_key_and_after_together_or_an_empty_key_are_refused(engine: ctxkit.Engine) -> None:
    with pytest.raises(ctxkit.InvalidInputError):
        engine.append("s", batch("x"), key="k", after=0)
    with pytest.raises(ctxkit.InvalidInputError):
        engine.append("s", batch("x"), key="")
