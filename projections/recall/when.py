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

Dates written out (calendar dates, not relative to now except for a missing year):

* ``25 May, 2022``, ``May 25th 2022``, ``2022-05-25`` -> that day (a day wide);
* ``May 25`` (no year) -> that day in the latest year that puts it at or before now;
* ``July 2022``, ``in July`` / ``during July`` (no year: the latest July at or before
  now) -> that month (half a month wide on each side);
* ``in 2022``, ``during 2022``, ``of 2022``, ``summer 2022`` -> that year (half a year).

A month name stands alone only after ``in``, ``during``, ``since``, ``of`` or ``early``,
``mid``, ``late`` ("in May", never the verb "may"). Unlike a relative expression, a
written date keeps its month name in the search terms (a message may well say "in
mid-February"); its digits go.

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
from datetime import UTC, datetime, timedelta

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
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|" \
       r"nov(?:ember)?|dec(?:ember)?)\.?"
_D = r"(\d{1,2})(?:st|nd|rd|th)?"
_Y = r"((?:19|20)\d\d)"
#: Calendar dates, most specific first (each one's text is taken out before the next looks).
_DATES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_Y}-(\d\d)-(\d\d)\b"), "iso"),
    (re.compile(rf"\b{_D}\s+(?:of\s+)?{_MON},?\s+{_Y}\b", re.I), "dmy"),
    (re.compile(rf"\b{_MON}\s+{_D},?\s+{_Y}\b", re.I), "mdy"),
    (re.compile(rf"\b{_MON},?\s+{_Y}\b", re.I), "my"),
    (re.compile(rf"\b{_D}\s+(?:of\s+)?{_MON}\b", re.I), "dm"),
    (re.compile(rf"\b{_MON}\s+{_D}\b(?!\s*(?:%|[:.]\d))", re.I), "md"),
    (re.compile(rf"\b(?:in|during|since|of|early|mid|late)\s+(?:the\s+)?{_MON}\b", re.I), "m"),
    (re.compile(rf"\b(?:in|during|since|of|early|mid|late|spring|summer|autumn|fall|winter)\s+{_Y}\b", re.I), "y"),
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
    calendar: bool = False  # a date written out ("25 May, 2022"), not a time relative to now


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


def _month(word: str) -> int:
    """1-12 for a month name or its abbreviation."""
    w = word.lower().rstrip(".")
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(w[:3]))


def _day_cue(year: int, month: int, day: int, text: str) -> TimeCue | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None  # "February 30": not a date
    return TimeCue(start + _DAY / 2, _DAY, text, calendar=True)


def _month_cue(year: int, month: int, text: str) -> TimeCue:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return TimeCue(start + (end - start) / 2, (end - start) / 2, text, calendar=True)


def _latest_year(month: int, day: int, now: datetime) -> int:
    """The year that puts ``month``/``day`` at or before ``now`` (this year unless that is still ahead)."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _resolve_date(kind: str, m: re.Match[str], now: datetime) -> TimeCue | None:
    g, text = m.groups(), m.group(0)
    if kind == "iso":
        return _day_cue(int(g[0]), int(g[1]), int(g[2]), text) if 1 <= int(g[1]) <= 12 else None
    if kind == "dmy":
        return _day_cue(int(g[2]), _month(g[1]), int(g[0]), text)
    if kind == "mdy":
        return _day_cue(int(g[2]), _month(g[0]), int(g[1]), text)
    if kind == "my":
        return _month_cue(int(g[1]), _month(g[0]), text)
    if kind in ("dm", "md"):
        day, month = (int(g[0]), _month(g[1])) if kind == "dm" else (int(g[1]), _month(g[0]))
        return _day_cue(_latest_year(month, day, now), month, day, text)
    if kind == "m":
        month = _month(g[0])
        return _month_cue(_latest_year(month, 1, now), month, text)
    year = datetime(int(g[0]), 1, 1, tzinfo=UTC)
    return TimeCue(year + _UNIT["year"] / 2, _UNIT["year"] / 2, text, calendar=True)


_WORDS = re.compile(r"[^\W_]+")
_MONTH_WORD = re.compile(_MON, re.I)
_SEASONS = frozenset(("spring", "summer", "autumn", "fall", "winter"))


def date_cues(text: str, now: datetime) -> tuple[list[TimeCue], str]:
    """The calendar dates of ``text`` as soft windows (a missing year: the latest before ``now``), and ``text``
    with each date cut down to its month or season name (moved to the end: a "3" or "2022" matches anything, and the
    month must not be read as a date again)."""
    cues: list[TimeCue] = []
    months: list[str] = []
    for pattern, kind in _DATES:
        for m in pattern.finditer(text):
            cue = _resolve_date(kind, m, now)
            if cue is not None:
                cues.append(cue)
            months += [w for w in _WORDS.findall(m.group(0)) if _MONTH_WORD.fullmatch(w) or w.lower() in _SEASONS]
        text = pattern.sub(" ", text)
    return cues, " ".join([text, *months]) if months else text


def time_cues(text: str, now: datetime) -> tuple[list[TimeCue], str]:
    """The relative time expressions and calendar dates of ``text`` resolved against ``now``, and ``text`` without
    them (but for a written date's month name: a message may say "in mid-February" too)."""
    cues, text = date_cues(text, now)
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
