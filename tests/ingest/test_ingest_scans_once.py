"""Ingest scans each text for secrets once (issue 25): its own redaction is the writer's door.

Ingest redacts a file's events before appending them (to count what it found), and the
writer's door redacts every event again. Ingest now runs the door itself
(``redact.redact_counted``) and marks each event it found clean, so the writer takes the
mark instead of scanning the text a second time. What is stored and counted is the same.
"""

from __future__ import annotations

import json
import os

from eventlog import secrets
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended
from eventlog.ingest import ingest_paths
from tests.secret_corpus import CORPUS


class CountingAnchor:
    """Stands in for the detector's anchor pattern and counts the characters it is asked to scan."""

    def __init__(self, real) -> None:
        self.real = real
        self.chars = 0

    def finditer(self, text):
        self.chars += len(text)
        return self.real.finditer(text)

    def search(self, text, *args):
        self.chars += len(text)
        return self.real.search(text, *args)


def catbuddy_file(path: str, contents: list[str], key: str = "desk:1") -> str:
    rows = [{"key": key, "title": "Groceries", "created_at": "2025-06-01T10:00:00.000Z", "metadata": {}}]
    rows += [{"id": f"m{i}", "sessionKey": key, "role": "user", "content": c,
              "timestamp": "2025-06-01T10:00:00.000Z"} for i, c in enumerate(contents)]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path


def test_ingest_scans_each_message_once_and_still_redacts(tmp_path, monkeypatch):
    home = str(tmp_path / "ws")
    init_workspace(home)
    contents = [f"plain words about the garden, number {i} " * 20 for i in range(60)]
    contents[7] = f"my key is {CORPUS[0].text} ok"  # one secret: redacted and counted as before
    path = catbuddy_file(str(tmp_path / "in" / "s.jsonl"), contents)
    anchor = CountingAnchor(secrets._ANCHOR)
    monkeypatch.setattr(secrets, "_ANCHOR", anchor)
    with Workspace.open(home, writable=True) as ws:
        report = ingest_paths(ws.log, [path])
    monkeypatch.undo()
    text = sum(len(c) for c in contents)
    assert anchor.chars < 1.3 * text  # was ~2x: ingest's own scan, then the door's again
    assert report.ok and report.secrets >= 1
    with Workspace.open(home) as ws:
        stored = [e for e in ws.log.read() if isinstance(e, MessageAppended)]
    assert len(stored) == 60
    assert CORPUS[0].text not in stored[7].content and stored[7].redacted
    assert [e.content for i, e in enumerate(stored) if i != 7] == [c for i, c in enumerate(contents) if i != 7]


def test_a_file_that_concerns_no_other_file_is_parsed_once(tmp_path, monkeypatch):
    """Only Claude Code files need the first pass (a summary titles another file's session): the others
    were parsed there too and, past the kept budget, parsed again before their batch."""
    import eventlog.ingest as ingest

    home = str(tmp_path / "ws")
    init_workspace(home)
    paths = [catbuddy_file(str(tmp_path / "in" / f"s{i}.jsonl"), [f"words {i} {j}" for j in range(5)], f"desk:{i}")
             for i in range(3)]
    monkeypatch.setattr(ingest, "KEEP_PARSED_BYTES", 0)  # a big run: nothing parsed in pass 1 is kept
    parses: list[str] = []
    real = ingest.parse_file
    monkeypatch.setattr(ingest, "parse_file", lambda path, fmt="auto": (parses.append(path), real(path, fmt))[1])
    with Workspace.open(home, writable=True) as ws:
        report = ingest_paths(ws.log, paths)
    assert report.ok and report.messages == 15
    assert sorted(parses) == sorted(paths)  # was each path twice
