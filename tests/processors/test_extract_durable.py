"""A named speaker's own standing preference or habit is kept from a lower score than an episode (issue 21,
judged quality, round 12: ``offline.DURABLE_MIN_SCORE``, ``offline._durable_own``), "we ... our kids" is the
household, "gotta" agrees. Every wording is made up here (none is a LoCoMo turn).
"""

from __future__ import annotations

import pytest

from processors.extract import offline
from processors.extract import referents as r
from processors.extract.model import Entry
from processors.extract.quality import weak_reason
from processors.extract.voice import third_person


def _said(text: str, speaker: str = "Ana", when: str = "2024-05-06T10:00:00Z") -> Entry:
    return Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker=speaker, role="user",
                 time=when, text=text, meta={"speaker": speaker})


def _facts(text: str) -> list[str]:
    return [o.text for o in offline.extract([_said(text)], []) if o.op == "add"]


@pytest.mark.parametrize(("said", "fact"), [
    ("Thanks! I love trying out new bakeries.", "Ana loves trying out new bakeries."),
    ("I like to collect old maps.", "Ana likes to collect old maps."),
    ("Nice! I love discovering new cities.", "Ana loves discovering new cities."),
])
def test_a_standing_preference_of_ones_own_is_kept(said, fact, monkeypatch):
    assert _facts(said) == [fact]
    monkeypatch.setattr(offline, "DURABLE_MIN_SCORE", 99.0)  # without the rule the same sentence scores too low
    assert _facts(said) == []


@pytest.mark.parametrize("said", [
    "I love the connection to nature.",       # a definite thing met earlier in the chat
    "I love it so much.",                     # a pronoun
    "I'm so excited, I love this.",           # a mood, a demonstrative
    "Haven't found any exercises I like.",    # not opening on the speaker's own preference
])
def test_a_preference_that_points_at_the_chat_is_not(said):
    assert _facts(said) == []


def test_a_memory_is_no_standing_trait():
    assert not offline._durable_own("I still remember when my son was born.")
    assert offline._durable_own("I still love old maps.")


def test_a_standing_trait_is_a_second_fact_beside_the_news():
    facts = _facts("I went to the market last week and bought some pears. I like to collect old maps.")
    assert facts == ["Ana went to the market in the week before 6 May 2024 and bought some pears.",
                     "Ana likes to collect old maps."]


def test_we_who_have_our_kids_are_the_household_not_the_kids():
    s = "We're thinking of adopting a dog to teach our kids some responsibility."
    assert r.resolve_we(s, ["My kids adore animals."]) == (
        "My family and I are thinking of adopting a dog to teach our kids some responsibility.")
    assert r.resolve_we("We went to the zoo.", ["My kids adore animals."]) == "My kids and I went to the zoo."


@pytest.mark.parametrize(("said", "out"), [
    ("I gotta be patient.", "Ana has to be patient."),
    ("I wanna learn the violin.", "Ana wants to learn the violin."),
])
def test_gotta_and_wanna_agree(said, out):
    assert third_person(said, "Ana") == out


@pytest.mark.parametrize(("sentence", "kind"), [
    ("I wanted to make new friends and laugh together.", "mood"),       # a wish of that moment
    ("Blue calms me, so I wanted the mural to feel serene.", "mood"),
    ("Two days ago I wanted to be alone by the lake.", "mood"),
    ("I was so embarrassed when I saw what happened the next morning.", "referent"),  # what happened: said before
    ("I've been practicing for a month now, it's been tough but fun.", "referent"),  # practicing what
])
def test_a_wish_a_lost_event_or_a_bare_verb_is_weak(sentence, kind):
    assert weak_reason(sentence, []) == kind


@pytest.mark.parametrize("sentence", [
    "I've always wanted to be a teacher.",                 # a long-held goal
    "I wanted to become a nurse since I was ten.",
    "I've been practicing for a month now, mostly scales.",  # the second clause names it
    "I saw what happened at the market on Friday.",
])
def test_a_goal_or_a_named_thing_is_not(sentence):
    assert weak_reason(sentence, []) is None
