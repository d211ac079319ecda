"""The general change path (``processors/extract/change.py``): which one fact a user's statement of change updates,
and that reading the same statement again never changes memory (no fact superseded by itself, no duplicate).

The wordings here are this file's own (none is taken from a correction set).
"""

from __future__ import annotations

import pytest

from eventlog.app import memory
from eventlog.app.workspace import Workspace, init_workspace
from processors.extract import change, offline
from processors.extract.model import Entry, ExistingFact
from processors.extract.text import fact_key
from tests.memory_pipeline import dream, holds, say

# -- which fact: named old value, frame words, predicate family; none when two fit --------------------------------


def test_a_named_old_value_picks_the_fact_holding_it():
    facts = ["The user lives in Leeds.", "The user works at Sage."]
    assert change.target("I left Sage and joined Xero.", facts) == 1


def test_a_family_shared_by_exactly_one_fact_picks_it():
    facts = ["The user lives in Leeds.", "The user works at Sage."]
    assert change.target("started at Xero on monday", facts) == 1


def test_two_facts_of_the_family_are_ambiguous_and_nothing_is_picked():
    facts = ["The user works at Sage.", "The user's company is Zoho."]
    assert change.target("started at Xero on monday", facts) is None


@pytest.mark.parametrize("said", [
    "My sister moved to York now.",  # another person
    "Maybe I'll move to York next year.",  # a hypothetical
    "I also work at Xero now.",  # an addition
    "I work at Xero.",  # no marker of change
    "Sage is slow these days.",  # the old value named, no other value
])
def test_statements_that_replace_nothing_pick_no_fact(said):
    assert change.target(said, ["The user lives in Leeds.", "The user works at Sage."]) is None


def test_a_statement_is_never_the_target_of_itself():
    assert change.target("The user works at Xero now.", ["The user works at Xero now."]) is None


def test_a_tool_named_again_with_another_version_is_that_tools_fact():
    facts = ["The team deploys with Ansible.", "The API runs on Flask 2.3."]
    assert change.target("bumped flask to 3.0 last sprint", facts) == 1


def test_a_family_whose_words_are_values_needs_a_word_of_its_own_on_each_side():
    assert change.target("switched to pnpm for this repo", ["The user installs packages with yarn."]) == 0
    assert change.target("switched to npm scripts for builds now", ["The user installs packages with npm."]) is None


@pytest.mark.parametrize("said", [
    "I've been trying to incorporate more walking into my daily routine now.",  # an attempt
    "I think I'll go with Amazon now since I have a prime membership.",  # a thought
    "I've been using Ibotta for a while now, and Fetch Rewards too.",  # the name said again, in other talk
])
def test_chatty_prose_with_now_replaces_nothing(said):
    facts = ["The user redeemed cashback from Ibotta.", "The user walks to work on Mondays."]
    assert change.target(said, facts) is None


def test_one_modifier_on_each_side_is_two_slots_not_one():
    assert change.target("We now run Cypress for end-to-end tests.", ["The team uses Mocha for unit tests."]) is None


# -- the same statement twice: identical memory -------------------------------------------------------------------

CHANGES = [
    ("I work at Nokia.", "started at Ericsson last week!", "Ericsson"),
    ("我在上海工作。", "跳槽了，现在在深圳的腾讯上班。", "腾讯"),
    ("We deploy to Render.", "deploys run on Fly.io these days", "Fly"),
]


def _facts(ws: Workspace) -> list[tuple[str, str]]:
    return sorted((f.state, f.text) for f in memory.facts(ws, state=None))


@pytest.mark.parametrize("first,change_said,new", CHANGES, ids=[c[2] for c in CHANGES])
def test_the_same_change_dreamed_twice_leaves_one_active_fact_and_no_duplicate(evlog_home, first, change_said, new):
    init_workspace(str(evlog_home))
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        say(ws, first, day=1)
        dream(ws)
        say(ws, change_said, day=2)
        dream(ws)
        once = _facts(ws)
        say(ws, change_said, day=3, session="again")
        dream(ws)
        twice = _facts(ws)
        active = [f.text for f in memory.facts(ws)]
    finally:
        ws.close()
    assert [t for t in active if holds(t, new)], once
    assert twice == once, "the same statement read again changed memory"
    assert len({fact_key(t) for t in active}) == len(active), active


def _entry(text: str, day: int) -> Entry:
    return Entry(ref=f"s#{day}", seq=day, session_key="s", message_id=str(day), speaker="user", role="user",
                 time=f"2025-03-{day:02d}T10:00:00.000Z", text=text)


@pytest.mark.parametrize("first,change_said,new", CHANGES, ids=[c[2] for c in CHANGES])
def test_extracting_again_over_the_same_entries_proposes_no_known_fact_and_no_self_update(first, change_said, new):
    entries = [_entry(first, 1), _entry(change_said, 2)]
    ops = offline.extract(entries, [])
    known = [ExistingFact(fact_id=f"f{i}", text=o.text, subject=o.subject, scope=o.scope, when=o.when)
             for i, o in enumerate(ops) if o.op == "add"]
    assert any(holds(f.text, new) for f in known), [o.text for o in ops]
    again = offline.extract(entries, known)
    keys = {fact_key(f.text): f.fact_id for f in known}
    for o in again:
        assert not (o.op == "add" and fact_key(o.text) in keys), o
        assert not (o.op == "update" and keys.get(fact_key(o.text)) is not None), o


def test_the_same_statements_in_overlapping_batches_never_append_a_fact_twice():
    said = ["I prefer dark mode in every editor.", "我习惯早上写代码，不要在晚上十点以后给我发提醒",
            "We use tox for the test matrix.", "我喜欢简洁的回答"]
    known: list[ExistingFact] = []
    for run in range(3):  # three Dream runs over batches that repeat each statement (as the daemon's restarts do)
        batch = [_entry(f"{said[i % len(said)]} (run {run}, message {i})", 1 + i) for i in range(run, run + 8)]
        for o in offline.extract(batch, known):
            if o.op == "update":
                known = [f for f in known if f.fact_id != o.fact_id]
            if o.op in ("add", "update"):
                known.append(ExistingFact(fact_id=f"f{run}-{len(known)}", text=o.text, subject=o.subject,
                                          scope=o.scope))
    keys = [fact_key(f.text) for f in known]
    assert len(keys) == len(set(keys)), sorted(keys)
