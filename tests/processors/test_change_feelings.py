"""Preferences that turn over (processors/extract/change.py ``polarity``, keep.py ``answer_style``): "I love X now"
after "hates X" replaces it, "I'd rather have detailed explanations from now on" replaces the one fact on how the
assistant answers, and a statement said with a question mark in surprise ("weirdly I love X now??") is read as one.
Another object, the same feeling, a negation, an addition or another person change nothing. The wordings are this
file's own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import change, keep, offline
from processors.extract.model import Entry, ExistingFact

_THING = st.text(alphabet="abcdeiklmnorstu", min_size=4, max_size=9).filter(lambda w: w not in ("like", "love"))
_FLIP = [("hates", "I love {} now"), ("loves", "I can't stand {} anymore"), ("dislikes", "these days I enjoy {}")]


@settings(max_examples=50, deadline=None)
@given(_THING, st.sampled_from(_FLIP))
def test_a_feeling_turned_over_replaces_the_old_one(thing, flip) -> None:
    old, new = flip
    fact = f"The user {old} {thing}."
    assert change.explain(new.format(thing), [fact]) == (0, "preference")


@settings(max_examples=50, deadline=None)
@given(_THING, _THING, st.sampled_from(_FLIP))
def test_another_object_the_same_feeling_or_another_person_change_nothing(thing, other, flip) -> None:
    old, new = flip
    fact = f"The user {old} {thing}."
    if other != thing:
        assert change.explain(new.format(other), [fact])[1] != "preference"
    assert change.target(f"I still {old.rstrip('s')} {thing} now", [fact]) is None
    assert change.target(new.replace("I ", "My sister ").format(thing), [fact]) is None
    assert change.target(f"I also love {thing} now", [f"The user hates {thing}."]) is None


def test_a_negated_feeling_has_no_sign() -> None:
    assert change.polarity("I don't like cilantro") is None
    assert change.polarity("The user hates cilantro.") == ("cilantro", -1)
    assert change.polarity("I love to run") is None


def test_rather_have_answers_is_an_answer_style() -> None:
    assert keep.answer_style("Actually I'd rather have detailed explanations with examples from now on.") == \
        "The user would rather have detailed explanations with examples."


def _entry(text: str) -> Entry:
    return Entry(ref="s#2", seq=2, session_key="s", message_id="2", speaker="user", role="user",
                 time="2025-03-02T10:00:00Z", text=text)


def _updates(text: str, facts: list[str]) -> list[tuple[str, str]]:
    known = [ExistingFact(fact_id=f"f{i}", text=t, subject="user", scope="global") for i, t in enumerate(facts)]
    return [(o.fact_id, o.text) for o in offline.extract([_entry(text)], known) if o.op == "update"]


def test_the_one_answer_fact_is_replaced_by_a_new_style_and_two_are_left_alone() -> None:
    s = "Actually I'd rather have detailed explanations with examples from now on."
    short = "The user prefers my answers short and to the point."
    assert _updates(s, [short]) == [("f0", "The user would rather have detailed explanations with examples.")]
    assert _updates(s, [short, "The user wants replies in German."]) == []
    assert _updates("I'd rather have detailed explanations with examples.", [short]) == []  # no sign of change


def test_a_statement_in_surprise_is_no_question() -> None:
    assert _updates("weirdly I love cilantro now??", ["The user hates cilantro."])[0][0] == "f0"
    assert _updates("do I love cilantro now?", ["The user hates cilantro."]) == []
    assert _updates("I should love cilantro now?", ["The user hates cilantro."]) == []
