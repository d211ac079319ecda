"""What a fact of a conversation says after what happened, cut once its score is known (issue 21, judged quality).

A speaker tells what happened and then how it was: "I went to a pottery workshop on Friday and it
was really enlightening", "I started lifting weights in 2022 - it's been a journey". A reader of
the fact later needs the first part; the comment is the mood a blind reader marks "trivial". The
comment cannot be cut before the sentence is scored (``offline._score`` reads its content words,
and cutting it there dropped facts below the keep threshold), so it is cut from the fact's text
after the score, which keeps the same facts, from the same turns, shorter:

* ``without_comment(fact, name)``: a closing clause "(, | - | and) it/that/this was/is/'s been/has
  made ..." with nothing specific in it (no proper noun but the speaker's name, no number, no
  ordinal, no quoted title) is cut.

* ``without_aside(fact, name)``: what points at the chat rather than at what happened: a discourse
  marker opening the fact ("Of course, Ana ...", "Anyway, ..."), a "like/as <someone> said" aside,
  and a first clause that only agrees before a dash ("Ana is trying new things too - Ana is learning
  the harp" -> "Ana is learning the harp").

Only facts of a named speaker (a conversation between people) go through here; what a user tells
a coding agent is kept in its own words.
"""

from __future__ import annotations

import re

#: Where a comment on what the sentence told begins: a comma, a dash, a semicolon or "and"/"but" before "it",
#: "that", "this" (or "which" after a comma or a dash) and a form of "be" or "make" ("it's been", "that was",
#: "it has made").
_COMMENT = re.compile(
    r"(?P<brk>\s*(?:,|;|\s[-–—]+|[–—])\s*(?:(?:and|but|so)\s+)?|\s+(?:and|but|so)\s+)"
    r"(?:(?P<who>it|that|this|which)\s*(?:(?:'s|\s+has|\s+had)\s+(?:been|made)|(?:'s|\s+is|\s+was|\s+wasn't|\s+isn't)"
    r"(?!\s+(?:become|got|gotten|turned|gone|come)\b)|\s+(?:feels|felt))"
    r"|(?<=[,–—-]\s)the\s+(?:\w+\s+){1,3}?(?:is|are|was|were))"  # "- the colours are stunning"
    r"\s+(?P<rest>[^.!?]*)(?P<end>[.!?]*)$",
    re.IGNORECASE)
#: "... - tough but fun", "..., and Ana feels drawn to it", "... and Ana is really enjoying it", "... and had a great
#: time": a closing mood with no clause of its own, or the speaker's feeling about what the fact told.
_MOOD = re.compile(
    r"(?:\s[-–—]+|[–—])\s*(?P<rest>(?:so\s+|really\s+|pretty\s+|super\s+|a\s+bit\s+)?[a-z]+\s+(?:but|and|yet)\s+"
    r"(?:so\s+|really\s+|also\s+)?[a-z]+)\s*(?P<end>[.!?]*)$|"
    r"(?:,\s*|\s+)(?:and|but|so)\s+(?P<name>(?-i:[A-Z])[\w'-]*)\s+(?:feels|felt|is\s+feeling|was\s+feeling|"
    r"(?:is|was)\s+(?:really\s+|so\s+|totally\s+)?(?:enjoying|loving)\s+(?:it|that|this|every\s+(?:minute|bit)\s+of\s+it))"
    r"\b(?P<rest2>[^.!?]*)(?P<end2>[.!?]*)$|"
    r"(?:,\s*|\s+)and\s+had\s+(?:a|an|such\s+a|the)\s+(?P<rest3>(?:[a-z]+\s+){0,2}?(?:time|blast))\s*(?P<end3>[.!?]*)$",
    re.IGNORECASE)
#: What makes a comment say something a reader needs: a number, an ordinal, a title in quotes.
_SPECIFIC = re.compile(r"\d|[\"“]|\b(?:first|second|third|fourth|fifth|last|only|once|twice)\b", re.IGNORECASE)
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b(?-i:[A-Z])[\w'-]*")
MAX_WORDS = 14  # a longer closing clause tells more than how it was


def without_comment(fact: str, name: str) -> str:
    """``fact`` (a named speaker's, in the third person) without a closing comment on what it told (see the module
    docstring); unchanged when there is none, when the comment names something, or when too little would be left."""
    mood = _MOOD.search(fact)
    if mood is not None and (mood.group("name") is None or mood.group("name") in (name, *name.split())):
        n = next(k for k in ("", "2", "3") if mood.group("end" + k) is not None)
        rest, end = mood.group("rest" + n), mood.group("end" + n)
        return _cut(fact, mood.start(), rest, end, name)
    m = _COMMENT.search(fact)
    if m is None:
        return fact
    if (m.group("who") or "").lower() == "which" and not re.search(r"[,;–—-]", m.group("brk")):
        return fact  # "a job which was in the city": a restrictive "which" tells which one
    return _cut(fact, m.start(), m.group("rest"), m.group("end"), name)


def _cut(fact: str, start: int, rest: str, end: str, name: str) -> str:
    """``fact`` cut at ``start`` unless the comment ``rest`` names something or too little is left before it."""
    names = [w for w in _CAPITAL.findall(rest) if w.removesuffix("'s") not in (name, *name.split(), "I")]
    if names or _SPECIFIC.search(rest) or len(rest.split()) > MAX_WORDS:
        return fact
    head = fact[:start].rstrip(" ,;-–—")
    if len(head.split()) < 4:
        return fact
    return head + (end[:1] or ".")


#: A discourse marker opening a fact: it answers the chat ("Of course, ...", "Anyway, ..."), a closed class of English.
_MARKER = re.compile(r"^(?:(?:of\s+course|anyway|anyways|honestly|actually|basically|well|so|plus|besides|oh|yeah|"
                     r"in\s+the\s+meantime|meanwhile|like\s+i\s+said|as\s+i\s+said)\s*,\s*|(?:especially|just)\s+"
                     r"(?=(?:on|in|after|before|since|when)\s))(?=\S)", re.IGNORECASE)
#: "..., like Ana said, ...", "as Ana mentioned": what was said before in the chat.
_SAID_ASIDE = re.compile(r",?\s+(?:like|as)\s+(?-i:[A-Z])[\w'-]*\s+(?:said|mentioned|told\s+\w+|says|put\s+it)\s*(?:,|(?=[.!?]$))",
                         re.IGNORECASE)
#: "Ana is trying new things too - Ana is learning the harp": a first clause that agrees with the other speaker,
#: then the speaker's own news.
_AGREEING_LEAD = re.compile(r"^[^-–—]*?\b(?:too|as\s+well)\s*(?:\s[-–—]+|[–—])\s*(?P<news>(?-i:[A-Z])[\w'-]*\s.*)$",
                            re.IGNORECASE)


def without_aside(fact: str, name: str) -> str:
    """``fact`` without what points at the chat (see the module docstring)."""
    s = _MARKER.sub("", fact)
    s = _SAID_ASIDE.sub("", s)
    lead = _AGREEING_LEAD.match(s)
    if lead is not None and lead.group("news").split()[0].removesuffix("'s") in (name, *name.split()):
        s = lead.group("news")
    s = s[:1].upper() + s[1:]
    return s if len(s.split()) >= 4 else fact
