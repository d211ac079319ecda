"""Incremental ingest of growing transcripts equals a full ingest of the final file.

The real transcripts in ../shared/data/real (read in place, copied only into temporary
folders while a test runs) are grown chunk by chunk, cut anywhere: inside a line, inside
a multi-byte character, between the lines of one Claude response, inside an inline
sidechain, before a summary whose leaf was already read. After each chunk
``ingest_file`` reads what is new; at the end every session (title, metadata, project,
every message line of its file) must equal what ``ingest_paths`` gives for the final file
in a fresh workspace.

Known and documented differences (module docstring of ``eventlog.ingest.incremental``):
``created_at`` is the earliest time seen when the session was first ingested (checked
here to be no earlier than the full ingest's), ``updated_at`` depends on when events were
appended and ``preview`` follows appends, not updates (a projection rule).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended
from eventlog.ingest import ingest_paths
from eventlog.ingest.incremental import ingest_file, load_state, needs_ingest
from eventlog.log import Log
from tests.conftest import real_data

CLAUDE_FILES = [
    ("claude-spotter", "short.jsonl"),
    ("claude-spotter", "tool_heavy.jsonl"),
    ("claude-spotter", "subagent.jsonl"),
    ("claude-spotter", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
    ("claude-spotter", "4d5611e5-241a-462a-8d15-5122611a9569", "subagents", "agent-a2898e3.jsonl"),
    ("claude-code-viewer", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
    ("claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"),
    ("claude-code-viewer", "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"),
    ("claude-kfischer-branching", "-Users-user-project", "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl"),
    ("claude-kfischer-branching", "-Users-user-project", "0d3b22c1-ba90-4fd3-b8d2-056ffc626725.jsonl"),
    ("claude-kfischer-branching", "-Users-user-project", "agent-a434715.jsonl"),
    ("agent-history-real-sessions", "claude-session-01.jsonl"),
]
OTHER_FILES = [
    ("agent-history-real-sessions", "codex-session-01.jsonl"),
    ("nanobot-sessions", "cron_ee40e6bb.jsonl"),
    ("nanobot-sessions", "qq_D536FE422F10DDB19442A6AAE7AB66FC.jsonl"),
]
ALL_FILES = CLAUDE_FILES + OTHER_FILES


def _id(parts: tuple[str, ...]) -> str:
    return parts[-1][:24]


# --- helpers ------------------------------------------------------------------------------------


def new_home(root: str, name: str) -> str:
    home = os.path.join(root, name)
    init_workspace(home, durability="none")
    return home


def open_log(home: str) -> Log:
    return Log.open(os.path.join(home, "log"), writable=True, durability="none")


def sessions_of(home: str) -> dict[str, dict]:
    """Every session as the projection shows it (read-only workspace: folded in memory)."""
    ws = Workspace.open(home)
    try:
        sp = ws.sessions
        return {key: {"title": s.title, "metadata": s.metadata, "project": s.project, "created_at": s.created_at,
                      "count": s.count, "lines": list(sp.lines(key))}
                for key, s in sp.index.items()}
    finally:
        ws.close()


def message_keys(home: str) -> Counter:
    ws = Workspace.open(home)
    try:
        return Counter((e.session_key, e.message_id) for e in ws.log.read() if isinstance(e, MessageAppended))
    finally:
        ws.close()


def full_ingest(root: str, data: bytes, name: str) -> str:
    home = new_home(root, "full")
    folder = os.path.join(root, "full-src")
    os.makedirs(folder)
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data)
    log = open_log(home)
    try:
        report = ingest_paths(log, [path])
    finally:
        log.close()
    assert report.ok, report.failed[0].error
    return home


def grow(root: str, data: bytes, name: str, cuts: list[int], *, max_bytes: int | None = None) -> tuple[str, list]:
    """Write ``data`` chunk by chunk (cut at ``cuts``), ingesting incrementally after each chunk."""
    home = new_home(root, "inc")
    folder = os.path.join(root, "inc-src")
    os.makedirs(folder)
    path = os.path.join(folder, name)
    open(path, "wb").close()
    bounds = sorted(set(c for c in cuts if 0 < c < len(data))) + [len(data)]
    results = []
    log = open_log(home)
    try:
        prev = 0
        for i, cut in enumerate(bounds):
            with open(path, "ab") as f:
                f.write(data[prev:cut])
            prev = cut
            last = i == len(bounds) - 1
            while True:
                r = ingest_file(log, path, state_dir=os.path.join(home, "state"), final=last, max_bytes=max_bytes)
                results.append(r)
                assert r.ok, r.error
                if not (max_bytes and r.mode != "waiting" and r.pending_bytes and r.bytes_read):
                    break
    finally:
        log.close()
    return home, results


def assert_same(inc: str, full: str) -> None:
    a, b = sessions_of(inc), sessions_of(full)
    assert sorted(a) == sorted(b)
    for key in b:
        x, y = a[key], b[key]
        assert x["lines"] == y["lines"], key
        assert x["count"] == y["count"], key
        assert x["title"] == y["title"], key
        assert x["metadata"] == y["metadata"], key
        assert x["project"] == y["project"], key
        assert x["created_at"] >= y["created_at"], key  # the earliest time seen at the first ingest
    dupes = [k for k, n in message_keys(inc).items() if n > 1]
    assert not dupes, f"message.appended twice: {dupes[:3]}"


def cut_points(data: bytes) -> st.SearchStrategy[list[int]]:
    """Byte positions to cut at: anywhere, or inside a multi-byte character, or right after a newline."""
    inside = [i for i, b in enumerate(data) if 0x80 <= b < 0xC0]  # continuation bytes
    newlines = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    choices = [st.integers(1, len(data) - 1), st.sampled_from(newlines)]
    if inside:
        choices.append(st.sampled_from(inside))
    return st.lists(st.one_of(*choices), max_size=10)


# --- the property -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("parts", ALL_FILES, ids=_id)
def test_any_split_into_appended_chunks_equals_a_full_ingest(parts: tuple[str, ...]) -> None:
    src = real_data(*parts)
    with open(src, "rb") as f:
        data = f.read()
    examples = 30 if len(data) < 200_000 else 8

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cuts=cut_points(data))
    def check(cuts: list[int]) -> None:
        with tempfile.TemporaryDirectory() as root:
            full = full_ingest(root, data, os.path.basename(src))
            inc, _results = grow(root, data, os.path.basename(src), cuts)
            assert_same(inc, full)

    check()


@pytest.mark.parametrize("parts", [p for p in ALL_FILES if "4d5611e5" not in p[-1]], ids=_id)
def test_a_chunk_per_line_equals_a_full_ingest(parts: tuple[str, ...], tmp_path) -> None:
    src = real_data(*parts)
    with open(src, "rb") as f:
        data = f.read()
    cuts = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    full = full_ingest(str(tmp_path), data, os.path.basename(src))
    inc, results = grow(str(tmp_path), data, os.path.basename(src), cuts)
    assert_same(inc, full)
    assert results[0].mode == "full" and {r.mode for r in results[1:]} <= {"incremental", "full", "waiting"}


def test_a_long_transcript_read_in_capped_steps_equals_a_full_ingest(tmp_path) -> None:
    src = real_data("claude-spotter", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    with open(src, "rb") as f:
        data = f.read()
    full = full_ingest(str(tmp_path), data, os.path.basename(src))
    inc, results = grow(str(tmp_path), data, os.path.basename(src), [len(data) // 3], max_bytes=200_000)
    assert_same(inc, full)
    assert len(results) > len(data) // 200_000  # it took several capped reads
    assert max(r.bytes_read for r in results) <= 200_000 + 70_000  # a cap, plus at most the line it cut into


# --- what the reader remembers and when it starts again -------------------------------------------


def _copy(src: str, dst: str, n: int | None = None) -> bytes:
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as f:
        f.write(data if n is None else data[:n])
    return data


def test_reading_again_appends_nothing_and_costs_no_parse(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    _copy(real_data("claude-spotter", "tool_heavy.jsonl"), path)
    state = os.path.join(home, "state")
    with open_log(home) as log:
        first = ingest_file(log, path, state_dir=state)
        assert first.mode == "full" and first.file.messages > 10
        assert not needs_ingest(state, path)
        end = log.last_seq
        again = ingest_file(log, path, state_dir=state)
        assert again.mode == "unchanged" and again.bytes_read == 0 and log.last_seq == end
        # the state is disposable: without it the file is read again, and the log's dedup keys hold
        for name in os.listdir(os.path.join(state, "sources")):
            os.remove(os.path.join(state, "sources", name))
        assert needs_ingest(state, path)
        lost = ingest_file(log, path, state_dir=state)
        assert lost.mode == "full" and lost.file.messages == 0 and log.last_seq == end


def test_a_partial_line_waits_until_it_is_complete(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    src = real_data("claude-spotter", "short.jsonl")
    with open(src, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    path = str(tmp_path / "t.jsonl")
    state = os.path.join(home, "state")
    with open(path, "wb") as f:
        f.write(b"".join(lines[:4]) + lines[4][:50])
    with open_log(home) as log:
        r = ingest_file(log, path, state_dir=state)
        assert r.ok and r.pending_bytes == 50 and r.position == len(b"".join(lines[:4]))
        r = ingest_file(log, path, state_dir=state)
        assert r.mode == "waiting" and r.pending_bytes == 50
        with open(path, "ab") as f:
            f.write(lines[4][50:])
        r = ingest_file(log, path, state_dir=state)
        assert r.mode == "incremental" and r.pending_bytes == 0


def test_an_unterminated_last_line_is_taken_only_when_final(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    src = real_data("nanobot-sessions", "cli_direct.jsonl")
    with open(src, "rb") as f:
        data = f.read().rstrip(b"\n")
    path = str(tmp_path / "t.jsonl")
    with open(path, "wb") as f:
        f.write(data)
    state = os.path.join(home, "state")
    with open_log(home) as log:
        r = ingest_file(log, path, state_dir=state)
        assert r.pending_bytes > 0
        r = ingest_file(log, path, state_dir=state, final=True)
        assert r.ok and r.pending_bytes == 0
        with open(path, "ab") as f:  # the writer adds the newline after all, and a line
            f.write(b"\n" + data.rsplit(b"\n", 1)[1].replace(b'"role"', b'"extra":1,"role"') + b"\n")
        r = ingest_file(log, path, state_dir=state)
        assert r.ok and r.file.messages == 1
        st_ = load_state(state, path)
        assert st_ is not None and st_.line == data.count(b"\n") + 2


def test_a_file_rewritten_shorter_is_read_again_from_the_start(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    _copy(real_data("claude-spotter", "tool_heavy.jsonl"), path)
    state = os.path.join(home, "state")
    short = real_data("claude-spotter", "short.jsonl")
    with open_log(home) as log:
        ingest_file(log, path, state_dir=state)
        with open(short, "rb") as f, open(path, "r+b") as out:  # same inode, shorter content
            out.truncate(0)
            out.write(f.read())
        r = ingest_file(log, path, state_dir=state)
        assert r.mode == "full" and "shrank" in r.reset and r.file.messages > 0
    with open(short, "rb") as f:
        full = full_ingest(str(tmp_path / "x"), f.read(), "short.jsonl")
    keys = set(sessions_of(full))
    assert keys <= set(sessions_of(home))


def test_a_file_replaced_by_another_is_read_from_the_start(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    data = _copy(real_data("claude-spotter", "short.jsonl"), path)
    state = os.path.join(home, "state")
    with open_log(home) as log:
        ingest_file(log, path, state_dir=state)
        other = str(tmp_path / "other.jsonl")
        with open(other, "wb") as f:
            f.write(data + data[:10])  # longer, and a partial line; new inode
        os.replace(other, path)
        r = ingest_file(log, path, state_dir=state)
        assert "replaced" in r.reset and r.file.messages == 0 and r.pending_bytes == 10
        with open(path, "r+b") as f:  # same size, changed bytes
            f.seek(5)
            f.write(b"X")
        r = ingest_file(log, path, state_dir=state)
        assert "changed" in r.reset or not r.ok


def test_a_malformed_new_line_is_reported_and_nothing_of_it_appended(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    data = _copy(real_data("claude-spotter", "short.jsonl"), path)
    state = os.path.join(home, "state")
    with open_log(home) as log:
        ingest_file(log, path, state_dir=state)
        end = log.last_seq
        with open(path, "ab") as f:
            f.write(b'{"type": "user", "uuid": "u1", "message": {"content": "hi"}}\n{"broken\n')
        r = ingest_file(log, path, state_dir=state)
        lines = data.count(b"\n")
        assert not r.ok and r.error.startswith(f"{path}:{lines + 2}:") and "JSON" in r.error
        assert log.last_seq == end and r.position == len(data)
        assert not needs_ingest(state, path)  # reported once per file version


def test_not_a_transcript_names_the_line(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    with open(path, "wb") as f:
        f.write(b"\n[1, 2]\n")
    with open_log(home) as log:
        r = ingest_file(log, path, state_dir=os.path.join(home, "state"))
    assert not r.ok and f"{path}:2: not a transcript" in r.error and "a JSON list" in r.error


def test_a_missing_transcript_raises_not_found(tmp_path) -> None:
    from eventlog.errors import NotFound

    home = new_home(str(tmp_path), "ws")
    with open_log(home) as log, pytest.raises(NotFound, match="no such transcript"):
        ingest_file(log, str(tmp_path / "nope.jsonl"), state_dir=os.path.join(home, "state"))


def test_metadata_first_seen_later_is_added_once(tmp_path) -> None:
    src = real_data("claude-spotter", "tool_heavy.jsonl")
    with open(src, "rb") as f:
        data = f.read()
    first_slug = data.index(b'"slug"')
    cut = data.rfind(b"\n", 0, first_slug) + 1
    inc, _ = grow(str(tmp_path), data, "tool_heavy.jsonl", [cut, cut + 1000, cut + 5000])
    (s,) = [v for k, v in sessions_of(inc).items()]
    assert s["metadata"].get("slug")
    ws = Workspace.open(inc)
    try:
        updates = [e for e in ws.log.read() if e.type == "session.updated" and e.metadata and "slug" in e.metadata]
    finally:
        ws.close()
    assert len(updates) == 1


def test_concurrent_readers_of_one_growing_file_never_double_a_message(tmp_path) -> None:
    src = real_data("claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    with open(src, "rb") as f:
        data = f.read()
    root = str(tmp_path)
    full = full_ingest(root, data, "t.jsonl")
    home = new_home(root, "inc")
    path = os.path.join(root, "t.jsonl")
    open(path, "wb").close()
    state = os.path.join(home, "state")
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        log = open_log(home)
        try:
            while not done.is_set():
                r = ingest_file(log, path, state_dir=state, lock_timeout=10)
                assert r.ok, r.error
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            log.close()

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    step = max(len(data) // 40, 1)
    for i in range(0, len(data), step):
        with open(path, "ab") as f:
            f.write(data[i : i + step])
    done.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    with open_log(home) as log:
        ingest_file(log, path, state_dir=state, final=True)
    assert_same(home, full)


def test_the_state_follows_the_real_path(tmp_path) -> None:
    home = new_home(str(tmp_path), "ws")
    path = str(tmp_path / "t.jsonl")
    _copy(real_data("claude-spotter", "short.jsonl"), path)
    link = str(tmp_path / "link.jsonl")
    os.symlink(path, link)
    state = os.path.join(home, "state")
    with open_log(home) as log:
        ingest_file(log, path, state_dir=state)
        r = ingest_file(log, link, state_dir=state)
    assert r.mode == "unchanged"
    shutil.rmtree(os.path.join(state, "sources"))
    assert needs_ingest(state, link)


# --- small transcripts that exercise every piece of kept context --------------------------------------


def _jl(*records: dict) -> bytes:
    import json

    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def claude_edge_cases() -> bytes:
    """A Claude Code transcript where later lines need what earlier ones said (see each comment)."""
    sid = "5e55"
    base = {"sessionId": sid, "cwd": "/home/dev/a", "version": "2.0.1", "timestamp": "2026-01-01T10:00:00.000Z"}

    def line(kind: str, uuid: str, parent: str | None, message: dict, **extra) -> dict:  # noqa: ANN003
        return {"type": kind, "uuid": uuid, "parentUuid": parent, **base, **extra, "message": message}

    return _jl(
        line("user", "u1", None, {"role": "user", "content": "Run the tests, é漢😀"}),
        line("assistant", "a1", "u1", {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}]}),
        line("assistant", "a1b", "a1", {"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": "Running them now."}]}),
        # a new prompt closes the response; the tool's result arrives after it (named from the kept tools)
        line("user", "u2", "a1b", {"role": "user", "content": "Actually, stop."}),
        line("user", "u3", "u2", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "3 passed"}]}),
        # a metadata key that first appears here (added to the session later)
        line("assistant", "a2", "u3", {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "OK."}]},
             slug="quiet-otter"),
        line("user", "u5", "a2", {"role": "user", "content": "Ask an agent"}),  # closes the main response
        # an inline sidechain (older versions) in another directory: its project is its parent's first cwd
        line("user", "s1", "u5", {"role": "user", "content": "Look around"}, isSidechain=True, cwd="/home/dev/b"),
        line("assistant", "s2", "s1", {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "Found"}]},
             isSidechain=True, cwd="/home/dev/b"),
        line("user", "s3", "s2", {"role": "user", "content": "Go on"}, isSidechain=True, cwd="/home/dev/b"),
        line("assistant", "s4", "s3", {"id": "m4", "role": "assistant", "content": [{"type": "text", "text": "Done"}]},
             isSidechain=True, cwd="/home/dev/b"),
        # a subagent whose later lines name another session (2.0.x warm-up files): its first line decides
        line("user", "g1", None, {"role": "user", "content": "Warmup"}, isSidechain=True, agentId="ag1"),
        line("assistant", "g2", "g1", {"id": "m5", "role": "assistant", "content": [{"type": "text", "text": "Ready"}]},
             isSidechain=True, agentId="ag1", sessionId="other"),
        # a summary pointing at a user line read long before it
        {"type": "summary", "summary": "Stopping the tests", "leafUuid": "u2"},
        line("assistant", "a3", "u3", {"id": "m6", "role": "assistant", "content": [{"type": "text", "text": "Bye"}]}),
        line("user", "u4", "a3", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "again", "is_error": True}]}),
    )


def nanobot_repeats() -> bytes:
    """A nanobot session whose identical messages (same text and time) get ids h, h#2, h#3 in file order."""
    ts = "2026-03-01T09:00:00"
    head = {"_type": "metadata", "key": "qq:1", "created_at": ts, "updated_at": ts, "metadata": {}, "last_consolidated": 0}
    ping = {"role": "user", "content": "[Scheduled Task] ping 🐱", "timestamp": ts}
    pong = {"role": "assistant", "content": "pong", "timestamp": ts}
    return _jl(head, ping, pong, ping, pong, ping, {"role": "tool", "content": "ok", "tool_call_id": "c1",
                                                    "name": "exec", "timestamp": ts}, ping, pong)


def codex_repeats() -> bytes:
    """A Codex rollout with repeated identical items and a model change (turn_context)."""
    ts = "2026-03-01T09:00:00.000Z"

    def item(payload: dict) -> dict:
        return {"timestamp": ts, "type": "response_item", "payload": payload}

    out = item({"type": "function_call_output", "call_id": "c1", "output": "same"})
    return _jl(
        {"timestamp": ts, "type": "session_meta", "payload": {"id": "cx1", "cwd": "/home/dev/c", "timestamp": ts}},
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}),
        out, out,
        {"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt-a"}},
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}),
        out,
        {"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt-b"}},
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}),
        out,
    )


EDGE_CASES = {"claude.jsonl": claude_edge_cases, "nanobot.jsonl": nanobot_repeats, "codex.jsonl": codex_repeats}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_every_kept_piece_of_context_is_needed_and_enough(name: str) -> None:
    data = EDGE_CASES[name]()

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cuts=cut_points(data))
    def check(cuts: list[int]) -> None:
        with tempfile.TemporaryDirectory() as root:
            full = full_ingest(root, data, name)
            inc, _results = grow(root, data, name, cuts)
            assert_same(inc, full)

    check()


def test_the_edge_cases_mean_what_they_say(tmp_path) -> None:
    """The full ingest of the edge-case transcripts has what the property relies on."""
    data = claude_edge_cases()
    s = sessions_of(full_ingest(str(tmp_path / "c"), data, "claude.jsonl"))
    main = s["claude-code:5e55"]
    assert main["title"] == "Stopping the tests" and main["metadata"]["slug"] == "quiet-otter"
    assert any(b'"name":"Bash"' in ln and b'"3 passed"' in ln for ln in main["lines"])  # a late result, named
    (side,) = [v for k, v in s.items() if "/sidechain-" in k]
    assert side["project"] == "/home/dev/a" and side["metadata"]["cwd"] == "/home/dev/b"
    assert "claude-code:5e55/agent-ag1" in s  # not .../other/agent-ag1
    ids = [ln.split(b'"id":"')[1].split(b'"')[0] for ln in sessions_of(
        full_ingest(str(tmp_path / "n"), nanobot_repeats(), "nanobot.jsonl"))["qq:1"]["lines"]]
    assert sum(1 for i in ids if b"#" in i) >= 4
    cx = sessions_of(full_ingest(str(tmp_path / "x"), codex_repeats(), "codex.jsonl"))["codex:cx1"]
    assert cx["metadata"]["model"] == "gpt-a" and any(b'"model":"gpt-b"' in ln for ln in cx["lines"])
