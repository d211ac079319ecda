"""A transcript line longer than the line limit is never held whole, and never stops capture.

``eventlog.ingest.lines`` reads lines in bounded chunks; a line over the limit is read again
with its long strings cut (a bounded prefix and a notice), or skipped if that is not enough,
with a warning naming file and line; the incremental position moves past it. Most tests use a
small limit through ``max_line`` to stay fast; one measures the peak memory of a real hook run
on a 100 MB line at the real 8 MiB limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.app.workspace import Workspace
from eventlog.events import MessageAppended
from eventlog.ingest import parse_file
from eventlog.ingest.incremental import ingest_file
from eventlog.ingest.lines import MAX_LINE_BYTES, iter_lines, shorten
from tests.conftest import REPO

EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")
SID = "11111111-2222-3333-4444-555555555555"
LIMIT = 64 * 1024


def cc(kind: str, uuid: str, parent: str | None, content: object, ts: str) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    msg: dict = {"role": role, "content": content}
    if kind == "assistant":
        msg.update(id=f"msg_{uuid}", model="m")
    return {"parentUuid": parent, "isSidechain": False, "type": kind, "message": msg, "uuid": uuid,
            "timestamp": ts, "sessionId": SID, "cwd": "/home/u/proj", "version": "2.1.0"}


def huge_text(n: int) -> str:
    unit = 'line "quoted" \\ back\tslash ünïcødé ✓ 𝄞\n'
    return (unit * (n // len(unit.encode()) + 1))[: n // 2] + "x" * (n // 2)


def transcript(path: str, big: int) -> list[dict]:
    """Four Claude Code lines; the third holds ``huge_text(big)`` (written as bytes: fast for 100 MB)."""
    recs = [cc("user", "u1", None, "show me the log", "2026-03-01T10:00:00Z"),
            cc("assistant", "a1", "u1", [{"type": "text", "text": "here it is"}], "2026-03-01T10:00:01Z"),
            cc("user", "u2", "a1", "@BIG@", "2026-03-01T10:00:02Z"),
            cc("assistant", "a2", "u2", [{"type": "text", "text": "that was long"}], "2026-03-01T10:00:03Z")]
    if big <= 1 << 20:
        body = json.dumps(huge_text(big), ensure_ascii=False).encode()[1:-1]
    else:  # the same pattern, grown as bytes
        unit = json.dumps(huge_text(1000)[:44], ensure_ascii=False).encode()[1:-1]
        body = unit * (big // 2 // len(unit)) + b"x" * (big // 2)
    with open(path, "wb") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False).encode().replace(b'"@BIG@"', b'"' + body + b'"') + b"\n")
    return recs


def messages(home: str) -> list[MessageAppended]:
    with Workspace.open(home) as ws:
        return [e for e in ws.log.read() if isinstance(e, MessageAppended)]


def test_an_incremental_read_cuts_a_long_line_moves_past_it_and_names_it(workspace, tmp_path) -> None:
    path = str(tmp_path / "t.jsonl")
    transcript(path, 10 * LIMIT)
    state = os.path.join(workspace, "state")
    with Workspace.open(workspace, writable=True) as ws:
        r = ingest_file(ws.log, path, state_dir=state, max_line=LIMIT)
        assert r.ok and r.position == os.path.getsize(path)
        assert len(r.file.warnings) == 1 and f"{path}:3:" in r.file.warnings[0] and "cut" in r.file.warnings[0]
        again = ingest_file(ws.log, path, state_dir=state, max_line=LIMIT)
        assert again.mode == "unchanged" and again.file.events == 0
    got = messages(workspace)
    assert [m.content[:15] for m in got] == ["show me the log", "here it is", huge_text(64)[:15], "that was long"]
    cut = got[2].content
    assert "[evlog:" in cut and "line limit]" in cut and len(cut.encode()) < 2 * LIMIT
    assert cut.startswith(huge_text(10 * LIMIT)[:1000])


def test_a_full_ingest_reads_the_same_cut_line(workspace, tmp_path) -> None:
    path = str(tmp_path / "t.jsonl")
    transcript(path, 10 * LIMIT)
    warnings: list[str] = []
    from eventlog.ingest.detect import read_records

    values = [v for _n, v in read_records(path, warnings=warnings, max_line=LIMIT)]
    assert len(values) == 4 and values[2]["uuid"] == "u2" and "[evlog:" in values[2]["message"]["content"]
    assert len(warnings) == 1 and f"{path}:3:" in warnings[0]


def test_ingest_paths_reports_the_cut_line_of_each_file(workspace, tmp_path, monkeypatch) -> None:
    from eventlog.ingest import ingest_paths, lines

    monkeypatch.setattr(lines, "MAX_LINE_BYTES", LIMIT)  # the default limit, made small
    path = str(tmp_path / "t.jsonl")
    transcript(path, 10 * LIMIT)
    assert len(parse_file(path).warnings) == 1
    with Workspace.open(workspace, writable=True) as ws:
        report = ingest_paths(ws.log, [path])
    assert report.ok and report.messages == 4
    assert len(report.files[0].warnings) == 1 and f"{path}:3:" in report.files[0].warnings[0]


def test_a_line_that_cannot_be_shortened_is_skipped_and_the_rest_goes_in(workspace, tmp_path) -> None:
    path = str(tmp_path / "t.jsonl")
    recs = transcript(path, 100)
    with open(path, "r+", encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
        numbers = json.dumps({**recs[2], "uuid": "u9", "numbers": list(range(40000))}) + "\n"  # ~230 KB, no long string
        f.seek(0)
        f.write("".join(lines[:2]) + numbers + "".join(lines[2:]))
    with Workspace.open(workspace, writable=True) as ws:
        r = ingest_file(ws.log, path, state_dir=os.path.join(workspace, "state"), max_line=LIMIT)
    assert r.ok and r.position == os.path.getsize(path)
    assert len(r.file.warnings) == 1 and "skipped" in r.file.warnings[0] and f"{path}:3:" in r.file.warnings[0]
    assert len(messages(workspace)) == 4


def test_an_unfinished_long_line_waits_without_being_held(workspace, tmp_path) -> None:
    path = str(tmp_path / "t.jsonl")
    transcript(path, 10 * LIMIT)
    with open(path, "rb") as f:
        data = f.read()
    cut_at = data.index(b'"parentUuid": "a1"') + 5 * LIMIT
    with open(path, "wb") as f:
        f.write(data[:cut_at])  # the long line is still being written
    state = os.path.join(workspace, "state")
    with Workspace.open(workspace, writable=True) as ws:
        r = ingest_file(ws.log, path, state_dir=state, max_line=LIMIT)
        assert r.ok and r.file.warnings == [] and len(messages(workspace)) == 2
        with open(path, "ab") as f:
            f.write(data[cut_at:])
        r = ingest_file(ws.log, path, state_dir=state, max_line=LIMIT)
    assert r.ok and r.position == len(data) and len(r.file.warnings) == 1
    assert len(messages(workspace)) == 4


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),  # keys (max 40 bytes) are never cut
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20)


def strings_of(v: object) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [s for x in v for s in strings_of(x)]
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in [k, *strings_of(x)]]
    return []


@settings(max_examples=200, deadline=None)
@given(value=json_values, keep=st.integers(41, 120), chunk=st.integers(1, 50), ascii_only=st.booleans())
def test_shorten_gives_valid_json_whose_strings_are_prefixes_of_the_originals(value, keep: int, chunk: int,
                                                                             ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    fd = os.memfd_create("line")
    os.write(fd, raw)
    try:
        out = shorten(fd, 0, len(raw), keep=keep, limit=1 << 30, chunk=chunk)
    finally:
        os.close(fd)
    assert out is not None
    got = msgspec.json.decode(out)
    for before, after in zip(strings_of(value), strings_of(got), strict=True):
        if after == before:
            continue
        head, sep, _notice = after.partition(" ... [evlog: ")
        assert sep and before.startswith(head) and len(head.encode()) <= keep


def test_iter_lines_splits_like_splitlines_at_any_chunk_size(tmp_path) -> None:
    data = b'{"a": 1}\n\n{"b": "' + b"y" * 3000 + b'"}\r\n{"c": 3}'
    path = str(tmp_path / "f")
    with open(path, "wb") as f:
        f.write(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        for chunk in (1, 3, 7, 64, 1 << 20):
            lines = list(iter_lines(fd, 0, None, max_line=1 << 20, chunk=chunk))
            assert [ln.raw for ln in lines] == data.split(b"\n")
            assert [ln.terminated for ln in lines] == [True, True, True, False]
            assert sum(ln.size for ln in lines) == len(data)
            cut = list(iter_lines(fd, 0, None, max_line=1000, chunk=chunk))
            assert cut[2].cut and msgspec.json.decode(cut[2].raw.rstrip(b"\r"))["b"].startswith("y" * 200)
            assert [ln.offset for ln in cut] == [ln.offset for ln in lines]
    finally:
        os.close(fd)


MEASURE = """
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), capture_output=True)
sys.stderr.buffer.write(r.stderr)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mib", [100, 450])  # 450: the size of the line in the issue (30 s and 1.4 GB per hook before)
def test_stop_hooks_on_a_huge_line_stay_small_and_move_past_it(workspace, tmp_path, mib: int) -> None:
    path = str(tmp_path / "t.jsonl")
    transcript(path, mib * 1024 * 1024)
    payload = json.dumps({"hook_event_name": "Stop", "session_id": SID, "transcript_path": path,
                          "cwd": str(tmp_path)}).encode()
    stderr = b""
    for _ in range(3):  # the hook reads at most 8 MiB of lines a call: the long line comes alone, in the second
        r = subprocess.run([sys.executable, "-c", MEASURE, EVLOG, "--home", workspace, "hook", "claude-code"],
                           input=payload, capture_output=True, timeout=120, cwd=REPO)
        code, peak_kib = (int(x) for x in r.stdout.split())
        assert code == 0, r.stderr
        assert peak_kib < 3 * MAX_LINE_BYTES // 1024 + 120 * 1024, f"peak RSS {peak_kib} KiB"  # not 100s of MB
        stderr += r.stderr
        if b"reads the remaining" not in r.stderr:
            break
    assert b"over the 8388608-byte line limit" in stderr and f"{path}:3:".encode() in stderr, stderr
    assert [m.content[:10] for m in messages(workspace)][-1] == "that was l"
