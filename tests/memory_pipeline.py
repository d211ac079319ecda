"""Run statements through the real pipeline (messages -> Dream with the offline extractor -> facts).

Shared by the corrections, poisoning and notes tests: each statement is a user message of
its own (one day apart), and Dream runs after each one, as it would between sessions.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import processors
from eventlog.app import memory
from eventlog.app.workspace import Workspace
from eventlog.events import MessageAppended, SessionCreated
from processors.extract.text import has_cjk
from processors.llm import make_llm
from projections.memory import Fact

PROJECT = "/srv/acme"  # a project path only as data: never created, never written


@dataclass(frozen=True)
class Case:
    """A correction: what the user said first, what they said later, the value active at the end, the one gone."""

    name: str
    said: tuple[str, ...]
    active: str  # a fact holding this must be active at the end
    gone: str  # no active fact may hold this, and a superseded (or forgotten) one must


def say(ws: Workspace, text: str, *, day: int, session: str = "s", role: str = "user",
        extra: dict | None = None, project: str = PROJECT) -> None:
    """One message (its session created on first use) at 10:00 on day ``day`` of March 2025."""
    evs: list = []
    key = f"{session}-{day}"
    if key not in ws.sessions.index:
        evs.append(SessionCreated(session_key=key, created_at=f"2025-03-{day:02d}T09:00:00Z", project=project))
    evs.append(MessageAppended(session_key=key, message_id=f"m{day}-{len(evs)}", role=role, content=text,
                               timestamp=f"2025-03-{day:02d}T10:00:00Z", extra=extra or {}))
    ws.append(evs)


def dream(ws: Workspace) -> None:
    processors.run(ws, "dream", llm=make_llm("offline"))


def holds(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` (whole words in English, a substring in Chinese)."""
    if has_cjk(phrase):
        return phrase in text
    # Latin word boundaries only: "28" is whole in "2025年28岁" (a Chinese character is no part of a Latin word)
    return re.search(rf"(?<![A-Za-z0-9_.]){re.escape(phrase)}(?![A-Za-z0-9_])", text, re.IGNORECASE) is not None


def run_case(ws: Workspace, case: Case) -> list[Fact]:
    """Say each statement of ``case`` on its own day, Dream after each; all facts at the end."""
    for day, text in enumerate(case.said, 1):
        say(ws, text, day=day)
        dream(ws)
    return memory.facts(ws, state=None)


def outcome(facts: list[Fact], case: Case) -> str:
    """"ok", or what is wrong (for the failure message)."""
    active = [f.text for f in facts if f.state == "active"]
    left = [f.text for f in facts if f.state in ("superseded", "forgotten")]
    if not any(holds(t, case.active) for t in active):
        return f"nothing active holds {case.active!r}; active: {active}"
    if any(holds(t, case.gone) for t in active):
        return f"an active fact still holds {case.gone!r}; active: {active}"
    if not any(holds(t, case.gone) for t in left):
        return f"no superseded fact holds {case.gone!r}; all: {[(f.state, f.text) for f in facts]}"
    return "ok"


def failures_of(cases: list[Case], root: os.PathLike[str]) -> list[str]:
    """Each case in a workspace of its own under ``root`` (a path): "name: what went wrong" for every case not ok."""
    from eventlog.app.workspace import init_workspace

    failures = []
    for i, case in enumerate(cases):
        home = os.path.join(root, f"case{i}")
        init_workspace(home)
        ws = Workspace.open(home, writable=True)
        try:
            result = outcome(run_case(ws, case), case)
        finally:
            ws.close()
        if result != "ok":
            failures.append(f"{case.name}: {result}")
    return failures


def wrongly_replaced(cases: list[Case], root: os.PathLike[str]) -> list[str]:
    """Statements that are not corrections (``case.gone`` is ""), each in a workspace of its own under ``root``:
    "name: active ...; gone ..." for every case whose first fact (``case.active``) was lost or replaced."""
    from eventlog.app.workspace import init_workspace

    wrong = []
    for i, case in enumerate(cases):
        home = os.path.join(root, f"not{i}")
        init_workspace(home)
        ws = Workspace.open(home, writable=True)
        try:
            facts = run_case(ws, case)
        finally:
            ws.close()
        active = [f.text for f in facts if f.state == "active"]
        gone = [f.text for f in facts if f.state in ("superseded", "forgotten")]
        if not any(holds(t, case.active) for t in active) or any(holds(t, case.active) for t in gone):
            wrong.append(f"{case.name}: active {active}; gone {gone}")
    return wrong


def show(capsys, headline: str, lines: list[str], mark: str = "FAIL") -> None:  # noqa: ANN001 - pytest's capsys
    """Print a set's ``headline`` and each of its ``lines`` past pytest's capture (``-s`` or not): the measured rate."""
    with capsys.disabled():
        print("\n" + headline)
        for line in lines:
            print(f"  {mark}", line)


# --- the harness of a blind set (held-out 11 onwards): its stated shape, its two rates and their floors -----------

_CJK = re.compile(r"[\u4e00-\u9fff]")


def check_blind_set(cases: list[Case], not_cases: list[Case], *, chinese: int = 15, not_chinese: int = 5) -> None:
    """The shape a blind set's docstring states: 60 corrections (``chinese`` of them in Chinese), 20 non-corrections
    (``not_chinese`` in Chinese), 2-4 statements each, names unique."""
    assert len(cases) == 60
    assert sum(1 for c in cases if _CJK.search(c.said[-1])) == chinese
    assert all(2 <= len(c.said) <= 4 and c.active and c.gone for c in cases)
    assert len(not_cases) == 20
    assert sum(1 for c in not_cases if _CJK.search(c.said[-1])) == not_chinese
    assert all(2 <= len(c.said) <= 4 and c.gone == "" and c.active for c in not_cases)
    names = [c.name for c in cases + not_cases]
    assert len(names) == len(set(names))


def assert_corrections_floor(cases: list[Case], root: os.PathLike[str], capsys, label: str,  # noqa: ANN001 - capsys
                             floor: float) -> None:
    """Each correction of a set through the real pipeline: print "<label>: ok/n corrections handled (blind set)" and
    every failure, and hold the set's measured ``floor`` (a share of ``cases``)."""
    failures = failures_of(cases, root)
    n = len(cases)
    ok = n - len(failures)
    show(capsys, f"{label}: {ok}/{n} corrections handled (blind set)", failures)
    assert ok / n >= floor, "\n".join(failures)


def assert_kept_floor(not_cases: list[Case], root: os.PathLike[str], capsys, label: str,  # noqa: ANN001 - capsys
                      floor: float) -> None:
    """Each non-correction of a set through the real pipeline (the first fact must stay active, never superseded):
    print "<label> not-corrections: kept/n kept (blind set)" and every case lost, and hold ``floor``."""
    wrong = wrongly_replaced(not_cases, root)
    n = len(not_cases)
    kept = n - len(wrong)
    show(capsys, f"{label} not-corrections: {kept}/{n} kept (blind set)", wrong, mark="REPLACED")
    assert kept / n >= floor, "\n".join(wrong)
