"""A preference changes when its object keeps its head and changes its modifier: "dark mode" -> "light mode".

``change.preference_object`` reads the one object a preference states ("prefers dark mode" -> ("dark mode",
"mode")); a later marked statement of the user's own preference whose object has the same head and another
modifier updates that fact, even though the two modifiers set the facts "apart" for other slots ("unit tests" /
"browser tests"). Another head, another person, or an added preference ("also") changes nothing.
"""

from __future__ import annotations

import pytest

from processors.extract import change, offline
from processors.extract.model import Entry, ExistingFact


def _entry(text: str, n: int) -> Entry:
    return Entry(ref=f"s#m{n}", seq=n, session_key="s", message_id=f"m{n}", speaker="user", role="user",
                 time=f"2025-03-0{n}T10:00:00Z", text=text)


def _after(first: str, second: str) -> list[tuple[str, str]]:
    facts = [ExistingFact(fact_id="f0", text=op.text, subject=op.subject, scope=op.scope, project=op.project,
                          section=op.section, when=op.when)
             for op in offline.extract([_entry(first, 1)], []) if op.op == "add"]
    assert len(facts) == 1, facts
    return [(op.op, op.text) for op in offline.extract([_entry(second, 2)], facts) if op.op in ("add", "update", "delete")]


@pytest.mark.parametrize(("first", "second", "now"), [
    ("I prefer dark mode.", "weirdly i like light mode better now, easier on my eyes outdoors", "light mode"),
    ("I prefer window seats.", "I like aisle seats better now.", "aisle seats"),
    ("I prefer short answers.", "I prefer detailed answers now, with examples.", "detailed answers"),
])
def test_the_same_object_with_another_modifier_updates_the_preference(first, second, now):
    ops = _after(first, second)
    assert [op for op, _ in ops] == ["update"], ops
    assert now in ops[0][1] and "easier" not in ops[0][1]


@pytest.mark.parametrize(("first", "second"), [
    ("I prefer dark mode.", "I like dark chocolate now."),  # another head: another preference
    ("I prefer dark mode.", "I also like light themes now."),  # added, not replaced
    ("I like loud music.", "My sister likes quiet music now."),  # another person
])
def test_another_object_an_addition_or_another_person_updates_nothing(first, second):
    assert all(op != "update" for op, _ in _after(first, second))


def test_the_object_of_a_preference():
    assert change.preference_object("The user prefers dark mode.") == ("dark mode", "mod")
    assert change.preference_object("I like it a lot.") is None
    assert change.preference_object("I like to run.") is None
    assert change.preference_object("I like tea.") is None  # one word: no modifier that could change
