"""``evlog ingest`` folds what it writes as it writes it (issue 25), instead of reading it back at close.

Ingest appended through the plain log, so the workspace's projections caught up at close by
reading and decoding every event just written (about a quarter of an ingest's time). The
command now hands ``ingest_paths`` a ``FoldingLog``: each file's batch goes through
``Workspace.append``, which folds it in memory. The projection files must come out exactly
as a replay of the log writes them.
"""

from __future__ import annotations

import json
import os

import eventlog.cli.ingest_command  # noqa: F401  (registers `evlog ingest`)
from eventlog.app import replay
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from projections.projector import Projector
from tests.secret_corpus import CORPUS


def write_jsonl(path: str, rows: list[dict]) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path


def catbuddy(path: str, key: str, n: int, secret_at: int = -1) -> str:
    rows = [{"key": key, "title": f"title of {key}", "preview": "", "created_at": "2025-06-01T10:00:00.000Z",
             "updated_at": "2025-06-01T10:00:00.000Z", "last_consolidated": 0, "metadata": {"channel": "desk"}}]
    for i in range(n):
        content = f"message {i} of {key}" + (f" token {CORPUS[0].text}" if i == secret_at else "")
        rows.append({"id": f"{key}-m{i}", "sessionKey": key, "role": "user" if i % 2 else "assistant",
                     "content": content, "timestamp": f"2025-06-01T10:{i // 60:02d}:{i % 60:02d}.000Z"})
    return write_jsonl(path, rows)


def test_cli_ingest_reads_nothing_back_and_its_files_equal_a_replay(cli_runner, workspace, tmp_path, monkeypatch):
    folder = str(tmp_path / "in")
    catbuddy(os.path.join(folder, "a.jsonl"), "desk:a", 30, secret_at=4)
    catbuddy(os.path.join(folder, "b.jsonl"), "desk:b", 20)
    read_back: list[int] = []
    real = Projector.catch_up

    def catch_up(self, *args, **kwargs):
        n = real(self, *args, **kwargs)
        read_back.append(n)
        return n

    monkeypatch.setattr(Projector, "catch_up", catch_up)
    res = cli_runner.invoke(cli, ["--home", workspace, "ingest", folder])
    monkeypatch.undo()
    assert res.exit_code == 0, res.stderr
    assert sum(read_back) == 0  # was 52: every event it wrote, read back when the workspace closed
    with Workspace.open(workspace) as ws:
        assert ws.log.last_seq == 52
        result = replay.check(ws)
        assert result.clean, result.drifts
        sessions = ws.views.sessions
        assert sessions is not None
    again = cli_runner.invoke(cli, ["--home", workspace, "ingest", folder])  # a rerun appends nothing
    assert again.exit_code == 0 and "0 event(s) appended" in again.stderr.splitlines()[-1]


def test_the_projection_files_are_written_every_flush_every_events_during_an_ingest(workspace, tmp_path, monkeypatch):
    from eventlog.app import folding_log
    from eventlog.ingest import ingest_paths

    folder = str(tmp_path / "in")
    for i in range(4):
        catbuddy(os.path.join(folder, f"{i}.jsonl"), f"desk:{i}", 10)
    monkeypatch.setattr(folding_log, "FLUSH_EVERY", 20)  # 11 events a file: a write after every second file
    flushes: list[int] = []
    with Workspace.open(workspace, writable=True) as ws:
        real = ws.flush
        monkeypatch.setattr(ws, "flush", lambda: (flushes.append(ws.log.last_seq), real())[1])
        ingest_paths(folding_log.FoldingLog(ws), [folder])
        assert flushes == [22, 44]  # bounded memory even if the background flush never gets the lock
        monkeypatch.undo()
    with Workspace.open(workspace) as ws:
        assert replay.check(ws).clean
