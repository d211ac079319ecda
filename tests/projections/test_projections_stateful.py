"""Incremental projections equal a full replay, byte for byte (INVARIANTS I8, I17, I11).

A Hypothesis state machine drives the session store and appends history and memory
events, flushes at random points, crashes (the writer stops without flushing, or an
I/O error hits the middle of a flush), deletes projection files and checkpoints, and
reopens. After every step ``replay.check`` (flush, rebuild from seq 1 elsewhere,
compare every file) must find no drift, and the store must answer like a plain model.
The session-file cap is lowered to 5 messages so trimming happens all the time.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import projections.sessions as sessions_mod
from eventlog.app import replay
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import LogIOError
from eventlog.events import HistoryAppended, MemoryAppended, SessionConsolidated
from tests.simfs import SimFS, abandon_workspace

pytestmark = pytest.mark.slow  # a Hypothesis state machine (tens of seconds)

CAP = 5
KEYS = ["cli:a", "qq:中文", "../etc/passwd", "a/b\nc", "\x00nul", "😀" * 3, "k" * 300, "."]
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


class ProjectionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="evlog-proj-")
        self.home = os.path.join(self.tmp, "home")
        self.projects = [os.path.join(self.tmp, "proj1"), os.path.join(self.tmp, "proj2")]
        os.makedirs(self.projects[0])  # proj2 does not exist: no mirror is written for it
        init_workspace(self.home)
        self.saved_cap = sessions_mod.MAX_FILE_MESSAGES
        sessions_mod.MAX_FILE_MESSAGES = CAP
        self.model: dict[str, list[str]] = {}  # key -> message contents
        self.counter = 0

    @initialize()
    def start(self) -> None:
        self._open()

    def _open(self) -> None:
        self.fs = SimFS()
        self.store = LocalSessionStore(Workspace.open(self.home, writable=True, fs=self.fs))

    @property
    def ws(self) -> Workspace:
        return self.store.ws

    def teardown(self) -> None:
        sessions_mod.MAX_FILE_MESSAGES = self.saved_cap
        if hasattr(self, "store"):
            self._abandon()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _abandon(self) -> None:
        """Stop the writer like a killed process: no flush, no checkpoint."""
        abandon_workspace(self.ws)

    # -- store operations ----------------------------------------------------------------

    @rule(key=st.sampled_from(KEYS), title=texts)
    def create(self, key: str, title: str) -> None:
        self.store.get_or_create(key, title=title)
        self.model.setdefault(key, [])

    @rule(key=st.sampled_from(KEYS), role=st.sampled_from(["user", "assistant", "tool"]), content=texts,
          with_id=st.booleans())
    def add_message(self, key: str, role: str, content: str, with_id: bool) -> None:
        self.counter += 1
        self.store.add_message(key, role, content, message_id=f"m{self.counter}" if with_id else None)
        self.model.setdefault(key, []).append(content)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), title=st.none() | texts, preview=st.none() | texts)
    def update(self, data: st.DataObject, title: str | None, preview: str | None) -> None:
        key = data.draw(st.sampled_from(sorted(self.model)))
        info = self.store.update(key, title=title, preview=preview, metadata={"n": self.counter})
        if title is not None:
            assert info.title == title

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.model)))
        assert self.store.delete(key)
        del self.model[key]

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def consolidate(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.model)))
        self.ws.append([SessionConsolidated(session_key=key, up_to_count=len(self.model[key]))])

    @rule(text=texts)
    def history(self, text: str) -> None:
        self.ws.append([HistoryAppended(text=text or "x", source="remember")])

    @rule(scope=st.sampled_from(["user", "project"]), which=st.integers(0, 2), text=texts,
          section=st.sampled_from(["User Profile", "Project Context", "Habits"]))
    def memory(self, scope: str, which: int, text: str, section: str) -> None:
        project = "" if which == 2 else self.projects[which]
        self.counter += 1
        self.ws.append([MemoryAppended(fact_id=f"f{self.counter}", scope=scope, project=project, section=section,
                                       text=text or "fact")])

    # -- persistence and failures --------------------------------------------------------

    @rule()
    def flush(self) -> None:
        self.ws.flush()

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self._open()

    @rule()
    def crash_without_flush(self) -> None:
        self._abandon()
        self._open()

    @rule(n=st.integers(1, 12))
    def io_error_in_the_middle_of_a_flush(self, n: int) -> None:
        self.fs.fail_at = self.fs.calls + n
        try:
            self.ws.flush()
        except (OSError, LogIOError):
            pass
        self.fs.fail_at = None
        self._abandon()
        self._open()

    @rule(what=st.sampled_from(["checkpoint", "sessions", "a session file", "history", "memory"]))
    def delete_derived_files(self, what: str) -> None:
        self.store.close()
        target = {
            "checkpoint": os.path.join(self.home, "state", "projections.ckpt"),
            "sessions": os.path.join(self.home, "sessions"),
            "history": os.path.join(self.home, "memory", "history.jsonl"),
            "memory": os.path.join(self.home, "memory"),
            "a session file": None,
        }[what]
        if target is None:
            files = sorted(os.listdir(os.path.join(self.home, "sessions"))) if os.path.isdir(os.path.join(self.home, "sessions")) else []
            target = os.path.join(self.home, "sessions", files[0]) if files else None
        if target and os.path.isdir(target):
            shutil.rmtree(target)
        elif target and os.path.exists(target):
            os.unlink(target)
        self._open()

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def incremental_equals_replay(self) -> None:
        if hasattr(self, "store"):
            assert replay.check(self.ws).clean

    @invariant()
    def store_answers_like_the_model(self) -> None:
        if not hasattr(self, "store"):
            return
        listed = self.store.list()
        assert sorted(s.key for s in listed) == sorted(self.model)
        assert [s.updated_at for s in listed] == sorted((s.updated_at for s in listed), reverse=True)
        for key, contents in self.model.items():
            assert self.store.get(key).message_count == len(contents)
            assert [m.content for m in self.store.history(key)] == contents[-CAP:]
            path = os.path.join(self.home, "sessions", sessions_mod.safe_name(key, ".jsonl"))
            assert os.path.dirname(os.path.abspath(path)) == os.path.join(os.path.abspath(self.home), "sessions")


ProjectionMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("EVLOG_STATEFUL_EXAMPLES", "40")),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestProjectionMachine = ProjectionMachine.TestCase
