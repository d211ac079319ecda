"""Round 9 mechanisms of the general change path (processors/extract/change.py), as properties: a tool named alone,
a time moved, a one-off, an additive clause beside the change, two value words as modifiers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import change, frames
from processors.extract.text import STOPWORDS


#: A generated name is no English function word or slot word ("Here", "Will", "Role"): those are language, which the
#: rules rightly read as such, not a tool's or a person's name.
def _no_word(w: str) -> bool:
    return w.casefold() not in STOPWORDS and not change.families(w)


_TOOL = st.builds(lambda a, b: a.upper() + b, st.sampled_from("BCDFGHJKLMNPQRSTVWXZ"),
                  st.text(alphabet="aeiouklmnrstxz", min_size=3, max_size=8)).filter(_no_word)
_PAIR = st.lists(_TOOL, min_size=2, max_size=2, unique_by=str.casefold)


@settings(max_examples=60, deadline=None)
@given(_PAIR, st.sampled_from(["we're on {} now", "these days it's {} for me", "switched to {} last week"]))
def test_a_tool_named_alone_replaces_the_one_tool_fact(pair, wording) -> None:
    old, new = pair
    fact = f"The team's main database is {old}."
    s = wording.format(new)
    assert change.explain(s, [fact]) == (0, "tool")
    assert change.tool_swap(s, fact) == f"The team's main database is {new}."


@settings(max_examples=60, deadline=None)
@given(_PAIR, _TOOL)
def test_a_tool_named_alone_never_guesses_nor_touches_who_the_user_is(pair, new) -> None:
    a, b = pair
    s = f"we're on {new} now"
    if new.casefold() in (a.casefold(), b.casefold()):
        return
    two = [f"The team's main database is {a}.", f"The team's CI is {b}."]
    assert change.target(s, two) is None  # two tool facts: no change
    assert change.target(s, [f"The user lives in {a}."]) is None  # a home is no tool
    assert change.target(f"our marketing site is on {new} now", [f"The team hosts the docs on {a}."]) is None


@given(st.sampled_from(["10:15", "11", "3pm", "monday", "fridays"]), st.sampled_from(["pushed", "brought", "moved"]))
def test_a_time_moved_is_a_change_and_a_branch_pushed_is_not(when, verb) -> None:
    assert change.marked(f"standup got {verb} to {when}")
    assert not change.marked(f"I {verb} to main") or verb == "moved"  # "moved to" was already a change


@given(st.sampled_from(["just this once", "this time only", "only today", "one-off"]))
def test_a_one_off_changes_no_standing_fact(scope) -> None:
    assert frames.one_off(f"standup is pushed to 11 tomorrow, {scope}")
    assert change.target(f"standup is pushed to 11 now, {scope}", ["The team's daily standup is at 9:30."]) is None
    assert change.target("standup is pushed to 11 now", ["The team's daily standup is at 9:30."]) == 0


def test_an_additive_clause_beside_the_change_does_not_make_it_an_addition() -> None:
    assert change._adds("我也搬到杭州了")
    assert not change._adds("上个月搬到杭州了，房子也退租了")
    assert change._adds("I also moved to Lisbon now")


@given(st.sampled_from([("junior", "senior"), ("senior", "lead"), ("junior", "lead")]))
def test_value_words_as_modifiers_are_the_value_that_changed(pair) -> None:
    old, new = pair
    assert not change._modifiers_apart(f"{new} designer now", f"The user is a {old} designer at Canva.")
    assert change._modifiers_apart("browser tests run in Playwright now", "The unit tests run in Jest.")
