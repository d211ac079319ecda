"""The classes of weak sentences of a conversation between people (``processors.extract.quality``, issue 21).

Each class is checked on wordings of its own (none is a LoCoMo turn) and, through the offline extractor, a named
speaker's weak sentence gives no fact while a durable one beside it still does.
"""

from __future__ import annotations

import pytest

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.quality import weak_reason
from processors.extract.timeref import as_of

WEAK = [
    ("I'm so pumped I finally finished it", "mood"),
    ("My parents are really proud about the results", "mood"),
    ("I'm pretty sure the audience will love the show", "mood"),
    ("I'm really enjoying the process so far", "mood"),
    ("Our cats are like that too", "echo"),
    ("Same here, we love long evenings", "echo"),
    ("I found a spot that reminds me of home", "vague"),
    ("We went to an amazing event downtown", "vague"),
    ("I drove somewhere quiet to think", "vague"),
    ("I baked this recipe twice already", "referent"),
    ("I took that photo on the way back", "referent"),
    ("I went for a long walk after work", "outing"),
    ("We took the kids to the beach on Saturday", "outing"),
    ("We hosted a little get-together at our house", "outing"),
]
DURABLE = [
    "I work as a nurse at the children's hospital",
    "I adopted a rescue dog named Biscuit",
    "My sister lives in Toronto",
    "I'm excited about my new job at Shopify",  # a mood with a name in it keeps its fact
    "I went for a walk with Priya and Tom in Hyde Park",
]


def proper_names(sentence: str) -> list[str]:
    """The capitalised words after the first, as the extractor passes a sentence's names to ``weak_reason``."""
    return [w.strip(".,'s!\"") for w in sentence.split()[1:] if w[:1].isupper() and w not in ("I", "I'm")]


@pytest.mark.parametrize(("sentence", "kind"), WEAK)
def test_a_weak_sentence_is_classed(sentence, kind):
    assert weak_reason(sentence, proper_names(sentence)) == kind


@pytest.mark.parametrize("sentence", DURABLE)
def test_a_durable_sentence_is_not(sentence):
    assert weak_reason(sentence, proper_names(sentence)) is None


def _said(text: str, speaker: str = "Ana") -> Entry:
    return Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker=speaker, role="user",
                 time="2024-05-06T10:00:00Z", text=text, meta={"speaker": speaker})


@pytest.mark.parametrize("said", ["Yesterday I went for a long walk along the river after work.",
                                  "Last weekend we took the kids to the park near our house."])
def test_the_extractor_keeps_no_fact_of_a_named_speakers_one_off_outing(said):
    assert [o.text for o in extract([_said(said)], []) if o.op == "add"] == []


def test_a_durable_sentence_beside_a_weak_one_is_still_kept():
    ops = extract([_said("I went for a long walk after work. I adopted a rescue dog named Biscuit.")], [])
    texts = [o.text for o in ops if o.op == "add"]
    assert any("Biscuit" in t for t in texts) and not any("walk" in t for t in texts), texts


@pytest.mark.parametrize("text", ["Tim is learning how to play the violin now.", "Now Ana runs a small bakery."])
def test_a_fact_saying_now_without_a_date_gets_its_messages_day(text):
    assert as_of(text, "2023-12-06T10:00:00Z").endswith("(as of 6 December 2023).")


@pytest.mark.parametrize("text", ["From now on the user wants to be called Sam.", "Now that Ana moved, she walks to work."])
def test_from_now_on_and_now_that_are_no_undated_now(text):
    assert as_of(text, "2023-12-06T10:00:00Z") == text
