"""Property test of the fact model (issue 14): MEMORY.md always equals the active facts, within budget.

Any sequence of adds, supersedes, forgets, edits, pins, hand edits of MEMORY.md, replays
and reopens keeps: every MEMORY.md on disk is the rendering of its active facts (the same
bytes a fresh replay writes), within its line and byte budget unless pinned facts alone
exceed it, and a forgotten fact never becomes active again.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from eventlog.app import memory as mem
from eventlog.app import replay
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MemoryAppended, MemorySuperseded
from processors.dream import budget_events
from projections.memory import file_of, item_text, render

pytestmark = pytest.mark.slow  # a Hypothesis state machine (tens of seconds)

words = st.text(alphabet="abcdefgh xyz 我们", min_size=3, max_size=40).filter(lambda t: t.strip() and "\n" not in t)
SECTIONS = st.sampled_from(["User Profile", "Preferences", "Events"])


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="evlog-mem-")
        self.home = os.path.join(self.tmp, "home")
        self.forgotten: set[str] = set()
        self.counter = 0

    @initialize(lines=st.integers(10, 16))
    def start(self, lines: int) -> None:
        init_workspace(self.home, memory_max_lines=lines, memory_max_bytes=1500)
        self.ws = Workspace.open(self.home, writable=True)

    def teardown(self) -> None:
        if hasattr(self, "ws"):
            self.ws.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _active(self) -> list:
        return self.ws.memory.all_facts("active")

    @rule(text=words, section=SECTIONS, pinned=st.booleans())
    def add(self, text: str, section: str, pinned: bool) -> None:
        self.counter += 1
        mem.add(self.ws, f"{text} {self.counter}", section=section, pinned=pinned and self.counter % 4 == 0)

    @precondition(lambda self: self._active())
    @rule(data=st.data(), text=words)
    def supersede(self, data: st.DataObject, text: str) -> None:
        old = data.draw(st.sampled_from(self._active()))
        self.counter += 1
        new = MemoryAppended(fact_id=f"fact-s{self.counter}", scope="user", section=old.section,
                             text=f"{text} {self.counter}", by="user")
        sup = MemorySuperseded(fact_id=old.fact_id, by_fact_id=new.fact_id, by="user")
        self.ws.append([new, sup, *budget_events(self.ws, [new, sup])])

    @precondition(lambda self: self._active())
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        f = data.draw(st.sampled_from(self._active()))
        mem.forget(self.ws, [f.fact_id])
        self.forgotten.add(f.fact_id)

    @precondition(lambda self: self._active())
    @rule(data=st.data(), text=words)
    def edit(self, data: st.DataObject, text: str) -> None:
        f = data.draw(st.sampled_from(self._active()))
        mem.edit(self.ws, f.fact_id, f"{text} edited")

    @precondition(lambda self: self._active())
    @rule(data=st.data())
    def pin(self, data: st.DataObject) -> None:
        f = data.draw(st.sampled_from(self._active()))
        mem.pin(self.ws, f.fact_id, not f.pinned)

    @precondition(lambda self: self._active())
    @rule(kind=st.sampled_from(["remove", "change", "append"]), data=st.data())
    def hand_edit(self, kind: str, data: st.DataObject) -> None:
        self.ws.flush()
        path = self.ws.path(file_of(""))
        if not os.path.exists(path):
            return
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        items = [i for i, ln in enumerate(lines) if ln.startswith("- ")]
        if not items:
            return
        i = data.draw(st.sampled_from(items))
        removed = None
        if kind == "remove":
            removed = lines.pop(i)[2:]
        elif kind == "change":
            lines[i] = lines[i] + " (by hand)"
        else:
            lines.insert(i + 1, f"- written by hand {self.counter}")
            self.counter += 1
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.ws.flush()
        if removed is not None:
            gone = [f for f in self.ws.memory.all_facts("forgotten") if item_text(f.text) == removed]
            assert gone, "a line removed by hand did not forget its fact"
            self.forgotten.update(f.fact_id for f in gone)

    @rule()
    def replay_everything(self) -> None:
        replay.rebuild(self.ws)

    @rule()
    def reopen(self) -> None:
        self.ws.close()
        self.ws = Workspace.open(self.home, writable=True)

    @invariant()
    def memory_md_is_the_active_facts_within_budget(self) -> None:
        if not hasattr(self, "ws"):
            return
        self.ws.flush()
        facts = self.ws.memory.facts("")
        path = self.ws.path(file_of(""))
        if os.path.exists(path):
            with open(path, "rb") as f:
                assert f.read() == render(facts)
        cfg = self.ws.config
        data = render(facts)
        pinned_only = render([f for f in facts if f.pinned])
        if len(pinned_only.splitlines()) <= cfg.memory_max_lines and len(pinned_only) <= cfg.memory_max_bytes:
            assert len(data.splitlines()) <= cfg.memory_max_lines and len(data) <= cfg.memory_max_bytes

    @invariant()
    def forgotten_facts_never_come_back(self) -> None:
        if hasattr(self, "ws"):
            for fid in self.forgotten:
                assert self.ws.memory.get(fid).state == "forgotten"

    @invariant()
    def replay_gives_the_same_files(self) -> None:
        if hasattr(self, "ws"):
            assert replay.check(self.ws).clean


MemoryMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("EVLOG_STATEFUL_EXAMPLES", "40")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestMemoryMachine = MemoryMachine.TestCase
