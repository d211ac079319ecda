"""One stateful suite for every log follower, run against the fake context (issue 20, item 2).

The followers (snapshot, digest, Dream with the offline extractor, the recall index and
the example third-party ``todo`` processor) run in any interleaving with appends of
messages, re-imports, notes, and crashes (the n-th next append of a run fails; nothing of
that batch is written; the recall index, which appends nothing, is cut after its n-th read
event instead). After every step:

* no committed offset points past the log's end, and every one holds on disk (it would be
  used as it is: no reset);
* outputs and offsets are one append: after a complete run of a follower, each of its
  inputs so far has its output exactly once (todo writes without a dedup key, so an output
  appended without its offset would show up twice after the rerun);
* Dream claims each input at most once across crashes, and every input after a complete run;
* rerunning a follower right after a complete run appends nothing;
* the recall index (its position is its own committed seq, not an ``offset.committed``)
  is never past the log's end, is exactly what the log gives up to that seq (rows and
  counters, ``projections.recall.workspace.check``), and after a complete run is at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import processors
from eventlog.events import (
    CursorAdvanced,
    DiaryAppended,
    DiaryLines,
    Event,
    HistoryAppended,
    MessageAppended,
    SessionCreated,
    StmAdded,
)
from eventlog.log import Log
from processors import registry
from processors.llm import OfflineExtractor
from processors.runner import validate_offset
from projections.diary import diary_items
from tests import example_processor
from tests.fake_context import Crash, FakeContext

OFFSET_FOLLOWERS = ["snapshot", "digest", "dream", "todo"]  # their position is an offset.committed
FOLLOWERS = [*OFFSET_FOLLOWERS, "recall"]
SESSIONS = ["a", "b", "c"]
texts = st.sampled_from(["hello", "TODO: write the docs", "I prefer tabs over spaces.", "we use Python 3.12",
                         "ok", "TODO: fix the flaky test", "My name is Sam.", "我们 用 uv"])


class FollowersMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="evlog-followers-")
        self.ctx = FakeContext(self.tmp)
        self.counter = 0
        self.complete: set[str] = set()  # followers whose last run finished (no crash since)
        self.llm = OfflineExtractor()

    @initialize()
    def start(self) -> None:
        self.ctx.append([SessionCreated(session_key=k, created_at="2026-11-01T09:00:00Z") for k in SESSIONS])

    def teardown(self) -> None:
        self.ctx.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- inputs -----------------------------------------------------------------------------

    @rule(key=st.sampled_from(SESSIONS), batch=st.lists(texts, min_size=1, max_size=4))
    def add_messages(self, key: str, batch: list[str]) -> None:
        events = []
        for text in batch:
            self.counter += 1
            events.append(MessageAppended(session_key=key, message_id=str(self.counter), role="user", content=text,
                                          timestamp=f"2026-11-01T10:{self.counter // 60 % 60:02d}:{self.counter % 60:02d}Z"))
        self.ctx.append(events)
        self.complete.clear()

    @rule()
    def reimport(self) -> None:
        old = [e for e in self.ctx.log.read() if isinstance(e, MessageAppended)]
        if old:
            e = old[len(old) // 2]
            self.ctx.append([MessageAppended(session_key=e.session_key, message_id=e.message_id, role=e.role,
                                             content=e.content, timestamp=e.timestamp)])
            self.complete.clear()

    @rule(text=texts)
    def note(self, text: str) -> None:
        self.ctx.append([HistoryAppended(text=f"note: {text}", source="remember")])
        self.complete.clear()

    # -- runs ----------------------------------------------------------------------------------

    @rule(name=st.sampled_from(FOLLOWERS))
    def run(self, name: str) -> None:
        self._run(name)
        self.complete.add(name)
        end = self.ctx.log.last_seq
        self._run(name)
        assert self.ctx.log.last_seq == end, f"rerunning {name} right away appended something"

    @rule(key=st.sampled_from(SESSIONS), batch=st.lists(texts, min_size=1, max_size=3), after=st.integers(0, 6))
    def index_as_messages_arrive(self, key: str, batch: list[str], after: int) -> None:
        """The recall job runs every minute: new messages, then an incremental catch-up (maybe cut)."""
        self.add_messages(key, batch)
        self.crash("recall", after)

    @rule(name=st.sampled_from(FOLLOWERS), after=st.integers(0, 3))
    def crash(self, name: str, after: int) -> None:
        self.ctx.fail_appends_after = after
        log = self.ctx.log
        if name == "recall":  # it appends nothing: cut its reading of the log instead
            self.ctx.log = _ReadsThenCrashes(log, after)  # type: ignore[assignment]  # a stand-in for Log
        try:
            self._run(name)
        except Crash:
            self.complete.discard(name)
        else:
            self.complete.add(name)
        finally:
            self.ctx.fail_appends_after = None
            self.ctx.log = log

    def _run(self, name: str) -> None:
        end = self.ctx.log.last_seq
        try:
            processors.run(self.ctx, name, llm=self.llm if registry.get(name).needs_model else None)
        finally:
            if self.ctx.log.last_seq != end:  # its outputs may be another follower's inputs
                self.complete -= set(FOLLOWERS) - {name}

    # -- invariants ------------------------------------------------------------------------------

    @invariant()
    def offsets_hold_and_never_pass_the_end(self) -> None:
        ctx = self.ctx
        for name in OFFSET_FOLLOWERS:
            pos = ctx.offsets.position(name)
            assert pos.seq <= ctx.log.last_seq, f"{name}'s offset {pos.seq} is past the end {ctx.log.last_seq}"
            _next, reset = validate_offset(ctx, name, "error")
            assert reset is None, f"{name}'s offset does not hold: {reset}"

    @invariant()
    def each_input_has_its_output_once(self) -> None:
        events = list(self.ctx.log.read())
        messages = [e for e in events if isinstance(e, MessageAppended)]
        unique = {(m.session_key, m.message_id, m.content) for m in messages}
        diary_events = [d for d in events if isinstance(d, DiaryAppended | DiaryLines)]
        diary = Counter((item.session_key, item.message_id) for d in diary_events for item in diary_items(d))
        assert all(n == 1 for n in diary.values()), "a message reached the diary twice"
        if "snapshot" in self.complete:
            assert len(diary) == len(unique)
        entries = Counter(e.entry_id for e in events if isinstance(e, StmAdded))
        assert all(n == 1 for n in entries.values())
        if "digest" in self.complete and "snapshot" in self.complete:
            lines = {d.seq for d in diary_events}
            covered = {s for e in events if isinstance(e, StmAdded) for s in lines if e.start <= s <= e.end}
            assert covered == lines, "a diary line is in no short-term entry after a digest run"
        todos = Counter(h.refs["seq"] for h in events if isinstance(h, HistoryAppended) and h.source == "todo")
        assert all(n == 1 for n in todos.values()), f"an output of todo was written twice: {todos}"
        if "todo" in self.complete:
            said = [m for m in messages if "TODO:" in m.content]
            assert sum(todos.values()) == len(said)

    @invariant()
    def dream_claims_each_input_once(self) -> None:
        events = list(self.ctx.log.read())
        claimed = Counter(s for e in events if isinstance(e, CursorAdvanced) for s in e.cursors)
        assert all(n == 1 for n in claimed.values()), "Dream claimed an input twice"
        if "dream" in self.complete:
            inputs = {e.seq for e in events if processors.is_dream_input(e)}
            assert inputs <= set(claimed), f"inputs never claimed: {sorted(inputs - set(claimed))}"


    @invariant()
    def the_recall_index_is_what_the_log_gives_up_to_its_seq(self) -> None:
        from projections.recall.index import RecallIndex
        from projections.recall.workspace import check, index_path

        path = index_path(self.ctx.home)
        if not os.path.exists(path):
            assert "recall" not in self.complete
            return
        with RecallIndex(path, readonly=True) as ix:
            seq = ix.seq
        assert seq <= self.ctx.log.last_seq, f"the recall index is at {seq}, past the end {self.ctx.log.last_seq}"
        if "recall" in self.complete:
            assert seq == self.ctx.log.last_seq, f"a complete recall run left the index at {seq}"
        assert check(self.ctx.home, ws=self.ctx) == []


class _ReadsThenCrashes:
    """The fake's log, whose ``read`` raises ``Crash`` after ``after`` events (a crash mid catch-up)."""

    def __init__(self, log: Log, after: int) -> None:
        self.log, self.after = log, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.log, name)

    def read(self, from_seq: int = 1, **kw: Any) -> Iterator[Event]:
        for n, ev in enumerate(self.log.read(from_seq, **kw)):
            if n >= self.after:
                raise Crash(f"reading the log cut after {self.after} events")
            yield ev


class _Registered(FollowersMachine):
    def __init__(self) -> None:
        registry.register(example_processor.JOB, replace=True)
        super().__init__()

    def teardown(self) -> None:
        super().teardown()
        registry.unregister("todo")


_Registered.TestCase.settings = settings(max_examples=30, stateful_step_count=14, deadline=None,
                                         suppress_health_check=[HealthCheck.too_slow])
TestFollowers = _Registered.TestCase


def test_a_crash_at_any_append_of_a_run_leaves_each_output_exactly_once_after_the_rerun(tmp_path):
    """The deterministic case the machine above finds by search: a run cut after each of its appends."""
    registry.register(example_processor.JOB, replace=True)
    try:
        for after in range(3):
            ctx = FakeContext(str(tmp_path / f"ws{after}"))
            try:
                ctx.append([SessionCreated(session_key="a")])
                ctx.append([MessageAppended(session_key="a", message_id=str(i), role="user", content=f"TODO: item {i}")
                            for i in range(5)])
                ctx.fail_appends_after = after
                try:
                    processors.run(ctx, "todo")
                except Crash:
                    pass
                ctx.fail_appends_after = None
                processors.run(ctx, "todo")
                seqs = Counter(h.refs["seq"] for h in ctx.log.read() if isinstance(h, HistoryAppended))
                assert sorted(seqs.values()) == [1] * 5, (after, seqs)
            finally:
                ctx.close()
    finally:
        registry.unregister("todo")
