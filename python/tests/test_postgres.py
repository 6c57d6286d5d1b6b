"""The Engine over PostgreSQL (``postgres://``): the same calls, the store shared by two
engines. The server is scripts/pg-server.sh's (CTXKIT_TEST_POSTGRES_URL); with CI=true a
missing server fails."""

from __future__ import annotations

import os
import pathlib
import uuid

import pytest

import ctxkit

URL = os.environ.get("CTXKIT_TEST_POSTGRES_URL")


def require_url() -> str:
    if URL:
        return URL
    if os.environ.get("CI") == "true":
        raise RuntimeError("CTXKIT_TEST_POSTGRES_URL is not set (source scripts/pg-server.sh)")
    pytest.skip("no PostgreSQL server (source scripts/pg-server.sh)")


def test_two_engines_share_a_postgres_store(tmp_path: pathlib.Path) -> None:
    url = require_url()
    name = f"py-{uuid.uuid4().hex}"
    a = ctxkit.Engine(url, workdir=tmp_path, window=16_000)
    b = ctxkit.Engine(url, workdir=tmp_path, window=16_000)
    a.append(name, [{"role": "user", "content": "hello from a"}])
    b.append(name, [{"role": "assistant", "content": "hello from b"}])
    assert a.view(name, format="ctxkit")[-1]["content"] == "hello from b"
    turn = b.prepare(name, format="anthropic")
    assert ctxkit.validate(turn["messages"], format="anthropic") == []
    assert a.session_info(name)["messages"] == 2
    with pytest.raises(ctxkit.InvalidInputError):
        a.append(name, [{"role": "user"}, {"role": 7}])
    assert b.session_info(name)["messages"] == 2
    a.close()
    b.close()


def test_a_bad_url_is_a_store_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ctxkit.StoreError, match="PostgreSQL"):
        ctxkit.Engine("postgres://nobody@127.0.0.1:1/none", workdir=tmp_path)
