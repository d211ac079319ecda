"""Temporary facts: a state that holds until a date ("this week I'm on call", "until Friday") and then ends.

``with_end(sentence, when)`` writes the end of a temporary state as a date into the
sentence, against the message's time: "until Friday" -> "until Friday 7 March 2025",
"for the next two weeks" -> "until 18 March 2025", "until June" -> "until 30 June 2025", "until the end of
the month" -> its last day ("this week", "today" are resolved by
``timeref`` already: "in the week of 4 March 2025", "on 4 March 2025").
``is_temporary(sentence)`` says whether a sentence states such a state (a present tense
with one of those phrases). ``ends_on(fact)`` reads the last day a fact holds from its
text: the date after "until", the Sunday of "in the week of <date>", the day of "on
<date>" / "today", the last day of "in <month> <year>" ("this month"); only for a fact in the present tense (an event that happened stays).
The offline extractor forgets an active fact once a message is later than that day.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from processors.extract.timeref import DAYS, MONTHS, _weekday_index, day_text, message_date

_UNTIL_DAY = re.compile(r"\b(until|till|through)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
                        r"(?!\s+\d)", re.IGNORECASE)
_FOR_NEXT = re.compile(r"\bfor\s+the\s+next\s+(two|three|four|five|six|seven|\d{1,2})\s+(days?|weeks?)\b",
                       re.IGNORECASE)
#: "until June" (its last day), "until the end of the month / week".
_UNTIL_MONTH = re.compile(rf"\b(until|till|through)\s+({'|'.join(MONTHS)})\b(?!\s+\d)", re.IGNORECASE)
_END_OF = re.compile(r"\b(until|till)\s+the\s+end\s+of\s+(?:the|this)\s+(month|week)\b", re.IGNORECASE)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_TEMPORARY = re.compile(r"\b(?:this\s+week|today|tonight|until|till|for\s+the\s+next)\b", re.IGNORECASE)
_PRESENT = re.compile(r"\b(?:I'm|I\s+am|we're|we\s+are|is|are)\b(?!\s+(?:going|gonna|planning|hoping))", re.IGNORECASE)
_DATE = rf"(\d{{1,2}})\s+({'|'.join(MONTHS)})\s+(\d{{4}})"
_END_UNTIL = re.compile(rf"\b(?:until|till|through)\s+(?:(?:{'|'.join(DAYS)})\s+)?{_DATE}", re.IGNORECASE)
_END_WEEK = re.compile(rf"\bin\s+the\s+week\s+of\s+{_DATE}", re.IGNORECASE)
_END_ON = re.compile(rf"\bon\s+(?:(?:{'|'.join(DAYS)})\s+)?{_DATE}", re.IGNORECASE)
#: "in March 2025", which ``timeref`` writes for "this month": a present state of that month ends with it.
_END_MONTH = re.compile(rf"\bin\s+({'|'.join(MONTHS)})\s+(\d{{4}})\b(?!\s*\))", re.IGNORECASE)
_FACT_PRESENT = re.compile(r"\b(?:is|are)\s+(?:on|in|at|working|staying|covering|away|off|out|travell?ing|visiting)\b"
                           r"|\b(?:works|stays)\b", re.IGNORECASE)


def is_temporary(sentence: str) -> bool:
    """Whether ``sentence`` states a present state limited in time ("This week I'm on call.")."""
    return bool(_TEMPORARY.search(sentence)) and bool(_PRESENT.search(sentence))


def with_end(sentence: str, when: str) -> str:
    """``sentence`` with "until <weekday>" and "for the next N days/weeks" resolved to a date."""
    day = message_date(when)
    if day is None:
        return sentence

    def until(m: re.Match[str]) -> str:
        target = _weekday_index(m.group(2))
        ahead = (target - day.weekday()) % 7
        end = day + timedelta(days=ahead)
        return f"{m.group(1)} {DAYS[target]} {day_text(end)}"

    def for_next(m: re.Match[str]) -> str:
        n = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        days = n * (7 if m.group(2).lower().startswith("week") else 1)
        return f"until {day_text(day + timedelta(days=days))}"

    def until_month(m: re.Match[str]) -> str:
        month = MONTHS.index(m.group(2).capitalize()) + 1
        year = day.year + (1 if month < day.month else 0)
        return f"{m.group(1)} {day_text(_last_day(year, month))}"

    def end_of(m: re.Match[str]) -> str:
        if m.group(2).lower() == "week":
            return f"{m.group(1)} {day_text(day + timedelta(days=6 - day.weekday()))}"
        return f"{m.group(1)} {day_text(_last_day(day.year, day.month))}"

    sentence = _UNTIL_MONTH.sub(until_month, _END_OF.sub(end_of, sentence))
    return _FOR_NEXT.sub(for_next, _UNTIL_DAY.sub(until, sentence))


def _last_day(year: int, month: int) -> date:
    return (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)


def _date(m: re.Match[str]) -> date | None:
    try:
        return date(int(m.group(3)), MONTHS.index(m.group(2).capitalize()) + 1, int(m.group(1)))
    except ValueError:
        return None


def ends_on(fact: str) -> date | None:
    """The last day a temporary fact holds, or None (see the module docstring)."""
    if not _FACT_PRESENT.search(fact):
        return None
    m = _END_UNTIL.search(fact)
    if m:
        return _date(m)
    m = _END_WEEK.search(fact)
    if m:
        start = _date(m)
        return start + timedelta(days=6 - start.weekday()) if start else None
    m = _END_ON.search(fact)
    if m:
        return _date(m)
    m = _END_MONTH.search(fact)
    return _last_day(int(m.group(2)), MONTHS.index(m.group(1).capitalize()) + 1) if m else None
