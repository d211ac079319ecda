"""First person to third person: "I went to ..." said by Alice -> "Alice went to ...".

``third_person(sentence, name)`` rewrites an English first-person sentence so that it
names its subject:

* ``I`` becomes the name and the verb after it agrees (adverbs in between are kept):
  "I love" -> "Alice loves", "I'm" -> "Alice is", "I've" -> "Alice has",
  "I'll" -> "Alice will", "I'd" -> "Alice would" (or "had" before a participle),
  "I don't" -> "Alice doesn't"; past tenses and modals stay. After "and" ("my
  partner and I went") the verb is left alone (the subject is plural).
* ``me`` -> the name, ``my``/``mine`` -> the name's, ``myself`` -> themself.
* ``we``/``our``/``us`` -> they/their/them; when the sentence opens with "we" (no "I"
  before it), "<name> says " is put in front, so the subject is still named.
  With ``team=True`` (a user talking about their project) "we" is "the team" instead,
  with the verb agreeing, and "our code/repo/project..." is "the project's ...".

It returns None when it cannot do this safely: a second-person pronoun ("you"), or a
first-person word left over. Chinese sentences go through ``zh_third_person``.
"""

from __future__ import annotations

import re

from processors.extract.text import capitalized

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|\s+|.", re.DOTALL)  # "I0" is one token, not the pronoun I

ADVERBS = frozenset("""
really just also always usually often never still even actually finally recently totally definitely absolutely
sometimes mostly only already kinda truly seriously honestly currently now especially generally typically rarely
hardly mainly personally literally certainly probably normally constantly regularly def so too first once
basically genuinely sorta officially secretly barely nearly almost simply all both
""".split())
MODALS = frozenset("""
can could will would should might must may shall can't cannot couldn't won't wouldn't shouldn't mightn't mustn't
didn't wasn't weren't ought used
""".split())
IRREGULAR_PAST = frozenset("""
went got made took saw had did ran won bought found felt thought met left came began wrote said told gave kept lost
sold taught caught brought built spent sent heard held knew paid put set sat stood understood woke ate drank drove
flew grew hung led lit meant rode rang rose sang shot shut slept spoke stole swam threw wore forgot chose became fell
fed fought hid hit hurt let quit read cut cost broke was were drew dug forgave froze overcame withdrew sought spun
stuck struck swept swung tore bent bet bit bled blew bred burnt burst dealt dreamt dove fled flung forbade knelt
laid leant leapt learnt shook shone sank slid sped spilt split spread sprang stank stung strode strove swore taught
thrust trod underwent upheld wept wound wrung became began begun been done gone seen taken given written eaten
""".split())
_PAST_SUFFIXES = ("took", "came", "went", "made", "built", "wrote", "sold", "told", "found", "gave", "knew", "drove",
                  "ought", "aught", "stood", "forgot", "threw", "grew", "drew", "flew", "wore", "tore", "spent", "sent")
_PARTICIPLE_AFTER_D = frozenset("""
been had gone done seen never already just got made heard told given taken left started finished forgotten known
""".split())
#: Verbs that may follow "and" after an agreed present verb ("I practice and train" -> "practices and trains").
COMMON_VERBS = frozenset("""
train practice play work go read write paint cook run walk try make take spend enjoy love like help teach learn watch
listen sing dance swim hike travel study ride bake build draw volunteer visit explore hang relax chill meditate
stretch exercise lift bike surf ski skate climb fish camp garden sew knit create design code plan save share
use prefer keep need want test deploy review commit push
""".split())
_SPECIAL_3SG = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is", "are": "is", "don't": "doesn't",
                "haven't": "hasn't", "aren't": "isn't", "ain't": "isn't", "'m": "is", "were": "was",
                "gotta": "has to", "wanna": "wants to"}  # "I gotta be patient": never "gottas"
#: "My name is Dana and I work": a word before "<X> and I" that makes it two clauses, not one plural subject.
_NOT_COMPOUND = frozenset("is was are were be am called named to with for from at in on of by about".split())
_AUXILIARIES = frozenset("was were did do does have had has am is are can could would will should".split())
_NON_VERBS = frozenset("""
and or but a an the to of in on at for with from by as that this these those it its my your our their his her
not no yes if when because while who which what where why how than then
""".split())
SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|ya|y'all|u|ur)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b|\bi'(?:m|ve|d|ll)\b", re.IGNORECASE)
_PROJECT_NOUNS = frozenset("""
code codebase repo repository project projects app apps api tests test ci pipeline build docs style conventions
backend frontend service services stack branch branches commits commit team
""".split())


def third_s(verb: str) -> str:
    """The third person singular present of an English base-form verb ("try" -> "tries")."""
    low = verb.lower()
    if low in _SPECIAL_3SG:
        out = _SPECIAL_3SG[low]
    elif re.search(r"(?:s|sh|ch|x|z|o)$", low):
        out = low + "es"
    elif re.search(r"[^aeiou]y$", low):
        out = low[:-1] + "ies"
    else:
        out = low + "s"
    return out.capitalize() if verb[:1].isupper() else out


def _agree(word: str) -> str:
    """The form a verb takes after a third person singular subject that replaced "I"."""
    low = word.lower()
    if low in MODALS or low in IRREGULAR_PAST or low.endswith("ed") or low in _NON_VERBS:
        return word
    if any(low.endswith(p) and len(low) > len(p) + 1 for p in _PAST_SUFFIXES):
        return word  # retook, overcame, rebuilt, mistook
    if low in ("was",):
        return word
    if low.endswith("n't") and low not in _SPECIAL_3SG:
        return word
    return third_s(word)


def _cap(text: str) -> str:
    return capitalized(text)


def possessive(name: str) -> str:
    """"Alice" -> "Alice's", "the user" -> "the user's", "Thomas" -> "Thomas's"."""
    return name + "'s"


def third_person(sentence: str, name: str, *, team: bool = False) -> str | None:
    """``sentence`` in the third person about ``name`` (see the module docstring), or None."""
    s = sentence.replace("\u2019", "'").replace("\u2018", "'")
    if SECOND_PERSON.search(s):
        return None
    rewriter = _Rewriter(_TOKEN.findall(s), name, team)
    for i in range(len(rewriter.toks)):
        rewriter.step(i)
    text = "".join(rewriter.out)
    if rewriter.first_subject == "we" and not team:
        text = f"{_cap(name)} says {text[:1].lower() + text[1:] if not _starts_with_proper(text) else text}"
    if FIRST_PERSON.search(text.replace(name, "").replace(rewriter.poss, "")):
        return None
    return text


_CLAUSE_BREAKS = (";", ".", "!", "?", ":", "-", "–", "—")
_SENTENCE_ENDS = (".", "!", "?", ":")
_WE_CONTRACTIONS = {"we're": " is", "we've": " has", "we'll": " will", "we'd": " would"}


class _Rewriter:
    """The state of one ``third_person`` pass: the tokens, what is written so far, and what the
    next verb must agree with. ``step(i)`` writes the rewrite of token ``i``."""

    def __init__(self, toks: list[str], name: str, team: bool) -> None:
        self.toks = toks
        self.name = name
        self.team = team
        self.poss = possessive(name)
        self.out: list[str] = []
        self.words_idx = [i for i, t in enumerate(toks) if t.strip() and re.match(r"[A-Za-z]", t)]
        self.pos_in_words = {i: k for k, i in enumerate(self.words_idx)}
        self.first_subject = ""
        self.pending_verb = False  # the next verb agrees with a singular third person subject
        self.second_verb = False  # a present verb agreed: a verb after "and" agrees too ("practices and trains")
        self.sentence_start = True

    def emit(self, text: str) -> None:
        self.out.append(_cap(text) if self.sentence_start and text.strip() else text)
        if text.strip():
            self.sentence_start = text.strip()[-1:] in ".!?:"  # a new sentence inside (rare)

    def step(self, i: int) -> None:
        t = self.toks[i]
        if not t.strip() or not re.match(r"[A-Za-z]", t):
            self._non_word(i, t)
            return
        low = t.lower()
        if low in ("i", "i'm", "i've", "i'll", "i'd"):
            self._first_singular(i, low)
        elif low in ("we", "we're", "we've", "we'll", "we'd"):
            self._first_plural(t, low)
        elif self.pending_verb:
            self._pending_verb(t, low)
        elif not self._second_verb(i, t, low):
            self._other_word(i, t, low)

    def _non_word(self, i: int, t: str) -> None:
        """Spaces and punctuation: copied; a clause break ends the "and <verb>" agreement."""
        mark = t.strip()
        if mark in _CLAUSE_BREAKS or (mark == "," and _next_word(self.toks, i) != "and"):
            self.second_verb = False  # a comma before "and" keeps the subject: "I prefer X, and always use Y"
        if mark in _CLAUSE_BREAKS:
            self.pending_verb = False  # "I; run": the word after a clause break is not the subject's verb
        self.out.append(t)
        if mark in _SENTENCE_ENDS:
            self.sentence_start = True
        elif mark and mark not in ('"', "'", "(", "*"):
            self.sentence_start = False

    def _prev_word(self, i: int) -> str:
        k = self.pos_in_words[i]
        return self.toks[self.words_idx[k - 1]].lower() if k > 0 else ""

    def _first_singular(self, i: int, low: str) -> None:
        """"I" / "I'm" / "I've" / "I'll" / "I'd": the name, with the verb it carries agreeing."""
        toks = self.toks
        prev_word = self._prev_word(i)
        plural = (not self.first_subject and prev_word == "and" and _prev_token(toks, i, 2)[:1].isalpha()
                  and _prev_token(toks, i, 3).lower() not in _NOT_COMPOUND) or _next_word(toks, i) == "and"
        self.first_subject = self.first_subject or "i"
        self.emit(self.name)
        if low == "i'm":
            self.out.append(" are" if plural else " is")
        elif low == "i've":
            self.out.append(" have" if plural else " has")
        elif low == "i'll":
            self.out.append(" will")
        elif low == "i'd":
            self.out.append(" had" if _next_word(toks, i) in _PARTICIPLE_AFTER_D else " would")
        else:
            self.pending_verb = not plural and prev_word not in _AUXILIARIES  # "was I tired": no agreement

    def _first_plural(self, t: str, low: str) -> None:
        """"we" and its contractions: "they", or "the team" (singular verb) with ``team``."""
        self.first_subject = self.first_subject or "we"
        if not self.team:
            self.emit("they" + t[2:] if len(t) > 2 else "they")
            return
        self.emit("the team")
        rest = _WE_CONTRACTIONS.get(low)
        if rest:
            self.out.append(rest)
        else:
            self.pending_verb = True

    def _pending_verb(self, t: str, low: str) -> None:
        """The word after a singular subject: adverbs (and "no longer") are kept and wait; the verb agrees."""
        if low in ADVERBS or low in ("no", "longer"):
            self.emit(t)
            return
        self.pending_verb = False
        if low == "not" or t == t.upper():  # "B", "API": no verb of its own to agree
            self.emit(t)
            return
        agreed = _agree(t)
        self.second_verb = agreed != t
        self.emit(agreed)

    def _second_verb(self, i: int, t: str, low: str) -> bool:
        """A common verb after "and" that shares the agreed subject; True when it was written."""
        if not self.second_verb or low in ADVERBS:
            return False
        if _prev_word_skipping_adverbs(self.toks, self.words_idx, self.pos_in_words[i]) != "and":
            return False
        self.second_verb = False
        if low in COMMON_VERBS:
            self.emit(third_s(t))
            return True
        return False

    def _other_word(self, i: int, t: str, low: str) -> None:
        """Object and possessive first-person words; any other word is copied."""
        team = self.team
        if low == "me":
            self.emit(self.name)
        elif low in ("my", "mine"):
            self.emit(self.poss)
        elif low == "myself":
            self.emit("themself")
        elif low == "our":
            self.first_subject = self.first_subject or "we"
            nxt = _next_word(self.toks, i)
            self.emit(("the project's" if nxt in _PROJECT_NOUNS else "the team's") if team else "their")
        elif low == "ours":
            self.emit("the team's" if team else "theirs")
        elif low == "us" and t == "us":
            self.first_subject = self.first_subject or "we"
            self.emit("the team" if team else "them")
        elif low == "ourselves":
            self.emit("the team" if team else "themselves")
        else:
            self.emit(t)


def _starts_with_proper(text: str) -> bool:
    first = re.match(r"[A-Za-z]+", text)
    return first is not None and first.group(0) not in ("They", "The", "Their", "Them", "In", "On", "At", "Last", "This",
                                                   "Since", "After", "Before", "Yesterday", "Today", "And", "But", "So")


def _prev_word_skipping_adverbs(toks: list[str], words_idx: list[int], k: int) -> str:
    """The word before the ``k``-th word, adverbs skipped ("and always use" -> "and" for "use")."""
    for j in range(k - 1, -1, -1):
        w = toks[words_idx[j]].lower()
        if w not in ADVERBS:
            return w
    return ""


def _prev_token(toks: list[str], i: int, n: int) -> str:
    """The ``n``-th non-space token before ``toks[i]`` ("" if none)."""
    seen = 0
    for j in range(i - 1, -1, -1):
        if toks[j].strip():
            seen += 1
            if seen == n:
                return toks[j]
    return ""


def _next_word(toks: list[str], i: int) -> str:
    for j in range(i + 1, len(toks)):
        t = toks[j]
        if t.strip():
            return t.lower() if re.match(r"[A-Za-z]", t) else ""
    return ""


# --- Chinese ------------------------------------------------------------------------------

def zh_third_person(sentence: str, name: str) -> str:
    """A Chinese first-person sentence about ``name`` (用户 or a person's name): 我 -> name, 我的 -> name的,
    我们 -> name们 for a named person, 团队 for the user."""
    s = sentence.replace("我们", "\0")
    s = s.replace("我自己", name + "自己").replace("我的", name + "的").replace("我", name)
    return s.replace("\0", "团队" if name == "用户" else name + "等人")
