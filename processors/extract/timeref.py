"""Relative times ("yesterday", "last week", 上个月) resolved against a message's time.

``resolve(text, when)`` rewrites every relative time phrase it knows into an absolute
one and says whether it found any. English dates read "7 May 2023"; phrases whose exact
day is unknown keep their relation ("in the week before 8 May 2023", as LoCoMo's own
answers word them). After a preposition that already says how ("since", "until",
"from", "by", "before", "after", "of", "for") only the bare date is written, so "since
last week" becomes "since the week before 8 May 2023", never "since in the week ...".
Chinese phrases become Chinese dates (2023年5月7日).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from eventlog.timeutil import parse_time
from processors.extract.text import capitalized

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2}


def day_text(d: date) -> str:
    """``7 May 2023``."""
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def month_text(year: int, month: int) -> str:
    """``May 2023``."""
    while month < 1:
        month, year = month + 12, year - 1
    while month > 12:
        month, year = month - 12, year + 1
    return f"{MONTHS[month - 1]} {year}"


def zh_day(d: date) -> str:
    """``2023年5月7日``."""
    return f"{d.year}年{d.month}月{d.day}日"


def message_date(when: str) -> date | None:
    """The UTC calendar day of an ISO timestamp, or None."""
    dt = parse_time(when) if when else None
    return dt.date() if dt is not None else None


def _previous_weekday(d: date, weekday: int) -> date:
    """The last ``weekday`` (0 = Monday) strictly before ``d``."""
    back = (d.weekday() - weekday) % 7 or 7
    return d - timedelta(days=back)


def _next_weekday(d: date, weekday: int) -> date:
    ahead = (weekday - d.weekday()) % 7 or 7
    return d + timedelta(days=ahead)


# Each rule: a pattern and a function (match, day) -> (prepositional form, bare form).
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], tuple[str, str]]]
_PREP_BEFORE = re.compile(r"\b(?:since|until|till|from|by|before|after|of|for|than|to|between)\s+$", re.IGNORECASE)
_NUM = r"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|couple\s+of|\d{1,2})"


_ARTICLE_BEFORE = re.compile(r"(?:\b(in|over|during)\s+)?\bthe\s+$", re.IGNORECASE)
#: A time phrase that is the subject ("Yesterday was great") takes the bare form.
_SUBJECT_AFTER = re.compile(r"\s+(?:was|is|has\s+been|had\s+been|will\s+be|'s)\b|'s\b", re.IGNORECASE)


def _num(s: str) -> int:
    s = " ".join(s.casefold().split())
    return int(s) if s.isdigit() else _NUMBER_WORDS.get(s, 1)


def _on(d: date) -> tuple[str, str]:
    return f"on {day_text(d)}", day_text(d)


def _relation(prep: str, relation: str, d: date) -> tuple[str, str]:
    """("on the night of 7 May 2023", "the night of 7 May 2023")."""
    return f"{prep} {relation} {day_text(d)}", f"{relation} {day_text(d)}"


def _in_month(d: date, shift: int) -> tuple[str, str]:
    t = month_text(d.year, d.month + shift)
    return f"in {t}", t


def _days_ago(m: re.Match[str], d: date) -> tuple[str, str]:
    return _on(d - timedelta(days=_num(m.group(1))))


def _weeks_ago(m: re.Match[str], d: date) -> tuple[str, str]:
    n = _num(m.group(1))
    bare = f"about {n} week{'s' if n != 1 else ''} before {day_text(d)}"
    return bare, bare


def _months_ago(m: re.Match[str], d: date) -> tuple[str, str]:
    t = month_text(d.year, d.month - _num(m.group(1)))
    return f"around {t}", f"around {t}"


def _years_ago(m: re.Match[str], d: date) -> tuple[str, str]:
    y = d.year - _num(m.group(1))
    return f"around {y}", f"around {y}"


_WEEKDAY = (r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun")


def _weekday_index(word: str) -> int:
    return next(i for i, d in enumerate(DAYS) if d.lower().startswith(word.lower()[:3]))


def _last_weekday(m: re.Match[str], d: date) -> tuple[str, str]:
    wd = _weekday_index(m.group(1))
    p = _previous_weekday(d, wd)
    return f"on {DAYS[wd]} {day_text(p)}", f"{DAYS[wd]} {day_text(p)}"


def _next_named_weekday(m: re.Match[str], d: date) -> tuple[str, str]:
    wd = _weekday_index(m.group(1))
    p = _next_weekday(d, wd)
    return f"on {DAYS[wd]} {day_text(p)}", f"{DAYS[wd]} {day_text(p)}"


def _coming(m: re.Match[str], d: date) -> tuple[str, str]:
    """"in the next few months" -> "in the months after 3 April 2023"."""
    t = f"the {m.group(1).lower()} after {day_text(d)}"
    return f"in {t}", t


_FUTURE = re.compile(r"\b(?:will|'ll|going\s+to|gonna|plan(?:ning)?|hope|hoping|want|can't\s+wait|next|tomorrow|"
                     r"(?:am|'m|are|'re|is)\s+\w+ing)\b", re.I)


def _bare_weekday(m: re.Match[str], d: date) -> tuple[str, str]:
    """"on Friday": the next one when the sentence speaks of the future, else the last one before the message."""
    wd = _weekday_index(m.group(1))
    ahead = bool(_FUTURE.search(m.string))
    p = _next_weekday(d, wd) if ahead else _previous_weekday(d, wd)
    return f"on {DAYS[wd]} {day_text(p)}", f"{DAYS[wd]} {day_text(p)}"


def _ordinal_day(m: re.Match[str], d: date) -> tuple[str, str]:
    """"on the 15th": that day of the message's month, or of the month before when it is still to come (the month
    after when the sentence speaks of the future and the day has passed); kept as said when no such day exists."""
    n = int(m.group(1))
    ahead = bool(_FUTURE.search(m.string))
    shift = (1 if n <= d.day else 0) if ahead else (0 if n <= d.day else -1)
    year, month = _ym(d.year, d.month + shift)
    try:
        return _on(date(year, month, n))
    except ValueError:
        return m.group(0), m.group(0)[3:]


def _season(m: re.Match[str], d: date) -> tuple[str, str]:
    """last/this/next spring, summer, fall, winter (winter is December to February, named by its December)."""
    which, season = m.group(1).casefold(), m.group(2).casefold()
    if season == "winter":
        current = d.year if d.month == 12 else d.year - 1  # the winter d is in, or the one just past
        in_winter = d.month in (12, 1, 2)
        year = {"last": current - 1 if in_winter else current, "this": current if in_winter else d.year,
                "next": current + 1 if in_winter else d.year}[which]
        t = f"winter {year}/{str(year + 1)[2:]}"
        return f"in {t}", t
    first, last_month = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}[season]
    if which == "last":
        year = d.year if d.month > last_month else d.year - 1
    elif which == "next":
        year = d.year if d.month < first else d.year + 1
    else:
        year = d.year
    t = f"{season} {year}"
    return f"in {t}", t


_EN_RULES: list[_Rule] = [
    (re.compile(r"\bthe\s+day\s+before\s+yesterday\b", re.I), lambda m, d: _on(d - timedelta(days=2))),
    (re.compile(r"\bthe\s+day\s+after\s+tomorrow\b", re.I), lambda m, d: _on(d + timedelta(days=2))),
    (re.compile(r"\byesterday\b", re.I), lambda m, d: _on(d - timedelta(days=1))),
    (re.compile(r"\blast\s+night\b", re.I),
     lambda m, d: _relation("on", "the night of", d - timedelta(days=1))),
    (re.compile(r"\btoday\b", re.I), lambda m, d: _on(d)),
    (re.compile(r"\btonight\b", re.I), lambda m, d: (f"on the night of {day_text(d)}", f"the night of {day_text(d)}")),
    (re.compile(r"\bthis\s+(morning|afternoon|evening)\b", re.I),
     lambda m, d: (f"on the {m.group(1).lower()} of {day_text(d)}", f"the {m.group(1).lower()} of {day_text(d)}")),
    (re.compile(r"\btomorrow\b", re.I), lambda m, d: _on(d + timedelta(days=1))),
    (re.compile(rf"\b{_NUM}\s+days?\s+(?:ago|back)\b", re.I), _days_ago),
    (re.compile(r"\ba\s+few\s+days\s+ago\b", re.I),
     lambda m, d: (f"a few days before {day_text(d)}", f"a few days before {day_text(d)}")),
    (re.compile(rf"\b{_NUM}\s+weeks?\s+(?:ago|back)\b", re.I), _weeks_ago),
    (re.compile(rf"\b{_NUM}\s+months?\s+(?:ago|back)\b", re.I), _months_ago),
    (re.compile(rf"\b{_NUM}\s+years?\s+(?:ago|back)\b", re.I), _years_ago),
    (re.compile(r"\blast\s+weekend\b", re.I),
     lambda m, d: (f"on the weekend before {day_text(d)}", f"the weekend before {day_text(d)}")),
    (re.compile(r"\bthis\s+(?:past\s+)?weekend\b", re.I),
     lambda m, d: (f"on the weekend of {day_text(d)}", f"the weekend of {day_text(d)}")),
    (re.compile(r"\bnext\s+weekend\b", re.I),
     lambda m, d: (f"on the weekend after {day_text(d)}", f"the weekend after {day_text(d)}")),
    (re.compile(r"\b(?:last|past)\s+week\b", re.I),
     lambda m, d: (f"in the week before {day_text(d)}", f"the week before {day_text(d)}")),
    (re.compile(r"\bthis\s+week\b", re.I), lambda m, d: _relation("in", "the week of", d)),
    (re.compile(r"\bnext\s+week\b", re.I),
     lambda m, d: (f"in the week after {day_text(d)}", f"the week after {day_text(d)}")),
    (re.compile(rf"\blast\s+({_WEEKDAY})(?![a-z])", re.I), _last_weekday),
    (re.compile(rf"\bnext\s+({_WEEKDAY})(?![a-z])", re.I), _next_named_weekday),
    (re.compile(r"\b(?:last|past)\s+month\b", re.I), lambda m, d: _in_month(d, -1)),
    (re.compile(r"\bthis\s+month\b", re.I), lambda m, d: _in_month(d, 0)),
    (re.compile(r"\bnext\s+month\b", re.I), lambda m, d: _in_month(d, 1)),
    (re.compile(r"\b(?:last|past)\s+year\b", re.I), lambda m, d: (f"in {d.year - 1}", str(d.year - 1))),
    (re.compile(r"\bthis\s+year\b", re.I), lambda m, d: (f"in {d.year}", str(d.year))),
    (re.compile(r"\bnext\s+year\b", re.I), lambda m, d: (f"in {d.year + 1}", str(d.year + 1))),
    (re.compile(r"\b(last|this|next)\s+(spring|summer|fall|autumn|winter)\b", re.I), _season),
    (re.compile(r"\b(?:just\s+)?the\s+other\s+week\b", re.I),
     lambda m, d: (f"a few weeks before {day_text(d)}", f"a few weeks before {day_text(d)}")),
    (re.compile(r"\b(?:just\s+)?the\s+other\s+(?:day|night)\b", re.I),
     lambda m, d: (f"a few days before {day_text(d)}", f"a few days before {day_text(d)}")),
    (re.compile(r"\b(?:a\s+few|few|several|some)\s+(days|weeks|months|years)\s+(?:ago|back)\b", re.I),
     lambda m, d: (f"a few {m.group(1).lower()} before {day_text(d)}", f"a few {m.group(1).lower()} before {day_text(d)}")),
    (re.compile(r"\b(?:(?:in|over|within|during)\s+)?the\s+(?:next|coming)\s+(?:few\s+|couple\s+(?:of\s+)?|\w+\s+)?"
                r"(days|weeks|months|years)\b", re.I), _coming),
    # not a recurring "on Wednesday afternoons" / "on Monday mornings": a plural part of the day is every week
    (re.compile(rf"(?<!every\s)\bon\s+({_WEEKDAY})(?![a-z])(?!\s+\d)(?!\s+(?:mornings|afternoons|evenings|nights)\b)",
                re.I), _bare_weekday),
    (re.compile(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+of\b)", re.I), _ordinal_day),
]

_ZH_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]] = [
    (re.compile(r"大前天"), lambda m, d: zh_day(d - timedelta(days=3))),
    (re.compile(r"前天"), lambda m, d: zh_day(d - timedelta(days=2))),
    (re.compile(r"昨天|昨日|昨晚"), lambda m, d: zh_day(d - timedelta(days=1))),
    (re.compile(r"今天|今日|今晚"), lambda m, d: zh_day(d)),
    (re.compile(r"后天"), lambda m, d: zh_day(d + timedelta(days=2))),
    (re.compile(r"明天|明日|明晚"), lambda m, d: zh_day(d + timedelta(days=1))),
    (re.compile(r"上(?:个)?(?:周|星期|礼拜)"), lambda m, d: f"{zh_day(d)}的前一周"),
    (re.compile(r"下(?:个)?(?:周|星期|礼拜)"), lambda m, d: f"{zh_day(d)}的后一周"),
    (re.compile(r"上个?月"), lambda m, d: "{}年{}月".format(*_ym(d.year, d.month - 1))),
    (re.compile(r"下个?月"), lambda m, d: "{}年{}月".format(*_ym(d.year, d.month + 1))),
    (re.compile(r"去年"), lambda m, d: f"{d.year - 1}年"),
    (re.compile(r"今年"), lambda m, d: f"{d.year}年"),
    (re.compile(r"明年"), lambda m, d: f"{d.year + 1}年"),
]


def _ym(year: int, month: int) -> tuple[int, int]:
    while month < 1:
        month, year = month + 12, year - 1
    while month > 12:
        month, year = month - 12, year + 1
    return year, month


#: A resolved date said a second time in one sentence (an opening "Yesterday was ..." moved to the end, and the
#: sentence's own "yesterday"): the second one goes.
_REPEATED_DATE = re.compile(r"\b((?i:on|in)\s+((?:[A-Z][a-z]+\s+)?\d{1,2}\s+[A-Z][a-z]+\s+\d{4}))(.*?)\s+(?i:on|in)\s+\2"
                            r"(?!\w)")


def resolve(text: str, when: str) -> tuple[str, bool]:
    """``text`` with its relative time phrases made absolute against ``when``; and whether any was."""
    d = message_date(when)
    if d is None:
        return text, False
    found = False
    for pattern, fn in _EN_RULES:
        pieces: list[str] = []
        last = 0
        for m in pattern.finditer(text):
            prep, bare = fn(m, d)
            start = m.start()
            window = max(last, start - 24)  # the few characters before the phrase (never the whole text: linear time)
            relative = re.match(r"(?i)last|past|next|this", m.group(0))
            article = _ARTICLE_BEFORE.search(text[window:start]) if relative else None
            if article:  # "in the last week" -> "in the week before ...", "the past month" -> "April 2023"
                start = window + article.start()
                use = prep if article.group(1) else bare
            else:
                use = bare if _PREP_BEFORE.search(text[max(0, start - 24):start]) \
                    or _SUBJECT_AFTER.match(text[m.end():m.end() + 24]) else prep
            before = text[last:start]
            opens = m.start() == 0 or text[max(0, m.start() - 8):m.start()].rstrip()[-1:] in ".!?"
            if m.group(0)[:1].isupper() and opens:
                use = capitalized(use)
            pieces += [before, use]
            last = m.end()
            found = True
        if pieces:
            text = "".join(pieces) + text[last:]
    if found:
        for _ in range(3):  # "wrote ... on 4 June 2022 ... on 4 June 2022": said once
            text, n = _REPEATED_DATE.subn(r"\1\3", text)
            if not n:
                break
    for zpattern, zfn in _ZH_RULES:
        if zpattern.search(text):
            text = zpattern.sub(lambda m, f=zfn: f(m, d), text)  # type: ignore[misc]
            found = True
    return text, found


#: Words that say "as of now" without saying when: a fact holding one is true only as of its
#: message's day ("Maria just started volunteering", "lately", "for now", "soon", and the present
#: progressive: "Sam is traveling through Lake Tahoe", "Nate has been playing Cyberpunk"). English grammar
#: (time adverbs, and "just" before a past form), not the vocabulary of any data set.
UNDATED_NOW = re.compile(
    r"(?<!from\s)\bnow\b(?!\s+(?:on|that)\b)|"
    r"\b(?:am|is|are|'m|'re|(?:has|have|'ve|'s)\s+(?:\w+ly\s+|also\s+|still\s+|just\s+)?been)\s+"
    r"(?:\w+ly\s+|still\s+|now\s+|also\s+)?\w+ing\b|\bsoon\b|"
    r"\b(?:recently|lately|currently|nowadays|these\s+days|right\s+now|at\s+the\s+moment|for\s+now|so\s+far|"
    r"just\s+(?:\w+ed|got|went|came|made|had|took|began|bought|found|left|won|lost|saw|met|ran|built|wrote|sold|"
    r"became|heard|read|spent|sent|gave|told|caught|brought|thought))\b|"
    r"\b(?:gonna|(?:plans?|planned|intends?|about)\s+to)\b",  # a plan: what was meant that day, not forever
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")  # a title in quotes ("Cyberpunk 2077", "Blade Runner 2049") dates nothing
#: A past told against a period of the speaker's life rather than the calendar ("as a kid", "when John was ten",
#: "used to", "growing up", "in high school"): it needs no day to stay true.
_LIFE_PERIOD = re.compile(
    r"\bused\s+to\b|\bas\s+(?:a|an)\s+(?:kid|child|teen|teenager|boy|girl|student|youngster)\b|"
    r"\bwhen\s+\w+(?:'s\s+\w+)?\s+(?:was|were)\b|\bgrowing\s+up\b|\bin\s+(?:high\s+school|college|school|university)\b|"
    r"\bat\s+(?:the\s+)?age\b|\bever\s+since\b|\byears\s+old\b|\bsince\s+\w+\s+was\b", re.IGNORECASE)


def as_of(text: str, when: str) -> str:
    """``text`` with "(as of <day>)" added when it says "now" without a date ("just", "lately", "for now").

    Such a fact read later must not state the past as current: it gets its message's day.
    A text that already holds a year (a resolved date) or whose message has no time is kept.
    """
    d = message_date(when)
    if d is None or not UNDATED_NOW.search(text) or _YEAR.search(_QUOTED.sub("", text)):
        return text
    return _with_day(text, "as of", d)


def _with_day(text: str, relation: str, d: date) -> str:
    body = text.rstrip()
    end = body[-1:] if body[-1:] in ".!?" else ""
    return f"{body[:len(body) - len(end)]} ({relation} {day_text(d)}){end or '.'}"


#: "I was at the coast", "we were road tripping": the speaker's past state or doing, dated like a past event
#: (``by_day``); a period of life ("when I was a kid") is left undated there.
PAST_BE = re.compile(r"\b(?:I|we)\s+(?:(?:\w+ly|also|all|both|just|still)\s+)?(?:was|were)\b", re.IGNORECASE)


def by_day(text: str, when: str) -> str:
    """``text``, a past event, with "(by <day>)" added when it says no date: read later from MEMORY.md (which prints
    no dates) "Dave opened his own shop" would not say when; its message's day bounds it.

    Kept as is: a text that holds a year (a resolved date, or "as of"), one told against a period of life ("as a
    kid", "used to"), one whose message has no time.
    """
    d = message_date(when)
    if d is None or _YEAR.search(_QUOTED.sub("", text)) or _LIFE_PERIOD.search(text):
        return text
    return _with_day(text, "by", d)


#: Phrases that date a statement without resolving it (used to tell events from habits).
TIME_HINT = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this\s+(?:week|weekend|month|year|morning|afternoon|evening)|"
    r"recently|lately|just|since|in\s+(?:19|20)\d\d|(?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)\b)",
    re.IGNORECASE,
)
