"""``evlog status`` tells the truth (issue 24): nothing installed, daemon down, daemon up, a job failing, the
recall index behind; and ``evlog offsets`` lists each processor once, with a lag that counts pending work."""

from __future__ import annotations

import json
import os

import processors
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated


def _workspace_with_messages(home: str, n: int = 6) -> None:
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="cli:s", created_at="2026-11-01T09:00:00Z")]
                  + [MessageAppended(session_key="cli:s", message_id=str(i), role="user" if i % 2 == 0 else "assistant",
                                     content=f"I prefer tabs over spaces ({i}).", timestamp="2026-11-01T09:00:01Z")
                     for i in range(n)])


def test_offsets_lists_each_processor_once_and_its_lag_is_the_pending_input(workspace):
    _workspace_with_messages(workspace)
    with Workspace.open(workspace, writable=True) as ws:
        for job in ("snapshot", "digest", "dream", "recall"):
            processors.run(ws, job)
        rows = processors.offsets(ws)
    names = [r.processor for r in rows]
    assert len(names) == len(set(names)), f"listed twice: {names}"
    for r in rows:
        assert r.lag == 0, f"{r.processor}: lag {r.lag} with nothing pending ({r.detail})"
    assert {"snapshot", "digest", "dream"} <= set(names)
