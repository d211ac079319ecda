"""Time in a question: relative expressions resolved against the query time, and current-state cues.

A question says when it is about in words that are useless as search terms: "two weeks
ago", "last month", "yesterday", "in the past few days". ``time_cues`` finds such
expressions (generic English, listed below) and resolves each against ``now`` (the time
the question is asked: ``--now``, default the clock) into a **soft window**: a centre and
a width. Ranking multiplies a turn's score by a bump that is 1 at the centre and fades
with distance (``search.py``), so a window prefers, it never filters. The words of an
expression are taken out of the search terms.

Expressions understood (case-insensitive; N is digits, a number word up to twelve, "a",
"an", "a couple of", "a few", "several"):

* ``N days|weeks|months|years ago`` -> centred N units before now, width a quarter of that
  (at least a day);
* ``yesterday``, ``today``, ``tonight``, ``last night``, ``this morning``;
* ``last|past|previous week|weekend|month|year`` -> one unit back;
  ``this week|month|year`` -> the current unit;
* ``last|past N days|weeks|months`` and ``the past few days|weeks`` -> the span back to now;
* ``last Monday`` ... ``last Sunday`` -> the most recent such day before now.

A question about a duration ("how many days ago did I ...", "how many months before
...", "how long after ...") names no window; its frame words are taken out of the terms
too.

A **current-state question** ("what is my current ...", "do I still ...", "where do I
live now", "most recent", "latest", "these days", "nowadays", "anymore") asks about the
state as of now: ranking adds a recency prior, and the cue words are not search terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_DAY = timedelta(days=1)
_UNIT = {"day": _DAY, "week": 7 * _DAY, "weekend": 7 * _DAY, "month": 30.44 * _DAY, "year": 365.25 * _DAY}
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "few": 3, "several": 4}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_N = r"(\d{1,4}|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_U = r"(day|week|month|year)s?"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_N}\s+{_U}\s+ago\b", re.I), "ago"),
    (re.compile(rf"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+{_N}\s+{_U}\b", re.I), "span"),
    (re.compile(rf"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+(few|couple of)\s+{_U}\b", re.I), "span_few"),
    (re.compile(r"\b(?:last|past|previous)\s+(week|weekend|month|year)\b", re.I), "last"),
    (re.compile(r"\bthis\s+(week|weekend|month|year)\b", re.I), "this"),
    (re.compile(r"\blast\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I), "weekday"),
    (re.compile(r"\b(yesterday|today|tonight|last\s+night|this\s+morning)\b", re.I), "day"),
]
#: Questions about a duration ("how many days ago", "how many weeks before", "how long after"):
#: the unit and its frame are not search terms, and they name no window.
_DURATION = re.compile(r"\bhow\s+(?:many|much|long)\s+(?:(?:days|weeks|months|years|hours|minutes)\s+)?"
                       r"(?:ago|before|after|since|between|earlier|later|had\s+passed|passed)\b", re.I)

#: Words that make a question ask about the state as of now (not search terms).
CURRENT_WORDS = frozenset("current currently still now nowadays latest anymore presently".split())
_CURRENT = re.compile(r"\b(current|currently|still|now|nowadays|latest|anymore|presently|these\s+days|"
                      r"at\s+the\s+moment|most\s+recent(?:ly)?|right\s+now)\b", re.I)


@dataclass(frozen=True)
class TimeCue:
    """A time a question points at: a soft window around ``center``, ``width`` wide on each side."""

    center: datetime
    width: timedelta
    text: str  # the expression as the question wrote it


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBER.get(word, 1)


def _resolve(kind: str, m: re.Match[str], now: datetime) -> TimeCue:
    text = m.group(0)
    if kind == "ago":
        back = _count(m.group(1)) * _UNIT[m.group(2).lower()]
        return TimeCue(now - back, max(_DAY, back / 4), text)
    if kind in ("span", "span_few"):
        n = _count(m.group(1)) if kind == "span" else 3
        back = n * _UNIT[m.group(2).lower()]
        return TimeCue(now - back / 2, back / 2, text)
    if kind == "last":
        unit = _UNIT[m.group(1).lower()]
        return TimeCue(now - unit, unit / 2, text)
    if kind == "this":
        unit = _UNIT[m.group(1).lower()]
        return TimeCue(now - unit / 2, unit / 2, text)
    if kind == "weekday":
        days = (now.weekday() - _WEEKDAYS.index(m.group(1).lower())) % 7 or 7
        return TimeCue(now - days * _DAY, _DAY, text)
    word = " ".join(m.group(1).lower().split())
    back = _DAY if word in ("yesterday", "last night") else timedelta(0)
    return TimeCue(now - back, _DAY, text)


def time_cues(text: str, now: datetime) -> tuple[list[TimeCue], str]:
    """The relative time expressions of ``text`` resolved against ``now``, and ``text`` without them."""
    cues: list[TimeCue] = []
    for pattern, kind in _PATTERNS:
        for m in pattern.finditer(text):
            cues.append(_resolve(kind, m, now))
        text = pattern.sub(" ", text)
    return cues, _DURATION.sub(" ", text)


def is_current_state(text: str) -> bool:
    """True when ``text`` asks about the state as of now ("currently", "still", "latest", ...)."""
    return _CURRENT.search(text) is not None


def bump(t: datetime, cues: list[TimeCue]) -> float:
    """How well time ``t`` fits the cues: 1 at a centre, fading with distance (Gaussian); 0 without cues."""
    best = 0.0
    for c in cues:
        z = (t - c.center) / c.width
        best = max(best, 2.0 ** (-z * z))
    return best
