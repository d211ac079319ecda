"""A team's tool switched (processors/extract/change.py): "the team moved to X" is no move of home, a fact naming
its tool only by a name gets the new one, the old value named beside the new ("switched ... to pnpm, npm was too
slow") or in "not going back to X" is still a change, and a second wording holding the value named as gone retires
with the first. Another person, an addition or two tool facts change nothing. The wordings are this file's own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import change
from processors.extract import slots as sl
from processors.extract.text import STOPWORDS


#: A generated name is no English function word or slot word ("Here", "Will", "Role"): those are language, which the
#: rules rightly read as such, not a tool's or a person's name.
def _no_word(w: str) -> bool:
    return w.casefold() not in STOPWORDS and not change.families(w)


_TOOL = st.builds(lambda a, b: a.upper() + b, st.sampled_from("BCDFGHJKLMNPQRSTVWXZ"),
                  st.text(alphabet="aeiouklmnrstxz", min_size=3, max_size=8)).filter(_no_word)
_PAIR = st.lists(_TOOL, min_size=2, max_size=2, unique_by=str.casefold)


@settings(max_examples=50, deadline=None)
@given(_PAIR, st.sampled_from(["the team moved to {} last week", "our team has moved to {}", "everything lives in {} now"]))
def test_a_team_or_a_thing_moving_is_no_home(pair, wording) -> None:
    old, new = pair
    s = wording.format(new)
    assert "home" not in change.families(s)
    assert change.target(s, [f"The user lives in {old}."]) is None
    assert "home" in change.families(f"we moved to {new} last month")  # a household's "we" still moves home


@settings(max_examples=50, deadline=None)
@given(_PAIR)
def test_a_tool_fact_named_only_by_its_tool_gets_the_new_one(pair) -> None:
    old, new = pair
    fact = f"The project's team chats on {old}."
    s = f"fyi the team moved to {new} last week"
    assert change.target(s, [fact]) == 0
    assert change.tool_swap(s, fact) == f"The project's team chats on {new}."
    assert change.target(f"the team also moved to {new}", [fact]) is None
    assert change.target(s, [fact, f"The project's team tracks bugs on {old}x."]) is None


def test_the_old_value_named_beside_the_new_is_still_a_change() -> None:
    fact = "The team uses npm for packages."
    assert change.target("switched the monorepo to pnpm, npm was too slow", [fact]) == 0
    assert not change._modifiers_apart("switched the monorepo to pnpm, npm was too slow", fact)
    assert change._modifiers_apart("browser tests run in Playwright now", "The unit tests run in Jest.")
    assert change.target("my brother switched to pnpm, npm was too slow", [fact]) is None


@given(_PAIR)
def test_not_going_back_names_the_old_value(pair) -> None:
    old, new = pair
    s = f"been using {new} for a month and I'm not going back to {old.casefold()}"
    assert change.marked(s)
    assert old.casefold() in [g.casefold() for g in sl.gone_values(s)]
    assert change.target(s, [f"The user codes in {old} Text."]) == 0


@given(_PAIR)
def test_a_second_wording_holding_the_value_named_gone_retires_with_it(pair) -> None:
    old, new = pair
    s = f"We dropped {old} in the spring, everything lives in {new} now."
    first, second = f"Work on the project is tracked as {old} tickets.", f"The team tracks issues in {old}."
    assert change.rewords(second, first, f"Everything lives in {new}.", s)
    assert not change.rewords(f"The team chats on {old}x.", first, f"Everything lives in {new}.", s)
    assert not change.rewords(f"My brother tracks issues in {old}.", first, f"Everything lives in {new}.", s)
