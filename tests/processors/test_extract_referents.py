"""Referents a conversation's sentence leans on (``processors.extract.referents``) and the junk they make when lost
(issue 21, judged quality). Every wording is made up here (none is a LoCoMo turn).
"""

from __future__ import annotations

import pytest

from processors.extract import referents as r
from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.quality import weak_reason
from processors.extract.timeref import as_of, resolve


def _said(text: str, speaker: str = "Ana", when: str = "2024-05-06T10:00:00Z") -> Entry:
    return Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", speaker=speaker, role="user",
                 time=when, text=text, meta={"speaker": speaker})


def _facts(text: str, **kw: str) -> list[str]:
    return [o.text for o in extract([_said(text, **kw)], []) if o.op == "add"]


@pytest.mark.parametrize(("sentence", "earlier", "out"), [
    ("We drove up to Oslo.", ["My brother and I had a week off."], "My brother and I drove up to Oslo."),
    ("We're moving to Lyon.", ["Hi!", "My husband got a new job."], "My husband and I are moving to Lyon."),
    ("We built a treehouse with my two sons.", [], "My two sons and I built a treehouse."),
    ("We painted the fence.", ["Pablo and I were bored."], "Pablo and I painted the fence."),
])
def test_we_is_the_companion_the_message_names(sentence, earlier, out):
    assert r.resolve_we(sentence, earlier) == out


def test_we_with_nobody_named_stays_and_is_weak():
    s = "We finally tried the new ramen place downtown."
    assert r.resolve_we(s, ["Long week!"]) == s
    assert r.unresolved_we(s)
    assert weak_reason(s, []) == "we"


def test_a_resolved_we_becomes_a_fact_about_both():
    facts = _facts("My sister and I finally had a free weekend. We signed up for a pottery course in Porto.")
    assert any(f.startswith("Ana's sister and Ana signed up for a pottery course in Porto") for f in facts), facts
    assert not any("says they" in f for f in facts), facts


@pytest.mark.parametrize(("sentence", "out"), [
    ("I went to this tiny bakery near the station.", "I went to a tiny bakery near the station."),
    ("I'm reading this novel called Piranesi.", "I'm reading a novel called Piranesi."),
    ("I met this amazing old carpenter.", "I met an amazing old carpenter."),
])
def test_a_storytellers_this_is_a(sentence, out):
    assert r.indefinite_this(sentence) == out


@pytest.mark.parametrize("sentence", [
    "I had this framed by a friend.",      # "this" is the thing shown
    "I painted this after the storm.",
    "I love this so much.",
])
def test_a_pointing_this_is_kept_for_the_filter(sentence):
    assert r.indefinite_this(sentence) == sentence


@pytest.mark.parametrize("sentence", [
    "I spent all winter fixing it, but it runs now.",
    "I still think about that concert with my cousins.",
    "I dream of climbing those peaks one day.",
    "I noticed she was limping, so I called the vet.",
    "I kept them in the garage all summer.",
])
def test_a_lost_referent_is_found(sentence):
    assert r.lost_referent(sentence)
    assert weak_reason(sentence, []) == "referent"


@pytest.mark.parametrize("sentence", [
    "I bought an old van and sold it in March.",            # "it" is the van
    "I met Priya at the gym and she invited me to a climb.",  # "she" is Priya
    "I know that my team can win the league.",              # "that" opens a clause
    "My dogs love the beach and they swim for hours.",
])
def test_a_referent_named_in_the_sentence_is_not_lost(sentence):
    assert not r.lost_referent(sentence)


@pytest.mark.parametrize(("prepared", "raw", "out"), [
    ("for asking, they're fine- I got a second hamster.", "And thanks for asking, they're fine- I got a second hamster.",
     "I got a second hamster."),
    ("happened - I passed my driving test.", "Guess what happened - I passed my driving test.",
     "I passed my driving test."),
    ("for asking, all is well.", "Thanks for asking, all is well.", None),
    ("yesterday I passed my driving test.", "Oh, yesterday I passed my driving test.",
     "yesterday I passed my driving test."),   # an intro cut at a comma leaves a sentence
    ("my favourite dish is paella.", "Cool, but my favourite dish is paella.", "my favourite dish is paella."),
])
def test_a_fragment_left_by_an_intro(prepared, raw, out):
    assert r.lead_fragment(prepared, raw) == out


def test_an_introduction_says_whom_the_speaker_has():
    assert r.introduction("So much happened - meet Pip, my kitten!") == "I now have a kitten named Pip."
    facts = _facts("So much happened since we talked - meet Pip, my kitten!")
    assert facts == ["Ana now has a kitten named Pip (as of 6 May 2024)."], facts


@pytest.mark.parametrize("sentence", [
    "I shared a photo of my garden",     # what offline._photo makes of "Here's a pic of my garden"
    "This is Rufus, he's a rescue",
    "I took a snap of the sunset on my way home",
    "I forgot to mention the party",
    "I'm in for the trip",
])
def test_chat_meta_talk_is_weak(sentence):
    assert weak_reason(sentence, []) == "meta"


@pytest.mark.parametrize("sentence", [
    "I went bowling with my coworkers after work",
    "I had a wonderful time at the fair",
    "I hung out with my neighbours on Sunday",
])
def test_a_pastime_once_is_an_outing(sentence):
    assert weak_reason(sentence, []) == "outing"


def test_how_it_felt_is_cut_from_what_happened():
    assert r.tidy("I ran my first half marathon in Leeds - it was so amazing.", "x") == \
        "I ran my first half marathon in Leeds."


@pytest.mark.parametrize(("said", "kept"), [
    ("I started making music to follow my dreams, and I'm stoked about how far I've come.",
     "I started making music to follow my dreams."),
    ("I got a no for a summer job I wanted but I'm staying positive.", "I got a no for a summer job I wanted."),
    ("I watched a classic film the other day that was awesome - the story was so gripping.",
     "I watched a classic film the other day."),
    ("I went to a gaming convention and took part in a tournament - unreal!",
     "I went to a gaming convention and took part in a tournament"),  # _finish adds the full stop
    ("I just wanted to try a new genre, so why not try racing games.", "I just wanted to try a new genre"),
    ("I'm a shooting guard and our season opener is next week - so excited!",
     "I'm a shooting guard and our season opener is next week"),
    ("I've been running longer since our last chat, it clears my head.", "I've been running longer, it clears my head."),
])
def test_the_mood_and_the_chat_tail_are_cut_from_what_happened(said, kept):
    assert r.tidy(said, said) == kept


@pytest.mark.parametrize(("fact", "out"), [
    ("Gina also lost Gina's job at Door Dash in January 2023.", "Gina lost Gina's job at Door Dash in January 2023."),
    ("Also, John bought a mouse from Logitech.", "John bought a mouse from Logitech."),
    ("Nate loves coconut milk, but Nate also enjoys chocolate.", "Nate loves coconut milk, but Nate also enjoys chocolate."),
    ("Tim loves fantasy and also books on psychology.", "Tim loves fantasy and also books on psychology."),
    ("Dana is also known as DJ Rain.", "Dana is also known as DJ Rain."),
])
def test_an_also_that_points_at_the_other_turn_is_dropped(fact, out):
    assert r.without_additive(fact) == out


def test_a_conversation_fact_carries_no_also():
    assert _facts("That's cool! I also adopted a rescue dog called Biscuit in Leeds last week.") == \
        ["Ana adopted a rescue dog called Biscuit in Leeds in the week before 6 May 2024."]


@pytest.mark.parametrize(("text", "out"), [
    ("Just the other day, I adopted a parrot.", "A few days before 6 May 2024, I adopted a parrot."),
    ("I'm opening a shop in the next few months.", "I'm opening a shop in the months after 6 May 2024."),
    ("I moved a few years ago.", "I moved a few years before 6 May 2024."),
    ("On Friday, I got the keys.", "On Friday 3 May 2024, I got the keys."),        # 6 May 2024 is a Monday
    ("I'm flying out on Friday.", "I'm flying out on Friday 10 May 2024."),
])
def test_vague_times_are_resolved(text, out):
    assert resolve(text, "2024-05-06T10:00:00Z") == (out, True)


def test_a_habit_on_a_weekday_is_not_dated():
    assert resolve("I swim every Friday.", "2024-05-06T10:00:00Z") == ("I swim every Friday.", False)


@pytest.mark.parametrize("text", ["Ana is traveling through Patagonia.", "Ana is getting married soon."])
def test_the_present_progressive_and_soon_are_dated(text):
    assert as_of(text, "2024-05-06T10:00:00Z").endswith("(as of 6 May 2024).")


@pytest.mark.parametrize("sentence", ["Almost as funny as when I tripped on stage", "I'm so sorry to hear about your knee"])
def test_a_reply_to_the_other_speaker_is_an_echo(sentence):
    assert weak_reason(sentence, []) == "echo"


def test_an_our_with_no_one_named_gives_no_fact():
    # voice.third_person would write "Ana says their garden won a prize ..."
    assert _facts("Our garden won a prize at the county show in 2023.") == []
    assert _facts("My garden won a prize at the county show in 2023.") != []


def test_a_short_agreement_gives_no_fact_but_a_named_one_does():
    assert _facts("I'm a big fan of gardening too!") == []
    assert _facts("I adopted a greyhound named Comet too!") != []


def test_a_feeling_about_the_other_speakers_news_is_a_mood():
    assert weak_reason("I'm so glad Biscuit is feeling better", ["Biscuit"]) == "mood"


def test_a_bare_to_is_a_lost_referent():
    assert r.lost_referent("I've been meaning to for ages, but work is busy")


def test_the_present_perfect_progressive_is_dated():
    assert as_of("Ana has been playing chess online.", "2024-05-06T10:00:00Z") == \
        "Ana has been playing chess online (as of 6 May 2024)."


def test_a_date_said_twice_is_said_once():
    text, dated = resolve("Yesterday I wrote bits for a film that opened yesterday yesterday.", "2022-06-05T10:00:00Z")
    assert dated and text.count("4 June 2022") == 1, text


def test_a_sentence_without_its_subject_gets_the_speaker():
    assert _facts("Been discussing a collaboration with the Hogwarts Fan Club for my new project.") == \
        ["Ana has been discussing a collaboration with the Hogwarts Fan Club for Ana's new project (as of 6 May 2024)."]
    assert _facts("On a different note, I found a great hiking trail in Porto yesterday.") == \
        ["Ana found a great hiking trail in Porto on 5 May 2024."]


@pytest.mark.parametrize(("sentence", "why"), [
    ("I'm loving this job", "referent"),  # which job: said a moment ago
    ("Since we had a kiddo around", "fragment"),  # what is left when "It's been a while" is cut
    ("I've been one 'cause I lost my job", "referent"),
    ("I don't have a screenshot of the whole map", "meta"),
    ("I loved doing something similar with my siblings when I was young", "referent"),  # similar to what?
    ("I'm heading there next month", "referent"),  # where
    ("I started teaching people how to make this", "referent"),
    ("I lost some of it because I forgot to save", "referent"),
    ("I'm starting next month", "referent"),  # starting what
    ("The views were spectacular, and my wife and I had lots of fun", "referent"),  # which views
    ("I've been working on it for two years now", "referent"),
    ("I played one with friends yesterday", "referent"),
])
def test_more_weak_sentences(sentence, why):
    assert weak_reason(sentence, []) == why


@pytest.mark.parametrize("sentence", [
    "Since 2019 I have worked at Acme", "Because I love dogs I adopted Max", "Since I'm lactose intolerant I drink oat milk",
    "I've been one of the organisers of the Porto marathon",
    "I went to Porto and stayed there a week", "The last time I played I won", "I worked on the Porto bridge for years", "I'm moving to Berlin next month", "I've been running marathons for years",
])
def test_a_dependent_clause_with_its_main_clause_is_no_fragment(sentence):
    assert weak_reason(sentence, ["Porto"] if "Porto" in sentence else []) not in ("fragment", "referent")


def test_knowing_how_the_other_feels_is_a_reaction():
    assert _facts("Yeah, I get how it's like something is missing without being in the nature.") == []
    assert _facts("I got the keys to my new flat in Porto last Friday.") != []


def test_like_i_said_is_an_intro():
    assert _facts("Yeah! Like I said I do enjoy watching birds in the Lisbon marshes.") == \
        ["Ana does enjoy watching birds in the Lisbon marshes."]


def test_a_feeling_about_this_thing_is_no_story_this():
    assert r.indefinite_this("I'm loving this job") == "I'm loving this job"  # the job was shown or said before
    assert _facts("Thanks! I'm loving this job.") == []
    assert r.indefinite_this("I met this awesome woman in Canada") == "I met an awesome woman in Canada"
