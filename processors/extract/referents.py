"""What a sentence of a conversation leans on, made explicit before it becomes a fact (issue 21, judged quality).

A fact is read later, alone, by someone who never saw the conversation. Words whose meaning was
in another sentence lose it there; this module rewrites the ones it can resolve from the same
message and names the ones it cannot, so that the extractor drops them:

* ``resolve_we(sentence, earlier)``: "we" with no one named becomes the speaker and the
  companion the message named ("My wife and I went to Rome. We loved it." -> "... My wife and I
  loved it"); "We went camping with my kids" -> "My kids and I went camping". A companion is a
  relation the speaker states with "my" (family, friends, team, a partner...) or a name joined to
  "I" ("Max and I", "me and Max"); the nearest earlier one wins. Without one the sentence keeps
  its "we" (``unresolved_we`` tells), which ``voice.third_person`` would write as "X says they".
* ``indefinite_this(sentence)``: the storyteller's "this" that introduces a new thing ("I went to
  this yoga retreat near my mom's place", "I'm hooked on this game called FIFA 23") becomes "a".
  It is told by what follows the noun (a name, a place, a relative clause) or by the verb before
  it (went to, found, met, tried...): a "this" that points at a photo stays, and is dropped.
* ``lead_fragment(sentence, said)``: what an intro left behind when it was cut mid-phrase ("And
  thanks for asking, they're good- we got a cat" -> "for asking, ...", "Guess what happened - I
  was in the final ..."): the sentence after its first dash or colon, else None (a fragment
  states no fact). An intro cut at a comma ("By the way, yesterday I ...") leaves a sentence.
* ``introduction(sentence)``: the speaker introducing someone ("... - meet Toby, my puppy", "This
  is Max, my new dog") says whom they have: "I now have a puppy named Toby".
* ``tidy(sentence, said)``: all of the above, and a tail that shows something ("... - check out
  this pic from my trip") or how it felt ("..., and it was so much fun") cut off.
* ``lost_referent(sentence)``: a thing pointed at ("that event", "those courts", "this bouquet"),
  a bare "it"/"this"/"one" that is the object of the main verb, a bare "to" ("I've been wanting
  to for a while"), or a "he"/"she"/"they" with no
  noun or name before it in the sentence ("I put a lot of work into restoring it", "I noticed
  they weren't acting normally").

Only English sentences by a named speaker (a conversation between people) go through here.
"""

from __future__ import annotations

import re

from processors.extract.text import capitalized

_RELATION = (r"(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|family|fam|kids|children|son|daughter|"
             r"sons|daughters|friends?|buddies|pals|team|teammates|classmates|coworkers|co-workers|colleagues|workmates|"
             r"parents|mom|mum|mother|dad|father|sister|brother|siblings|sisters|brothers|cousins?|grandparents|grandma|"
             r"grandpa|roommates?|band|bandmates|crew|group|club|neighbors|neighbours|students|class|gang|mates)")
#: "my (best) friends", "my older sister", "my two kids": a companion the speaker names by relation.
_MY_COMPANION = re.compile(rf"\bmy\s+((?:(?:little|older|younger|big|best|new|old|close|two|three|four|\w+'s)\s+)?"
                           rf"{_RELATION})\b", re.IGNORECASE)
#: "Max and I", "me and Max", "I and my ...": a name joined to the speaker.
_NAMED_WITH_ME = re.compile(r"\b(?-i:([A-Z][a-z]+))\s+and\s+(?:I|me)\b|\bme\s+and\s+(?-i:([A-Z][a-z]+))\b")
_NOT_NAME = frozenset("I My We Our The A An It This That And But So Then Yesterday Today Me".split())
_WE = re.compile(r"\b(we're|we've|we'll|we'd|we)\b", re.IGNORECASE)
_WE_VERB = {"we're": " are", "we've": " have", "we'll": " will", "we'd": " would", "we": ""}


def _companion(text: str) -> str | None:
    """The companion ``text`` names last ("my husband", "Max"), or None."""
    found: list[tuple[int, str]] = []
    for m in _MY_COMPANION.finditer(text):
        found.append((m.start(), "my " + m.group(1)))
    for m in _NAMED_WITH_ME.finditer(text):
        name = m.group(1) or m.group(2)
        if name not in _NOT_NAME:
            found.append((m.start(), name))
    return max(found)[1] if found else None


def resolve_we(sentence: str, earlier: list[str]) -> str:
    """``sentence`` with its first "we" made "<companion> and I" when the sentence or an earlier one of the same
    message names who that is (see the module docstring); else unchanged."""
    m = _WE.search(sentence)
    if m is None or re.search(r"\b(?:and\s+I|I\s+and|me\s+and)\b", sentence[:m.start()]):
        return sentence
    here = re.search(rf"\s+with\s+({_MY_COMPANION.pattern})", sentence[m.end():], re.IGNORECASE)
    if here:
        who = here.group(1)
        cut = m.end() + here.start(), m.end() + here.end()
        sentence = sentence[:cut[0]] + sentence[cut[1]:]
    else:
        found = next((c for c in (_companion(s) for s in reversed(earlier)) if c), None)
        if found is None:
            return sentence
        # "we ... to teach our kids": the kids are not among "we", the household is
        who = "my family" if _ours(found, sentence[m.end():]) else found
    subject = f"{who} and I{_WE_VERB[m.group(1).lower()]}"
    if m.start() == 0 or sentence[:m.start()].rstrip()[-1:] in ".!?":
        subject = capitalized(subject)
    return sentence[:m.start()] + subject + sentence[m.end():]


def _ours(companion: str, rest: str) -> bool:
    """Whether the rest of a "we" sentence calls ``companion`` ("my kids") "our kids": then they are not "we"."""
    relation = companion.split()[-1]
    return companion.startswith("my ") and bool(re.search(rf"\bour\s+(?:\w+\s+)?{re.escape(relation)}\b", rest,
                                                          re.IGNORECASE))


#: "your husband", "your two kids": a companion of the person spoken to, named by relation.
_YOUR_COMPANION = re.compile(rf"\byour\s+((?:(?:little|older|younger|big|best|new|old|close|two|three|four)\s+)?"
                             rf"{_RELATION})\b", re.IGNORECASE)
#: "you and Max", "Max and you".
_NAMED_WITH_YOU = re.compile(r"\byou\s+and\s+(?-i:([A-Z][a-z]+))\b|\b(?-i:([A-Z][a-z]+))\s+and\s+you\b")


def asked_companion(previous: str) -> str:
    """The companion the other speaker's message just named for the speaker ("How did you and your partner meet?" ->
    "my partner", "Did you and Max have fun?" -> "Max"), as an earlier sentence for ``resolve_we``; "" if none.
    The reply's "we" ("We met in college") is the speaker and that companion."""
    found: list[tuple[int, str]] = []
    for m in _YOUR_COMPANION.finditer(previous):
        found.append((m.start(), "my " + m.group(1)))
    for m in _NAMED_WITH_YOU.finditer(previous):
        name = m.group(1) or m.group(2)
        if name not in _NOT_NAME:
            found.append((m.start(), name))
    return max(found)[1] if found else ""


def unresolved_we(sentence: str) -> bool:
    """Whether ``sentence`` has a "we" with nobody named beside the speaker (see ``resolve_we``)."""
    return bool(_WE.search(sentence)) and not re.search(r"\b(?:and\s+I|I\s+and|me\s+and|and\s+me)\b", sentence) \
        and _companion(sentence) is None


_TIME_NOUN = (r"(?:week|weekend|month|year|morning|evening|afternoon|night|time|summer|winter|spring|fall|autumn|"
              r"past|coming|day|moment|season|semester)s?")
_SPECIFIER = r"(?:called|named|near|in|at|from|that|which|where|who)\b|(?-i:[A-Z])"
#: A participle ends no noun phrase: "I had this custom made by ..." points at a thing shown.
_PARTICIPLE = r"(?:\w+ed|made|done|built|given|taken|written|drawn|grown|seen|shown|sold|bought|brought)"
_INTRODUCING_VERB = (r"(?:went\s+to|go\s+to|got\s+to\s+go\s+to|been\s+to|found|discovered|met|joined|tried|visited|got|"
                     r"bought|saw|watched|read|heard|started|came\s+across|stumbled\s+(?:on|upon|across)|signed\s+up\s+for|"
                     r"hooked\s+on|into|obsessed\s+with|love|loving|reading|playing|watching|attended|took|taking|"
                     r"picked\s+up|learned|learning)")
_FUNCTION_WORD = (r"(?:I|you|he|she|it|we|they|me|him|her|us|them|the|a|an|my|your|his|our|their|its|this|these|some|"
                  r"every|no|all|each|is|was|are|were|has|have|had|can|will|would|could|should|might|may|must|really|"
                  r"just|so|very|much|many|way|kind|sort|point|far|good|long|said|one|ones|too|as|'s|I'm|I've|and|or|but|after|before|"
                  r"when|because|since|while|if|then|to|for|in|on|at|of|with|from|by|into|about|up|out|off|over)\b")
_THIS_NP = re.compile(rf"\b(this)\s+(?!{_TIME_NOUN}\b|{_FUNCTION_WORD})((?:[a-z][\w-]*\s+){{0,2}}?(?!{_PARTICIPLE}\b)[a-z][\w-]*)"
                      rf"(?=\s+(?:{_SPECIFIER}))",
                      re.IGNORECASE)
_VERB_THIS = re.compile(rf"\b{_INTRODUCING_VERB}\s+(this)\s+(?!{_TIME_NOUN}\b|{_FUNCTION_WORD})(?=[a-z])",
                        re.IGNORECASE)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


_FELT_BEFORE = re.compile(r"\b(?:loving|love|loved|enjoying|enjoy|enjoyed|digging|like|liked)\s+$", re.IGNORECASE)


def indefinite_this(sentence: str) -> str:
    """``sentence`` with a storyteller's "this <noun>" made "a <noun>" (see the module docstring)."""
    m = _THIS_NP.search(sentence) or _VERB_THIS.search(sentence)
    if m is None or _FELT_BEFORE.search(sentence[:m.start(1)]):
        return sentence  # "I'm loving this job": a thing shown or said before, not a story's "this" (``quality``)
    start, end = m.span(1)
    rest = sentence[end:].lstrip()
    art = _article(rest)
    if sentence[start:end][:1].isupper():
        art = art.capitalize()
    return sentence[:start] + art + sentence[end:]


_DASH = re.compile(r"\s*(?:\s[-–—]+|[-–—]+\s|:)\s*")


_CLAUSE_CUE = re.compile(r"\b(?:I|I'm|I've|my|me|we|we're|our|us|is|was|are|were|has|have|had)\b", re.IGNORECASE)
#: "meet Toby, my puppy" / "this is Max, my new dog": the speaker introduces someone they have.
_INTRODUCED = re.compile(r"(?:^|[-–—:,!]\s*)(?:meet|this\s+is)\s+((?-i:[A-Z])[\w'-]+),?\s+my\s+((?:\w+\s+){0,2}?\w+)"
                         r"\s*[.!]*$", re.IGNORECASE)


def lead_fragment(sentence: str, said: str) -> str | None:
    """``sentence`` (``said`` without its intro) unless the intro was cut off mid-phrase and left a lowercase piece
    that is no clause ("And thanks for asking, ..." -> "for asking, ..."): then its part after the first dash or
    colon, or None."""
    s = sentence.lstrip()
    first = re.split(r"\s[-–—]+\s|[-–—]+\s|[,:;]", s, maxsplit=1)[0]
    if not s[:1].islower() or s == said.lstrip() or _CLAUSE_CUE.search(first):
        return sentence
    m = _DASH.search(s)
    if m is None:
        return None
    rest = s[m.end():].strip()
    return capitalized(rest) if rest else None


def introduction(sentence: str) -> str:
    """"... - meet Toby, my puppy" / "This is Max, my new dog": "I now have a puppy named Toby"; else ``sentence``."""
    m = _INTRODUCED.search(sentence)
    if m is None:
        return sentence
    what = m.group(2)
    return f"I now have {_article(what)} {what} named {m.group(1)}."  # "now": dated as of the message


#: "... - check out this pic from one of my trips": a clause that shows, after what the sentence states.
_SHOW_TAIL = re.compile(r"\s*(?:\s[-–—]+|[-–—]+\s|[:;,])\s*(?:check\s+(?:it\s+)?out|here'?s|here\s+is|look\s+at|see)\b.*$",
                        re.IGNORECASE)


_SINCE_WE_TALKED_AFTER = re.compile(r"\s+since\s+(?:(?:we|I|you)\s+last\s+(?:talked|spoke|chatted|caught\s+up|met)|"
                                    r"(?:the|our)\s+last\s+(?:chat|talk|time\s+we\s+\w+|conversation))\b", re.IGNORECASE)
_SINCE_WE_TALKED = re.compile(r"^(?:ever\s+)?since\s+(?:(?:we|I|you)\s+(?:last\s+)?(?:talked|spoke|chatted|caught\s+up|met)\b|"
                              r"(?:the|our)\s+last\s+(?:chat|talk|time|conversation)|you\s+[^,.!?]{1,40}(?=,))"
                              r"(?:\s+last)?\s*[,:-]*\s*", re.IGNORECASE)
#: "..., and it was so much fun", "... - it was awesome": how it felt, after what happened.
#: How a speaker feels (a closed set of feeling words; ``quality`` judges whole sentences by it too).
FEEL = (r"(?:happy|glad|grateful|thankful|excited|proud|blessed|lucky|nervous|stressed|sad|tired|fortunate|"
        r"inspired|motivated|amazed|overwhelmed|relieved|hopeful|stoked|pumped|thrilled|anxious|worried|scared|"
        r"bummed|upset|psyched|ecstatic|over\s+the\s+moon|on\s+cloud\s+nine)")
#: A clause saying how the speaker feels about what the sentence told ("..., and I'm stoked about how far I've come",
#: "... but I'm staying positive"): the mood, cut so the specific part is what is kept.
_FEEL_CLAUSE = re.compile(rf"\s*,?\s+(?:and|but|so)\s+(?:I|we)(?:'m|'re|\s+am|\s+are|\s+was|\s+were|\s+feel|\s+felt)\s+"
                          rf"(?:(?:so|really|super|very|truly|pretty|just|totally|still|all)\s+)*"
                          rf"(?:{FEEL}|staying\s+positive|loving\s+it)\b[^.!?]*", re.IGNORECASE)
#: "also" / "too" said against the other speaker's turn ("I also bought a candle", "who also played"): the context it
#: points at is not in the fact.
_ADDITIVE = re.compile(r"^(?P<lead>also,?\s+)|^(?P<head>[^,;:]*?)(?<=\s)also\s+(?!known\b)", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"\b(?:and|but|or|so|while|because)\b", re.IGNORECASE)


def without_additive(fact: str) -> str:
    """``fact`` without the "also" of its first clause ("Gina also lost her job ..." -> "Gina lost her job ...",
    "Also, John bought ..."): it points at the other speaker's turn, which the fact does not carry. An "also" after
    "and", "but" or a comma joins two things the fact says, and stays."""
    m = _ADDITIVE.search(fact)
    if m is None or (m.group("head") is not None and _CLAUSE_BREAK.search(m.group("head"))):
        return fact
    out = fact[m.end():] if m.group("lead") else m.group("head") + fact[m.end():]
    return capitalized(out)
#: What a chat line ends with and a fact does not: a one-word exclamation after a dash ("... a tournament - unreal!",
#: "- so excited!"), a rhetorical "so why not ...".
_CHAT_TAIL = re.compile(rf"\s+[-–—]+\s*(?:(?:so|super|really|very|totally|just)\s+)?(?:{FEEL}|[A-Za-z]+)\s*[!.]*$|"
                        r",?\s+so\s+why\s+not\b.*$", re.IGNORECASE)
_MOOD_TAIL = re.compile(r"\s*(?:[-–—,;]+\s*(?:and\s+)?|\s+and\s+|\s+(?=that\s|which\s))(?:it|that|this|which)\s+(?:was|is|'s|has\s+been)\s+"
                        r"(?:(?:so|really|super|such|pretty|truly|just|very|totally|quite)\s+)*(?:(?:a|an|much)\s+)?"
                        r"(?:fun|awesome|amazing|great|cool|incredible|beautiful|lovely|nice|good|wild|powerful|special|"
                        r"fantastic|epic|magical|blast|unforgettable|memorable|surreal|insane|crazy|relaxing|exciting)\b"
                        r"[^.!?]*", re.IGNORECASE)


def tidy(sentence: str, said: str) -> str | None:
    """``sentence`` (a prepared sentence of ``said``) through ``lead_fragment``, ``introduction`` and
    ``indefinite_this``, without a showing tail ("- check out this pic"); None when it is a fragment."""
    s = lead_fragment(sentence, said)
    if s is None:
        return None
    s = _SINCE_WE_TALKED.sub("", introduction(s)) or s
    s = _SINCE_WE_TALKED_AFTER.sub("", s)  # "I've been running longer since our last chat"
    s = capitalized(s)
    shown = _SHOW_TAIL.search(s)
    s = _SHOW_TAIL.sub(".", s) if shown is not None and shown.start() > 0 else s
    for tail in (_MOOD_TAIL, _FEEL_CLAUSE, _CHAT_TAIL):
        head = tail.sub("", s)
        s = head if len(head.split()) >= 4 else s
    return indefinite_this(s)


#: "those courts", "these snacks", "at that event": a determiner pointing at a thing (not "that" opening a clause).
_POINTED = re.compile(rf"\b(?:this|these|those|(?:at|on|in|to|from|of|with|for|about|into|by|did|love|loved|"
                      rf"like|liked|remember|saw)\s+that)\s+(?!{_TIME_NOUN}\b|{_FUNCTION_WORD})([a-z][\w-]*)\b",
                      re.IGNORECASE)
_BARE_OBJECT = re.compile(
    r"\b(?:\w+ing|made|bought|got|found|love|loved|like|liked|did|tried|painted|finished|started|picked|took|named|"
    r"called|include|watched|read|enjoy|enjoyed|restored|built|fixed|wrote|chose|adopted|gave|saw|keep|kept|"
    r"put)\s+(?:it|this|that|them|one)\b(?!\s+(?:of|from|called|named|is|was)\b)"
    r"|\b(?:on|about|of|with|from|into|at)\s+(?:it|this|that)\s*(?:[.!,]*$|[,;]|\s+(?:for|and|now|so|but|because|"
    r"since|again|too|every|all)\b)"
    r"|\b(?:played|watched|read|tried|ate|saw|working\s+on|worked\s+on|work\s+on)\s+one\b(?!\s+(?:of|from|called|named|is|was)\b)"
    r"|\b(?:make|do|try|get|have|use|need|want|see|show|share|teach|learn)\s+(?:this|that|it|them)\s*[.!]*$"
    r"|\b(?:some|all|most|part|any|much)\s+of\s+(?:it|this|that|them)\b"
    r"|\b(?:go|going|went|gone|head|heading|headed|move|moving|moved|stay|staying|stayed|travel|traveling|travelling|"
    r"fly|flying|flew|get|got|getting)\s+(?:back\s+)?there\b"
    r"|\b(?:saw|see|seen|heard|realized|remember|told\s+\w+)\s+what\s+(?:had\s+)?happened\b(?!\s+(?:at|in|on|to|with|during)\b)"
    r"|\bsomething\s+(?:similar|like\s+(?:that|this|it))\b|\bthe\s+same\s+(?:thing|way)\b(?!\s+(?:as|that)\b)"
    r"|\b(?:been|be|am|is|was|become|became)\s+one\b(?!\s+of\b|\s+(?:\w+\s+)?(?:who|that|which)\b)",
    re.IGNORECASE)
#: "I've been wanting to for a while": to do what another sentence said.
_BARE_TO = re.compile(r"\b(?:want|wanted|wanting|going|trying|hoping|planning|meaning|love|like)\s+to\s*(?:[,.!;]|for\b|but\b|"
                      r"since\b|so\b|$)", re.IGNORECASE)
#: "he", "she", "they": someone said before, unless the sentence names someone first (``_NAME_BEFORE``).
_PERSONAL = re.compile(r"\b(?:he|she|him|her|they|them|their|he's|she's|they're|they've)\b", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"(?<=\s)(?-i:[A-Z])[a-z]+|\b(?:and\s+I|I\s+and|me\s+and)\b")
_NOUN_BEFORE = re.compile(r"\b(?:a|an|the|my|our|his|her|their|some|\w+'s)\s+(?!(?:lot|bit|little|few|couple|while|ton|"
                          r"bunch|great\s+deal)\b)(?:\w+\s+){0,2}?\w+", re.IGNORECASE)


#: "My mom loved to sit there", "I lived there for a year": a place said before, unless the sentence names one first.
_BARE_THERE = re.compile(r"\b(?:sit|sat|sitting|live|lived|living|stand|stood|standing|walk|walked|walking)\s+there\b",
                         re.IGNORECASE)
_PLACE_BEFORE = re.compile(r"\b(?:in|at|to|near|by|from|on)\s+(?:the\s+|a\s+|an\s+|my\s+|our\s+|his\s+|her\s+)?\w+",
                           re.IGNORECASE)


def lost_referent(sentence: str) -> bool:
    """Whether ``sentence`` points at something only another sentence (or a photo) says (see the module docstring)."""
    there = _BARE_THERE.search(sentence)
    if there is not None and not _PLACE_BEFORE.search(sentence[:there.start()]):
        return True
    for m in _POINTED.finditer(sentence):
        word = m.group(1).lower()
        if re.match(rf"\s+(?:{_SPECIFIER})", sentence[m.end():]):
            continue
        if re.search(rf"\b{re.escape(word)}\b", sentence[:m.start()], re.IGNORECASE):
            continue  # "a cake ... that cake": named before
        return True
    if _BARE_TO.search(sentence):
        return True
    b = _BARE_OBJECT.search(sentence) or _PERSONAL.search(sentence)
    if b is None:
        return False
    return not _NOUN_BEFORE.search(sentence[:b.start()]) and not _NAME_BEFORE.search(sentence[:b.start()])


#: "him" / "her" as an object ("I adopted her two years ago", "I take him to the park"): not the possessive "her"
#: (followed by a noun), which only the same rule on a name could rewrite.
_OBJECT_PRONOUN = re.compile(r"\b(him|her)\b(?=\s*(?:[.,!?;:)]|$)|\s+(?:to|for|at|in|on|with|from|into|up|out|home|"
                             r"back|over|around|every|each|a|an|the|some|two|three|last|this|next|yesterday|today|"
                             r"when|since|after|before|because|and|but|so|again|too|already|now)\b)", re.IGNORECASE)
_NOT_ANTECEDENT = frozenset(
    "I I'm I've Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July "
    "August September October November December Christmas Easter Halloween Thanksgiving God".split())
_BEFORE_PLACE = frozenset("the in to from at of a an this that these those my your our his her their".split())
#: "your puppy", "your sister": what the other speaker asked about, the speaker's own in the reply.
_YOUR_ONE = re.compile(r"\byour\s+((?:(?:little|older|younger|big|new|old|baby)\s+)?(?!(?:other|own|one|way|time|life|"
                       r"whole|first|last|best|favorite|favourite|very)\b)[a-z]{3,})\b", re.IGNORECASE)
_MY_ONE = re.compile(r"\b(?:my|a|an)\s+((?:(?:little|older|younger|big|new|old|baby)\s+)?[a-z]{3,})\s+(?:named|called)\s+"
                     r"(?-i:([A-Z][a-z]+))\b")


def _names(text: str, speakers: tuple[str, ...]) -> set[str]:
    """The one-word names of people (or pets) ``text`` holds: a capitalized word inside a sentence, not after another
    one or after a preposition or article ("in Sweden", "the Finals", "Harry Potter"), not a demonym ("Canadian"),
    not a speaker's name, a day or a month."""
    words = re.findall(r"[\w'-]+|[.!?]", text)
    out = set()
    for i, w in enumerate(words):
        if i == 0 or not re.fullmatch(r"(?-i:[A-Z][a-z][A-Za-z]+)", w) or w in _NOT_ANTECEDENT or w in speakers:
            continue
        before, after = words[i - 1], words[i + 1] if i + 1 < len(words) else ""
        if before in ".!?" or before[:1].isupper() or before[:2].strip("'").isdigit() or before.lower() in _BEFORE_PLACE \
                or after[:1].isupper() \
                or re.search(r"(?:ian|ese|ish|ean)$", w):
            continue
        out.add(w)
    return out


def _antecedent(text: str, speakers: tuple[str, ...], mine: bool) -> str | None:
    """The one someone ``text`` names for a later "him"/"her": a pet or person named ("a puppy named Max"), else the
    one name or (``mine``: the speaker's own words) the one "my <relation>", or (the other speaker's words) the one
    "your <noun>" they asked about, as "my <noun>"; None when there is none or more than one."""
    named = _MY_ONE.findall(text)
    if named:
        return named[-1][1] if len({n for _, n in named}) == 1 else None
    found = _names(text, speakers)
    if mine:
        found |= {"my " + m.lower() for m in _MY_COMPANION.findall(text) if not m.endswith("s")}
    else:
        found |= {f"my {m.lower()}" for m in _YOUR_ONE.findall(text) if not m.endswith("s") or m.endswith("ss")}
    return found.pop() if len(found) == 1 else None


def resolve_pronoun(sentence: str, earlier: list[str], previous: str, speakers: tuple[str, ...]) -> str:
    """``sentence`` with its one object "him"/"her" made the one it stands for, when the sentence names no one before
    it and the earlier sentences of the same message (nearest first), or else the other speaker's message just
    before (``previous``), name exactly one candidate ("Did you name your kitten?" / "Yes, I named her Miso" -> "I
    named my kitten Miso"); else unchanged. ``speakers``: the names (and nicknames) of the conversation's speakers."""
    found = list(_OBJECT_PRONOUN.finditer(sentence)) or list(_SUBJECT_PRONOUN.finditer(sentence))
    if len(found) != 1 or len(_THIRD_SINGULAR.findall(sentence)) != 1 \
            or _NAME_BEFORE.search(sentence[:found[0].start()]) or _NOUN_BEFORE.search(sentence[:found[0].start()]):
        return sentence
    who = None
    for text in reversed(earlier):
        who = _antecedent(text, speakers, True)
        if who is not None or _PERSONAL.search(text):
            break  # the nearest sentence that names or points at someone decides
    if who is None and previous:
        who = _antecedent(previous, speakers, False)
    if who is None:
        return sentence
    m = found[0]
    return sentence[:m.start()] + (capitalized(who) if m.start() == 0 else who) + sentence[m.end():]


#: "She loves the beach", "He's three now": the sentence's subject, said of someone named before.
_SUBJECT_PRONOUN = re.compile(r"^(?:he|she)\b(?=\s|'s\b)", re.IGNORECASE)
_THIRD_SINGULAR = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself|they|them|their)\b", re.IGNORECASE)
