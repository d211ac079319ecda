"""Which known fact a change statement is about when no slot grammar reads it: its frame, and whose it is.

A statement that changes a fact keeps the fact's frame (the words that say what the fact is about,
once the values are taken out) and swaps a value: "We use Mailchimp for newsletters" / "Newsletters
go out through Buttondown now" share the frame word "newsletters" and swap "Mailchimp" for
"Buttondown". ``frame_target`` finds the fact whose frame a statement shares best, when each side
holds a value (a name, a number) the other does not, without asking what kind of fact it is: no
list of purposes, tools or places. It is the last resort after the slot grammar of ``slots``.

What says that a statement changes nothing is language, a closed class, not data:

- ``irrealis``: a hypothetical, a plan or a wish ("if I moved to Lisbon", "might move", "thinking
  about leaving", 如果, 打算, 要不要) states no fact that holds now;
- ``additive``: "also", "as well", "in addition", 也, 另外 add a fact next to the old one;
- ``other_subject``: one of the two is about another person (a possessive with a person noun such
  as "my brother", "the user's wife", 我朋友; a pronoun he/she/they; a name the other fact does not
  mention), so neither replaces the other.
"""

from __future__ import annotations

import re

from processors.extract import slots
from processors.extract.text import STOPWORDS, has_cjk
from processors.extract.timeref import MONTHS

_IRREALIS = re.compile(
    r"^(?:if|unless|suppose|supposing|imagine|maybe|perhaps)\b|\b(?:if|unless|in\s+case)\s+(?:I|we|the\s+user|the\s+team)\b"
    r"|\b(?-i:might|may|could|should)\s+(?:be\s+|have\s+|eventually\s+|soon\s+)?[a-z]+|\b(?:thinking|thought)\s+(?:about|of)\b"
    r"|\b(?:considering|contemplating|planning\s+(?:to|on)|hoping\s+to|wondering|dreaming\s+of)\b"
    r"|\b(?:want|wants|wanted)\s+to\s+(?!be\s+called)|\bwould\s+(?:love|like)\s+to\s+(?!be\s+called)"
    r"|\b(?:going|plan|plans)\s+to\s+(?:move|switch|leave|change|quit|migrate|try)\b",
    re.IGNORECASE)
_ZH_IRREALIS = re.compile(r"如果|要是|假如|假设|万一|可能|也许|或许|打算|考虑|想要|想去|想搬|要不要|会不会|准备|计划")
_ADDITIVE = re.compile(r"\b(?:also|as\s+well|in\s+addition|on\s+top\s+of|besides)\b|\btoo\b(?=\s*(?:[.,;!?)]|$))",
                       re.IGNORECASE)  # "me too", "..., too": not "too hot"
_ZH_ADDITIVE = re.compile(r"也|另外|还有|同时")

#: Nouns for people (kin and the people around one): a closed class of the language.
PERSON_NOUNS = (
    "brother|sister|mother|mom|mum|father|dad|parents?|wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|"
    "son|daughter|kids?|children|child|baby|friends?|colleagues?|co-?workers?|boss|roommates?|flatmates?|neighbou?rs?|"
    "cousins?|uncle|aunt|grand(?:ma|pa|mother|father|parents?)|nephew|niece|in-laws?|family|teammates?|classmates?|"
    "managers?|supervisors?|mentors?|landlord|landlady|tenants?|clients?|doctor|dentist|therapist|coach|tutor")
_OTHER_EN = re.compile(
    rf"\b(?:my|our|the\s+user's|the\s+team's|his|her|their)\s+(?:(?:older|younger|little|big|best|new|old|eldest|"
    rf"youngest|oldest)\s+)*(?P<who>{PERSON_NOUNS})\b(?!\s+and\s+(?:I|me|the\s+user)\b)", re.IGNORECASE)
_PRONOUN_SUBJECT = re.compile(r"^(?:(?:and|but|so|now|then|also)\s+)*(?:he|she|they)\b(?!'s\s+(?:the\s+user|me))"
                              r"(?!\s+(?:made|promoted|hired|named|appointed|moved|transferred)\s+(?:me|us|the\s+user)\b)",
                              re.IGNORECASE)
_NAME_SUBJECT = re.compile(r"^(?P<who>[A-Z][a-z]+)\s+(?:is|was|has|had|lives|works|moved|joined|left|likes|loves|prefers|"
                           r"got|became|started|quit|now|just|recently|finally|also)\b")
_ZH_PERSON = ("朋友|哥哥|姐姐|弟弟|妹妹|爸爸|妈妈|父亲|母亲|父母|老婆|老公|妻子|丈夫|太太|先生|女朋友|男朋友|对象|同事|老板|儿子|女儿|"
              "孩子|室友|邻居|同学|表哥|表姐|表弟|表妹|爷爷|奶奶|外婆|外公|家人|亲戚|哥|姐|弟|妹|爸|妈")  # 我哥, 我妈: the short forms
_OTHER_ZH = re.compile(rf"(?:我|用户|我们)的?(?P<who>{_ZH_PERSON})|^(?P<who2>他|她|他们|她们)")

#: Words of a change or of time: never part of a frame or a value.
_MARKERS = frozenset("""
now nowadays currently actually lately recently finally anymore longer instead again still since these days
switched switch moved move migrated upgraded upgrade bumped changed change replaced relocated became become turned
new old current yesterday today tonight tomorrow week weeks month months year years ago last next spring summer autumn
fall winter january february march april may june july august september october november december
everyone got get gets renamed traded swapped rewrote rewritten
""".split())
#: Verbs that say little about what a fact is about ("uses X", "is on X", "goes through X"): never a frame alone.
_LIGHT = frozenset("use uses used using is are be been has have had go goes went gone going do does done doing "
                   "make makes made run runs running happen happens take takes put keep keeps kept out through "
                   "via off back team under over onto into".split())
_NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten eleven twelve".split())
_WORD = re.compile(r"[A-Za-z][\w.+'-]*[\w+]|[A-Za-z]|\d(?:[\w:]|\.(?=\w))*")


_NEGATION = re.compile(r"\b(?:not|no|never|don't|doesn't|isn't|aren't|won't|can't|do\s+not|does\s+not)\b|n't\b",
                       re.IGNORECASE)
_IMPERATIVE = re.compile(r"^(?:please\s+|always\s+|never\s+|just\s+)*(?:don't|do\s+not|never|always|please|use|add|"
                         r"make|keep|stop|avoid|remember|try)\b", re.IGNORECASE)


def reports_change(text: str) -> bool:
    """Whether ``text`` reports that something changed ("Staging got bumped to Postgres 15", "Newsletters go out
    through Buttondown now"): a sign of change besides a negation, and no instruction ("Don't add emojis ...")."""
    return not has_cjk(text) and not imperative(text) and slots.has_cue(_NEGATION.sub(" ", text))


def imperative(text: str) -> bool:
    """Whether ``text`` opens as an instruction ("Please use ...", "Don't ..."): no report of a change."""
    return not has_cjk(text) and bool(_IMPERATIVE.match(text.strip()))


def irrealis(text: str) -> bool:
    """Whether ``text`` is a hypothetical, a plan or a wish, no fact that holds now (see the module docstring)."""
    return bool(_ZH_IRREALIS.search(text) if has_cjk(text) else _IRREALIS.search(text.strip()))


_ONE_OFF = re.compile(r"\b(?:(?:just\s+)?this\s+once|this\s+time\s+only|just\s+this\s+time|one[-\s]off|"
                      r"(?:just\s+)?for\s+(?:today|tonight|this\s+(?:week|time))\s+only|only\s+(?:for\s+)?(?:today|tonight|"
                      r"this\s+(?:time|week)))\b", re.IGNORECASE)
_ZH_ONE_OFF = re.compile(r"就?这一次|仅此一次|只是这次|只有这次|这次例外")


def one_off(text: str) -> bool:
    """Whether ``text`` is scoped to one occasion ("pushed to 11 just this once", 就这一次): the standing fact holds."""
    return bool(_ZH_ONE_OFF.search(text) if has_cjk(text) else _ONE_OFF.search(text))


def additive(text: str) -> bool:
    """Whether ``text`` adds a fact beside what is known ("also", "as well", 也) rather than replacing it."""
    return bool(_ZH_ADDITIVE.search(text) if has_cjk(text) else _ADDITIVE.search(text))


def _others(text: str, *, adjuncts: bool = True) -> set[str]:
    """The people other than the memory's owner that ``text`` is about (their person nouns or names); ``adjuncts``
    False leaves out a person whose thing is only the reason of the user's own act ("for my partner's job")."""
    if has_cjk(text):
        return {m.group("who") or m.group("who2") for m in _OTHER_ZH.finditer(text)}
    out = {m.group("who").casefold().rstrip("s") for m in _OTHER_EN.finditer(text)
           if adjuncts or not _beside_me(text[:m.start()], text[m.end():])}
    s = text.strip()
    if _PRONOUN_SUBJECT.match(s):
        out.add("<pronoun>")
    m = _NAME_SUBJECT.match(s)
    if m and m.group("who").casefold() not in STOPWORDS:
        out.add(m.group("who").casefold())
    return out


#: A person's thing named as the reason of the user's own act ("I relocated to Denver for my partner's job"): the
#: statement is still about the user, the person only an adjunct.
_ADJUNCT = re.compile(r"^(?:(?:oh|and|so|fyi|btw)\s*,?\s+)*(?:I|the\s+user)\s+[a-z]+\b[^,;.!?]*\s(?:for|because\s+of)\s+$",
                      re.IGNORECASE)
#: The people one lives with, named after a verb of living or moving ("I live in Bristol with my partner"): the home
#: is still the user's.
_HOUSEHOLD = re.compile(r"^(?:(?:oh|and|so|fyi|btw)\s*,?\s+)*(?:I|I'm|we|the\s+user)\s+(?:[a-z]+\s+)?(?:live[sd]?|living|"
                        r"moved|relocated)\b[^,;.!?]*\swith\s+$", re.IGNORECASE)


def _beside_me(before: str, after: str) -> bool:
    """Whether a person noun between ``before`` and ``after`` is an adjunct of the user's own clause: a person's thing
    as its reason (``_ADJUNCT``, "'s job" follows) or a household (``_HOUSEHOLD``)."""
    return (bool(_ADJUNCT.search(before)) and bool(re.match(r"'s\s+[a-z]+", after))) or bool(_HOUSEHOLD.search(before))


def about_others(text: str) -> bool:
    """Whether ``text`` is about a person other than the memory's owner ("my sister is back home", "he's back")."""
    return bool(_others(text, adjuncts=False))


def other_people(new: str, old: str) -> bool:
    """Whether ``new`` is about a person ``old`` does not mention, or ``old`` about a kin or companion (a person noun)
    ``new`` does not: one-sided on names, so "Backend is Django 3.2" is no person."""
    if has_cjk(old) or has_cjk(new):
        return other_subject(new, old)
    low, words = old.casefold(), _tokens(old)
    if any(who == "<pronoun>" or (who not in low and not _has(words, _stem(who))) for who in _others(new, adjuncts=False)):
        return True
    return any(m.group("who").casefold().rstrip("s") not in new.casefold() for m in _OTHER_EN.finditer(old)
               if not _beside_me(old[:m.start()], old[m.end():]))


def other_subject(new: str, old: str) -> bool:
    """Whether one of ``new`` and ``old`` is about a person the other does not mention (so neither replaces the
    other): "My brother moved to Hamburg" is not about "The user lives in Munich"."""
    for a, b in ((new, old), (old, new)):
        low, words = b.casefold(), _tokens(b)
        for who in _others(a):
            if who == "<pronoun>" or (who not in low and not _has(words, _stem(who))):
                return True
    return False


def _stem(w: str) -> str:
    for suf in ("ments", "ment", "ings", "ing", "ies", "es", "ed", "s", "e"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def _meet(a: str, b: str) -> bool:
    """Two words of one frame: one stem, or a shared start of 5+ letters ("deploy" / "deployments")."""
    if a == b:
        return True
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 5 or (n == min(len(a), len(b)) and n >= 4)


def _tokens(text: str) -> list[tuple[str, bool, int]]:
    """(stem, value-like, position) of each word of ``text`` that may be frame or value (markers, stop words and
    the owner's words left out); value-like: a capital, a digit, a number word."""
    out = []
    for i, m in enumerate(_WORD.finditer(text.replace("\u2019", "'"))):
        w = m.group().removesuffix("'s")
        low = w.casefold()
        if low in STOPWORDS or low in _MARKERS or low in ("user", "user's", "team's", "project's", "i'm", "i've"):
            continue
        value = any(c.isdigit() for c in w) or low in _NUMBER_WORDS or (w[:1].isupper() and i > 0) or \
            (w[:1].isupper() and len(w) > 1 and any(c.isupper() for c in w[1:]))
        out.append((_stem(low), value or (w[:1].isupper() and i == 0), i))
    return out


def _has(toks: list[tuple[str, bool, int]], stem: str) -> bool:
    return any(_meet(stem, t) for t, _v, _i in toks)


def _modifier(toks: list[tuple[str, bool, int]], word: str, other: list[tuple[str, bool, int]]) -> str | None:
    """The word right before ``word`` in ``toks`` when ``other`` does not hold it, else None."""
    pos = {i: t for t, _v, i in toks}
    for t, _v, i in toks:
        if _meet(t, word) and i - 1 in pos and not _has(other, pos[i - 1]):
            return pos[i - 1]
    return None


def _modified_apart(a: list[tuple[str, bool, int]], b: list[tuple[str, bool, int]], shared: list[str]) -> bool:
    """Whether a shared word has, in each text, a word of its own right before it ("unit tests" / "browser tests"):
    two different things of one kind."""
    return any(_modifier(a, w, b) is not None and _modifier(b, w, a) is not None for w in shared)


#: A date the extractor writes into a fact (``timeref``: "(as of 4 April 2022)", "(by 5 August 2022)", "in May
#: 2023", "2025年3月"): no frame word and no value a correction replaces.
_DATE = re.compile(rf"\((?:as\s+of|by)\s+[^)]*\)|\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\s+)?(?:\d{{1,2}}\s+)?"
                   rf"(?:{'|'.join(MONTHS)})(?:\s+\d{{4}})?\b|\b(?:19|20)\d{{2}}\b|\d{{4}}年(?:\d{{1,2}}月)?(?:\d{{1,2}}日)?")


def _undated(text: str) -> str:
    """``text`` with the dates the extractor writes blanked (same length): a date is no frame word and no value."""
    return _DATE.sub(lambda m: " " * len(m.group()), text)


def frame_score(old: str, new: str) -> float:
    """How much of ``old``'s frame ``new`` keeps while swapping a value, 0.0 when it swaps none (see the module
    docstring): the share of ``old``'s frame words that ``new`` holds."""
    if has_cjk(old) != has_cjk(new):
        return 0.0
    old, new = _undated(old), _undated(new)  # "(as of 1 March 2025)", "in February 2025": the extractor's dates
    a, b = (_zh_tokens(old), _zh_tokens(new)) if has_cjk(old) else (_tokens(old), _tokens(new))
    frame = [t for t, v, _i in a if (v or t not in _LIGHT) and (not v or _has(b, t))]  # "Go" is a name, "go" light  # a shared name is frame ("CI")
    shared = [t for t in frame if _has(b, t)]
    old_values = [t for t, v, _i in a if v and not _has(b, t)]
    new_values = [t for t, v, _i in b if v and not _has(a, t)]
    if not shared or _modified_apart(a, b, shared):
        return 0.0
    score = len(shared) / len(frame)
    if not old_values or not new_values:  # lower-case values ("pytest" / "nox"): half the frame kept, one word each
        old_rest = {t for t, v, _i in a if (v or t not in _LIGHT) and not _has(b, t)}
        new_rest = {t for t, v, _i in b if (v or t not in _LIGHT) and not _has(a, t)}
        named = not any(not v and _has(b, t) for t, v, _i in a if t not in _LIGHT)  # only a name shared
        if named or score < 0.5 or not 1 <= len(old_rest) <= 2 or not 1 <= len(new_rest) <= 2:
            return 0.0  # "Firefox is slow", "Priya moved to Toronto": about that thing, no value swapped
    return score


#: Share of the old fact's frame a statement must keep (one word of a three-word frame).
MIN_FRAME = 0.3


def frame_target(new: str, olds: list[str]) -> int | None:
    """The index of the fact of ``olds`` whose frame ``new`` keeps best while swapping a value, or None."""
    best, at = MIN_FRAME, None
    for i, old in enumerate(olds):
        score = frame_score(old, new)
        if score >= best and not other_subject(new, old):
            best, at = score + 1e-9, i  # the first (newest) of equals
    return at


_ZH_FUNCTION = set("我们用户团队的了是在和与也都还已经现在改换成到做把从被给让就再又很")


def _zh_tokens(text: str) -> list[tuple[str, bool, int]]:
    """Chinese: each pair of characters (function characters left out) as a frame word, each Latin word or number
    as a value."""
    out: list[tuple[str, bool, int]] = []
    for i, m in enumerate(re.finditer(r"[\u3400-\u9fff]+|[A-Za-z][\w.+-]*|\d[\w.]*", text)):
        run = m.group()
        if not has_cjk(run):
            out.append((run.casefold(), True, i))
            continue
        chars = [c for c in run if c not in _ZH_FUNCTION]
        out.extend((chars[j] + chars[j + 1], False, i) for j in range(len(chars) - 1))
    return out



def replaced_values(old: str, new: str) -> list[str]:
    """The names and numbers of ``old`` that ``new`` (which replaces it) no longer holds: the values it swapped out."""
    if has_cjk(old):
        return []
    keep = {t for t, _v, _i in _tokens(new)}
    old = _undated(old)  # the day a fact is dated by is no value it holds
    return [m.group() for m in re.finditer(r"(?<![\w.])(?:[A-Z][\w.+-]*[\w+]|\d[\w.]*\d|\d)(?![\w])", old)
            if m.start() > 0 and _stem(m.group().casefold()) not in keep and m.group().casefold() not in STOPWORDS]


def same_change(other: str, old: str, new: str) -> bool:
    """Whether ``other`` (another known fact) says what ``old`` said, in the frame ``new`` keeps, with a value ``new``
    swapped out: a second wording of the replaced fact ("Work on the project is tracked as Jira tickets." beside "The
    team tracks issues in Jira.")."""
    gone = replaced_values(old, new)
    return bool(gone) and any(re.search(rf"(?<![\w]){re.escape(g)}(?![\w])", other) for g in gone) \
        and frame_score(other, new) >= MIN_FRAME and not other_subject(new, other)

