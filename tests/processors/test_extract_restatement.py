"""Saying the same thing again changes nothing: a repeated message adds, updates and deletes no fact.

A transcript imported twice under new message ids, or a user repeating themselves, gives Dream the same
text again. The offline extractor must see that the facts already say it, whatever rule produced them:
the daemon's kill test found a Chinese request ("不要在晚上十点以后给我发提醒") whose second reading was
taken for a correction of its first and flipped the fact's wording at every repetition. Every first
statement of the correction test sets is checked.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tests.processors as tests_processors
from processors.extract import offline
from processors.extract.model import Entry, ExistingFact


def _statements() -> list[str]:
    seen: dict[str, None] = {}
    names = [m.name for m in pkgutil.iter_modules(tests_processors.__path__) if m.name.startswith("test_corrections")]
    for name in sorted(names):
        module = importlib.import_module(f"tests.processors.{name}")
        for value in vars(module).values():
            if isinstance(value, list):
                for case in value:
                    said = getattr(case, "said", None)
                    if isinstance(said, tuple) and said:
                        seen.setdefault(said[0], None)
    seen.setdefault("我习惯早上写代码，不要在晚上十点以后给我发提醒 (said in alpha at 50)", None)
    return list(seen)


def _entry(text: str, n: int) -> Entry:
    return Entry(ref=f"s#m{n}", seq=n, session_key="s", message_id=f"m{n}", speaker="user", role="user",
                 time="2025-03-01T10:00:00Z", text=text)


def test_there_are_many_statements():
    assert len(_statements()) >= 200


@pytest.mark.parametrize("text", _statements())
def test_a_repeated_statement_changes_no_fact(text):
    first = offline.extract([_entry(text, 1)], [])
    facts = [ExistingFact(fact_id=f"f{i}", text=op.text, subject=op.subject, scope=op.scope, project=op.project,
                          section=op.section, when=op.when) for i, op in enumerate(first) if op.op == "add"]
    again = [op for op in offline.extract([_entry(text, 2)], facts) if op.op in ("add", "update", "delete")]
    assert again == [], [(op.op, op.fact_id, op.text, op.reason) for op in again]


def test_a_weekday_with_a_plural_part_of_the_day_is_a_schedule_not_a_date():
    """ "on Wednesday afternoons" is every week: resolving it to last Wednesday made a schedule a temporary
    fact that had already ended (the repeated statement then deleted it)."""
    said = {op.text for op in offline.extract([_entry("Our retro is on Wednesday afternoons.", 1)], []) if op.op == "add"}
    assert said == {"The team's retro is on Wednesday afternoons."}
    once = {op.text for op in offline.extract([_entry("I went hiking on Wednesday afternoon.", 1)], []) if op.op == "add"}
    assert once == {"The user went hiking on Wednesday 26 February 2025 afternoon."}


def test_what_a_team_runs_is_a_tool_only_when_it_is_written_as_one():
    """ "we always run tests against a real Postgres" made the demo's MEMORY.md say "The project uses tests.":
    "run" takes activities (tests, migrations, errands) as well as programs."""
    from processors.extract import signals

    assert signals.tool_names("Please don't use mocks for the database; we always run tests against a real Postgres.") == []
    assert signals.tool_names("we run Jenkins for CI") == [("jenkins", "Jenkins")]
    assert signals.tool_names("we use redis and celery") == [("redis", "redis"), ("celery", "celery")]
    ran = signals.SessionTools(programs=frozenset({"pytest"}))
    assert signals.tool_names("we run pytest on every push", ran) == [("pytest", "pytest")]
