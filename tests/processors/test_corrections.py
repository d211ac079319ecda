"""Corrections by meaning (issue 21, item 2), through the real pipeline with the offline extractor.

A fact is about a slot (where the user lives or works, their name, their job, which tool or
version the project uses, a preference, a schedule); a later statement about the same slot
supersedes it whatever the wording, and forgetting part of a fact edits it. Each case of
``tests/correction_cases.py`` is said as messages, Dream runs between them, and at the end
only the new value may be active and the old one must be superseded (or, for a forget,
gone). The issue's own failing examples must each pass; the whole table must reach 90%.
"""

from __future__ import annotations

import pytest

from eventlog.app import memory
from eventlog.app.workspace import Workspace, init_workspace
from tests.correction_cases import CASES, ISSUE
from tests.memory_pipeline import Case, dream, outcome, run_case, say

TARGET = 0.9


def _run(home: str, case: Case) -> str:
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        return outcome(run_case(ws, case), case)
    finally:
        ws.close()


@pytest.mark.parametrize("case", ISSUE, ids=[c.name for c in ISSUE])
def test_the_issues_failing_corrections_end_with_only_the_new_value_active(evlog_home, case):
    assert _run(str(evlog_home / "ws"), case) == "ok"


def test_at_least_90_percent_of_the_natural_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    assert len(CASES) >= 40
    failures = []
    for i, case in enumerate(CASES):
        result = _run(str(evlog_home / f"case{i}"), case)
        if result != "ok":
            failures.append(f"{case.name}: {result}")
    rate = 1 - len(failures) / len(CASES)
    with capsys.disabled():
        print(f"\ncorrections: {len(CASES) - len(failures)}/{len(CASES)} = {rate:.0%}")
        for f in failures:
            print("  FAIL", f)
    assert rate >= TARGET, "\n".join(failures)


@pytest.mark.parametrize("said", ["This week I'm on call.", "I'm on call until Friday.",
                                  "Until Friday I'm working from the Madrid office."])
def test_a_temporary_fact_carries_its_end_and_leaves_memory_after_it(evlog_home, said):
    init_workspace(str(evlog_home))
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        say(ws, said, day=4)  # Tuesday 4 March 2025
        dream(ws)
        first = [f.text for f in memory.facts(ws)]
        assert len(first) == 1 and "2025" in first[0], first  # the end is a date, not "until Friday"
        say(ws, "I prefer tabs over spaces.", day=6)
        dream(ws)
        assert [f.text for f in memory.facts(ws) if "2025" in f.text] == first  # still true on Thursday
        say(ws, "I prefer dark mode in every app.", day=11)
        dream(ws)
        assert not [f.text for f in memory.facts(ws) if "2025" in f.text]
        gone = [f for f in memory.facts(ws, state=None) if f.text == first[0]]
        assert gone and gone[0].state == "forgotten" and "ended" in gone[0].reason
    finally:
        ws.close()


@pytest.mark.parametrize(("said", "end"), [("I'm working remotely until June.", "until 30 June 2025"),
                                           ("Until the end of the month I'm working part-time.", "Until 31 March 2025"),
                                           ("I'm away until the end of the week.", "until 9 March 2025"),
                                           ("I'm at my parents' until January.", "until 31 January 2026")])
def test_a_month_or_the_end_of_a_month_or_week_is_written_as_its_last_day(said, end):
    from processors.extract import validity

    assert end in validity.with_end(said, "2025-03-04T10:00:00Z")  # Tuesday 4 March 2025
