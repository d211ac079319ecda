"""The memory entries' state is bounded by the number of entries (issue 25): texts stay in the log,
message seqs are kept as runs, and what the files and ``evlog memory --tier`` show does not change."""

from __future__ import annotations

import json
import os

import msgspec
from hypothesis import given
from hypothesis import strategies as st

import processors
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MemoryAppended, MessageAppended, StmAdded
from projections.memory_entries import STM_FILE, expand_runs, runs_hold_any, seq_runs
from projections.projector import CHECKPOINT


@given(st.lists(st.integers(min_value=1, max_value=60), max_size=40), st.sets(st.integers(min_value=0, max_value=70)))
def test_runs_keep_the_seqs_and_answer_membership_as_the_list_does(seqs, wanted):
    runs = seq_runs(seqs)
    assert expand_runs(runs) == seqs
    assert runs_hold_any(runs, wanted) == bool(wanted.intersection(seqs))


def test_consecutive_seqs_are_one_run():
    assert seq_runs(range(100, 180)) == [100, 80]
    assert seq_runs([5, 6, 9, 10, 11, 4]) == [5, 2, 9, 3, 4, 1]


def _workspace(tmp_path) -> str:
    home = str(tmp_path / "ws")
    init_workspace(home, digest_batch_bytes=400)
    with Workspace.open(home, writable=True) as ws:
        ws.append([MessageAppended(session_key=f"s{i % 4}", message_id=f"m{i}", role="user",
                                   content=f"note {i}: the staging deploy uses blue green " + "words " * 8,
                                   timestamp=f"2026-11-0{1 + i % 3}T10:{i:02d}:00Z") for i in range(30)])
        processors.run(ws, "snapshot")
        processors.run(ws, "digest")
    return home


def _stm_events(ws: Workspace) -> list[StmAdded]:
    return [e for e in ws.log.read() if isinstance(e, StmAdded)]


def test_the_checkpoint_holds_no_entry_text_and_the_cli_still_shows_it(tmp_path, cli_runner):
    from eventlog.cli import cli

    home = _workspace(tmp_path)
    with Workspace.open(home) as ws:
        events = _stm_events(ws)
    assert len(events) > 3
    with open(os.path.join(home, CHECKPOINT), "rb") as f:
        state = msgspec.json.decode(f.read())["states"]["memory_entries"]
    saved = json.dumps(state)
    assert all(ev.text.splitlines()[1] not in saved for ev in events if "\n" in ev.text), "an entry's text is in its state"
    out = cli_runner.invoke(cli, ["--home", home, "memory", "--tier", "stm", "--json"])
    assert out.exit_code == 0, out.stderr
    shown = {row["entry_id"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert {ev.entry_id: (ev.text, ev.message_seqs, ev.session_keys) for ev in events} == {
        k: (row["text"], row["message_seqs"], row["session_keys"]) for k, row in shown.items()}


def test_a_fact_citing_a_message_inside_a_run_marks_its_entry(tmp_path):
    home = _workspace(tmp_path)
    with Workspace.open(home, writable=True) as ws:
        ev = _stm_events(ws)[1]
        inner = ev.message_seqs[len(ev.message_seqs) // 2]
        ws.append([MemoryAppended(fact_id="fact-x", scope="user", section="Notes", text="Deploys are blue green.",
                                  source_seqs=[inner])])
        cited = {e.entry_id: e.cited_by for e in ws.memory_entries.entries()}
    assert cited[ev.entry_id] == ["fact-x"]
    assert sum(1 for ids in cited.values() if ids) == 1


def test_a_checkpoint_of_the_previous_version_is_rebuilt_not_misread(tmp_path):
    """A version 5 checkpoint holds entries with ``text`` and ``message_seqs``; read as today's state they
    would have no file line and no seqs: the version makes the projector rebuild them from the log."""
    home = _workspace(tmp_path)
    with Workspace.open(home) as ws:
        events = _stm_events(ws)
    with open(os.path.join(home, STM_FILE), "rb") as f:
        before = f.read()
    path = os.path.join(home, CHECKPOINT)
    with open(path, "rb") as f:
        ck = msgspec.json.decode(f.read())
    ck["version"] = 5
    ck["states"]["memory_entries"]["entries"] = {
        ev.entry_id: {"entry_id": ev.entry_id, "tier": "stm", "text": ev.text, "created_at": ev.ts, "date": ev.date,
                      "session_keys": ev.session_keys, "message_seqs": ev.message_seqs, "seq": ev.seq} for ev in events}
    with open(path, "wb") as f:
        f.write(msgspec.json.encode(ck))
    with Workspace.open(home, writable=True) as ws:
        entries = ws.memory_entries.entries("stm")
        assert [(e.entry_id, e.message_seqs) for e in entries] == [(ev.entry_id, ev.message_seqs) for ev in events]
        assert all(e.item.startswith(f"- [{e.entry_id}] ") and "user: note " in e.item for e in entries)
        ws.memory_entries.dirty = True
        ws.flush()
    with open(os.path.join(home, STM_FILE), "rb") as f:
        assert f.read() == before
