"""``replay --check`` proves the recall index in one pass each (issue 25, lever 0).

``verify`` tokenises the index's own rows once and compares the full-text index with them;
then a rows-only fold of the log (no tokenising) is compared row by row with the index.
Every test tampers with the live index through its own writer (so its full-text index stays
consistent with its rows and ``verify`` alone cannot see it) and then rolls its position
back: only the comparison with the log finds the missing, extra or changed row.
"""

from __future__ import annotations

import json
import os
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eventlog
from eventlog.errors import ConfigError
from eventlog.events import (
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
)
from eventlog.timeutil import now_iso
from projections.recall import RecallIndex
from projections.recall import workspace as rw
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
                   SessionCreated(session_key="cli:b", project="evlog", title="second"),
                   MessageAppended(session_key="cli:b", message_id="1", role="user", content="数据库迁移 " * 300),
                   HistoryAppended(text="evlog replay --check", source="shell", project="evlog"),
                   MemoryAppended(fact_id="f1", text="The user prefers tabs.", scope="user", section="prefs"),
                   MessageUpdated(session_key="cli:a", message_id="1", content="We chose SQLite FTS5 with porter.")])
    rw.update(home).close()
    assert rw.check(home) == []
    return home


def tamper(home: str, *events) -> None:
    """Apply ``events`` to the live index after its position, then put its position back."""
    ix = RecallIndex(rw.index_path(home))
    seq = ix.seq
    for i, ev in enumerate(events, 1):
        # stamped now, as the log stamps an event (a replicated event's place in the order is its clock)
        ix.apply(ev.__class__(**{**{f: getattr(ev, f) for f in ev.__struct_fields__}, "seq": seq + i, "ts": now_iso()}))
    ix.commit()
    ix.db.execute("UPDATE meta SET value = ? WHERE key = 'seq'", (seq,))
    ix.close()
    ro = RecallIndex(rw.index_path(home), readonly=True)
    try:
        assert ro.verify() == [], "the tampering must be consistent: only the comparison with the log can see it"
    finally:
        ro.close()


def test_a_changed_row_is_found(home):
    tamper(home, MessageUpdated(session_key="cli:a", message_id="2", content="Snowball stemming."))
    problems = rw.check(home)
    assert any("docs row" in p and "differs" in p for p in problems), problems
    assert any("recall index content differs" in p for p in rw.check(home, full=True))


def test_a_missing_row_is_found(home):
    tamper(home, SessionDeleted(session_key="cli:b"))
    problems = rw.check(home)
    assert any("docs row" in p and "missing from the index" in p for p in problems), problems
    assert any("sessions row" in p and "missing" in p for p in problems), problems


def test_an_extra_row_is_found(home):
    tamper(home, MessageAppended(session_key="cli:a", message_id="9", role="user", content="a ghost message"))
    problems = rw.check(home)
    assert any("docs row" in p and "is in the index but not in a fold of the log" in p for p in problems), problems
    assert any("counters" in p for p in problems), problems


def test_a_changed_session_and_speaker_count_are_found(home):
    ix = RecallIndex(rw.index_path(home))
    ix.db.execute("UPDATE sessions SET title = 'renamed' WHERE skey = 'cli:a'")
    ix.db.execute("UPDATE speakers SET n = n + 1")
    ix.close()
    problems = rw.check(home)
    assert any("sessions row" in p and "differs" in p for p in problems), problems
    assert any("speakers row" in p for p in problems), problems


@pytest.mark.parametrize("tokenise", [False, True])
@pytest.mark.parametrize("change", ["UPDATE speakers SET n = n + 1", "DELETE FROM speakers",
                                    "INSERT INTO speakers(project, name, n) VALUES ('evlog', 'Bob', 1)",
                                    "UPDATE speakers SET project = 'other'"])
def test_verify_itself_sees_speaker_counts_that_are_not_the_messages(home, tokenise, change):
    ix = RecallIndex(rw.index_path(home))
    assert ix.verify(tokenise=tokenise) == []
    ix.db.execute(change)
    assert "speaker counts do not match the messages" in ix.verify(tokenise=tokenise)
    ix.close()


def test_a_ghost_in_the_full_text_index_is_found(home):
    ix = RecallIndex(rw.index_path(home))
    ix.db.execute("INSERT INTO fts(rowid, t) VALUES (99, 'ghost sqlite')")
    ix.close()
    assert any("full-text index" in p for p in rw.check(home))


def test_a_stored_text_packed_differently_is_the_same_row(home):
    ix = RecallIndex(rw.index_path(home))
    (rowid, body), = ix.db.execute("SELECT id, body FROM docs WHERE typeof(body) = 'blob'").fetchall()
    ix.db.execute("UPDATE docs SET body = ? WHERE id = ?", (zlib.decompress(body).decode(), rowid))
    ix.close()
    assert rw.check(home) == []


def test_the_rows_only_fold_writes_no_full_text_index(tmp_path, home):
    ws = eventlog.open_workspace(home)
    fresh = RecallIndex.rows_only(str(tmp_path / "rows.sqlite"))
    live = RecallIndex(rw.index_path(home), readonly=True)
    try:
        fresh.catch_up(ws.log.read(1))
        assert fresh.db.execute("SELECT count(*) FROM fts_row").fetchone()[0] == 0
        assert live.db.execute("SELECT count(*) FROM fts_row").fetchone()[0] > 0
        blobs = "SELECT count(*) FROM docs WHERE typeof(body) = 'blob'"
        assert live.db.execute(blobs).fetchone()[0] == 1, "the long CJK message is stored packed in the index"
        assert fresh.db.execute(blobs).fetchone()[0] == 0, "a scratch fold compresses texts nobody keeps"
        assert live.row_differences(fresh) == []
    finally:
        fresh.close()
        live.close()
    with pytest.raises(ConfigError):
        RecallIndex.rows_only(rw.index_path(home))


def test_verify_leaves_nothing_behind_and_works_inside_a_transaction(home):
    ix = RecallIndex(rw.index_path(home))
    try:
        assert ix.stems(["painting"]) == ["paint"]  # the stemmer's temporary tables exist now
        assert ix.verify() == [] and ix.verify() == []
        assert ix.stems(["camping"]) == ["camp"], "verify dropped the stemmer's tables and stems() did not notice"
        assert ix.db.execute("PRAGMA temp_store").fetchone()[0] == 2  # back in memory
        ix.db.execute("BEGIN")
        assert ix.verify() == []
        ix.db.execute("ROLLBACK")
        assert not ix.db.in_transaction
        names = {name for (name,) in ix.db.execute("SELECT name FROM sqlite_temp_schema")}
        assert "expect_row" not in names or ix.db.execute("SELECT count(*) FROM temp.expect_row").fetchone()[0] == 0
        assert ix.verify() == [] and ix.stems(["painted"]) == ["paint"]
    finally:
        ix.close()
    assert os.path.exists(rw.index_path(home))


# -- evlog replay keeps a sound index and rebuilds a wrong one ------------------------------------


def test_replay_keeps_a_sound_index_caught_up_and_says_so(home, cli_runner):
    from eventlog.cli import cli

    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([MessageAppended(session_key="cli:a", message_id="3", role="user", content="a kiwi arrives")])
        last = ws.log.last_seq
    before = os.stat(rw.index_path(home)).st_ino
    res = cli_runner.invoke(cli, ["--home", home, "replay"])
    assert res.exit_code == 0, res.output
    assert "recall index looked sound and was kept" in res.stderr
    assert os.stat(rw.index_path(home)).st_ino == before, "a sound index was rebuilt"
    ix = RecallIndex(rw.index_path(home), readonly=True)
    try:
        assert ix.seq == last and ix.db.execute("SELECT count(*) FROM docs WHERE mid = '3'").fetchone()[0] == 1
    finally:
        ix.close()
    assert rw.check(home) == []


@pytest.mark.parametrize("damage", ["missing", "counter", "ahead", "schema", "no digest"])
def test_replay_rebuilds_an_index_that_looks_wrong(home, cli_runner, damage):
    from eventlog.cli import cli

    path = rw.index_path(home)
    if damage == "missing":
        os.remove(path)
    else:
        ix = RecallIndex(path)
        sql = {"counter": "UPDATE meta SET value = value + 1 WHERE key = 'ndocs'",
               "ahead": "UPDATE meta SET value = value + 5 WHERE key = 'seq'",
               "schema": "UPDATE meta SET value = 999 WHERE key = 'schema'",
               "no digest": "DELETE FROM meta WHERE key = 'ftsdig'"}[damage]
        ix.db.execute(sql)
        ix.close()
    res = cli_runner.invoke(cli, ["--home", home, "--traceback", "replay", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["recall_index"].startswith("rebuilt ("), res.stdout
    assert rw.check(home) == []


def test_replay_check_says_how_to_rebuild_a_wrong_index(home, cli_runner):
    from eventlog.cli import cli

    tamper(home, SessionDeleted(session_key="cli:b"))
    res = cli_runner.invoke(cli, ["--home", home, "replay", "--check"])
    assert res.exit_code == 1 and "delete state/recall.sqlite, then 'evlog replay'" in res.stderr
    os.remove(rw.index_path(home))
    assert cli_runner.invoke(cli, ["--home", home, "replay"]).exit_code == 0
    assert cli_runner.invoke(cli, ["--home", home, "replay", "--check"]).exit_code == 0


def test_the_library_rebuild_still_rebuilds_the_index_by_default(home):
    from eventlog.app import replay

    tamper(home, SessionDeleted(session_key="cli:b"))  # looks sound (counters agree), is wrong
    with eventlog.open_workspace(home, writable=True) as ws:
        assert replay.rebuild(ws).recall_index == "rebuilt"
        assert replay.check(ws).clean
        assert replay.check(ws, full_index=True).clean


# -- the rows-only fold gives the rows a full fold gives, for any log -------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(log=logs(), cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_a_rows_only_fold_has_the_rows_of_a_full_fold(tmp_path_factory, log, cuts):
    d = tmp_path_factory.mktemp("rows")
    full, rows = RecallIndex(str(d / "full.sqlite")), RecallIndex.rows_only(str(d / "rows.sqlite"))
    try:
        for i, ev in enumerate(log):
            _apply(full, ev)
            _apply(rows, ev)
            if i in cuts:
                full.commit()
        full.commit()
        rows.commit()
        assert full.row_differences(rows) == [] and rows.row_differences(full) == []
        assert full.verify() == []
        assert rows.db.execute("SELECT count(*) FROM fts_row").fetchone()[0] == 0
    finally:
        full.close()
        rows.close()


# -- the full-text index proved by its writer's digest, without tokenising (issue 25) ---------------

def _message_row(ix: RecallIndex, mid: str) -> tuple[int, str, str, str]:
    """(rowid, text, aux, tags) of message ``mid`` of cli:a, as the writer's digest hashes it."""
    read = ix.db.cursor()
    try:
        return next(row for row in ix._stored_fts_rows(read)
                    if row[0] == ix.db.execute("SELECT id FROM docs WHERE mid = ? AND sid = (SELECT sid FROM sessions "
                                               "WHERE skey = 'cli:a')", (mid,)).fetchone()[0])
    finally:
        read.close()


def _write_fts(ix: RecallIndex, deleted: tuple, inserted: tuple) -> None:
    """What a buggy writer would do: one delete and one insert in the full-text index, both recorded in its digest."""
    from projections.recall import ftsproof
    from projections.recall.index import _DELETE_FTS, _INSERT_FTS
    from projections.recall.text import index_text

    ix.db.execute("BEGIN IMMEDIATE")
    ix.db.execute(_DELETE_FTS, (deleted[0], index_text(deleted[1]), index_text(deleted[2]), deleted[3]))
    ix.db.execute(_INSERT_FTS, (inserted[0], index_text(inserted[1]), index_text(inserted[2]), inserted[3]))
    ftsproof.save(ix.db, ftsproof.row_hash(*inserted) - ftsproof.row_hash(*deleted))
    ix.db.execute("COMMIT")


@pytest.mark.parametrize("bug", ["inserted another text", "deleted another text"])
def test_the_digest_finds_a_full_text_index_written_other_than_its_rows(home, monkeypatch, bug):
    ix = RecallIndex(rw.index_path(home))
    try:
        row = _message_row(ix, "2")
        other = (row[0], "Snowball stemming.", *row[2:])
        _write_fts(ix, row, other) if bug == "inserted another text" else _write_fts(ix, other, row)
    finally:
        ix.close()
    calls = []
    monkeypatch.setattr(RecallIndex, "_fts_difference", lambda self, *a: calls.append(1) or [])
    problems = rw.check(home)
    assert calls == [], "the default check tokenised the rows again"
    assert any("not written with the stored rows" in p for p in problems), problems
    if bug == "inserted another text":  # (a delete of tokens a row never had can leave the same vocabulary)
        monkeypatch.undo()
        assert any("full-text index does not match the rows" in p for p in rw.check(home, full=True))


def test_the_digest_of_a_sound_index_holds_after_updates_deletes_and_facts(home):
    from projections.recall import ftsproof

    with eventlog.open_workspace(home, writable=True) as ws:
        ws.append([MessageUpdated(session_key="cli:a", message_id="2", content="Snowball 词干 stemming."),
                   MemoryAppended(fact_id="f1", text="The user prefers spaces.", scope="user", section="prefs"),
                   SessionDeleted(session_key="cli:b")])
    rw.update(home).close()
    ix = RecallIndex(rw.index_path(home), readonly=True)
    try:
        assert ftsproof.stored(ix.db) not in (None, 0)
        assert ix.verify() == [] and ix.verify(tokenise=True) == []
    finally:
        ix.close()
    assert rw.check(home) == []


def test_an_index_without_a_digest_is_still_proved_by_tokenising(home):
    ix = RecallIndex(rw.index_path(home))
    ix.db.execute("DELETE FROM meta WHERE key = 'ftsdig'")
    ix.db.execute("INSERT INTO fts(fts, rowid, t) VALUES ('delete', 99999, 'nothing')")  # row count kept
    ix.db.execute("INSERT INTO fts(rowid, t) VALUES (99999, 'ghost sqlite')")
    ix.close()
    assert any("full-text index does not match the rows" in p for p in rw.check(home))


def test_a_hand_edit_of_the_full_text_table_that_keeps_its_rows_is_seen_by_the_document_counts(home, cli_runner):
    from eventlog.cli import cli

    ix = RecallIndex(rw.index_path(home))
    (rowid,) = ix.db.execute("SELECT id FROM docs WHERE mid = '2'").fetchone()
    row = _message_row(ix, "2")
    from projections.recall.index import _DELETE_FTS, _INSERT_FTS

    ix.db.execute(_DELETE_FTS, row)  # outside the writer: its digest is not told
    ix.db.execute(_INSERT_FTS, (rowid, "Snowball stemming.", "", row[3]))
    ix.close()
    # the digest cannot see it (rows kept), the terms' document counts the writer keeps (``dfs``) do
    res = cli_runner.invoke(cli, ["--home", home, "replay", "--check"])
    assert res.exit_code == 1 and "document counts (dfs) differ" in res.output, res.output
    res = cli_runner.invoke(cli, ["--home", home, "replay", "--check", "--full-index"])
    assert res.exit_code == 1 and "full-text index does not match the rows" in res.output, res.output
    assert cli_runner.invoke(cli, ["--home", home, "replay", "--full-index"]).exit_code == 2
