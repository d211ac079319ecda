"""The local session store: what only the local files promise (the shared contract: test_session_store_contract.py)."""

from __future__ import annotations

import os

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

import projections.sessions as sessions_mod
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace
from projections.naming import MAX_STEM, key_from_name, safe_name

keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)


@settings(max_examples=300)
@given(key=keys)
def test_any_key_becomes_one_safe_file_name_inside_sessions(key):
    name = safe_name(key, ".jsonl")
    assert "/" not in name and "\x00" not in name and "\n" not in name
    assert name not in (".", "..") and not name.startswith(".")
    assert len(name.encode()) <= 255
    if "~" not in name:
        assert key_from_name(name, ".jsonl") == key


@given(a=keys, b=keys)
def test_different_keys_never_share_a_file(a, b):
    if a != b:
        assert safe_name(a) != safe_name(b)


def test_long_keys_keep_a_readable_prefix_and_a_hash():
    name = safe_name("x" * 1000)
    assert name.startswith("x" * 100) and "~" in name and len(name) <= MAX_STEM
    assert key_from_name(name) is None


def test_session_file_has_the_seed_layout(workspace):
    with LocalSessionStore.open(workspace) as store:
        store.get_or_create("cli:x", title="T", metadata={"m": 1})
        store.add_message("cli:x", "user", "hello", message_id="a1", timestamp="2026-11-01T10:00:00Z",
                          extra={"tool_call_id": "c9"})
    path = os.path.join(workspace, "sessions", "cli%3Ax.jsonl")
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    meta = msgspec.json.decode(lines[0])
    assert list(meta) == ["key", "title", "preview", "created_at", "updated_at", "last_consolidated", "metadata"]
    assert meta["key"] == "cli:x" and meta["title"] == "T" and meta["metadata"] == {"m": 1}
    msg = msgspec.json.decode(lines[1])
    assert list(msg)[:5] == ["id", "sessionKey", "role", "content", "timestamp"]
    assert msg == {"id": "a1", "sessionKey": "cli:x", "role": "user", "content": "hello",
                   "timestamp": "2026-11-01T10:00:00Z", "tool_call_id": "c9"}


def test_a_session_file_keeps_the_newest_2000_messages_and_the_log_keeps_all(workspace):
    n = sessions_mod.MAX_FILE_MESSAGES + 150
    with LocalSessionStore.open(workspace) as store:
        store.ws.append([sessions_mod.MessageAppended(session_key="big", message_id=str(i), role="user",
                                                      content=f"m{i}") for i in range(n)])
        assert store.get("big").message_count == n
        hist = store.history("big")
    assert len(hist) == sessions_mod.MAX_FILE_MESSAGES and hist[0].content == "m150" and hist[-1].content == f"m{n - 1}"
    with open(os.path.join(workspace, "sessions", "big.jsonl"), "rb") as f:
        assert f.read().count(b"\n") == sessions_mod.MAX_FILE_MESSAGES + 1
    assert sum(1 for e in Workspace.open(workspace).log.read() if getattr(e, "session_key", "") == "big") == n


def test_session_files_are_written_when_the_store_closes_and_match_a_replay(workspace):
    from eventlog.app import replay

    with LocalSessionStore.open(workspace) as store:
        store.add_message("a", "user", "x")
    assert os.path.exists(os.path.join(workspace, "sessions", "a.jsonl"))
    with Workspace.open(workspace, writable=True) as ws:
        assert replay.check(ws).clean


def test_a_reader_sees_messages_the_writer_has_not_flushed_yet(workspace):
    writer = LocalSessionStore.open(workspace)
    try:
        writer.add_message("live", "user", "fresh")
        reader = LocalSessionStore(Workspace.open(workspace))
        assert [m.content for m in reader.history("live")] == ["fresh"]
    finally:
        writer.close()


def test_files_do_not_depend_on_the_key_order_of_dicts_an_agent_passes(workspace):
    from eventlog.app import replay

    with LocalSessionStore.open(workspace) as store:
        store.get_or_create("k", metadata={"z": 1, "a": {"y": 2, "b": 3}})
        store.add_message("k", "assistant", "x", tool_calls=[{"type": "function", "id": "c", "function": {"name": "n"}}],
                          extra={"zeta": {"q": 1, "c": 2}, "alpha": 1})
        store.update("k", metadata={"m": 0, "b": 1})
        assert replay.check(store.ws).clean  # what was folded in memory equals what a replay decodes
