"""A user's short statement of a preference or a trait of their own is a fact: "I prefer dark mode.", "I'm vegetarian.".

The word count and the score that keep talk between named people from filling memory with moods and one-offs dropped
these when the one user an agent works for said them in a chat (a note kept them; the same words in a message did
not). What a preference answers in the conversation ("I like the idea", "I love it", "I prefer the second option")
is no fact about the user, and stays out.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from processors.extract import offline
from processors.extract.model import Entry


def _facts(text: str) -> list[str]:
    entry = Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker="user", role="user",
                  time="2025-03-01T10:00:00Z", text=text)
    return [op.text for op in offline.extract([entry], []) if op.op == "add"]


def test_a_short_preference_or_trait_of_the_user_is_kept():
    assert _facts("I prefer dark mode.") == ["The user prefers dark mode."]
    assert _facts("I'm vegetarian.") == ["The user is vegetarian."]
    assert _facts("I like tea.") == ["The user likes tea."]
    assert _facts("I'm allergic to peanuts.") == ["The user is allergic to peanuts."]
    assert _facts("i hate mornings") == ["The user hates mornings."]
    # an ordinal inside the preference is no answer to the conversation
    assert _facts("I prefer working out first thing in the morning.") == ["The user prefers working out first thing in the morning."]
    assert _facts("I prefer to review PRs first before writing new code.") == ["The user prefers to review PRs first before writing new code."]


_VERBS = st.sampled_from(["I like", "I love", "I prefer", "I really like", "I hate", "We prefer"])
_ANSWERS = st.sampled_from(["it", "that", "this", "them", "the idea", "your plan", "the first one", "the new version",
                            "both options", "the suggested fix", "that approach", "the latter", "the first",
                            "the second option"])


@given(_VERBS, _ANSWERS, st.sampled_from([".", "!", "", " a lot."]))
def test_a_preference_that_answers_the_conversation_is_no_fact(verb, answer, end):
    assert _facts(f"{verb} {answer}{end}") == []


def test_named_speakers_keep_the_stricter_rule():
    """Between named people (LoCoMo's conversations) a three-word "I like tea." stays out, as before."""
    entry = Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker="user", role="user",
                  time="2025-03-01T10:00:00Z", text="I like tea.", meta={"speaker": "Caroline"})
    assert [op for op in offline.extract([entry], []) if op.op == "add"] == []
