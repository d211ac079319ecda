"""Archive: used or cited short-term entries are promoted; unused ones go stale and are dropped."""

from __future__ import annotations

import time

import processors
from eventlog.app import memory as mem
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MemoryAppended, MessageAppended
from processors.archive import run_archive


def _workspace(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home, digest_batch_bytes=200)
    ws = Workspace.open(home, writable=True)
    ws.append([MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=f"topic {i}: " + "words " * 10,
                               timestamp=f"2026-11-0{1 + i}T10:00:00Z") for i in range(3)])
    processors.run(ws, "snapshot")
    processors.run(ws, "digest")
    return ws


def test_a_recalled_entry_is_promoted_and_an_unused_old_one_dropped(tmp_path):
    ws = _workspace(tmp_path)
    try:
        entries = ws.memory_entries.entries("stm")
        assert len(entries) == 3
        mem.used(ws, [entries[1].entry_id], query="topic 1")  # a caller chose to use it
        [message] = [e for e in ws.log.read() if isinstance(e, MessageAppended) and e.message_id == "m2"]
        ws.append([MemoryAppended(fact_id="fact-x", scope="user", section="Preferences", text="Topic 2 matters.",
                                  source_refs=["s#m2"], source_seqs=[message.seq])])  # a fact cites its message
        report = run_archive(ws, clock=lambda: time.time() + 30 * 86400)
        tiers = {e.entry_id: e.tier for e in ws.memory_entries.entries()}
        assert tiers[entries[1].entry_id] == tiers[entries[2].entry_id] == "ltm"
        assert tiers[entries[0].entry_id] == "dropped"
        assert report.entries_written == 3
        end = ws.log.last_seq
        run_archive(ws, clock=lambda: time.time() + 30 * 86400)
        assert ws.log.last_seq == end, "rerunning the archive changed something"
    finally:
        ws.close()


def test_fresh_unused_entries_wait(tmp_path):
    ws = _workspace(tmp_path)
    try:
        report = run_archive(ws)
        assert report.entries_written == 0
        assert {e.tier for e in ws.memory_entries.entries()} == {"stm"}
    finally:
        ws.close()


def test_memory_recall_is_ranked_recall_and_records_use_only_when_asked(tmp_path, cli_runner):
    from eventlog.cli import cli

    ws = _workspace(tmp_path)
    home = ws.home
    ws.append([MemoryAppended(fact_id="fact-t", scope="user", section="Preferences", text="The user likes topic 2 best.")])
    ws.close()
    out = cli_runner.invoke(cli, ["--home", home, "memory", "recall", "topic 2", "--json"])
    assert out.exit_code == 0, out.stderr
    hits = [line for line in out.stdout.splitlines() if line]
    assert hits and '"message_id":"m2"' in hits[0] or '"fact_id":"fact-t"' in hits[0]
    assert Workspace.open(home).memory.get("fact-t").recalled == 0, "a search alone records nothing"
    out = cli_runner.invoke(cli, ["--home", home, "recall", "topic 2 best", "--scope", "facts", "--use"])
    assert out.exit_code == 0, out.stderr
    assert Workspace.open(home).memory.get("fact-t").recalled == 1


def test_a_message_an_agent_used_from_recall_keeps_its_short_term_entry(tmp_path, cli_runner):
    from eventlog.cli import cli

    ws = _workspace(tmp_path)
    home = ws.home
    entries = {e.message_seqs[0]: e.entry_id for e in ws.memory_entries.entries("stm")}
    ws.close()
    out = cli_runner.invoke(cli, ["--home", home, "recall", "topic 1", "--scope", "messages", "-n", "1", "--use"])
    assert out.exit_code == 0, out.stderr
    ws = Workspace.open(home, writable=True)
    try:
        [message] = [e for e in ws.log.read() if isinstance(e, MessageAppended) and e.message_id == "m1"]
        run_archive(ws, clock=lambda: time.time() + 30 * 86400)
        tiers = {e.entry_id: e.tier for e in ws.memory_entries.entries()}
        assert tiers[entries[message.seq]] == "ltm"
        assert sorted(tiers.values()) == ["dropped", "dropped", "ltm"]
    finally:
        ws.close()
