"""What a named speaker's fact says after what happened (``processors.extract.tails``, issue 21's judged quality):
the closing comment on how it was is cut after the score, so the same turns keep a fact, shorter.

Each wording is our own (none is a LoCoMo turn).
"""

from __future__ import annotations

import pytest

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.tails import without_comment


@pytest.mark.parametrize(("fact", "want"), [
    ("Ana ran a half marathon in Porto on 4 May 2024 and it was so rewarding.",
     "Ana ran a half marathon in Porto on 4 May 2024."),
    ("Ana started rowing around 2019 and it's been a great escape.", "Ana started rowing around 2019."),
    ("Ana joined a choir in the week before 6 May 2024 - it's been an emotional ride.",
     "Ana joined a choir in the week before 6 May 2024."),
    ("Ana loves baking bread, it's a great way to unwind after work.", "Ana loves baking bread."),
    ("Ana is learning the cello, which has been quite the journey.", "Ana is learning the cello."),
    ("Ana's neighbour moved away and it's made a big difference to Ana's mornings.", "Ana's neighbour moved away."),
    ("Ana finished reading \"Middlemarch\" - it was really moving!", "Ana finished reading \"Middlemarch\"!"),
    ("Ana is a big fan of weaving - the patience and detail are awesome.", "Ana is a big fan of weaving."),
    ("Ana is learning Welsh - slow but rewarding.", "Ana is learning Welsh."),
    ("Ana passed the driving test, and it feels like the practice paid off.", "Ana passed the driving test."),
    ("Ana signed up for a climbing course and Ana is really enjoying it.", "Ana signed up for a climbing course."),
    ("Ana got a place on the rowing team, and Ana feels drawn to coaching.", "Ana got a place on the rowing team."),
    ("Ana video-called a pen pal from Osaka and had a great time.", "Ana video-called a pen pal from Osaka."),
])
def test_a_closing_comment_is_cut(fact, want):
    assert without_comment(fact, "Ana") == want


@pytest.mark.parametrize("fact", [
    "Ana is moving to Ghent, it's great for its canals and Flemish food.",   # the comment names something
    "Ana took a pottery class - it was the first class Ana ever took.",     # an ordinal: a specific
    "Ana works at a bakery - it's Ana's second job.",
    "Ana lost Ana's keys again, it's become a weekly ritual.",              # not a form of "be": a new clause
    "Ana applied for a job which was posted by the library.",              # a restrictive "which"
    "It was great.",                                                        # nothing left before it
    "Ana met Bo and it was at the 2019 reunion.",                           # a number
    "Ana moved to a flat - the rent is lower in Leith.",                    # names a place
    "Ana met Bo at the gym and Bo feels great.",                            # someone else's feeling
])
def test_a_comment_that_says_something_stays(fact):
    assert without_comment(fact, "Ana") == fact


def _said(text: str, speaker: str = "Ana", when: str = "2024-05-06T10:00:00Z") -> Entry:
    return Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker=speaker, role="user",
                 time=when, text=text, meta={"speaker": speaker})


def test_the_extractor_keeps_the_event_without_its_comment():
    texts = [o.text for o in extract([_said("I went to a bookbinding workshop in Leeds on Friday and it was really "
                                            "enlightening!")], []) if o.op == "add"]
    assert texts == ["Ana went to a bookbinding workshop in Leeds on Friday 3 May 2024."], texts


def test_a_user_talking_to_an_agent_keeps_their_words():
    texts = [o.text for o in extract([Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker="user",
                                            role="user", time="2024-05-06T10:00:00Z",
                                            text="I always use pytest for tests, it's been great.")], [])
             if o.op == "add"]
    assert all("great" in t for t in texts), texts


@pytest.mark.parametrize(("fact", "want"), [
    ("Of course, Ana rode the big wheel at the fair on 4 May 2024.", "Ana rode the big wheel at the fair on 4 May 2024."),
    ("Anyway, Ana signed up for evening classes in Dutch.", "Ana signed up for evening classes in Dutch."),
    ("Ana joined a hiking club, like Ana said, to meet people.", "Ana joined a hiking club to meet people."),
    ("Ana is trying new things too - Ana is learning the harp.", "Ana is learning the harp."),
    ("In the meantime, Ana gave her old bike to a repair cafe.", "Ana gave her old bike to a repair cafe."),
    ("Just on 4 May 2024 Ana joined a book club.", "On 4 May 2024 Ana joined a book club."),
    ("Especially after Ana moved to Leeds, Ana has been cycling more.", "After Ana moved to Leeds, Ana has been cycling more."),
])
def test_an_aside_about_the_chat_is_cut(fact, want):
    from processors.extract.tails import without_aside

    assert without_aside(fact, "Ana") == want


@pytest.mark.parametrize("fact", [
    "Ana is good at chess too - Bo taught Ana in 2019.",   # the news after the dash is someone else's
    "Well, done.",                                          # too little left
    "Ana said like Bo said that she would come.",           # no aside: "like Bo said" has no comma or end after it
])
def test_no_aside_is_cut_from_what_stands_alone(fact):
    from processors.extract.tails import without_aside

    assert without_aside(fact, "Ana") == fact


def test_the_extractor_cuts_an_opening_discourse_marker():
    texts = [o.text for o in extract([_said("Of course, I also rode the big wheel at the Goose Fair in Nottingham.")],
                                     []) if o.op == "add"]
    assert texts and all(t.startswith("Ana rode the big wheel") for t in texts), texts
