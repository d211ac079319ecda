"""Text as recall sees it: what goes into the full-text index and how a question becomes terms.

SQLite's FTS5 ``porter unicode61`` tokenizer does English well (words, case folding,
diacritics, Porter stemming) but sees a run of Chinese or Japanese characters (no spaces)
as one long token, so nothing shorter than the whole run would ever match. Before text
reaches FTS5, every CJK run is therefore rewritten as its overlapping character bigrams
plus its last character (``東京都`` -> ``東京 京都 都``): any substring of two or more
characters is a phrase of bigrams, and a single character ``X`` is the prefix query
``X*`` (every occurrence of a character starts a bigram or ends its run). Text without
CJK characters passes through untouched (one C-level regex search decides), so English
indexing pays nothing for this.

The rewrite is a pure function of the text: deleting a row from the contentless index
recomputes exactly the tokens that were inserted.
"""

from __future__ import annotations

import re
import zlib

import xxhash

from eventlog.lazy_pattern import LazyPattern

# Han (with extensions and compatibility ideographs), kana, Hangul, and the iteration marks.
_CJK_CLASS = (
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002ffff"
)
CJK_RUN = LazyPattern(f"[{_CJK_CLASS}]+")  # compiled at first use (~5 ms): a SessionStart only unpacks stored text

#: A word as FTS5's unicode61 tokenizer sees one (letters and digits; ``_`` separates).
WORD = LazyPattern(r"[^\W_]+")


def cjk_grams(run: str) -> list[str]:
    """The tokens a CJK run is indexed as: its bigrams, then its last character."""
    if len(run) == 1:
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    grams.append(run[-1])
    return grams


def _expand(m: re.Match[str]) -> str:
    return " " + " ".join(cjk_grams(m.group())) + " "


def index_text(text: str) -> str:
    """``text`` as it is handed to the FTS5 tokenizer (CJK runs become bigrams)."""
    if text.isascii() or CJK_RUN.search(text) is None:
        return text
    return CJK_RUN.sub(_expand, text)


def clean(text: str) -> str:
    """``text`` made storable: lone surrogates (which SQLite cannot bind) become U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


# -- stored text ----------------------------------------------------------------------------

#: Texts at least this long (characters) are stored zlib-compressed when that saves space.
PACK_MIN_CHARS = 1024


def pack(text: str) -> str | bytes:
    """How ``text`` is stored: as is, or (long texts) zlib-compressed bytes."""
    if len(text) < PACK_MIN_CHARS:
        return text
    raw = text.encode("utf-8")
    z = zlib.compress(raw, 6)
    return z if len(z) < len(raw) * 0.9 else text


def unpack(value: str | bytes | None) -> str:
    """The text ``pack`` stored."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return zlib.decompress(value).decode("utf-8")
    return value


# -- filter tokens --------------------------------------------------------------------------
# Filters (kind, project, session, role, fact state) are tokens of a third FTS column that
# never counts for ranking, so FTS5 intersects them with the query's terms. Each token is a
# letter pair and decimal digits: the Porter stemmer leaves a token ending in a digit alone,
# and no user term can reach this column (queries name their columns).

KIND_CODES = {"message": 0, "history": 1, "fact": 2}
KINDS = {v: k for k, v in KIND_CODES.items()}
FACT_STATES = ("active", "superseded", "forgotten", "archived")
STATE_CODES = {s: i for i, s in enumerate(FACT_STATES)}
#: Fact states a search returns unless asked otherwise.
DEFAULT_FACT_STATES = ("active", "archived")


def _h(value: str) -> int:
    return xxhash.xxh3_64_intdigest(value.encode("utf-8", "surrogatepass"))


def kind_tag(kind: int) -> str:
    """The filter token of a source kind (0 message, 1 history, 2 fact)."""
    return f"xk{kind}"


def project_tag(project: str) -> str:
    """The filter token of a project label (``""`` included)."""
    return f"xp{_h(project)}"


def session_tag(session_key: str) -> str:
    """The filter token of a session key."""
    return f"xs{_h(session_key)}"


def role_tag(role: str) -> str:
    """The filter token of a message role."""
    return f"xr{_h(role)}"


def state_tag(state: int) -> str:
    """The filter token of a fact state (index into ``FACT_STATES``)."""
    return f"xf{state}"


# -- questions ------------------------------------------------------------------------------

#: Words a natural question carries that say nothing about what it looks for: English
#: function words, question words, auxiliaries, the pieces contractions split into, and
#: the pleasantries a request is wrapped in. (A longer list measured no better on LoCoMo:
#: BM25's idf already discounts common words; the list mainly keeps them out of FTS5.)
STOP_WORDS = frozenset("""
a about above after again against all am an and any anything are aren as at be because been before being below between
both but by can cannot could couldn d did didn do does doesn doing don down during each either else ever every few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it
its itself just ll m ma me mightn more most much mustn my myself needn no nor not now o of off on once only or other
our ours ourselves out over own re s same shan she should shouldn so some such t than that the their theirs them
themselves then there these they this those through to too under until up us ve very was wasn we were weren what
whats when where whether which while who whom whose why will with won would wouldn y you your yours yourself
yourselves

please thanks thank yes yeah hey hi hello ok okay etc tell ask
""".split())


#: Words that frame a question rather than say what it looks for: how it counts ("how many",
#: "total"), when it asks ("currently", "ago": see ``when.py`` for the times they name), that
#: it refers to an earlier chat ("remind me", "previously", "mentioned"), and "one" (whose
#: stem is the stop word "on"). Generic English, not tuned to any data set's contents.
QUESTION_WORDS = frozenset("""
many total totals altogether combined overall sum number count often ago
current currently nowadays latest anymore presently still
remind mention mentioned mentioning previously earlier
one ones
""".split())

#: Every word that is never a search term while the question has others.
NOT_TERMS = STOP_WORDS | QUESTION_WORDS


def fold(word: str) -> str:
    """Lower-case form used to compare query words with names and stop words."""
    return word.casefold()
