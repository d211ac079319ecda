"""Erasure erases (INVARIANTS I25): after ``erase`` a byte search of the workspace finds nothing,
the log still verifies and replays, an erased message never comes back, and forget stays soft."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import processors
from eventlog import erasure
from eventlog.app import memory as mem
from eventlog.app import recall, replay
from eventlog.app.erase import Target, erase
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import EvlogError, NotFound
from eventlog.events import (
    ErasureRecorded,
    MessageAppended,
    RecordErased,
    SessionCreated,
    SessionDeleted,
)
from eventlog.log import Log
from processors.archive import run_archive
from tests.simfs import SimFS, abandon_workspace

SECRET = "PURPLE-ELEPHANT-4471"
KEEP = "tea over coffee in the mornings"


def _messages(key: str = "secret-s") -> list:
    return [SessionCreated(session_key=key, title="plans"),
            MessageAppended(session_key=key, message_id="m1", role="user", timestamp="2026-11-01T10:00:00Z",
                            content=f"I live in Lisbon and my launch code is {SECRET}, remember that please"),
            MessageAppended(session_key=key, message_id="m2", role="assistant", timestamp="2026-11-01T10:00:05Z",
                            content=f"Noted: {SECRET} it is.")]


def _build(home: str, *, segment_bytes: int | None = None) -> None:
    """A workspace where the secret reached every store: log, sessions, diary, short-term, MEMORY.md, recall."""
    init_workspace(home, digest_batch_bytes=200, **({"segment_bytes": segment_bytes} if segment_bytes else {}))
    with Workspace.open(home, writable=True) as ws:
        ws.append(_messages())
        ws.append([MessageAppended(session_key="other", message_id="o1", role="user", timestamp="2026-11-02T10:00:00Z",
                                   content=f"I prefer {KEEP}")])
        for p in ("snapshot", "digest", "dream"):
            processors.run(ws, p)
        recall.rebuild(ws)


def _byte_hits(home: str, needle: str = SECRET) -> list[str]:
    """Every file under ``home`` whose bytes hold ``needle`` (segments, sqlite files, checkpoints, anything)."""
    raw = needle.encode()
    out = []
    for root, _dirs, files in os.walk(home):
        for name in files:
            path = os.path.join(root, name)
            if raw in _read(path):
                out.append(os.path.relpath(path, home))
    return sorted(out)


def _sqlite_hits(home: str, needle: str = SECRET) -> list[str]:
    """The recall index read through SQLite (every text column of every table)."""
    path = os.path.join(home, "state", "recall.sqlite")
    if not os.path.exists(path):
        return []
    con = sqlite3.connect(path)
    try:
        found = []
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            try:
                rows = list(con.execute(f"SELECT * FROM \"{table}\""))  # noqa: S608 - names from sqlite_master
            except sqlite3.OperationalError:  # a virtual table that cannot be scanned: its shadow tables are
                continue
            for row in rows:
                if any(isinstance(v, str | bytes) and needle in (v if isinstance(v, str) else v.decode("utf-8", "replace"))
                       for v in row):
                    found.append(table)
                    break
        return found
    finally:
        con.close()


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _clean(home: str) -> None:
    with Workspace.open(home, writable=True) as ws:
        assert [p for p in ws.log.verify() if p.damaged] == []
        check = replay.check(ws)
        assert check.clean, check.drifts


def test_the_secret_reaches_every_store_before_an_erase(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    hits = _byte_hits(home)
    for place in ("log/00000000000000000001.jsonl", "sessions/secret-s.jsonl", "diary/2026-11-01.md",
                  "memory/short-term.md", "state/recall.sqlite"):
        assert place in hits, f"the fixture does not put the secret in {place}: the erase tests would prove less"


def test_erasing_a_session_leaves_no_byte_of_it_anywhere_and_the_log_verifies(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        report = erase(ws, Target("session", "secret-s"))
        assert report.remaining == []
        assert report.erasure_seq and report.seqs
        assert "other" in ws.sessions.index, "another session was touched"
    assert _byte_hits(home) == []
    assert _byte_hits(home, "launch code") == []
    assert _sqlite_hits(home) == []
    assert KEEP.encode() in _read(os.path.join(home, "sessions", "other.jsonl"))
    _clean(home)


@pytest.mark.parametrize(("kind", "value"), [("text", SECRET), ("fact", None), ("subject", "user")])
def test_each_kind_of_erase_leaves_no_byte_of_its_text(tmp_path, kind, value):
    home = str(tmp_path / "ws")
    _build(home)
    fact_text = "The user's launch code"
    with Workspace.open(home, writable=True) as ws:
        fid = mem.add(ws, f"{fact_text} is {SECRET}.", subject="user")
        ws.flush()
        assert "memory/MEMORY.md" in _byte_hits(home, fact_text)
        report = erase(ws, Target(kind, fid if value is None else value))
        assert report.remaining == []
        assert ws.memory.get(fid) is None
    assert _byte_hits(home, fact_text) == []
    assert _sqlite_hits(home, fact_text) == []
    if kind == "text":
        assert _byte_hits(home) == []
        assert _sqlite_hits(home) == []
    _clean(home)


def test_erasing_a_fact_removes_its_text_everywhere(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        fid = mem.add(ws, "Allergic to the hazelnut-praline dessert at Zorba's.")
        mem.add(ws, "Likes long walks.")
        ws.flush()
        erase(ws, Target("fact", fid))
        assert [f.text for f in ws.memory.all_facts()] == ["Likes long walks."]
    assert _byte_hits(home, "hazelnut-praline") == []
    _clean(home)


def test_a_dry_run_lists_every_place_and_changes_no_byte(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)

    def snapshot() -> dict[str, bytes]:
        out = {}
        for root, _d, files in os.walk(home):
            for name in files:
                p = os.path.join(root, name)
                with open(p, "rb") as f:
                    out[p] = f.read()
        return out

    ws = Workspace.open(home, writable=True)
    ws.flush()
    before = snapshot()
    try:
        report = erase(ws, Target("session", "secret-s"), dry_run=True)
    finally:
        ws.close()
    places = list(report.places())
    assert {"place": "segment", "path": "log/00000000000000000001.jsonl", "seqs": report.seqs} in places
    files = {p["path"] for p in places if p["place"] == "file"}
    assert {"sessions/secret-s.jsonl", "diary/2026-11-01.md", "memory/short-term.md", "state/recall.sqlite",
            "state/projections.ckpt"} <= files
    after = snapshot()
    changed = sorted(p for p in before if before[p] != after.get(p))
    # closing a writable workspace may save its own disposable checkpoints; the dry run itself writes nothing
    assert [p for p in changed if not p.endswith(("dedup.idx", ".idx"))] == []
    assert not [e for e in Log.open(os.path.join(home, "log")).read() if isinstance(e, ErasureRecorded)]


def test_flipping_a_byte_of_a_rewritten_segment_is_still_damage(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        erase(ws, Target("session", "secret-s"))
    seg = os.path.join(home, "log", "00000000000000000001.jsonl")
    data = bytearray(_read(seg))
    marker_at = data.index(b'{"type":"log.erased"')
    for at in (marker_at + 30, len(data) // 2, len(data) - 40):
        flipped = bytearray(data)
        flipped[at] ^= 0x01
        os.chmod(seg, 0o644)
        with open(seg, "wb") as f:
            f.write(flipped)
        problems = [p for p in Log.open(os.path.join(home, "log")).verify() if p.damaged]
        assert problems and problems[0].segment == "00000000000000000001.jsonl", f"a flipped byte at {at} went unseen"
    with open(seg, "wb") as f:
        f.write(data)
    assert [p for p in Log.open(os.path.join(home, "log")).verify() if p.damaged] == []


def test_a_marker_no_erasure_authorises_is_damage(tmp_path):
    """A line replaced by a well-formed log.erased line (valid checksum) is not an authorised erasure."""
    d = str(tmp_path / "log")
    with Log.open(d, writable=True, create=True) as log:
        for i in range(3):
            log.append(MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=f"hello {i}"))
    seg = os.path.join(d, "00000000000000000001.jsonl")
    lines = _read(seg).splitlines(keepends=True)
    lines[1] = erasure.marker_line(lines[1], 3)  # claims erasure seq 3 (a message, not an erasure)
    with open(seg, "wb") as f:
        f.write(b"".join(lines))
    problems = [p for p in Log.open(d).verify() if p.damaged]
    assert [(p.kind, p.seq) for p in problems] == [("unauthorised-erasure", 2)]


def test_an_erased_message_is_not_brought_back_by_ingesting_the_same_transcript_again(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)
    transcript = tmp_path / "t.jsonl"
    rows = [{"type": "user", "sessionId": "sess-1", "uuid": "u1", "timestamp": "2026-11-01T10:00:00Z", "cwd": "/tmp",
             "message": {"role": "user", "content": f"my launch code is {SECRET}"}},
            {"type": "assistant", "sessionId": "sess-1", "uuid": "u2", "parentUuid": "u1", "timestamp": "2026-11-01T10:00:03Z",
             "cwd": "/tmp", "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}}]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from eventlog.ingest import ingest_paths

    with Workspace.open(home, writable=True) as ws:
        ingest_paths(ws.log, [str(transcript)], fmt="claude-code")
        ws.rebuild_projections()
        keys = list(ws.sessions.index)
        assert len(keys) == 1 and _byte_hits(home)
        erase(ws, Target("session", keys[0]))
    with Workspace.open(home, writable=True) as ws:
        end = ws.log.last_seq
        ingest_paths(ws.log, [str(transcript)], fmt="claude-code")
        assert ws.log.last_seq == end, "re-ingesting the transcript wrote its erased events again"
        ws.flush()
    assert _byte_hits(home) == []


def test_archive_never_promotes_an_entry_of_a_deleted_or_erased_session(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    later = lambda: time.time() + 30 * 86400  # noqa: E731
    with Workspace.open(home, writable=True) as ws:
        entries = ws.memory_entries.entries("stm")
        mem.used(ws, [e.entry_id for e in entries], query="launch")  # every entry was used: all would be promoted
        ws.append([SessionDeleted(session_key="secret-s")])
        run_archive(ws, clock=later)
        tiers = {e.entry_id: (e.tier, e.session_keys) for e in ws.memory_entries.entries()}
        promoted = [keys for tier, keys in tiers.values() if tier == "ltm"]
        assert promoted and all("secret-s" not in keys for keys in promoted)
        ws.flush()
        ltm = os.path.join(home, "memory", "long-term.md")
        assert not os.path.exists(ltm) or SECRET.encode() not in _read(ltm)
        erase(ws, Target("session", "secret-s"))
        run_archive(ws, clock=later)
    assert _byte_hits(home) == []


def test_forget_then_unforget_restores_the_fact(tmp_path, cli_runner):
    from eventlog.cli import cli

    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        fid = mem.add(ws, "Prefers green tea.")
    out = cli_runner.invoke(cli, ["--home", home, "memory", "forget", fid])
    assert out.exit_code == 0, out.stderr
    with Workspace.open(home) as ws:
        assert ws.memory.get(fid).state == "forgotten"
    out = cli_runner.invoke(cli, ["--home", home, "memory", "unforget", fid])
    assert out.exit_code == 0, out.stderr
    with Workspace.open(home, writable=True) as ws:
        assert ws.memory.get(fid).state == "active"
        ws.flush()
        assert b"Prefers green tea." in _read(os.path.join(home, "memory", "MEMORY.md"))
        assert mem.unforget(ws, fid) is False, "unforgetting an active fact changed something"
    _clean(home)


def test_erase_of_nothing_says_so_and_writes_nothing(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        end = ws.log.last_seq
        with pytest.raises(NotFound):
            erase(ws, Target("text", "no such text anywhere 12345"))
        with pytest.raises(NotFound):
            erase(ws, Target("fact", "fact-nope"))
        assert ws.log.last_seq == end


def test_the_cli_refuses_without_yes_off_a_terminal_and_prints_places_as_json(tmp_path, cli_runner):
    from eventlog.cli import cli

    home = str(tmp_path / "ws")
    _build(home)
    out = cli_runner.invoke(cli, ["--home", home, "erase", "--session", "secret-s"])
    assert out.exit_code != 0 and "--yes" in out.stderr
    assert _byte_hits(home)
    out = cli_runner.invoke(cli, ["--home", home, "erase", "--session", "secret-s", "--dry-run", "--json"])
    assert out.exit_code == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert {"segment", "file"} <= {r["place"] for r in rows}
    out = cli_runner.invoke(cli, ["--home", home, "erase", "--session", "secret-s", "--yes"])
    assert out.exit_code == 0, out.stderr
    assert "erased" in out.stderr
    assert _byte_hits(home) == []
    out = cli_runner.invoke(cli, ["--home", home, "verify"])
    assert out.exit_code == 0, out.stdout + out.stderr


def test_erasing_lines_of_older_segments_and_the_active_one_keeps_every_read_exact(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home, segment_bytes=2048)
    with Workspace.open(home, writable=True) as ws:
        for i in range(30):
            key = "secret-s" if i % 3 == 0 else f"s{i % 3}"
            ws.append([MessageAppended(session_key=key, message_id=f"m{i}", role="user",
                                       content=f"{i} {SECRET if key == 'secret-s' else 'plain'} " + "w " * 40)])
        assert len(os.listdir(os.path.join(home, "log"))) > 4
        before = [(e.seq, e.type) for e in ws.log.read()]
        report = erase(ws, Target("session", "secret-s"))
        assert len(report.segments) > 2
        after = list(ws.log.read())
        assert [e.seq for e in after[: len(before)]] == [s for s, _t in before], "seqs moved"
        erased = {e.seq for e in after if isinstance(e, RecordErased)}
        assert erased == set(report.seqs)
        assert [ws.log.find(s).seq for s in sorted(erased)] == sorted(erased)
        ws.append([MessageAppended(session_key="s1", message_id="late", role="user", content="after the erase")])
    assert _byte_hits(home) == []
    _clean(home)


def test_another_writer_open_during_an_erase_keeps_appending_to_the_live_segment(tmp_path):
    home = str(tmp_path / "ws")
    _build(home)
    other = Log.open(os.path.join(home, "log"), writable=True)
    try:
        other.append(MessageAppended(session_key="other", message_id="o2", role="user", content="before"))
        with Workspace.open(home, writable=True) as ws:
            erase(ws, Target("session", "secret-s"))
        seq = other.append(MessageAppended(session_key="other", message_id="o3", role="user", content="after"))
    finally:
        other.close()
    log = Log.open(os.path.join(home, "log"))
    assert log.find(seq).event.content == "after"
    assert [p for p in log.verify() if p.damaged] == []


@pytest.mark.slow
def test_a_kill_at_any_syscall_of_an_erase_leaves_the_old_or_the_new_state(tmp_path):
    base = str(tmp_path / "base")
    _build(base)
    with Workspace.open(base, writable=True) as ws:
        ws.flush()
    old_log = {n: _read(os.path.join(base, "log", n)) for n in os.listdir(os.path.join(base, "log"))
               if n.endswith(".jsonl")}
    finished_at = None
    outcomes: list[bool] = []  # per fault position: did the erasure commit?
    for n in range(1, 400):
        home = str(tmp_path / f"ws{n}")
        shutil.copytree(base, home)
        fs = SimFS()
        ws = Workspace.open(home, writable=True, fs=fs)
        ws.projections  # noqa: B018 - load before counting calls
        fs.fail_at = fs.calls + n
        try:
            erase(ws, Target("session", "secret-s"))
            finished = fs.calls < fs.fail_at  # the fault never hit (a swallowed one on a disposable file may have)
        except (EvlogError, OSError):
            finished = False
        abandon_workspace(ws)
        fs.crash(random.Random(n))
        with Workspace.open(home, writable=True) as again:  # rolls a committed erasure forward
            assert [p for p in again.log.verify() if p.damaged] == [], f"call {n}"
            committed = any(isinstance(e, ErasureRecorded) for e in again.log.read())
            assert replay.check(again).clean, f"call {n}: projections drifted from the log"
        outcomes.append(committed)
        if committed:
            assert _byte_hits(home) == [], f"call {n}: a committed erasure left the text behind"
        else:
            for name, data in old_log.items():  # (recovery may have cut a torn erasure event and recorded it)
                assert _read(os.path.join(home, "log", name)).startswith(data), \
                    f"call {n}: an erasure that never committed changed {name}"
        assert not os.path.exists(os.path.join(home, "log", "ERASING"))
        shutil.rmtree(home)
        if finished:
            finished_at = n
            break
    assert finished_at and finished_at > 10, "the erase finished before any fault hit it: the test proves nothing"
    assert False in outcomes and outcomes.count(True) > 5, f"faults hit too few steps on either side of the commit: {outcomes}"


def test_the_web_why_page_and_session_page_of_an_erased_fact_and_session_show_nothing_of_them(tmp_path):
    from starlette.testclient import TestClient

    from eventlog.app.web.app import key_token, local_app

    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        learned = [f for f in ws.memory.all_facts() if "secret-s#m1" in f.source_refs or "secret-s#m2" in f.source_refs]
        assert learned, "dream learned nothing from the secret session: the test would prove nothing"
    port, token = 8765, "test-token-" + "x" * 32
    urls = ["/", "/memory", f"/s/{key_token('secret-s')}"] + [f"/memory/why/{key_token(f.fact_id)}" for f in learned]

    def pages() -> str:
        app = local_app(home, port, token=token)
        try:
            with TestClient(app, base_url=f"http://127.0.0.1:{port}", follow_redirects=False) as c:
                c.get(f"/?token={token}")
                return "".join(c.get(u).text for u in urls)
        finally:
            app.state.web.source.close()

    assert "launch code" in pages(), "the web did not show the secret before: the test would prove nothing"
    with Workspace.open(home, writable=True) as ws:
        erase(ws, Target("session", "secret-s"))
    body = pages()
    assert SECRET not in body and "launch code" not in body


def test_the_backups_evlog_setup_saved_of_agent_settings_lose_the_erased_text(tmp_path, monkeypatch):
    from eventlog.app.agents import setup

    claude = tmp_path / "claude"
    claude.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    (claude / ".claude.json").write_text(json.dumps({"history": [{"display": f"my launch code is {SECRET}"}]}))
    setup.apply(setup.plan_claude_code(scope="user"))  # saves the old ~/.claude.json beside it
    backup = str(claude / ".claude.json") + setup.BACKUP_SUFFIX
    assert SECRET.encode() in _read(backup)
    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        assert backup in erase(ws, Target("text", SECRET), dry_run=True).files
        report = erase(ws, Target("text", SECRET))
    assert backup in report.removed_files and not os.path.exists(backup)
    assert os.path.exists(claude / ".claude.json"), "the agent's own settings file is not evlog's to delete"
    assert _byte_hits(home) == []


def test_a_marker_keeps_the_length_of_the_line_it_replaces_so_offsets_stay_valid(tmp_path):
    d = str(tmp_path / "log")
    with Log.open(d, writable=True, create=True) as log:
        log.append(SessionCreated(session_key="cli:plans", title="Planning the release", metadata={"cwd": "/home/dana"}))
        for i in range(40):
            log.append(MessageAppended(session_key="cli:plans", message_id=f"m{i}", role="user", content="x" * i))
    lines = _read(os.path.join(d, "00000000000000000001.jsonl")).splitlines(keepends=True)
    for k, line in enumerate(lines):
        marker = erasure.marker_line(line, 99, first=k == 0)
        assert erasure.codec.checksum_ok(marker)
        assert len(marker) == len(line), f"seq {k + 1}: a {len(line)}-byte line became a {len(marker)}-byte marker"


def test_processors_find_their_offsets_unchanged_after_an_erase(tmp_path):
    from eventlog.events import OffsetReset

    home = str(tmp_path / "ws")
    init_workspace(home, digest_batch_bytes=200)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="secret-s", title="Planning the release", metadata={"cwd": "/home/dana"}),
                   *_messages()[1:]])
        ws.append([MessageAppended(session_key="other", message_id="o1", role="user", content=f"I prefer {KEEP}")])
        for p in ("snapshot", "digest", "dream"):
            processors.run(ws, p)
        erase(ws, Target("session", "secret-s"))
        end = ws.log.last_seq
        ws.append([MessageAppended(session_key="other", message_id="o2", role="user", content="I enjoy long hikes")])
        for p in ("snapshot", "digest", "dream"):
            processors.run(ws, p)
        resets = [e for e in ws.log.read(end + 1) if isinstance(e, OffsetReset)]
        assert resets == [], f"an erase moved the processors' positions: {[r.reason for r in resets]}"
    _clean(home)


def test_the_recall_embedding_cache_is_dropped_by_an_erase(tmp_path):
    from projections.recall.embeddings import EmbeddingCache, text_hash
    from projections.recall.workspace import EMBEDDINGS_FILE

    home = str(tmp_path / "ws")
    _build(home)
    cache = EmbeddingCache(os.path.join(home, EMBEDDINGS_FILE))
    cache.put("fake", [(text_hash(f"Noted: {SECRET} it is."), [0.5, 0.5])])  # a vector of an erased text
    cache.close()
    with Workspace.open(home, writable=True) as ws:
        report = erase(ws, Target("session", "secret-s"))
    assert EMBEDDINGS_FILE in report.removed_files
    assert not os.path.exists(os.path.join(home, EMBEDDINGS_FILE))
    _clean(home)


@settings(max_examples=300, deadline=None)
@given(needles=st.lists(st.binary(min_size=1, max_size=24), min_size=1, max_size=6), data=st.binary(max_size=200),
       cut=st.integers(min_value=0, max_value=200))
def test_the_needle_matcher_finds_exactly_what_a_plain_search_finds(needles, data, cut):
    from eventlog.app.erase import _Needles

    data = data[:cut] + needles[0] + data[cut:] if cut % 2 else data  # half the cases hold a needle
    assert _Needles(tuple(needles)).search(data) == any(n in data for n in needles)


def test_a_projects_mirrored_memory_and_leftover_backups_lose_an_erased_fact(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ws.register_project(str(project))
        text = f"The deploy key of this project is {SECRET}."
        fid = mem.add(ws, text, section="Project Context", project=str(project), subject="project")
        mem.add(ws, "The project uses pytest.", section="Project Context", project=str(project), subject="project")
        ws.flush()
        mirror = project / "memory" / "MEMORY.md"
        assert SECRET.encode() in _read(str(mirror))
        for leftover in ("memory/MEMORY.md.bak", "state/flush.tmp", "memory/MEMORY.md~"):
            with open(os.path.join(home, leftover), "wb") as f:  # an editor's or a tool's copy of the file
                f.write(f"## Project Context\n- {text}\n".encode())
        report = erase(ws, Target("fact", fid))
        assert sorted(report.removed_files) == ["memory/MEMORY.md.bak", "memory/MEMORY.md~", "state/flush.tmp"]
    assert SECRET.encode() not in _read(str(mirror)) and b"pytest" in _read(str(mirror))
    assert _byte_hits(home) == [] and _byte_hits(str(project)) == []
    _clean(home)


def test_erasing_a_real_claude_code_session_leaves_nothing_and_a_reingest_does_not_bring_it_back(tmp_path):
    from eventlog.ingest import ingest_paths
    from tests.conftest import real_data

    folder = real_data("claude-code-viewer")
    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ingest_paths(ws.log, [folder])
        ws.rebuild_projections()
        for p in ("snapshot", "digest", "dream"):
            processors.run(ws, p)
        recall.rebuild(ws)
        ws.flush()
        sizes = {k: s.count for k, s in ws.sessions.index.items()}
        key = sorted(sizes, key=sizes.get)[len(sizes) // 2]  # a session of middling size
        texts = [e.content for e in ws.log.read() if isinstance(e, MessageAppended) and e.session_key == key
                 and len(e.content) > 80]
        others = b"".join(e.content.encode() for e in ws.log.read()
                          if isinstance(e, MessageAppended) and e.session_key != key)
        plain = [t[20:60] for t in texts if t[20:60].isascii() and not set(t[20:60]) & set('"\\\n\t<>&')]
        probes = [p for p in plain if p.encode() not in others][:5]  # bytes as written in every file
        assert probes, "no distinctive text in the chosen session: the test would prove nothing"
        assert all(_byte_hits(home, p) for p in probes)
        report = erase(ws, Target("session", key))
        assert report.remaining == []
        end = ws.log.last_seq
        ingest_paths(ws.log, [folder])
        assert ws.log.last_seq == end, "re-ingesting the transcripts wrote erased events again"
    for p in probes:
        assert _byte_hits(home, p) == [], f"{p!r} is still in the workspace"
    _clean(home)


def test_an_erasure_event_naming_an_already_erased_seq_does_not_unsettle_its_marker(tmp_path):
    """Any library caller may append a log.erasure (I21): one that lists a seq erased before changes nothing."""
    home = str(tmp_path / "ws")
    _build(home)
    with Workspace.open(home, writable=True) as ws:
        report = erase(ws, Target("session", "secret-s"))
        seq = report.seqs[0]
        ws.append([ErasureRecorded(erasure_id="other", kind="text", seqs=[seq], markers=["xxh3-64:" + "0" * 16])])
        assert [p for p in ws.log.verify() if p.damaged] == []


def test_a_copy_appended_between_the_find_and_the_commit_is_erased_too(tmp_path, monkeypatch):
    """Another writer (a pull, an ingest) appends the text after erase looked and before it took the lock."""
    from eventlog.app import erase as erase_mod
    from eventlog.app.workspace import Workspace, init_workspace
    from eventlog.events import MessageAppended

    home = str(tmp_path / "ws")
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        ws.append([MessageAppended(session_key="s:1", message_id="m1", role="user", content="the code is zebra-4471")])
        real_find, calls = erase_mod.find, []

        def find_then_another_writer(w, target):
            found = real_find(w, target)
            if not calls:  # the first look: a copy lands before the commit
                ws.log.append(MessageAppended(session_key="s:2", message_id="m9", role="user",
                                              content="again: the code is zebra-4471"))
            calls.append(1)
            return found

        monkeypatch.setattr(erase_mod, "find", find_then_another_writer)
        erase_mod.erase(ws, erase_mod.Target("text", "zebra-4471"))
        assert ws.log.verify() == []
    finally:
        ws.close()
    held = []
    for d, _, fs in os.walk(home):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                if b"zebra-4471" in fh.read():
                    held.append(os.path.join(d, f))
    assert held == []


def test_the_daemons_log_and_heartbeat_lose_an_erased_text(tmp_path):
    """A job's error in logs/daemon.log (and its rotations) or state/daemon.json can quote a message: an erase
    rewrites the log without those lines (the others stay) and removes the heartbeat the daemon rewrites anyway."""
    home = str(tmp_path / "ws")
    _build(home)
    os.makedirs(os.path.join(home, "logs"), exist_ok=True)
    log = os.path.join(home, "logs", "daemon.log")
    with open(log, "w") as f:
        f.write("2026-11-01 10:00:00 dream ok\n")
        f.write(f"2026-11-01 10:01:00 dream failed: bad output near '{SECRET}'\n")
        f.write("2026-11-01 10:02:00 snapshot ok\n")
    with open(log + ".1", "w") as f:
        f.write(f"old line quoting {SECRET}\n")
    with open(os.path.join(home, "state", "daemon.json"), "w") as f:
        json.dump({"pid": 1, "jobs": {"dream": {"error": f"near {SECRET}"}}}, f)
    with Workspace.open(home, writable=True) as ws:
        report = erase(ws, Target("text", SECRET))
    assert report.remaining == []
    assert _byte_hits(home) == []
    with open(log) as f:
        lines = f.read().splitlines()
    assert lines[0].endswith("dream ok") and lines[2].endswith("snapshot ok") and len(lines) == 3
    assert not os.path.exists(os.path.join(home, "state", "daemon.json"))


def test_erase_works_beside_the_daemons_hook_socket(tmp_path):
    """A running (or killed) daemon leaves run/hooks.sock in the workspace: erase skips it, it has no bytes."""
    import socket
    import tempfile

    short = tempfile.mkdtemp(prefix="evs-", dir="/tmp")  # a socket path must stay short
    try:
        home = os.path.join(short, "ws")
        _build(home)
        os.makedirs(os.path.join(home, "run"), mode=0o700)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(os.path.join(home, "run", "hooks.sock"))
        try:
            with Workspace.open(home, writable=True) as ws:
                assert erase(ws, Target("session", "secret-s")).remaining == []
        finally:
            sock.close()
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_a_fifo_in_the_workspace_does_not_stall_erase(tmp_path):
    """Reading a FIFO blocks until a writer comes: erase looks only at regular files."""
    import threading

    home = str(tmp_path / "ws")
    _build(home)
    fifo = os.path.join(home, "state", "stray.fifo")
    os.mkfifo(fifo)
    done: list[object] = []

    def run() -> None:
        with Workspace.open(home, writable=True) as ws:
            done.append(erase(ws, Target("session", "secret-s")).remaining)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():  # unblock the reader so the test process can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        t.join(60)
    assert done == [[]], "erase stalled on a FIFO"


def test_a_file_that_vanishes_during_the_walk_is_skipped(tmp_path, monkeypatch):
    """Another writer's temporary file (projections.ckpt.tmp) may be gone between the walk and the look."""
    from eventlog.app import erase as erase_mod

    home = str(tmp_path / "ws")
    _build(home)
    real_walk = os.walk

    def walk_with_a_ghost(top, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        for root, dirs, files in real_walk(top, *a, **k):
            yield root, dirs, [*files, "gone.tmp"]

    monkeypatch.setattr(erase_mod.os, "walk", walk_with_a_ghost)
    with Workspace.open(home, writable=True) as ws:
        assert erase(ws, Target("session", "secret-s")).remaining == []
