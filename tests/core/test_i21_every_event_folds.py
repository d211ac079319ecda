"""INVARIANTS I21: every event the log accepts folds, and nothing in the log can brick a workspace.

Hypothesis builds arbitrary events of every type in the catalogue (extreme integers,
times that are impossible or out of range, any unicode, empty strings, nested JSON,
hostile names like ``../../x``). Those the log accepts are appended; then every
projection folds them, ``replay --check`` is clean and the commands a user runs still
work. Events the log refuses raise ``InvalidEventError`` and change nothing.

The second half writes events straight into a segment, bypassing validation (what an
older evlog could have written), and shows that opening, replaying, checking and the
processors still work and never write outside the workspace.
"""

from __future__ import annotations

import os
import types
import typing
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import processors
from eventlog import codec, events
from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import InvalidEventError
from eventlog.events import EVENT_TYPES, Event
from processors.llm import OfflineExtractor

TIMES = st.sampled_from([
    "", "2026-11-30T12:00:00Z", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00", "2026-13-45T99:99:99Z",
    "999-05-05T00:00:00Z", "2999-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "not a time", "1e30", "-5", "2026-02-30",
    "2026-11-30T12:00:00.123456789+14:00",
])
HOSTILE = st.sampled_from(["", "../../x/notes", "k] assistant: z", "line\nbreak", "/etc/passwd", "%", "a" * 300,
                           "2026-11-30", "00000000000000000001.jsonl", "\x00", "😀" * 10])
TOKENS = st.sampled_from(["snapshot", "digest", "dream", "user", "project", "remember", "run-1", "k", "cli:me"])
DATES = st.sampled_from(["2026-11-30", "1970-01-01", "2026-02-28", "2024-02-29"])
TEXT = st.one_of(st.text(max_size=40), HOSTILE, TOKENS)
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
INTS = st.one_of(*[st.integers(0, 30)] * 5, st.integers(-2**70, 2**70))
TIME_FIELDS = {"timestamp", "created_at", "updated_at", "when"}
SPECIAL = {  # fields whose sane values are narrow: mostly sane, sometimes hostile
    "date": st.one_of(DATES, DATES, TIMES, HOSTILE),
    "role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), HOSTILE),
    "scope": st.one_of(st.sampled_from(["user", "project"]), HOSTILE),
    "segment": st.one_of(st.just("00000000000000000001.jsonl"), HOSTILE),
    "processor": st.one_of(TOKENS, HOSTILE), "run_id": st.one_of(TOKENS, HOSTILE), "source": st.one_of(TOKENS, HOSTILE),
    "section": st.one_of(st.sampled_from(["Preferences", "Events", "User Profile"]), HOSTILE),
}


def value_for(name: str, tp: Any) -> st.SearchStrategy:
    """A strategy for one field, from its annotation (and its name for the fields that name files, times or roles)."""
    if name in SPECIAL:
        return SPECIAL[name]
    if name in TIME_FIELDS:
        return st.one_of(TIMES, HOSTILE)
    origin = typing.get_origin(tp)
    if tp is str:
        return TEXT
    if tp is int:
        return INTS
    if tp is bool:
        return st.booleans()
    if tp is Any:
        return JSON
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*[value_for(name, a) for a in typing.get_args(tp)])
    if tp is type(None):
        return st.none()
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return st.lists(value_for(name, item), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=6), JSON, max_size=3)
    return JSON


def event_strategy(cls: type[Event]) -> st.SearchStrategy:
    hints = typing.get_type_hints(cls)
    fields = {n: value_for(n, hints[n]) for n in cls.__struct_fields__ if n not in ("seq", "ts")}
    return st.fixed_dictionaries(fields).map(lambda kw: cls(**kw))


KEYS = st.integers(0, 2**128 - 1).map(lambda k: f"xxh3_128:{k:032x}")
DIARY_ITEM = st.tuples(TEXT, TEXT, TEXT, INTS, SPECIAL["role"], st.one_of(KEYS, KEYS, KEYS, HOSTILE))


def _diary_lines(date: str, items: list[tuple]) -> events.DiaryLines:
    lines, keys, ids, seqs, roles, dedup = (list(col) for col in zip(*items, strict=True)) if items else ([],) * 6
    return events.DiaryLines(date=date, lines=lines, session_keys=keys, message_ids=ids, source_seqs=seqs, roles=roles,
                             dedup_keys=dedup)


#: diary.lines whose parallel lists have one length (the generic strategy almost never gives that), hostile inside
DIARY_LINES = st.builds(_diary_lines, SPECIAL["date"], st.lists(DIARY_ITEM, max_size=4))
ANY_EVENT = st.one_of(*[event_strategy(cls) for cls in EVENT_TYPES if cls is not events.LogRecovered], DIARY_LINES)


def _commands_work(home: str, cli_runner) -> None:  # noqa: ANN001
    for args in (["sessions"], ["sessions", "--json"], ["tail", "-n", "0", "--json"], ["verify"], ["stats"],
                 ["offsets"], ["audit"], ["memory", "--tier", "all"], ["recall", "x y z"], ["replay", "--check"]):
        res = cli_runner.invoke(cli, ["--home", home, *args])
        assert res.exit_code == 0, (args, res.output, res.stderr, res.exception)
        assert "Traceback" not in res.stderr


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("EVLOG_I21_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(evs=st.lists(ANY_EVENT, min_size=1, max_size=25))
def test_every_event_the_log_accepts_is_folded_and_leaves_every_command_working(tmp_path_factory, cli_runner, evs):
    home = str(tmp_path_factory.mktemp("i21") / "ws")
    init_workspace(home)
    outside = os.path.dirname(home)
    before_outside = sorted(os.listdir(outside))
    with Workspace.open(home, writable=True) as ws:
        for ev in evs:
            end = ws.log.last_seq
            try:
                ws.append([ev])
            except InvalidEventError:
                assert ws.log.last_seq == end, "a refused event changed the log"
        for name in ("snapshot", "digest", "archive", "recall"):
            processors.run(ws, name)
        processors.run(ws, "dream", llm=OfflineExtractor())
        processors.run(ws, "consolidate", llm=OfflineExtractor())
        ws.flush()
        assert replay.check(ws).clean
    assert sorted(os.listdir(outside)) == before_outside, "evlog wrote outside the workspace"
    _commands_work(home, cli_runner)


def _raw_append(home: str, evs: list[Event]) -> None:
    """Write events into the active segment as an older evlog could have: framed, checksummed, not validated."""
    log_dir = os.path.join(home, "log")
    seg = sorted(n for n in os.listdir(log_dir) if n.endswith(".jsonl"))[-1]
    path = os.path.join(log_dir, seg)
    with Workspace.open(home) as ws:
        seq = ws.log.last_seq
    with open(path, "ab") as f:
        for ev in evs:
            seq += 1
            f.write(codec.frame(msgspec.structs.replace(ev, seq=seq, ts="2026-11-30T12:00:00.000Z")))


def test_events_written_before_validation_cannot_brick_a_workspace_or_write_outside_it(tmp_path, cli_runner):
    home = str(tmp_path / "ws")
    init_workspace(home)
    bad = [
        events.MessageAppended(session_key="../../escape", message_id="1", role="user\n] hacker", content="hi",
                               timestamp="9999-12-31T23:59:59-05:00"),
        events.MessageAppended(session_key="s", message_id="2", role="user", content="x", timestamp="2026-13-45T99:00:00Z"),
        events.SessionCreated(session_key="s2", created_at="0001-01-01T00:00:00+01:00", project="../../x"),
        events.DiaryAppended(date="../../x/notes", line="forged", session_key="s", message_id="1", source_seq=1),
        events.DiaryLines(date="../../x/notes", lines=["forged", "too"], session_keys=["s"], source_seqs=[1, 2, 3, 2**70],
                          dedup_keys=["not a hash"]),
        events.DiaryTrimmed(date="../../x/notes", dropped_lines=-5, dropped_bytes=-1, start_before=0, start_after=-3,
                            budget=0),
        events.MemoryAppended(fact_id="f", scope="weird", section="a\nb", text="", project="../../x"),
        events.OffsetCommitted(processor="snapshot", record_seq=2**70, segment="../x", position=-1, fingerprint=""),
        events.SessionConsolidated(session_key="s", up_to_count=2**70),
    ]
    _raw_append(home, bad)
    outside = sorted(os.listdir(tmp_path))
    with Workspace.open(home, writable=True) as ws:
        for name in ("snapshot", "digest", "archive", "recall"):
            processors.run(ws, name)
        processors.run(ws, "dream", llm=OfflineExtractor())
        replay.rebuild(ws)
        assert replay.check(ws).clean
    assert sorted(os.listdir(tmp_path)) == outside, "a forged path made evlog write outside the workspace"
    for dirpath, _dirs, files in os.walk(home):
        for f in files:
            assert os.path.realpath(os.path.join(dirpath, f)).startswith(os.path.realpath(home))
    _commands_work(home, cli_runner)


@pytest.mark.parametrize("line", [
    b'{"type":"offset.committed","processor":"snapshot","record_seq":99,"segment":"00000000000000000001.jsonl","position":1,"fingerprint":"x"}',
    b'{"type":"diary.appended","date":"../../x/notes","line":"forged"}',
    b'{"type":"memory.appended","fact_id":"f","scope":"user","section":"s","text":"t"}',
    b'{"type":"dream.completed","run_id":"r","outcome":"valid","attempts":1,"model":"m","prompt_hash":"h","raw_output":""}',
])
def test_evlog_append_refuses_events_only_evlog_writes(workspace, cli_runner, line):
    res = cli_runner.invoke(cli, ["append"], input=line + b"\n")
    assert res.exit_code == 3 and "written by evlog itself" in res.stderr and "line 1" in res.stderr
    assert Workspace.open(workspace).log.last_seq == 0


@pytest.mark.parametrize(("line", "field"), [
    (b'{"type":"message.appended","session_key":"k","message_id":"1","role":"user","content":"x","tool_calls":{"a":1}}', "tool_calls"),
    (b'{"type":"message.appended","session_key":"k","message_id":"1","role":"user\\n] x","content":"x"}', "role"),
    (b'{"type":"session.created","session_key":"k","metadata":[1,2]}', "metadata"),
    (b'{"type":"message.appended","session_key":"k","message_id":"1","role":"user","content":"\\ud800"}', ""),
])
def test_a_well_formed_but_wrong_event_is_refused_naming_its_field_and_nothing_is_written(workspace, cli_runner, line,
                                                                                          field):
    res = cli_runner.invoke(cli, ["append"], input=line + b"\n")
    assert res.exit_code == 3, res.output
    assert "line 1" in res.stderr and field in res.stderr and "Traceback" not in res.stderr
    assert Workspace.open(workspace).log.last_seq == 0
