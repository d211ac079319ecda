"""Ingest syncs the log once per run (and every ``SYNC_EVERY_BYTES``), not once per file.

What must hold: when ``ingest_paths`` returns, everything it appended survives an OS crash;
a crash in the middle loses whole files' batches only (never part of one), and running the
same ingest again brings the log to exactly what one uninterrupted run writes.
"""

from __future__ import annotations

import os
import random

import pytest

import eventlog.ingest as ingest
from eventlog.events import MessageAppended
from eventlog.ingest import ingest_paths
from eventlog.log import Log
from tests.ingest.test_ingest import catbuddy_meta, write_jsonl
from tests.simfs import SimFS, abandon

T0 = "2025-06-01T10:00:00.000Z"


def _folder(tmp_path, files: int = 6, per_file: int = 5) -> str:
    folder = tmp_path / "src"
    for f in range(files):
        msgs = [{"id": f"{f}-{k}", "role": "user", "content": f"file {f} message {k}", "timestamp": T0}
                for k in range(per_file)]
        write_jsonl(folder / f"s{f}.jsonl", [catbuddy_meta(key=f"desk:{f}"), *msgs])
    return str(folder)


def _messages(log_dir: str) -> list[str]:
    return sorted(e.message_id for e in Log.open(log_dir).read() if isinstance(e, MessageAppended))


def test_everything_an_ingest_appended_is_durable_when_it_returns(tmp_path):
    fs = SimFS()
    d = str(tmp_path / "log")
    log = Log.open(d, writable=True, create=True, fs=fs)
    syncs = fs.fsyncs
    report = ingest_paths(log, [_folder(tmp_path)])
    assert report.messages == 30
    assert fs.fsyncs - syncs < 6  # not one per file
    abandon(log)
    fs.crash(random.Random(0), modes=("drop",))  # whatever was not fsynced is gone
    assert len(_messages(d)) == 30


@pytest.mark.parametrize("seed", range(8))
def test_a_crash_mid_ingest_loses_whole_files_only_and_a_rerun_restores_exactly_one_copy(tmp_path, seed):
    fs = SimFS()
    d = str(tmp_path / "log")
    folder = _folder(tmp_path)
    log = Log.open(d, writable=True, create=True, fs=fs)
    stop_after = random.Random(seed).randint(1, 5)

    class Crash(Exception):
        pass

    def progress(result, done, total):  # noqa: ANN001
        if done == stop_after:
            raise Crash  # the process dies here: no sync at the end
    sync = log.sync
    log.sync = lambda: None  # type: ignore[method-assign] - a killed process syncs nothing
    with pytest.raises(Crash):
        ingest_paths(log, [folder], on_progress=progress)
    log.sync = sync  # type: ignore[method-assign]
    abandon(log)
    fs.crash(random.Random(seed), modes=("drop", "torn"))
    survived = _messages(d)
    by_file: dict[str, int] = {}
    for mid in survived:
        by_file[mid.split("-")[0]] = by_file.get(mid.split("-")[0], 0) + 1
    assert all(n == 5 for n in by_file.values())  # whole files or nothing
    log = Log.open(d, writable=True, fs=fs)
    try:
        ingest_paths(log, [folder])
    finally:
        log.close()
    assert _messages(d) == sorted(f"{f}-{k}" for f in range(6) for k in range(5))


def test_a_long_ingest_syncs_every_sync_every_bytes(tmp_path, monkeypatch):
    fs = SimFS()
    log = Log.open(str(tmp_path / "log"), writable=True, create=True, fs=fs)
    folder = _folder(tmp_path)
    size = os.path.getsize(os.path.join(folder, "s0.jsonl"))
    monkeypatch.setattr(ingest, "SYNC_EVERY_BYTES", 2 * size)  # a sync after about every second file
    before = fs.fsyncs
    ingest_paths(log, [folder])
    assert fs.fsyncs - before >= 3
    log.close()


def test_the_incremental_ingest_syncs_each_batch_before_it_records_its_position(tmp_path):
    """Hooks and ``evlog watch`` save how far they read right after appending: that must
    never run ahead of what the log holds durably, so each of their batches is fsynced."""
    from eventlog.ingest.incremental import ingest_file

    fs = SimFS()
    d = str(tmp_path / "log")
    log = Log.open(d, writable=True, create=True, fs=fs)
    folder = _folder(tmp_path, files=1, per_file=5)
    ingest_file(log, os.path.join(folder, "s0.jsonl"), state_dir=str(tmp_path / "state"))
    abandon(log)  # killed right after it recorded its position: no close, no sync
    fs.crash(random.Random(0), modes=("drop",))
    assert len(_messages(d)) == 5
