"""Property test of snapshot, diary trim and digest (INVARIANTS I9-I13, I18 and issue 4's own).

For any interleaving of appends, re-imports of the same messages, snapshot runs, budget
changes (trims with any budget), digest runs, crashes in the middle of a run (an I/O
error at the n-th file-system call, then the writer stops without flushing), deleted
checkpoints and dedup indexes, and reopens:

* every unique message reaches the diary at most once, and exactly once after a
  snapshot run (nothing is lost: the log keeps what trims drop from the files); true
  re-imports of a message add nothing, distinct messages that read alike each keep a line;
* a diary never exceeds the budget it was last trimmed to (one oversize line excepted);
* the digest puts every diary line into a short-term entry after a digest run, and into
  exactly one unless its offset was reset (then re-reading is allowed, skipping never);
* rerunning any processor right away changes nothing;
* projections stay byte-identical to a fresh replay.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import processors
from eventlog import codec
from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import EvlogError
from eventlog.events import DiaryAppended, DiaryLines, MessageAppended, OffsetReset, StmAdded
from processors.snapshot import canonical_message
from projections.diary import diary_file, diary_items
from tests.simfs import SimFS, abandon_workspace

pytestmark = pytest.mark.slow  # a Hypothesis state machine (tens of seconds)

DATES = ["2026-11-01", "2026-11-02", "2026-11-03"]
words = st.text(alphabet="abc xyz 我们 😀\n", min_size=0, max_size=60)


class PipelineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="evlog-pipe-")
        self.home = os.path.join(self.tmp, "home")
        self.counter = 0
        self.sent: list[MessageAppended] = []

    @initialize(budget=st.integers(120, 2500), batch=st.integers(60, 800))
    def start(self, budget: int, batch: int) -> None:
        init_workspace(self.home, diary_budget_bytes=budget, digest_batch_bytes=batch)
        self.budget = budget
        self.trimmed_to = budget  # the budget the diaries were last brought within
        self._open()

    def _open(self) -> None:
        self.fs = SimFS()
        self.ws = Workspace.open(self.home, writable=True, fs=self.fs)
        self.ws.config.diary_budget_bytes = self.budget

    def teardown(self) -> None:
        if hasattr(self, "ws"):
            self._abandon()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _abandon(self) -> None:
        abandon_workspace(self.ws)

    def _events(self, cls: type) -> list:
        return [e for e in Workspace.open(self.home).log.read() if isinstance(e, cls)]

    def _diary_items(self) -> list:
        """Every line the diary events of the log add (one per ``diary.appended``, many per ``diary.lines``)."""
        return [item for e in self._events(DiaryAppended | DiaryLines) for item in diary_items(e)]

    # -- inputs ----------------------------------------------------------------------

    @rule(texts=st.lists(words, min_size=1, max_size=6), date=st.sampled_from(DATES), session=st.sampled_from(["a", "b"]))
    def append_messages(self, texts: list[str], date: str, session: str) -> None:
        evs = []
        for t in texts:
            self.counter += 1
            evs.append(MessageAppended(session_key=session, message_id=f"m{self.counter}", role="user", content=t,
                                       timestamp=f"{date}T10:{self.counter % 60:02d}:00Z"))
        self.ws.append(evs)
        self.sent.extend(evs)

    @precondition(lambda self: self.sent)
    @rule(data=st.data())
    def reimport_the_same_messages(self, data: st.DataObject) -> None:
        picks = data.draw(st.lists(st.sampled_from(self.sent), min_size=1, max_size=5))
        self.ws.append([MessageAppended(session_key=e.session_key, message_id=e.message_id, role=e.role,
                                        content=e.content, timestamp=e.timestamp) for e in picks])

    @precondition(lambda self: self.sent)
    @rule(data=st.data())
    def append_look_alikes(self, data: st.DataObject) -> None:
        """New messages (new ids) with the content and time of earlier ones: not duplicates."""
        picks = data.draw(st.lists(st.sampled_from(self.sent), min_size=1, max_size=3))
        evs = []
        for e in picks:
            self.counter += 1
            evs.append(MessageAppended(session_key=e.session_key, message_id=f"twin{self.counter}", role=e.role,
                                       content=e.content, timestamp=e.timestamp))
        self.ws.append(evs)
        self.sent.extend(evs)

    @rule(budget=st.integers(100, 2500))
    def change_budget(self, budget: int) -> None:
        self.budget = budget
        self.ws.config.diary_budget_bytes = budget

    # -- processors ------------------------------------------------------------------

    @rule()
    def run_snapshot(self) -> None:
        processors.run(self.ws, "snapshot")
        self.trimmed_to = self.budget
        self._every_message_reached_the_diary_once()

    @rule()
    def run_digest(self) -> None:
        processors.run(self.ws, "digest")
        self._every_diary_line_reached_an_entry()

    @rule(name=st.sampled_from(["snapshot", "digest", "archive"]))
    def rerun_changes_nothing(self, name: str) -> None:
        processors.run(self.ws, name)
        end = self.ws.log.last_seq
        processors.run(self.ws, name)
        assert self.ws.log.last_seq == end, f"rerunning {name} appended events"
        if name == "snapshot":
            self.trimmed_to = self.budget

    @rule(name=st.sampled_from(["snapshot", "digest"]), n=st.integers(1, 40))
    def crash_in_the_middle_of_a_run(self, name: str, n: int) -> None:
        self.fs.fail_at = self.fs.calls + n
        try:
            processors.run(self.ws, name)
        except (OSError, EvlogError):
            pass
        self.fs.fail_at = None
        self._abandon()
        self._open()
        if name == "snapshot":  # the run may have committed before the fault: either budget can hold
            self.trimmed_to = max(self.trimmed_to, self.budget)

    @rule()
    def reopen(self) -> None:
        self.ws.close()
        self._open()

    @rule(what=st.sampled_from(["state/projections.ckpt", "log/dedup.idx", "diary"]))
    def delete_derived_files(self, what: str) -> None:
        self.ws.close()
        path = os.path.join(self.home, what)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.unlink(path)
        self._open()

    # -- checks ----------------------------------------------------------------------

    def _every_message_reached_the_diary_once(self) -> None:
        written = [item.dedup for item in self._diary_items()]
        expected = {codec.content_hash(canonical_message(m)) for m in self.sent}
        assert set(written) == expected, "a unique message is missing from the diary after a snapshot run"

    def _every_diary_line_reached_an_entry(self) -> None:
        lines = [item.source_seq for item in self._diary_items()]
        covered = [s for e in self._events(StmAdded) for s in e.message_seqs]
        assert set(covered) == set(lines), "a diary line was skipped by the digest"
        if not [e for e in self._events(OffsetReset) if e.processor == "digest"]:
            assert len(covered) == len(set(covered)), "the digest read a diary line twice"

    @invariant()
    def diary_lines_are_unique(self) -> None:
        if hasattr(self, "ws"):
            keys = [item.dedup for item in self._diary_items()]
            assert len(keys) == len(set(keys)), "a message reached the diary twice"

    @invariant()
    def diaries_stay_within_budget(self) -> None:
        if not hasattr(self, "ws"):
            return
        self.ws.flush()
        for date, day in self.ws.diary.days.items():
            with open(os.path.join(self.home, diary_file(date)), "rb") as f:
                data = f.read()
            assert len(data) == day.size
            if len(data.splitlines()) > 1:
                assert len(data) <= self.trimmed_to, f"diary {date} is {len(data)} bytes, over its budget"

    @invariant()
    def projections_equal_a_replay(self) -> None:
        if hasattr(self, "ws"):
            assert replay.check(self.ws).clean


PipelineMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("EVLOG_STATEFUL_EXAMPLES", "40")),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestPipelineMachine = PipelineMachine.TestCase
