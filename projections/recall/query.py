"""From what a user typed to a safe FTS5 query.

User text never reaches FTS5's query syntax. A question is cut into words (what FTS5's
``unicode61`` tokenizer would see) and CJK runs; every term goes into the MATCH string as a
double-quoted string made only of letters and digits, joined by operators this module
writes. So quotes, ``*``, ``NEAR``, ``AND``/``OR``/``NOT``, parentheses, ``-``, ``:``,
``^`` or a 10 KB paste are plain words here, and FTS5 can never see a syntax error.

* English-like words: lower-cased; stop words (function words, question words, "tell me
  about") and question scaffolding (``text.QUESTION_WORDS``: "how many", "total",
  "currently", "remind me"; relative times go to ``when.py``) are dropped unless nothing
  else is left; stemming is FTS5's own (the index
  asks its tokenizer, so query and index stem alike).
* CJK runs: a run of two or more characters becomes its bigrams (each one an OR-ed term,
  so a question written without spaces still matches messages that share some of its
  words); a single character becomes the prefix query ``"X"*``.
* Each term is looked up on its own (``search.py`` sums idf over the terms a row holds,
  which is an OR with ranking); filters (kind, project, session, role, fact state) are
  filter tokens AND-ed (or NOT-ed) onto every term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from eventlog.errors import ConfigError
from eventlog.timeutil import format_time, normalize_time, parse_time
from projections.recall.text import CJK_RUN, NOT_TERMS, WORD, cjk_grams, fold

#: At most this many characters of a query are read (a pasted log is still a query).
MAX_QUERY_CHARS = 20_000
#: At most this many distinct terms are searched (the rarest ones are kept).
MAX_TERMS = 32

SCOPES = ("all", "messages", "history", "facts")
SCOPE_KINDS = {"all": (0, 1, 2), "messages": (0,), "history": (1,), "facts": (2,)}


@dataclass
class Question:
    """A question cut into what recall searches for."""

    text: str
    words: list[str] = field(default_factory=list)  # folded content words, in order (stop words dropped)
    all_words: list[str] = field(default_factory=list)  # every folded word, in order
    cjk: list[str] = field(default_factory=list)  # CJK runs, in order

    @property
    def empty(self) -> bool:
        """True when there is nothing to search for."""
        return not self.all_words and not self.cjk

    def content_words(self, names: frozenset[str] = frozenset()) -> list[str]:
        """Words to search for: stop words and ``names`` removed, unless that leaves nothing."""
        kept = [w for w in self.words if w not in names]
        if kept or self.cjk:
            return kept
        if self.words:
            return self.words
        return self.all_words

    def pairs(self, names: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
        """Neighbouring content words of the question (phrase candidates), in folded form."""
        ws = self.content_words(names)
        return [(a, b) for a, b in zip(ws, ws[1:], strict=False) if a != b]


def split_question(text: str) -> Question:
    """Cut ``text`` into words and CJK runs (see the module docstring)."""
    if not isinstance(text, str):
        raise ConfigError(f"a recall query is text, not {type(text).__name__}")
    text = text[:MAX_QUERY_CHARS]
    q = Question(text)
    q.cjk = [m.group() for m in CJK_RUN.finditer(text)]
    rest = CJK_RUN.sub(" ", text) if q.cjk else text
    for w in WORD.findall(rest):
        # ASCII is lower-cased here; the tokenizer folds the rest (it knows µ from μ and ß from ss better
        # than casefold, and leaves alone what its Unicode 6.1 tables do not fold, such as Cherokee, which
        # str.lower() would turn into letters the index never holds)
        low = w.lower() if w.isascii() else w
        q.all_words.append(low)
        if fold(w) not in NOT_TERMS:
            q.words.append(low)
    return q


def cjk_terms(runs: list[str]) -> tuple[list[str], list[str]]:
    """(bigram terms, single-character prefix terms) of the question's CJK runs."""
    grams: list[str] = []
    singles: list[str] = []
    for run in runs:
        if len(run) == 1:
            if run not in singles:
                singles.append(run)
            continue
        for g in cjk_grams(run)[:-1]:  # the bigrams, not the trailing unigram
            if g not in grams:
                grams.append(g)
    return grams, singles


def quote(term: str) -> str:
    """``term`` as an FTS5 string (double quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


# -- time bounds --------------------------------------------------------------------------

_RELATIVE = re.compile(r"\s*(\d{1,7})\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|wk|wks|week|weeks)\s*(ago)?\s*",
                       re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DATE_ONLY = re.compile(r"\s*\d{4}-\d{2}-\d{2}\s*")


def query_time(value: str | datetime | None) -> datetime:
    """The time a question is asked (``--now``): a datetime, ISO 8601 or epoch text; None = the clock."""
    if value is None or value == "":
        return datetime.now(UTC)
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        raise ConfigError(f"--now must be a time, not {type(value).__name__}")
    dt = parse_time(value.strip()) if normalize_time(value.strip()) else None
    if dt is None:
        raise ConfigError(f"--now {value!r} is not a time: use ISO 8601 (2026-11-24T18:00:00Z) or epoch seconds")
    return dt


def time_bound(value: str | datetime | None, *, name: str, end: bool = False,
               now: datetime | None = None) -> str | None:
    """A ``since``/``until`` argument as a normalised UTC time (None: no bound).

    Accepts ISO 8601 (naive = UTC), a date (``2026-11-24``; as ``until`` it includes that
    whole day), epoch seconds or milliseconds, a relative age (``90m``, ``36h``, ``7d``,
    ``2w``, optionally followed by ``ago``) or a datetime. Anything else is a ConfigError.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return format_time(dt)
    if not isinstance(value, str):
        raise ConfigError(f"--{name} must be a time, not {type(value).__name__}")
    m = _RELATIVE.fullmatch(value)
    if m:
        unit = m.group(2).lower()
        seconds = int(m.group(1)) * _UNITS["m" if unit.startswith("mi") or unit == "m" else unit[0]]
        return format_time((now or datetime.now(UTC)) - timedelta(seconds=seconds))
    try:
        if _DATE_ONLY.fullmatch(value) and end:
            day = parse_time(value.strip())
            if day is not None:
                return format_time(day + timedelta(days=1) - timedelta(milliseconds=1))
        norm = normalize_time(value.strip())
    except (ValueError, OverflowError) as e:
        raise ConfigError(f"--{name} {value!r} is not a time ({e})") from None
    if not norm:
        raise ConfigError(f"--{name} {value!r} is not a time: use ISO 8601 (2026-11-24 or 2026-11-24T18:00:00Z), "
                          "epoch seconds, or an age such as 36h or 7d")
    return norm
