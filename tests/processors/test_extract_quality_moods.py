"""More classes of weak sentences of a conversation between people (``processors.extract.quality``, issue 21's
blind labels: moods kept as facts, lost referents, a state preferred to the news of its message).

Each wording is our own (none is a LoCoMo turn); the durable ones beside them must stay.
"""

from __future__ import annotations

import pytest

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.quality import weak_reason
from processors.extract.timeref import resolve
from tests.processors.test_extract_quality import proper_names

WEAK = [
    ("My brothers are my rocks and they keep me going", "mood"),          # support
    ("My wife is always there for me", "mood"),
    ("Their help means a lot to me", "mood"),
    ("My passion for baking is what's driving me", "mood"),
    ("I'm still thinking about my grandpa", "mood"),                      # rumination
    ("Lately I've been thinking about where I want to be in five years", "mood"),
    ("I've been spending time remembering my dad", "mood"),
    ("I'm trying to stay positive and take it one day at a time", "mood"),  # coping
    ("I'm hoping for the best", "mood"),
    ("I'm sorry about your cat", "echo"),
    ("I'm inspired seeing my students grow at Lincoln High", "mood"),      # a feeling with its cause
    ("My team is the best", "mood"),                                       # praise of one's own
    ("I'm a total fan!", "referent"),                                      # a fan of what?
    ("I even got a signed copy", "referent"),                              # "even": adds to what was told
    ("I got the idea from my neighbour", "referent"),
    ("I taught myself, but my uncle helped", "referent"),
    ("I'm super excited for the Star Wars stuff", "referent"),
    ("I'm reading a book that keeps me up at night", "vague"),             # an unnamed work
    ("Last week something happened at my office", "vague"),
    ("Hooked a new podcast that I listen to on runs", "fragment"),
    ("Since my husband and I had a baby around", "fragment"),
    ("I adopted her in 2019 when I moved out", "referent"),                # "her": who?
    ("I've learned a lot and it's been a wild ride", "referent"),          # learned what?
]
DURABLE = [
    "I'm thinking of moving to Porto next year",          # a plan, not rumination
    "I'm thinking about getting a second dog",
    "I'm reading \"Dune\" for the second time",           # a named work
    "I'm a huge fan of jazz piano",
    "Something amazing happened - I got into the nursing program",
    "I had the chance to meet Ada Lovelace's biographer",
]


@pytest.mark.parametrize(("sentence", "kind"), WEAK)
def test_a_weak_sentence_is_classed(sentence, kind):
    assert weak_reason(sentence, proper_names(sentence)) == kind


@pytest.mark.parametrize("sentence", DURABLE)
def test_a_durable_sentence_is_not(sentence):
    assert weak_reason(sentence, proper_names(sentence)) is None


def _said(text: str, speaker: str = "Ana", when: str = "2024-05-06T10:00:00Z") -> Entry:
    return Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker=speaker, role="user",
                 time=when, text=text, meta={"speaker": speaker})


def test_the_news_of_a_message_wins_over_a_state_beside_it():
    texts = [o.text for o in extract([_said("I'm so excited about my trip to Lisbon. I booked the flights last week "
                                            "and found a flat near the river.")], []) if o.op == "add"]
    assert texts and all("booked" in t for t in texts), texts


def test_since_you_mentioned_is_an_intro_not_a_fragment():
    texts = [o.text for o in extract([_said("Since you metioned cake, I baked a lemon tart for my book club last week.")],
                                     []) if o.op == "add"]
    assert texts == ["Ana baked a lemon tart for Ana's book club in the week before 6 May 2024."], texts


@pytest.mark.parametrize(("said", "when", "want"), [
    ("I met my teammates on the 15th.", "2023-08-17T10:00:00Z", "I met my teammates on 15 August 2023."),
    ("I bought a console on the 27th.", "2023-08-17T10:00:00Z", "I bought a console on 27 July 2023."),
    ("I will fly out on the 3rd.", "2023-08-17T10:00:00Z", "I will fly out on 3 September 2023."),
])
def test_an_ordinal_day_is_resolved_against_the_message(said, when, want):
    assert resolve(said, when) == (want, True)


@pytest.mark.parametrize(("sentence", "kind"), [
    ("I started a couple of weeks ago", "referent"),   # started what?
    ("I watched an old film that made me cry", "vague"),  # which film?
])
def test_more_weak_sentences(sentence, kind):
    assert weak_reason(sentence, proper_names(sentence)) == kind


def test_a_weak_sentence_gives_way_to_its_clause_with_the_news():
    from processors.extract.quality import strong_clause

    assert strong_clause("I'm so excited, I opened my bike repair shop last week!", proper_names) == \
        "I opened my bike repair shop last week!"
    assert strong_clause("I'm tied up with work stuff lately, yesterday I came back from Oslo with a new contract",
                         proper_names) == "Yesterday I came back from Oslo with a new contract"
    assert strong_clause("I opened my bike repair shop last week", proper_names) is None   # not weak: kept whole
    assert strong_clause("I'm so excited, I feel like a kid again today", proper_names) is None  # a feeling is no news


def test_the_extractor_keeps_the_news_beside_a_mood():
    texts = [o.text for o in extract([_said("I'm so excited, I opened my bike repair shop last week!")], [])
             if o.op == "add"]
    assert texts == ["Ana opened Ana's bike repair shop in the week before 6 May 2024."], texts


def test_a_reply_s_we_is_the_speaker_and_the_companion_just_asked_about():
    asked = Entry(ref="s#m0", seq=1, session_key="s", message_id="m0", speaker="Bea", role="user",
                  time="2024-05-06T09:00:00Z", text="How did you and your husband meet?", meta={"speaker": "Bea"})
    reply = Entry(ref="s#m1", seq=2, session_key="s", message_id="m1", speaker="Ana", role="user",
                  time="2024-05-06T10:00:00Z", text="We met in a chemistry class at university in Porto.",
                  meta={"speaker": "Ana"})
    texts = [o.text for o in extract([asked, reply], []) if o.op == "add"]
    assert any(t.startswith("Ana's husband and Ana met in a chemistry class") for t in texts), texts


@pytest.mark.parametrize(("sentence", "kind"), [
    ("I feel a strong pull to give back to my town", "mood"),     # a feeling as the main verb
    ("I really felt at home with my hosts", "mood"),
    ("I feel like moving to the coast next year", None),          # a wish, not a mood
    ("I felt a sharp pain in Oslo and saw a doctor", None),       # names something
])
def test_a_feeling_as_the_main_verb_is_a_mood(sentence, kind):
    assert weak_reason(sentence, proper_names(sentence)) == kind
