"""The command line over the log: init, append, tail, verify, stats, repair, the writer lock.

Data goes to stdout (``--json``: exactly one JSON object per line), messages to stderr.
Library errors exit with a one-line message (status 3), usage errors with status 2,
``verify`` finding damage with status 1. INVARIANTS.md I16 (tail correctness) and I19
(single writer) are checked here end to end, ``tail -f`` in a real subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import msgspec
import pytest

from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import MessageAppended, SessionCreated, SessionUpdated
from eventlog.log import Log
from tests.conftest import REPO

EXAMPLE = os.path.join(REPO, "examples", "events.ndjson")
EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")
SMALL = 1024
_SEG_RE = re.compile(r"^\d{20}\.jsonl$")


# --------------------------------------------------------------------------- helpers


def run(runner, home, *args: str, input: str | bytes | None = None):  # noqa: A002
    return runner.invoke(cli, ["--home", str(home), *args], input=input)


class ProcResult:
    """What ``run_stdin`` returns: the fields of click's Result that ``check`` reads."""

    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.exit_code = proc.returncode
        self.stdout = proc.stdout.decode()
        self.stderr = proc.stderr.decode()
        self.exception = None


def run_stdin(home, *args: str, input: str) -> ProcResult:  # noqa: A002
    """Run the real ``evlog`` console script with ``input`` on its stdin.

    (click's CliRunner hands commands a nameless BytesIO as binary stdin, and ``append``
    reads ``source.name``; a real process has ``sys.stdin.buffer.name == '<stdin>'``.)
    """
    proc = subprocess.run([EVLOG, "--home", str(home), *args], input=input.encode(), capture_output=True,
                          timeout=60, env=dict(os.environ, EVLOG_HOME=str(home)))
    return ProcResult(proc)


def check(result, code: int = 0):
    """Assert the exit status, and that no bare exception escaped the command."""
    assert result.exit_code == code, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}\n{result.exception!r}"
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), f"bare {type(result.exception).__name__}: {result.exception}"
    assert "Traceback" not in result.stderr
    return result


def init_home(runner, home, segment_bytes: int = SMALL) -> str:
    check(run(runner, home, "init", "--segment-bytes", str(segment_bytes)))
    return str(home)


def log_dir(home) -> str:
    return os.path.join(str(home), "log")


def seg_names(home) -> list[str]:
    return sorted(n for n in os.listdir(log_dir(home)) if _SEG_RE.match(n))


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def log_state(home) -> dict[str, bytes]:
    """The bytes of every segment file (what 'the log is unchanged' means)."""
    return {n: read_bytes(os.path.join(log_dir(home), n)) for n in seg_names(home)}


def events_of(home, from_seq: int = 1) -> list:
    return list(Log.open(log_dir(home)).read(from_seq))


def as_json(ev) -> dict:
    return msgspec.to_builtins(ev)


def json_lines(stdout: str) -> list[dict]:
    """Parse stdout that must be exactly one JSON object per line and nothing else."""
    if not stdout:
        return []
    assert stdout.endswith("\n"), "stdout does not end in a newline"
    out = []
    for line in stdout.split("\n")[:-1]:
        obj = json.loads(line)
        assert isinstance(obj, dict), f"not a JSON object: {line!r}"
        out.append(obj)
    return out


def message(i: int, session: str = "s1", **extra) -> dict:
    return {"type": "message.appended", "session_key": session, "message_id": f"m{i}", "role": "user",
            "content": f"hello {i}", **extra}


def ndjson(objs: list[dict]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def append_singles(home, n: int, start: int = 0, session: str = "s1") -> list[int]:
    """Append ``n`` messages one event at a time through the library (as the writer)."""
    with Workspace.open(str(home), writable=True) as ws:
        return [ws.log.append(MessageAppended(session_key=session, message_id=f"m{i}", role="user",
                                              content=f"hello {i}")) for i in range(start, start + n)]


def flip(path: str, pos: int, xor: int = 0x01) -> None:
    data = bytearray(read_bytes(path))
    data[pos] ^= xor
    write_bytes(path, bytes(data))


def line_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    for line in data.splitlines(keepends=True):
        starts.append(pos)
        pos += len(line)
    return starts


# --------------------------------------------------------------------------- init


def test_init_creates_a_workspace_and_running_it_again_changes_nothing(cli_runner, tmp_path):
    home = tmp_path / "ws"
    r = check(run(cli_runner, home, "init"))
    assert r.stdout == ""
    assert "created workspace" in r.stderr
    assert os.path.isfile(home / "evlog.json")
    assert seg_names(home) == [f"{1:020d}.jsonl"]
    files = {p: read_bytes(os.path.join(root, p)) for root, _d, fs in os.walk(home) for p in fs if p != "LOCK"}

    r = check(run(cli_runner, home, "init"))
    assert "nothing changed" in r.stderr
    assert r.stdout == ""
    assert {p: read_bytes(os.path.join(root, p)) for root, _d, fs in os.walk(home) for p in fs if p != "LOCK"} == files


def test_a_new_workspace_is_readable_by_its_owner_only(cli_runner, tmp_path):
    home = tmp_path / "private" / "ws"
    check(run(cli_runner, home, "init"))
    for d in (home, home / "log", home / "state"):
        assert os.stat(d).st_mode & 0o777 == 0o700, d


def test_a_job_missing_from_an_older_schedule_runs_at_its_default_and_bad_intervals_are_refused(cli_runner, tmp_path):
    from eventlog.app.workspace import DEFAULT_SCHEDULE, load_config

    home = tmp_path / "ws"
    check(run(cli_runner, home, "init"))
    cfg = json.loads(read_bytes(str(home / "evlog.json")))
    cfg["schedule"] = {"snapshot": 60, "dream": 0}  # written before the recall job existed; dream turned off
    (home / "evlog.json").write_text(json.dumps(cfg))
    schedule = load_config(str(home)).schedule
    assert schedule == {**DEFAULT_SCHEDULE, "snapshot": 60, "dream": 0}
    for bad in (-1, 1e12):
        cfg["schedule"] = {"snapshot": bad}
        (home / "evlog.json").write_text(json.dumps(cfg))
        r = check(run(cli_runner, home, "stats"), 3)
        assert "schedule.snapshot" in r.stderr


def test_a_named_project_that_does_not_exist_is_not_created_or_registered(cli_runner, tmp_path):
    home = tmp_path / "ws"
    missing = tmp_path / "no-such-project"
    check(run(cli_runner, home, "init"))
    r = check(run(cli_runner, home, "remember", "--project", str(missing), "We use tabs in this repo."))
    assert "is not a directory here" in r.stderr
    assert not missing.exists()
    assert json.loads(read_bytes(str(home / "evlog.json")))["projects"] == []
    with Workspace.open(str(home), writable=True) as ws, pytest.raises(Exception, match="not a directory"):
        ws.register_project(str(missing))


def test_init_changes_a_setting_of_an_existing_workspace_and_says_so(cli_runner, tmp_path):
    home = tmp_path / "ws"
    check(run(cli_runner, home, "init"))
    r = check(run(cli_runner, home, "init", "--segment-bytes", "4096"))
    assert "segment_bytes" in r.stderr and "4096" in r.stderr
    assert json.loads(read_bytes(str(home / "evlog.json")))["segment_bytes"] == 4096


def test_init_with_a_segment_size_below_the_minimum_is_rejected_and_creates_nothing(cli_runner, tmp_path):
    home = tmp_path / "ws"
    r = check(run(cli_runner, home, "init", "--segment-bytes", "10"), 2)
    assert "--segment-bytes" in r.stderr
    assert "1024" in r.stderr
    assert not os.path.exists(home)

    check(run(cli_runner, home, "init"))
    config = read_bytes(str(home / "evlog.json"))
    check(run(cli_runner, home, "init", "--segment-bytes", "10"), 2)
    assert read_bytes(str(home / "evlog.json")) == config


# --------------------------------------------------------------------------- append


def _raw_lines(home) -> list[dict]:
    return [json.loads(ln) for n in seg_names(home) for ln in read_bytes(os.path.join(log_dir(home), n)).splitlines()]


def test_append_from_a_file_appends_all_lines_as_one_atomic_batch(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws", segment_bytes=1 << 20)
    append_singles(home, 2)
    src = tmp_path / "in.ndjson"
    objs = [message(10 + i) for i in range(4)]
    src.write_text(ndjson(objs), encoding="utf-8")

    r = check(run(cli_runner, home, "append", str(src)))
    assert "appended 4 event(s) (seq 3..6)" in r.stderr
    assert r.stdout == ""

    evs = events_of(home)
    assert [e.seq for e in evs] == [1, 2, 3, 4, 5, 6]
    assert [e.message_id for e in evs[2:]] == ["m10", "m11", "m12", "m13"]
    raw = _raw_lines(home)[2:]
    assert [ln.get("more", 0) for ln in raw] == [3, 2, 1, 0]  # framed as one batch
    assert len({ln["ts"] for ln in raw}) == 1


@pytest.mark.parametrize("args", [["append"], ["append", "-"]], ids=["default", "dash"])
def test_append_from_stdin_appends_one_atomic_batch(cli_runner, tmp_path, args):
    home = init_home(cli_runner, tmp_path / "ws", segment_bytes=1 << 20)
    objs = [{"type": "session.created", "session_key": "s9", "title": "démo 😀"}] + [message(i, "s9") for i in range(3)]

    r = check(run_stdin(home, *args, "--json", input=ndjson(objs)))
    assert json_lines(r.stdout) == [{"appended": 4, "duplicates": 0, "first_seq": 1, "last_seq": 4}]
    evs = events_of(home)
    assert [e.type for e in evs] == ["session.created"] + ["message.appended"] * 3
    assert evs[0].title == "démo 😀"
    assert [ln.get("more", 0) for ln in _raw_lines(home)] == [3, 2, 1, 0]


BAD_LINES = {
    "not-json": ('{"type": "message.appended", "session_key": ', None),
    "not-an-object": ("[1, 2, 3]", None),
    "unknown-type": (json.dumps({"type": "message.sent", "session_key": "s1"}), "type"),
    "reserved-type": (json.dumps({"type": "log.recovered", "segment": "x", "offset": 0, "bytes_truncated": 1,
                                  "reason": "r"}), "type"),
    "missing-field": (json.dumps({k: v for k, v in message(3).items() if k != "content"}), "content"),
    "mistyped-field": (json.dumps(message(3, content=5)), "content"),
    "unknown-field": (json.dumps(message(3, colour="blue")), "colour"),
    "seq-given": (json.dumps(message(3, seq=7)), "seq"),
    "ts-given": (json.dumps(message(3, ts="2026-01-01T00:00:00Z")), "ts"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_append_with_a_bad_line_names_line_and_field_on_stderr_and_appends_nothing(cli_runner, tmp_path, case):
    home = init_home(cli_runner, tmp_path / "ws")
    append_singles(home, 3)
    before = log_state(home)
    bad, field = BAD_LINES[case]
    text = ndjson([message(1), message(2)]) + bad + "\n" + ndjson([message(4)])
    src = tmp_path / "bad.ndjson"
    src.write_text(text, encoding="utf-8")

    for r in (run(cli_runner, home, "append", str(src)), run_stdin(home, "append", "-", input=text)):
        check(r, 3)
        assert r.stdout == ""
        assert "line 3" in r.stderr, r.stderr
        if field is not None:
            assert f"field `{field}`" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, "the error should be one clear line"
        assert log_state(home) == before, "a rejected batch changed the log"
    assert [e.seq for e in events_of(home)] == [1, 2, 3]


def test_reappending_the_example_file_appends_nothing_new(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    n = sum(1 for line in read_bytes(EXAMPLE).splitlines() if line.strip())
    r = check(run(cli_runner, home, "append", EXAMPLE, "--json"))
    assert json_lines(r.stdout) == [{"appended": n, "duplicates": 0, "first_seq": 1, "last_seq": n}]
    before = log_state(home)

    r = check(run(cli_runner, home, "append", EXAMPLE, "--json"))
    assert json_lines(r.stdout) == [{"appended": 0, "duplicates": n, "first_seq": None, "last_seq": None}]
    r = check(run(cli_runner, home, "append", EXAMPLE))
    assert "appended 0 event(s)" in r.stderr and f"{n} already in the log" in r.stderr
    assert log_state(home) == before
    assert len(events_of(home)) == n


# --------------------------------------------------------------------------- tail


@pytest.fixture
def home25(cli_runner, tmp_path):
    """A workspace (1 KiB segments) with 25 messages."""
    home = init_home(cli_runner, tmp_path / "ws")
    append_singles(home, 25)
    assert len(seg_names(home)) > 3
    return home


def test_tail_shows_the_last_10_events_by_default(cli_runner, home25):
    r = check(run(cli_runner, home25, "tail"))
    lines = r.stdout.splitlines()
    assert len(lines) == 10
    assert [int(ln.split()[0].lstrip("#")) for ln in lines] == list(range(16, 26))
    assert all("hello" in ln for ln in lines)

    r = check(run(cli_runner, home25, "tail", "--json"))
    assert [o["seq"] for o in json_lines(r.stdout)] == list(range(16, 26))


def test_tail_n_0_shows_all_events_and_n_3_the_last_three(cli_runner, home25):
    r = check(run(cli_runner, home25, "tail", "-n", "0", "--json"))
    assert json_lines(r.stdout) == [as_json(e) for e in events_of(home25)]
    r = check(run(cli_runner, home25, "tail", "-n", "3", "--json"))
    assert [o["seq"] for o in json_lines(r.stdout)] == [23, 24, 25]


def test_tail_json_prints_exactly_one_json_object_per_line_and_nothing_else(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    check(run(cli_runner, home, "append", EXAMPLE))  # non-ASCII content
    check(run_stdin(home, "append", input=ndjson([message(1, content="line one\nline two\ttab \"quoted\" 😀")])))

    r = check(run(cli_runner, home, "tail", "-n", "0", "--json"))
    objs = json_lines(r.stdout)
    assert objs == [as_json(e) for e in events_of(home)]
    assert len(r.stdout.splitlines()) == len(objs) == 8
    assert objs[-1]["content"] == "line one\nline two\ttab \"quoted\" 😀"


def _log_with_batches(cli_runner, tmp_path) -> str:
    home = init_home(cli_runner, tmp_path / "ws")
    with Workspace.open(home, writable=True) as ws:
        for i in range(40):
            if i % 7 == 3:
                ws.log.append_batch([MessageAppended(session_key="b", message_id=f"b{i}-{j}", role="user",
                                                     content=f"batch {i} item {j}") for j in range(3)])
            else:
                ws.log.append(MessageAppended(session_key=f"s{i % 2}", message_id=f"m{i}", role="user", content=f"hello {i}"))
    assert len(seg_names(home)) > 5
    return home


def test_tail_from_n_exit_at_end_json_prints_exactly_the_events_from_n_to_the_end(cli_runner, tmp_path):
    home = _log_with_batches(cli_runner, tmp_path)
    log = Log.open(log_dir(home))
    last = log.last_seq
    for n in sorted({1, 2, 5, last // 2, last - 1, last, last + 1, last + 50}):
        r = check(run(cli_runner, home, "tail", "--from", str(n), "-e", "--json"))
        assert json_lines(r.stdout) == [as_json(e) for e in log.read(n)], f"--from {n}"
        r = check(run(cli_runner, home, "tail", "--after", str(n - 1), "-e", "--json"))
        assert json_lines(r.stdout) == [as_json(e) for e in log.read(n)], f"--after {n - 1}"


@pytest.fixture
def mixed_home(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    with Workspace.open(home, writable=True) as ws:
        for s in ("s1", "s2", "other"):
            ws.log.append(SessionCreated(session_key=s, title=f"title {s}"))
        for i in range(12):
            ws.log.append(MessageAppended(session_key=("s1", "s2", "other")[i % 3], message_id=f"m{i}", role="user",
                                          content=f"hello {i}"))
        ws.log.append(SessionUpdated(session_key="s2", title="renamed"))
    return home


@pytest.mark.parametrize(
    "args, keep",
    [
        (["--type", "session.created"], lambda e: e.type == "session.created"),
        (["--type", "session.*"], lambda e: e.type.startswith("session.")),
        (["--type", "session.updated", "--type", "session.created"], lambda e: e.type in ("session.updated", "session.created")),
        (["--session", "s2"], lambda e: getattr(e, "session_key", None) == "s2"),
        (["--type", "message.appended", "--session", "s1"], lambda e: e.type == "message.appended" and e.session_key == "s1"),
        (["--session", "nobody"], lambda e: False),
    ],
    ids=["type", "type-prefix", "two-types", "session", "type-and-session", "no-match"],
)
def test_tail_type_and_session_filters_select_exactly_the_matching_events(cli_runner, mixed_home, args, keep):
    want = [as_json(e) for e in events_of(mixed_home) if keep(e)]
    r = check(run(cli_runner, mixed_home, "tail", "-n", "0", "--json", *args))
    assert json_lines(r.stdout) == want
    r = check(run(cli_runner, mixed_home, "tail", "--from", "1", "--json", *args))
    assert json_lines(r.stdout) == want
    r = check(run(cli_runner, mixed_home, "tail", "-n", "2", "--json", *args))
    assert json_lines(r.stdout) == want[-2:]


@pytest.mark.parametrize(
    "flags, names",
    [
        (["--from", "3", "--after", "2"], [("--from",), ("--after",)]),
        (["-f", "-e"], [("-f", "--follow"), ("-e", "--exit-at-end")]),
        (["-n", "5", "--from", "3"], [("-n", "--lines"), ("--from",)]),
        (["-n", "5", "--after", "3"], [("-n", "--lines"), ("--after",)]),
    ],
    ids=["from-after", "follow-exit", "lines-from", "lines-after"],
)
def test_tail_rejects_conflicting_flags_naming_both(cli_runner, home25, flags, names):
    r = check(run(cli_runner, home25, "tail", *flags), 2)
    assert r.stdout == ""
    for alternatives in names:
        assert any(re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", r.stderr) for a in alternatives), r.stderr


def test_tail_cursor_file_resumes_exactly_after_the_last_emitted_record(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    cursor = str(tmp_path / "tail.cursor")
    append_singles(home, 7)
    seen: list[int] = []

    def tail_once() -> list[int]:
        r = check(run(cli_runner, home, "tail", "-n", "0", "--json", "--cursor-file", cursor))
        got = [o["seq"] for o in json_lines(r.stdout)]
        seen.extend(got)
        return got

    assert tail_once() == list(range(1, 8))
    append_singles(home, 6, start=7)  # rolls segments
    assert tail_once() == list(range(8, 14))
    assert tail_once() == []
    with Workspace.open(home, writable=True) as ws:
        ws.log.append_batch([MessageAppended(session_key="b", message_id=f"b{j}", role="user", content="x") for j in range(4)])
    append_singles(home, 2, start=20)
    assert tail_once() == list(range(14, 20))

    everything = [e.seq for e in events_of(home)]
    assert seen == everything  # no gap, no duplicate
    saved_seq, fp = read_bytes(cursor).decode().split()
    assert int(saved_seq) == everything[-1]
    assert Log.open(log_dir(home)).find(everything[-1]).fingerprint == fp


def test_tail_cursor_file_after_the_log_was_cut_resumes_at_the_cut_with_a_notice_on_stderr(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    cursor = str(tmp_path / "tail.cursor")
    append_singles(home, 8)
    r = check(run(cli_runner, home, "tail", "-n", "0", "--json", "--cursor-file", cursor))
    assert [o["seq"] for o in json_lines(r.stdout)] == list(range(1, 9))
    # the emitted last record is torn off (e.g. restored from an older copy) and the log grows again
    active = os.path.join(log_dir(home), seg_names(home)[-1])
    write_bytes(active, read_bytes(active)[:-5])
    append_singles(home, 2, start=100)  # opening for write records the cut as seq 8

    r = check(run(cli_runner, home, "tail", "--json", "--cursor-file", cursor))
    objs = json_lines(r.stdout)
    assert [o["seq"] for o in objs] == [8, 9, 10]
    assert objs[0]["type"] == "log.recovered"
    assert "cursor" in r.stderr and "8" in r.stderr


def _wait_for_lines(path: str, n: int, proc: subprocess.Popen, timeout: float = 30.0) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        data = read_bytes(path)
        if data.count(b"\n") >= n or time.monotonic() > deadline or proc.poll() is not None:
            return data
        time.sleep(0.05)


def test_tail_follow_in_a_subprocess_prints_every_event_once_in_order_across_many_segment_rolls(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    append_singles(home, 5)
    out_path, err_path = str(tmp_path / "tail.out"), str(tmp_path / "tail.err")
    env = dict(os.environ, EVLOG_HOME=home)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen([EVLOG, "--home", home, "tail", "-f", "--json", "--from", "1"],
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
    try:
        assert _wait_for_lines(out_path, 5, proc).count(b"\n") == 5, read_bytes(err_path)
        with Workspace.open(home, writable=True) as ws:
            i = 0
            for round_ in range(40):
                if round_ % 4 == 1:
                    ws.log.append_batch([MessageAppended(session_key="b", message_id=f"b{round_}-{j}", role="user",
                                                         content=f"batch {round_}/{j}") for j in range(4)])
                for _ in range(5):
                    ws.log.append(MessageAppended(session_key="f", message_id=f"f{i}", role="user", content=f"follow {i}"))
                    i += 1
                time.sleep(0.01)
            last = ws.log.last_seq
        assert len(seg_names(home)) > 30, "the log should have rolled many times"
        _wait_for_lines(out_path, last, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    stderr = read_bytes(err_path).decode()
    assert "Traceback" not in stderr, stderr
    text = read_bytes(out_path).decode()
    assert text.endswith("\n"), "a partial line was printed"
    objs = json_lines(text)
    assert [o["seq"] for o in objs] == list(range(1, last + 1))
    assert objs == [as_json(e) for e in events_of(home)]


def test_tail_on_a_log_with_a_torn_tail_prints_every_whole_event_and_nothing_of_the_torn_one(cli_runner, home25):
    active = os.path.join(log_dir(home25), seg_names(home25)[-1])
    write_bytes(active, read_bytes(active)[:-20])  # the writer died in the middle of seq 25

    r = check(run(cli_runner, home25, "tail", "-n", "0", "--json"))
    assert [o["seq"] for o in json_lines(r.stdout)] == list(range(1, 25))
    r = check(run(cli_runner, home25, "tail", "--json"))
    assert [o["seq"] for o in json_lines(r.stdout)] == list(range(15, 25))
    r = check(run(cli_runner, home25, "tail", "--from", "20", "-e", "--json"))
    assert [o["seq"] for o in json_lines(r.stdout)] == list(range(20, 25))


def test_tail_json_on_a_damaged_log_prints_only_whole_events_before_the_damage_and_the_error_on_stderr(cli_runner, home25):
    events = [as_json(e) for e in events_of(home25)]
    bad = seg_names(home25)[2]
    path = os.path.join(log_dir(home25), bad)
    flip(path, line_starts(read_bytes(path))[1] + 40)
    bad_seq = int(bad[:20]) + 1

    r = check(run(cli_runner, home25, "tail", "--from", "1", "-e", "--json"), 3)
    objs = json_lines(r.stdout)
    assert objs == events[: len(objs)]
    assert len(objs) >= int(bad[:20]) - 1 and all(o["seq"] < bad_seq for o in objs)
    assert r.stderr.startswith("evlog: error:") and bad in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- verify, stats, repair


def test_verify_exits_0_on_a_clean_log_with_nothing_on_stdout(cli_runner, home25):
    r = check(run(cli_runner, home25, "verify"))
    assert r.stdout == ""
    assert "clean" in r.stderr
    r = check(run(cli_runner, home25, "verify", "--json"))
    assert r.stdout == ""


def test_verify_exits_1_with_a_problem_line_naming_segment_offset_and_seq_on_a_damaged_log(cli_runner, home25):
    name = seg_names(home25)[1]
    path = os.path.join(log_dir(home25), name)
    starts = line_starts(read_bytes(path))
    flip(path, starts[2] + 30)
    seq = int(name[:20]) + 2

    r = check(run(cli_runner, home25, "verify"), 1)
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{name}:{starts[2]} seq {seq}: damaged:"), lines[0]
    assert "1 problem" in r.stderr


def test_verify_json_prints_one_object_per_problem(cli_runner, home25):
    names = seg_names(home25)
    path = os.path.join(log_dir(home25), names[1])
    flip(path, line_starts(read_bytes(path))[1] + 5)
    gone = names[3]
    os.unlink(os.path.join(log_dir(home25), gone))
    write_bytes(os.path.join(log_dir(home25), "dedup.idx.tmp"), b"half")

    r = check(run(cli_runner, home25, "verify", "--json"), 1)
    objs = json_lines(r.stdout)
    want = Log.open(log_dir(home25)).verify()
    assert len(objs) == len(want) == 3
    assert objs == [{"segment": p.segment, "offset": p.offset, "seq": p.seq, "kind": p.kind, "message": p.message,
                     "damaged": p.damaged} for p in want]
    assert {(o["segment"], o["damaged"]) for o in objs} >= {(names[1], True), ("dedup.idx.tmp", False)}
    assert any(o["kind"] == "gap" and o["seq"] == int(gone[:20]) for o in objs)


def test_stats_shows_segments_events_bytes_and_counts_by_type(cli_runner, mixed_home):
    names = seg_names(mixed_home)
    size = sum(os.path.getsize(os.path.join(log_dir(mixed_home), n)) for n in names)

    r = check(run(cli_runner, mixed_home, "stats"))
    text = r.stdout
    assert re.search(rf"^segments:\s+{len(names)}$", text, re.M), text
    assert re.search(r"^events:\s+16$", text, re.M), text
    assert re.search(rf"^bytes:\s+{size}$", text, re.M), text
    assert re.search(r"^seqs:\s+1\.\.16$", text, re.M), text
    assert re.search(r"^\s+message\.appended\s+12$", text, re.M), text
    assert re.search(r"^\s+session\.created\s+3$", text, re.M), text

    r = check(run(cli_runner, mixed_home, "stats", "--json"))
    assert json_lines(r.stdout) == [{"segments": len(names), "events": 16, "bytes": size, "first_seq": 1, "last_seq": 16,
                                     "by_type": {"message.appended": 12, "session.created": 3, "session.updated": 1}}]


def test_stats_on_a_damaged_log_exits_with_a_clear_error_not_a_traceback(cli_runner, home25):
    bad = seg_names(home25)[1]
    flip(os.path.join(log_dir(home25), bad), 0, 0x10)  # '{' -> 'k': the first line is no longer JSON
    for args in (["stats"], ["stats", "--json"]):
        r = run(cli_runner, home25, *args)
        assert r.exception is None or isinstance(r.exception, SystemExit), f"bare {type(r.exception).__name__}: {r.exception}"
        if r.exit_code == 0:
            assert json_lines(r.stdout) if "--json" in args else r.stdout
        else:
            check(r, 3)
            assert bad in r.stderr


def test_append_refuses_a_log_damaged_in_the_middle_and_repair_yes_cuts_it_there(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws", segment_bytes=1 << 20)
    append_singles(home, 10)
    name = seg_names(home)[-1]
    path = os.path.join(log_dir(home), name)
    original = read_bytes(path)
    starts = line_starts(original)
    flip(path, starts[4] + 40)
    damaged = read_bytes(path)
    before = log_state(home)

    r = check(run_stdin(home, "append", input=ndjson([message(99)])), 3)
    assert name in r.stderr and f"byte {starts[4]}" in r.stderr and "repair" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert log_state(home) == before
    check(run(cli_runner, home, "verify"), 1)

    r = check(run(cli_runner, home, "repair", "--yes"))
    assert f"{name}:{starts[4]}" in r.stderr
    assert f"cut {len(original) - starts[4]} bytes" in r.stderr
    check(run(cli_runner, home, "verify"))
    evs = events_of(home)
    assert [e.seq for e in evs] == [1, 2, 3, 4, 5]
    rec = evs[-1]
    assert rec.type == "log.recovered" and rec.offset == starts[4] and rec.records_after_damage == 5
    assert read_bytes(os.path.join(log_dir(home), rec.quarantine)) == damaged[starts[4]:]

    check(run_stdin(home, "append", input=ndjson([message(99)])))
    assert events_of(home)[-1].message_id == "m99"
    r = check(run(cli_runner, home, "repair", "--yes"))
    assert "nothing to repair" in r.stderr


def test_repair_yes_cuts_a_damaged_sealed_segment_and_quarantines_the_later_segments(cli_runner, home25):
    names = seg_names(home25)
    bad = names[1]
    path = os.path.join(log_dir(home25), bad)
    starts = line_starts(read_bytes(path))
    flip(path, starts[1] + 50)
    first_bad_seq = int(bad[:20]) + 1

    check(run(cli_runner, home25, "repair", "--yes"))
    check(run(cli_runner, home25, "verify"))
    evs = events_of(home25)
    assert [e.seq for e in evs] == list(range(1, first_bad_seq + 1))
    rec = evs[-1]
    assert rec.type == "log.recovered" and rec.segment == bad and rec.offset == starts[1]
    assert rec.segments_quarantined == names[2:]
    qdir = os.path.join(log_dir(home25), "quarantine")
    assert set(names[2:]) <= set(os.listdir(qdir))


def test_repair_without_yes_asks_and_a_no_changes_nothing(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws", segment_bytes=1 << 20)
    append_singles(home, 6)
    path = os.path.join(log_dir(home), seg_names(home)[-1])
    flip(path, line_starts(read_bytes(path))[1] + 20)
    before = log_state(home)
    r = run(cli_runner, home, "repair", input="n\n")
    assert r.exit_code != 0
    assert log_state(home) == before
    assert not os.path.exists(os.path.join(log_dir(home), "quarantine"))


# --------------------------------------------------------------------------- the writer lock


HOLD_LOCK = """
import sys
from eventlog.log import Log
log = Log.open(sys.argv[1], writable=True)
with log.turn():  # a writer that keeps its turn (a bulk import): the others wait, then give up
    print("ready", flush=True)
    sys.stdin.read()
log.close()
"""


def test_a_second_writer_gets_a_clear_error_naming_the_holder_pid_and_readers_still_work(cli_runner, tmp_path):
    home = init_home(cli_runner, tmp_path / "ws")
    append_singles(home, 12)
    before = log_state(home)
    want = [as_json(e) for e in events_of(home)]
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, log_dir(home)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"ready"

        r = check(run_stdin(home, "--lock-timeout", "0", "append", input=ndjson([message(50)])), 3)
        assert f"pid {holder.pid}" in r.stderr, r.stderr
        assert "busy" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        r = check(run(cli_runner, home, "--lock-timeout", "0", "repair", "--yes"), 3)
        assert f"pid {holder.pid}" in r.stderr
        assert log_state(home) == before

        r = check(run(cli_runner, home, "tail", "-n", "0", "--json"))
        assert json_lines(r.stdout) == want
        r = check(run(cli_runner, home, "tail", "--from", "5", "-e", "--json"))
        assert json_lines(r.stdout) == want[4:]
        check(run(cli_runner, home, "verify"))
        r = check(run(cli_runner, home, "stats", "--json"))
        assert json_lines(r.stdout)[0]["events"] == 12
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        holder.stdout.close()
        holder.stderr.close()
    check(run_stdin(home, "--lock-timeout", "0", "append", input=ndjson([message(50)])))
    assert len(events_of(home)) == 13
