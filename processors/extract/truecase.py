"""Lower-case typing read as the slot grammar reads careful typing: "i'm in austin now" as "I'm in Austin now".

The slot grammar (``slots``), the frame match (``frames``) and the change path (``change``) know a value by its
shape: a capital letter, a version number. People type in lower case ("left spotify in the spring", "we ditched
jenkins, CI is on github actions now"), and then a correction names no value. ``truecased`` restores, in a user's
own English sentence:

- the pronoun ``i`` ("i'm", "i've", "i" alone) as ``I``;
- each name a known fact holds ("Spotify", "St Mary's", "Jenkins"), in the fact's own spelling, wherever the
  sentence has it in lower case (matching the old value a statement replaces against the facts' words);
- in a sentence typed wholly in lower case, a word before a dotted version number ("python 3.12", "go 1.19"), and
  the value a frame of place, membership, naming or tool names: the one
  or two words after "live in", "moved ... to", "I'm in", "joined", "started at", "work at", "switched ... to",
  "migrated ... to", "is on", "call me" ... (a closed class of the language, no list of values), unless the word is
  a function word, a time word, or a word a known fact holds in lower case ("mode" of "dark mode": a common noun).

Nothing else changes: the words, their order and their count stay as typed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from processors.extract.text import STOPWORDS, has_cjk

_PRONOUN = re.compile(r"(?<![\w'])i(?=(?:'(?:m|ve|d|ll))?(?![\w']))")
#: A name as a fact writes it: capitalised words (with "of", "the", "de" inside), or a word with a capital inside.
_FACT_NAME = re.compile(r"(?<![\w.])(?:[A-Z][\w.&'+-]*[\w+]|[a-z]+[A-Z][\w.+-]*)(?:\s+(?:[A-Z][\w.&'+-]*[\w+]))*")
#: The frames after which a lower-case sentence names its value (place, employer, name, tool).
_FRAME = re.compile(
    r"\b(?:(?:live[sd]?|living|based|settled)\s+(?:in|at)|(?:relocated|relocating|moved|moving|move)\s+(?:[a-z']+\s+){0,3}?(?:in|to)"
    r"|(?:I'm|I\s+am|we're|we\s+are)\s+(?:now\s+|still\s+)?(?:in|at)"
    r"|(?:joined|join|joining|started\s+at|starting\s+at|start\s+at|work(?:s|ing)?\s+(?:at|for)|been\s+(?:working\s+)?at)"
    r"|(?:switched|switching|moved|migrated|migrating|upgraded|changed|went|ported|bumped)\s+(?:[a-z'.]+\s+){0,3}?(?:to|over\s+to)"
    r"|(?:replaced\s+[\w.'-]+(?:\s+[\w.'-]+)?\s+with)"
    r"|(?:is|are|runs?|lives?)\s+(?:now\s+)?on"
    r"|(?:call\s+me|name\s+is|name's|go\s+by|goes\s+by)"
    r"|(?:I'm|I\s+am|we're)\s+(?:now\s+)?(?:a|an)(?=\s+[a-z]+\s+person\b))\s+",  # "i'm a chrome person now"
    re.IGNORECASE)
_WORD = re.compile(r"[a-z][\w.+-]*[a-z0-9+]|[a-z]")
#: Words that are never a value's start: determiners, quantities, time words and markers of change.
_NOT_VALUE = frozenset("""
a an the my our their his her its this that these those some any another new old next last same other every each
now today tonight tomorrow yesterday week month year weekend morning evening night monday tuesday wednesday thursday
friday saturday sunday january february march april may june july august september october november december
again still back here there home work school office remote remotely finally officially full part time
""".split())


def _typed_lower(s: str) -> bool:
    """Whether ``s`` has no capital beyond its first letter and the pronoun I: typed in lower case."""
    rest = re.sub(r"\bI\b", "", s[1:])
    return not any(c.isupper() for c in rest)


def _known_names(known: list[str]) -> dict[str, str]:
    """Each name the known facts hold, by its lower case, in the spelling of the fact (the first fact's, if two)."""
    out: dict[str, str] = {}
    for fact in known:
        for low, name in _names_of(fact):
            out.setdefault(low, name)
    return out


@lru_cache(maxsize=8192)
def _names_of(fact: str) -> tuple[tuple[str, str], ...]:
    """(lower case, spelling) of each name ``fact`` holds past its first word (cached: an entry asks of every fact)."""
    if has_cjk(fact):
        return ()
    out = []
    for m in _FACT_NAME.finditer(fact):
        if m.start() == 0:
            continue  # the sentence's first word is capitalised whatever it is
        name = m.group().rstrip(".")
        if len(name) >= 3 and name.casefold() not in STOPWORDS:
            out.append((name.casefold(), name))
    return tuple(out)


def _lower_words(known: list[str]) -> set[str]:
    """The lower-case words the known facts hold."""
    return set().union(*map(_lower_words_of, known))


@lru_cache(maxsize=8192)
def _lower_words_of(fact: str) -> frozenset[str]:
    return frozenset() if has_cjk(fact) else frozenset(re.findall(r"(?<![\w.])[a-z][a-z-]+", fact))


class Truecaser:
    """``truecased`` against one list of known facts, for many sentences: the facts' names and lower-case words are
    read once (an entry's sentences share them), and a name is looked for only where the sentence holds it."""

    def __init__(self, known: list[str]) -> None:
        self.common = _lower_words(known)
        # longest first; a word the facts also hold in lower case ("Slack" beside "cut some slack") is no name alone
        self.names = [(low, name) for low, name in sorted(_known_names(known).items(), key=lambda kv: -len(kv[0]))
                      if low not in self.common]

    def __call__(self, s: str) -> str:
        """``s`` (a user's own English sentence) with the pronoun I, the known facts' names and, when it is typed
        wholly in lower case, the values its frames name, capitalised (see the module docstring)."""
        if has_cjk(s) or not s:
            return s
        lower = _typed_lower(s)
        out = _PRONOUN.sub("I", s)
        for low, name in self.names:
            if low in out:  # only then can the whole-word pattern match (the check is what keeps this cheap)
                out = re.sub(rf"(?<![\w.]){re.escape(low)}(?![\w])", name, out)  # only where typed in lower case
        if lower:
            out = _frame_values(out, self.common)
            out = re.sub(r"(?<![\w.])([a-z])(?=[a-z]+\s+v?\d+\.\d)", lambda m: m.group(1).upper(), out)  # "python 3.12"
        return out


def truecased(s: str, known: list[str]) -> str:
    """``s`` (a user's own English sentence) truecased against the facts ``known`` (``Truecaser`` for many)."""
    return Truecaser(known)(s)


def _frame_values(s: str, common: set[str]) -> str:
    """``s`` with the one or two words after each value frame capitalised (see the module docstring)."""
    starts: list[int] = []
    for m in _FRAME.finditer(s):
        at, span = m.end(), list[int]()
        for _n in range(2):
            w = _WORD.match(s, at)
            if not w or w.group() in STOPWORDS or w.group() in _NOT_VALUE:
                break
            if w.group() in common:
                span = []  # "dark theme" beside "a light theme": a common noun phrase, no name
                break
            span.append(w.start())
            at = w.end()
            if s[at:at + 1] != " ":
                break
            at += 1
        starts.extend(span)
    chars = list(s)
    for start in starts:
        chars[start] = chars[start].upper()
    return "".join(chars)
