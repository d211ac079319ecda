"""``replay --check`` proves the recall index's rows by a digest fold of the log (issue 25, round 5).

The log here has no ``message.updated`` and no ``session.deleted``, so the check takes the
digest fold (``RecallIndex.digest_fold``: message rows hashed, not stored) and compares its
digest with the live rows' (``projections.recall.rowproof``). Each damage test first disables
the rows-only comparison (``row_differences`` returns nothing), so what it finds the digest
found; the old check found nothing that way. Then, with the comparison back, the rows are named.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eventlog
from eventlog.events import (
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
)
from projections.recall import RecallIndex, ftsproof, rowproof
from projections.recall import workspace as rw
from tests.projections.test_recall_check import tamper
from tests.projections.test_recall_index import _apply, logs


@pytest.fixture()
def home(tmp_path):
    home = str(tmp_path / "home")
    eventlog.init_workspace(home)
    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="cli:a", project="evlog", title="first"),
                   MessageAppended(session_key="cli:a", message_id="1", role="user", content="We chose SQLite FTS5."),
                   MessageAppended(session_key="cli:a", message_id="2", role="assistant", content="Porter stemming.",
                                   extra={"speaker": "Ann"}),
                   MessageAppended(session_key="cli:b", message_id="1", role="user", content="数据库迁移 " * 300),
                   HistoryAppended(text="evlog replay --check", source="shell", project="evlog"),
                   MemoryAppended(fact_id="f1", text="The user prefers tabs.", scope="user", section="prefs"),
                   MemoryAppended(fact_id="f1", text="The user prefers spaces.", scope="user", section="prefs")])
    rw.update(home).close()
    return home


@pytest.fixture()
def rows_compared(monkeypatch):
    """Calls of the rows-only comparison; ``blind()`` makes it find nothing (the digest must)."""
    calls: list[int] = []
    real = RecallIndex.row_differences

    def counted(self, expected, **kw):
        calls.append(1)
        return real(self, expected, **kw)

    monkeypatch.setattr(RecallIndex, "row_differences", counted)

    def blind() -> None:
        monkeypatch.setattr(RecallIndex, "row_differences", lambda self, expected, **kw: calls.append(1) or [])

    return calls, blind


def _digest_problems(problems: list[str]) -> list[str]:
    return [p for p in problems if "not the ones a fold of the log gives" in p]


def test_a_sound_index_is_proved_by_the_digest_alone(home, rows_compared):
    calls, _ = rows_compared
    assert rw.check(home) == []
    assert calls == [], "a sound index of a log without updates or deletes took the rows-only fold"


def test_a_digest_fold_holds_no_message_rows_and_gives_the_live_digest(home, tmp_path):
    ws = eventlog.open_workspace(home)
    fold = RecallIndex.digest_fold(str(tmp_path / "digest.sqlite"))
    live = RecallIndex(rw.index_path(home), readonly=True)
    try:
        fold.catch_up(ws.log.read(1))
        kinds = [k for (k,) in fold.db.execute("SELECT kind FROM docs ORDER BY id")]
        assert kinds == [1, 2], "only the history entry and the fact are stored"
        digest = [0]
        assert live.verify(docs_digest=digest) == []
        assert digest[0] == fold.expected_docs_digest() != 0
        assert live.digest_differences(fold, digest[0]) == []
    finally:
        fold.close()
        live.close()


@pytest.mark.parametrize("damage", ["changed", "missing", "extra"])
def test_the_digest_finds_a_changed_a_missing_and_an_extra_row(home, rows_compared, damage):
    event = {"changed": MessageUpdated(session_key="cli:a", message_id="2", content="Snowball stemming."),
             "missing": SessionDeleted(session_key="cli:b"),
             "extra": MessageAppended(session_key="cli:a", message_id="9", role="user", content="a ghost")}[damage]
    tamper(home, event)  # through the index's writer: its full-text index and digest stay consistent
    calls, blind = rows_compared
    blind()
    problems = rw.check(home)
    assert _digest_problems(problems), problems
    assert calls, "a difference takes the rows-only comparison too (it names the rows)"


def test_a_changed_column_the_full_text_index_does_not_hold_is_found(home, rows_compared):
    ix = RecallIndex(rw.index_path(home))
    ix.db.execute("UPDATE docs SET time = '2001-01-01T00:00:00.000Z', pos = pos + 7 WHERE mid = '2'")
    ix.close()
    ro = RecallIndex(rw.index_path(home), readonly=True)
    assert ro.verify() == [], "only the comparison with the log can see this"
    ro.close()
    _, blind = rows_compared
    blind()
    assert _digest_problems(rw.check(home))


def test_the_rows_are_still_named_when_they_differ(home):
    tamper(home, SessionDeleted(session_key="cli:b"))
    problems = rw.check(home)
    assert any("docs row" in p and "missing from the index" in p for p in problems), problems


def test_a_stale_full_text_digest_is_found(home):
    ix = RecallIndex(rw.index_path(home))
    before = ftsproof.stored(ix.db)
    ix.close()
    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([MessageAppended(session_key="cli:a", message_id="3", role="user", content="a kiwi arrives")])
    rw.update(home).close()
    ix = RecallIndex(rw.index_path(home))
    ix.db.execute("UPDATE meta SET value = ? WHERE key = ?", (format(before, "x"), ftsproof.META_KEY))
    ix.close()
    assert any("not written with the stored rows" in p for p in rw.check(home))


@pytest.mark.parametrize("how", ["cut in half", "a page of zeros"])
def test_a_torn_index_file_is_a_problem_not_a_crash(home, how):
    path = rw.index_path(home)
    with eventlog.open_workspace(home, writable=True) as ws:  # enough rows for several pages
        ws.append([MessageAppended(session_key="cli:c", message_id=str(i), role="user", content=f"filler {i} " * 40)
                   for i in range(300)])
    ix = rw.update(home)
    ix.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    ix.close()
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        if how == "cut in half":
            f.truncate(size // 2)
        else:
            f.seek(8192 * 3)
            f.write(b"\0" * 8192)
    problems = rw.check(home)
    assert problems and any("recall index" in p for p in problems), problems


def test_a_log_with_updates_takes_the_rows_only_fold(home, rows_compared):
    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([MessageUpdated(session_key="cli:a", message_id="1", content="We chose SQLite FTS5 with porter.")])
    rw.update(home).close()
    calls, _ = rows_compared
    assert rw.check(home) == []
    assert calls == [1]


def test_a_digest_fold_refuses_what_reads_rows_back(tmp_path):
    fold = RecallIndex.digest_fold(str(tmp_path / "digest.sqlite"))
    try:
        fold.apply(MessageAppended(session_key="cli:a", message_id="1", role="user", content="x", seq=1,
                                   ts="2026-01-01T00:00:00.000Z"))
        fold.apply(SessionDeleted(session_key="cli:a", seq=2, ts="2026-01-01T00:00:01.000Z"))
        with pytest.raises(rowproof.NeedsRows):
            fold.commit()
    finally:
        fold.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(log=logs(), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_a_digest_fold_gives_the_digest_of_a_full_fold_or_says_it_cannot(tmp_path_factory, log, cuts):
    d = tmp_path_factory.mktemp("digest")
    full, fold = RecallIndex(str(d / "full.sqlite")), RecallIndex.digest_fold(str(d / "digest.sqlite"))
    try:
        for i, ev in enumerate(log):
            _apply(full, ev)
            _apply(fold, ev)
            if i in cuts:
                full.commit()
        full.commit()
        try:
            fold.commit()
        except rowproof.NeedsRows:  # only an update or a delete reads rows back
            assert any(isinstance(ev, (MessageUpdated, SessionDeleted)) for ev in log)
            return
        digest = [0]
        assert full.verify(docs_digest=digest) == []
        assert digest[0] == fold.expected_docs_digest()
        assert full.digest_differences(fold, digest[0]) == []
    finally:
        full.close()
        fold.close()


def test_replay_check_proves_the_index_from_the_read_that_replays_the_projections(home, monkeypatch):
    from eventlog.app import replay

    reads: list[int] = []
    real = rw._read_log
    monkeypatch.setattr(rw, "_read_log", lambda home, from_seq, ws=None: reads.append(from_seq) or real(home, from_seq, ws))
    with eventlog.open_workspace(home, writable=True) as ws:
        result = replay.check(ws)
        assert result.clean, (result.drifts, result.index_problems)
        assert reads == [ws.log.last_seq + 1], "the index's proof read the log again from seq 1"
        tamper(home, SessionDeleted(session_key="cli:b"))
        assert any("missing from the index" in p for p in replay.check(ws).index_problems)


@pytest.mark.parametrize("fed", [0, 3, 100])
def test_a_proof_fed_any_prefix_of_the_log_reads_the_rest_itself(home, fed):
    ws = eventlog.open_workspace(home)
    events = list(ws.log.read(1))
    with rw.IndexProof(home, ws=ws) as proof:
        for ev in events[:fed]:
            proof.feed(ev)
        assert proof.finish() == []
    tamper(home, MessageAppended(session_key="cli:a", message_id="9", role="user", content="a ghost"))
    with rw.IndexProof(home, ws=ws) as proof:
        for ev in events[:fed]:
            proof.feed(ev)
        assert any("is in the index but not in a fold of the log" in p for p in proof.finish())
