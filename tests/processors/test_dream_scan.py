"""Dream plans a call from a prefix of the pending log, not the whole stretch after its offset.

A first round over a big workspace makes hundreds of offline calls; each used to read the
``SCAN_RECORDS`` records after the offset again. ``processors.dream._scan`` stops after the
call's entries and the first unclaimed input beyond them; the claims, offsets, runs and facts
must be exactly those of the whole-stretch scan (its ``batch=None``), on interleaved projects.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from processors import dream
from processors.llm import OfflineExtractor

WORDS = ("I prefer tabs over spaces. We use postgres for the billing service. Remember that deploys go out on "
         "Tuesdays. My name is Ada. The staging host is called orca. Tests run with pytest -x.").split(". ")


def _workspace(home: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    init_workspace(home, durability="none")
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key=f"s{i}", project=f"/p/{i % 3}" if i % 2 else "",
                                  created_at="2026-01-01T00:00:00Z") for i in range(6)])
        ws.append([MessageAppended(session_key=f"s{rng.randrange(6)}", message_id=f"m{i}",
                                   role="user" if rng.random() < 0.7 else "assistant", content=rng.choice(WORDS),
                                   timestamp=f"2026-02-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z") for i in range(n)])


def _dream_events(home: str) -> list[dict]:
    with Workspace.open(home) as ws:
        out = []
        for rec in ws.log.records(1):
            d = msgspec.to_builtins(rec.event)
            if d.get("type", "").startswith(("cursor.", "offset.", "dream.", "memory.")):
                out.append({k: v for k, v in d.items() if k not in ("ts", "started_at", "finished_at", "id", "fingerprint")})
        return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_prefix_scan_plans_exactly_what_the_whole_stretch_did(tmp_path, monkeypatch, seed) -> None:  # noqa: ANN001
    monkeypatch.setattr(dream, "OFFLINE_BATCH", 40)
    whole = dream._scan
    read = {"prefix": 0, "whole": 0}

    def counting(kind: str, batch_of):  # noqa: ANN001, ANN202
        def scan(ws, first, last, claimed, batch):  # noqa: ANN001, ANN202
            got = whole(ws, first, last, claimed, batch_of(batch))
            read[kind] += len(got)
            return got
        return scan

    homes = {}
    for kind, batch_of in (("prefix", lambda b: b), ("whole", lambda _b: None)):
        homes[kind] = str(tmp_path / kind)
        _workspace(homes[kind], 900, seed)
        monkeypatch.setattr(dream, "_scan", counting(kind, batch_of))
        with Workspace.open(homes[kind], writable=True) as ws:
            report = dream.run_dream(ws, OfflineExtractor())
        assert len(report.runs) > 10  # many calls, over interleaved projects
    assert _dream_events(homes["prefix"]) == _dream_events(homes["whole"])
    assert read["prefix"] * 3 < read["whole"]
