"""A fact that says "now" without a date ("just", "lately", "for now") is dated by its message's day,
so read later it never states the past as current (issue 21, "dates that stay true")."""

from __future__ import annotations

import pytest

from processors.extract.timeref import as_of

WHEN = "2023-06-03T10:00:00Z"


@pytest.mark.parametrize("text", [
    "Dave just got back from a road trip.",
    "Maria just started volunteering at a local dog shelter once a month.",
    "Lately, John has been playing strategy games.",
    "Recently, Deborah has been spending time remembering her mom.",
    "John is playing mostly online for now.",
    "These days the user prefers light mode",
])
def test_undated_now_gets_the_messages_day(text):
    out = as_of(text, WHEN)
    assert out.endswith("(as of 3 June 2023).")
    assert out.startswith(text.rstrip(".")[:20])


@pytest.mark.parametrize("text", [
    "I just try to find things we will all enjoy.",       # "just" = simply
    "Evan took a road trip in July 2023.",                 # already dated
    "In the week before 6 May 2023, John just decided to run again.",
    "The user prefers pytest over unittest.",
])
def test_a_dated_or_timeless_text_is_kept(text):
    assert as_of(text, WHEN) == text


def test_no_message_time_keeps_the_text():
    assert as_of("Dave just got back.", "") == "Dave just got back."
