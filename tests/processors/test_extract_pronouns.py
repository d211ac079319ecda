"""A named speaker's "him"/"her" (or a sentence-opening "he"/"she") made the one it stands for, from the same message
or the other speaker's message just before (``processors.extract.referents.resolve_pronoun``, issue 21: lost
referents made right rather than dropped).

Each wording is our own (none is a LoCoMo turn).
"""

from __future__ import annotations

import pytest

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.referents import resolve_pronoun

SPEAKERS = ("Ana", "Bea")


@pytest.mark.parametrize(("sentence", "earlier", "previous", "want"), [
    ("I adopted her two years ago.", [], "When did you adopt your kitten?", "I adopted my kitten two years ago."),
    ("I take him to the beach every weekend.", ["I got a puppy named Biscuit last month."], "",
     "I take Biscuit to the beach every weekend."),
    ("She moved to Porto in March.", [], "How is Marta doing these days?", "Marta moved to Porto in March."),
    ("He beat Nadal in straight sets.", [], "I love watching Federer on grass.", "Federer beat Nadal in straight sets."),
    ("I visit her every Sunday.", ["My grandma lives in Sweden."], "", "I visit my grandma every Sunday."),  # no place
])
def test_a_pronoun_is_made_the_one_it_stands_for(sentence, earlier, previous, want):
    assert resolve_pronoun(sentence, earlier, previous, SPEAKERS) == want


@pytest.mark.parametrize(("sentence", "earlier", "previous"), [
    ("I adopted her two years ago.", [], "Did Marta and Jo like your kittens?"),        # two names, no one "your" one
    ("I visit her every Sunday.", ["My grandma met Lena at church."], ""),               # a relation and a name
    ("She loves her new school.", [], "How is Marta?"),                                 # two pronouns
    ("My sister called her yesterday.", [], "How is Marta?"),                           # a noun before it
    ("I met him at the Finals.", [], "Did you see the NBA Finals?"),                     # no person named
    ("I adopted her in May.", [], "How is Bea doing?"),                                 # a speaker's name
    ("I love her paintings.", [], "Have you seen Marta's show?"),                       # a possessive "her"
])
def test_no_pronoun_is_guessed(sentence, earlier, previous):
    assert resolve_pronoun(sentence, earlier, previous, SPEAKERS) == sentence


def _entry(i: int, speaker: str, text: str) -> Entry:
    return Entry(ref=f"s#m{i}", seq=i, session_key="s", message_id=f"m{i}", speaker=speaker, role="user",
                 time="2024-05-06T10:00:00Z", text=text, meta={"speaker": speaker})


def test_the_extractor_keeps_a_reply_whose_pronoun_the_question_names():
    texts = [o.text for o in extract([_entry(1, "Bea", "When did you adopt your kitten?"),
                                      _entry(2, "Ana", "I adopted her two years ago from a shelter in Leeds.")], [])
             if o.op == "add"]
    assert texts == ["Ana adopted Ana's kitten around 2022 from a shelter in Leeds."], texts


@pytest.mark.parametrize("sentence", ["My gran loved to sit there every evening", "I lived there for a year"])
def test_a_bare_there_after_sitting_or_living_is_a_lost_place(sentence):
    from processors.extract.referents import lost_referent

    assert lost_referent(sentence)
