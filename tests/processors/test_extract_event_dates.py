"""A past event read later from MEMORY.md (which prints no dates) says when it happened, and a correction replaces
only the fact it is about (issue 21, "dates that stay true"; judged quality)."""

from __future__ import annotations

import pytest

from processors.extract import frames
from processors.extract import slots as sl
from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.timeref import as_of, by_day, resolve

WHEN = "2023-05-01T10:00:00Z"


def _said(text: str, speaker: str = "Dave", when: str = WHEN) -> Entry:
    return Entry(ref="s1#D1:1", seq=1, session_key="s1", message_id="D1:1", project="p", speaker=speaker, role="user",
                 time=when, text=text, meta={"speaker": speaker})


def test_an_undated_past_event_gets_the_messages_day():
    assert by_day("Dave finally opened Dave's own car maintenance shop.", WHEN) == \
        "Dave finally opened Dave's own car maintenance shop (by 1 May 2023)."


@pytest.mark.parametrize("text", [
    "On 30 April 2023 Dave opened a shop.",                       # dated already
    "Dave used to go horseback riding with Dave's dad.",          # a period of life, not a day
    "Melanie loved reading books as a kid.",
    "Dave's dad took Dave to a car show when Dave was 10.",
])
def test_a_dated_or_life_period_past_is_kept(text):
    assert by_day(text, WHEN) == text


def test_the_extractor_dates_a_named_speakers_undated_past_event():
    texts = [o.text for o in extract([_said("I finally opened my own car maintenance shop!")], []) if o.op == "add"]
    assert texts == ["Dave finally opened Dave's own car maintenance shop (by 1 May 2023)."], texts


@pytest.mark.parametrize("text", ["Tim is gonna stay in Galway for the semester.", "James plans to visit Vancouver."])
def test_an_undated_plan_is_dated_as_of_its_day(text):
    assert as_of(text, WHEN).endswith("(as of 1 May 2023).")


@pytest.mark.parametrize(("said", "want"), [
    ("I did some coding a few years back.", "I did some coding a few years before 1 May 2023."),
    ("I moved two years back.", "I moved around 2021."),
    ("I saw it the other week.", "I saw it a few weeks before 1 May 2023."),
])
def test_back_and_the_other_week_are_resolved(said, want):
    assert resolve(said, WHEN) == (want, True)


def test_the_date_a_fact_is_dated_by_is_no_value_a_correction_replaces():
    old = "James has been playing Apex Legends with James's team (as of 4 April 2022)."
    new = "James has been playing Fortnite with James's team."
    assert frames.replaced_values(old, new) == ["Apex", "Legends"]
    assert not frames.same_change("On 5 April 2022 James took James's puppy to the clinic.", old, new)


def test_his_name_is_no_name_of_the_speaker():
    assert not [s for s in sl.slots("His name's Ned and he's been awesome since I adopted him.") if s.kind == "name"]
    assert [s.value for s in sl.slots("My name's Ned.") if s.kind == "name"] == ["Ned"]



def test_few_days_ago_without_its_article_is_resolved():
    from processors.extract.timeref import resolve

    assert resolve("I started a pottery course few days ago", "2024-05-06T10:00:00Z") == \
        ("I started a pottery course a few days before 6 May 2024", True)


def test_has_just_been_doing_is_true_as_of_its_day():
    from processors.extract.timeref import as_of

    assert as_of("Ana has just been helping her cousin move flats.", "2024-05-06T10:00:00Z") == \
        "Ana has just been helping her cousin move flats (as of 6 May 2024)."


@pytest.mark.parametrize(("said", "want"), [
    ("My brother and I have decided to open a bike repair shop in Bristol.",
     "Dave's brother and Dave have decided to open a bike repair shop in Bristol (by 1 May 2023)."),
    ("My cousin and I were hiking along the Pembrokeshire coast path with our dog.",
     "Dave's cousin and Dave were hiking along the Pembrokeshire coast path with their dog (by 1 May 2023)."),
])
def test_a_present_perfect_or_a_past_state_is_dated_too(said, want):
    texts = [o.text for o in extract([_said(said)], []) if o.op == "add"]
    assert texts == [want], texts


def test_a_period_of_life_with_was_stays_undated():
    texts = [o.text for o in extract([_said("When I was a kid I was obsessed with Formula 1 racing cars.")], [])
             if o.op == "add"]
    assert all("(by" not in t for t in texts), texts


def test_a_year_in_a_quoted_title_dates_nothing():
    assert as_of('Ana has been playing "Cyberpunk 2077" nonstop.', WHEN) == \
        'Ana has been playing "Cyberpunk 2077" nonstop (as of 1 May 2023).'
    assert by_day('Ana watched "Blade Runner 2049" with Bo.', WHEN) == 'Ana watched "Blade Runner 2049" with Bo (by 1 May 2023).'
    assert as_of("Ana has been playing chess since 2019.", WHEN) == "Ana has been playing chess since 2019."
