"""Which ordinary statements of the user (talking to a coding agent) keep a fact: the clause that states a slot.

A user says "I'm based in Lyon, just so you know for time zones.", "You can call me Alexander.",
"The app is deployed on Heroku.", "Background jobs go through RabbitMQ.", "prod is running
PostgreSQL 16", "I'm employed full-time at Deloitte.": each states what fills one of their
(or their project's) slots, in one clause of a longer sentence. ``slot_clause`` finds that
clause by grammar, never by a list of values:

- discourse lead-ins are cut ("Quick update:", "fyi", "ok so", "heads up,": a closed class);
- a request about what to call the user is a name ("you can call me X", "please address me
  as X", "refer to me as X" -> "Call me X" / "I want to be called X Y");
- the sentence is cut into clauses (at ", ", "; ", " - ", ": ") and an aside ("just so you
  know ...", "so you can use the new hooks") is left behind;
- a clause is kept when it opens on the speaker (I, we, my ..., our ...) and the slot grammar
  of ``slots`` reads a slot in it, or when it is a **project statement**: a thing-subject (a
  noun phrase without a person: "the app", "background jobs", "error tracking", "prod") with
  a verb of running, deploying, building or handling and a preposition, then a value of the
  shape of a name ("Heroku", "Fly.io", "PostgreSQL 16", "React 17": a capital letter or a
  version), see ``project_statement``. A weekday or a month is no value;
- a first statement must become a fact, or a later correction has nothing to supersede (round 12), so three more
  shapes keep a clause: the speaker's own activity in the present simple ("I teach chemistry at a high school",
  "we pin node 18 in .nvmrc": ``own_activity``, not a verb of thinking, saying or wanting, nor a definite object of
  the chat), a tool done to a project's thing ("Prettier formats the frontend code", "The Python code is linted
  with flake8", a lower-case tool name at the clause's end: ``tool_statement``) and the speaker's own handle ("My
  GitHub handle is @quietfox": ``own_id``).

How the assistant should answer is a standing preference too ("Please keep answers short, bullet
points only.", "I'd rather you explain things in detail."): ``answer_style`` words it in the third
person ("The user wants the assistant's answers short, bullet points only.") so ``slots`` reads
one slot (``style``) in both and the later one, with a sign of change, replaces the first.

The offline extractor (``offline``) keeps the clause as the fact and reads the same clause
when it looks for the fact a later statement changes (``frames``/``slots`` find the old fact
by its slot).
"""

from __future__ import annotations

import functools
import re

from processors.extract import frames, notes
from processors.extract import slots as sl
from processors.extract.text import capitalized
from processors.extract.voice import SECOND_PERSON, third_person

#: Discourse lead-ins that carry no content (a closed class): "Quick update:", "fyi", "ok so", "heads up,".
_LEAD = re.compile(
    r"^(?:(?:quick|small|little|short)\s+)?(?:update|fyi|f\.y\.i\.|heads[- ]up|btw|by\s+the\s+way|ok(?:ay)?|so|also|"
    r"note|just\s+so\s+you\s+know|for\s+the\s+record|for\s+context|context|news|oh|well|anyway)\b(?:\s+so\b)?"
    r"(?:\s+update\b)?[\s,:;!.-]*",
    re.IGNORECASE)
#: What to call the user, asked of the assistant: "you can call me X", "please (just) address me as X".
_NAME_REQUEST = re.compile(
    r"^(?:(?:please|pls|plz|so|and|just|you\s+can|you\s+may|feel\s+free\s+to|from\s+now\s+on,?)\s+)*"
    r"(?:call|address|refer\s+to)\s+me\s+(?:as\s+)?(?P<v>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'-]*))?)"
    r"(?=\s*(?:[.,;!:-]|$|\s+(?:in|from|when|for|please|going|instead|now|these)\b))",
    re.IGNORECASE)
_PERSON = re.compile(rf"\b(?:{frames.PERSON_NOUNS}|I|me|you|he|she|him|her|they|them)\b", re.IGNORECASE)
#: Subjects that open talk about the work at hand, not a thing of the project ("The problem is React", "The bug is in
#: Chrome", "The author is Bob"): abstract nouns of an episode and nouns for people by their part (closed classes).
_EPISODE = re.compile(r"\b(?:problem|issue|bug|error|question|idea|plan|reason|point|thing|goal|fix|answer|difference|"
                      r"result|output|culprit|cause|solution|catch|trick|test\s+case|example|task|ticket|change|diff|"
                      r"author|owner|maintainer|contact|admin|reviewer|person|guy|user|customer|winner|name|password|"
                      r"token|secret|key)s?$", re.IGNORECASE)
_CLAUSE = re.compile(r",\s+|;\s+|\s+[-–—]+\s+|:\s+|\s+\(")
_SPEAKER_START = re.compile(r"^(?:I\b|I'm\b|I've\b|we\b|we're\b|we've\b|my\b|our\b)", re.IGNORECASE)
#: A value with the shape of a name: capitalised ("Heroku", "GitHub Actions", "Fly.io") or a name with a version.
_VALUE = r"(?-i:[A-Z][\w.+-]*[\w+]|[a-z]+[A-Z][\w.+-]*|[A-Z])(?:\s+(?-i:[A-Z0-9][\w.+-]*))*"
_NOT_VALUE = re.compile(r"^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|^(?:January|February|March|April|May|June|July|"
                        r"August|September|October|November|December)\b|^(?:I|We|You|He|She|They|It)\b")
#: A thing-subject: up to three lower-case words (a possessive or article first), no person, no pronoun.
_THING = (r"(?:(?:the|our|my|this|all|all\s+the|all\s+our)\s+)?(?!(?:he|she|they|it|i|we|you|there|this|that|what|who|"
          r"everyone|everybody|someone|nobody|please|pls|kindly|just|always|never|also|then|so|and|but|or|let|lets|"
          r"let's|don't|do|does|maybe|actually|now|still|only|first|next)\b)[a-z][\w-]*(?:\s+(?!(?:is|are|was|were|runs?|goes|go)\b)[a-z][\w-]*){0,2}")
#: Participles of what a tool does to a project's thing ("is linted with", "is published on", "are reported to").
_TOOL_PASSIVE = (r"linted|formatted|published|released|reported|logged|pinned|versioned|installed|compiled|transpiled|"
                 r"type-?checked|checked|shipped|distributed|cached|queued|mirrored|rendered|styled|authenticated|"
                 r"orchestrated|containeri[sz]ed|proxied|load-balanced|indexed|searched|translated|localized|documented")
#: A tool's own name as a value may be lower case ("flake8", "ruff", "ferncrate", "acme/billing-api"): one token,
#: the clause's last word, never an article, a pronoun or a word of manner ("by hand", "with care": a closed class).
_LOWER_VALUE = r"(?!(?:a|an|the|it|them|us|me|hand|care|default|ease|caution|default)\b)[a-z@.][\w.+/@-]*"
#: Verbs a tool does to a project's thing, in the present ("Prettier formats the frontend code").
_TOOL_ACTIVE = (r"formats|lints|bundles|compiles|transpiles|type-?checks|builds|deploys|hosts|serves|caches|queues|"
                r"monitors|tracks|renders|proxies|schedules|orchestrates|indexes|mirrors|publishes")
#: Verbs of where a project's thing runs or what it is made with, each with its preposition.
_PROJECT_FRAME = re.compile(
    rf"^(?P<k>{_THING})\s+(?:"
    rf"(?:is|are|gets|get)\s+(?:(?:now|currently|all|still|mostly|entirely)\s+)?(?:deployed|hosted|built|written|"
    rf"managed|handled|run|stored|served|tracked|kept|done|powered|backed|packaged|bundled|tested|monitored|"
    rf"provisioned|scheduled|sent|processed|{_TOOL_PASSIVE})\s+(?:on|with|in|by|through|via|to|using|at|from)\s+"
    rf"|(?:goes|go|runs|run|lives|live|sits|sit|go\s+out)\s+(?:now\s+)?(?:on|through|to|via|in|"
    rf"out\s+through|over|under|with|on\s+top\s+of)\s+"
    rf"|(?:is|are)\s+(?:now\s+)?(?:on|via)\s+"
    rf"|(?:is|are)\s+(?:now\s+)?(?=(?-i:[A-Z]))"
    rf"|(?:is|are|'s)\s+(?:now\s+|currently\s+)?(?:running|using|on)\s+"
    rf"|(?:uses|use|runs|run|targets|target|requires|require)\s+)"
    rf"(?:(?:a|an|the)\s+)?(?P<v>{_VALUE})", re.IGNORECASE)
#: A tool-subject doing its work on a project's thing: "Prettier formats the frontend code" (a determiner before the thing).
_TOOL_FRAME = re.compile(rf"^(?P<v>{_VALUE})\s+(?:{_TOOL_ACTIVE})\s+(?:the|our|all|all\s+the|all\s+our|every)\s+"
                         rf"(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,2}})$", re.IGNORECASE)
#: A project's thing done by a tool of a lower-case name, the clause's end ("The Python code is linted with flake8",
#: "the repo is acme/billing-api": a bare "is" only with a path of the shape owner/name).
_LOWER_FRAME = re.compile(
    rf"^(?P<k>{_THING})\s+(?:(?:is|are|gets|get)\s+(?:(?:now|currently|all|still|always)\s+)?(?:{_TOOL_PASSIVE}|deployed|"
    rf"hosted|built|written|managed|handled|tested|bundled|packaged|formatted)\s+(?:with|by|using|via|through|on|to|as)\s+"
    rf"(?P<v>{_LOWER_VALUE}(?:\s+v?\d[\w.]*)?)|(?:is|are)\s+(?:named|called)\s+(?P<n>{_LOWER_VALUE})"
    rf"|(?:is|are)\s+(?P<p>[a-z][\w.-]*/[\w.-]*\w))$", re.IGNORECASE)
#: The speaker's own activity in the present simple ("I teach chemistry at a high school", "I work night shifts", "we
#: pin node 18 in .nvmrc", "I play in a chess club and I run marathons"): I or we, a verb in its plain form and what
#: follows; not a verb of thinking, saying, seeing or wanting, a form of be/have/do, a modal or an irregular past
#: (closed classes of the grammar), nor an object that points at the chat ("I run it nightly").
_OWN_ACTIVITY = re.compile(
    r"^(?:I|we)\s+(?:(?:usually|normally|mostly|always|also|still|currently|generally|often|mainly|now)\s+)?"
    r"(?!(?:am|are|is|was|were|be|been|have|has|had|do|does|did|don't|doesn't|didn't|can|can't|cannot|must|shall|"
    r"think|know|knew|mean|see|saw|seen|feel|felt|guess|say|said|ask|tell|told|agree|understand|remember|forget|believe|"
    r"suppose|doubt|assume|promise|bet|hear|heard|notice|wonder|get|got|just|really|actually|like|love|hate|prefer|"
    r"hope|wish|want|need|let|expect|care|reckon|figure|suspect|admit|apologi[sz]e|appreciate|went|ran|made|took|wrote|"
    r"left|came|gave|found|did|thought|bought|brought|sat|met|spent|lost|built|sent|began|broke|ate|drank|drove|flew|"
    r"fell|kept|paid|put|set|sold|spoke|stood|taught|won|quit|read|hit|cut|moved|not|never|no)\b)"
    r"(?P<verb>[a-z]+)(?<!ed)(?<!ing)\s+(?P<rest>\S.*)$", re.IGNORECASE)
_OTHER_PERSON = re.compile(rf"\b(?:{frames.PERSON_NOUNS}|you|he|she|him|her|they|them|his|their)\b", re.IGNORECASE)
_BARE_THING = re.compile(r"^(?:(?:by|with|on|in|to|at|for)\s+)?(?:my|our|the)\s+[\w-]+$", re.IGNORECASE)
_DEFINITE_OBJECT = re.compile(r"^(?:the|this|that|these|those|your)\b", re.IGNORECASE)
_POINTS_AT_CHAT = re.compile(r"\b(?:it|them|this|that|these|those|there|here|yesterday|today|tonight|tomorrow|"
                             r"ago|last\s+(?:week|month|year|night|time)|this\s+(?:morning|afternoon|evening|week))\b",
                             re.IGNORECASE)
#: Where a clause's own statement ends: a clause of reason or time with its own subject ("since we consolidated").
_SUBORDINATE = re.compile(r"\s+(?:ever\s+)?(?:since|because|as|after|when|so|once|now\s+that)\s+"
                          r"(?:the|we|I|our|my|it|they|he|she|you)\b.*$", re.IGNORECASE)


#: A clause that opens on a verb of change in the past has dropped its subject, the speaker ("Started at Stripe").
_NO_SUBJECT = re.compile(r"^(?:(?:just|finally|recently|also|officially|now)\s+)*(?:got|started|joined|moved|relocated|"
                         r"switched|left|became|settled|began|went|finished|migrated|upgraded|changed|quit)\b",
                         re.IGNORECASE)


def _with_subject(part: str) -> str:
    return "I " + part[0].lower() + part[1:] if _NO_SUBJECT.match(part) else part


def dropped_subject(part: str) -> bool:
    """Whether ``part`` opens on a verb of change with its subject, the speaker, left out ("Started at Stripe")."""
    return bool(_NO_SUBJECT.match(_lead_cut(part)))


def with_subject(part: str) -> str:
    """``part`` with a dropped speaker restored ("started at Stripe" -> "I started at Stripe"), lead-ins cut."""
    return _with_subject(_lead_cut(part))


def _lead_cut(s: str) -> str:
    for _ in range(3):
        m = _LEAD.match(s)
        if not m or not s[m.end():].strip():
            break
        s = s[m.end():]
    return s.strip()


def name_request(s: str) -> str | None:
    """"You can call me Alexander." -> "Call me Alexander."; a name of two words -> "I want to be called X Y."."""
    m = _NAME_REQUEST.match(s.strip())
    if not m:
        return None
    v = m.group("v").rstrip(".")
    return f"Call me {v}." if " " not in v and not v.endswith(".") else f"I want to be called {v}."


def project_statement(clause: str) -> bool:
    """Whether ``clause`` says where a project's thing runs or what it is made with ("The app is deployed on Heroku",
    "Background jobs go through RabbitMQ", "prod is running PostgreSQL 16"), a value of a name's shape."""
    m = _PROJECT_FRAME.match(clause.strip())
    if not m or _NOT_VALUE.match(m.group("v")):
        return False
    k = m.group("k")
    return not _PERSON.search(k) and not _EPISODE.search(k)  # "my brother is running Arch", "the bug is in Chrome"


def tool_statement(clause: str) -> bool:
    """Whether ``clause`` says which tool does what to a project's thing where ``project_statement``'s value of a
    capitalised name does not fit: a tool-subject ("Prettier formats the frontend code") or a tool of a lower-case
    name at the clause's end ("The Python code is linted with flake8", "The repo is acme/billing-api")."""
    body = clause.strip(" .!")
    m = _TOOL_FRAME.match(body)
    if m and not _NOT_VALUE.match(m.group("v")) and not _PERSON.search(m.group("k")):
        return True
    lower = _LOWER_FRAME.match(body)
    return lower is not None and not _PERSON.search(lower.group("k")) and not _EPISODE.search(lower.group("k"))


def own_activity(clause: str) -> bool:
    """Whether ``clause`` states what the speaker does as a standing matter, in the present simple ("I teach chemistry
    at a high school", "we pin node 18 in .nvmrc"), short, about the speaker alone, pointing at nothing in the chat."""
    body = clause.strip(" .!")
    m = _OWN_ACTIVITY.match(body)
    if not m or len(body.split()) > 12 or _HEDGE.search(body) or _POINTS_AT_CHAT.search(m.group("rest")):
        return False
    rest = m.group("rest")
    if _BARE_THING.match(rest) or _DEFINITE_OBJECT.match(rest):  # "I go by my handle" (its value cut off by a comma),
        return False  # "I read the output file": a thing of the chat, the work at hand
    return not frames.other_subject(body, "") and not _OTHER_PERSON.search(rest)


#: A speaker's own identifier: "My GitHub handle is @quietfox", "my username on the forum is ktran_9" (the nouns of an
#: identifier, a closed class; a secret is never one, see ``notes.secret_in``).
_OWN_ID = re.compile(r"^(?:my|our)\s+(?:[\w.-]+\s+){0,2}?(?:handle|username|user\s*name|user\s+id|id|nick(?:name)?|"
                     r"login|alias|gamertag|account(?:\s+name)?)(?:\s+(?:on|at|in|for)\s+(?:the\s+)?[\w.-]+(?:\s+[\w.-]+)?)?"
                     r"\s+is\s+(?P<v>@?[\w][\w.@+-]*\w)$", re.IGNORECASE)


def own_id(clause: str) -> bool:
    """Whether ``clause`` states the speaker's own handle or user name ("My GitHub handle is @quietfox")."""
    return bool(_OWN_ID.match(clause.strip(" .!")))


def thing_statement(clause: str) -> bool:
    """Whether ``clause`` is about a thing, not a person: a project statement or when a recurring thing happens."""
    body = clause.strip(" .!")
    return project_statement(body) or tool_statement(body) or _recurring(body)


#: The slots a clause about the speaker is kept for: who they are, where they live and work, what they are called,
#: what they use or have, their versions, preferences and schedules (not what they are doing, nor a count or a like).
KEPT_KINDS = frozenset({"home", "employer", "name", "role", "version", "prefer", "use", "has", "schedule", "partner",
                        "age", "tool", "style"})
#: A hedge, a guess, hearsay, a plan or a wish: no state that holds now.
_HEDGE = re.compile(r"\b(?:think|thinks|thought|guess|heard|wonder|wondering|leaning|confident|glad|hope|hoping|"
                    r"meaning\s+to|will|won't|'ll|probably|maybe|perhaps|would|'d|might|could|should|may|sure|seems?|"
                    r"considering|planning|trying|tried|want|wanted|wish|need|needed|realized|noticed|learned|found)\b", re.IGNORECASE)


def _speaker_slot(clause: str) -> bool:
    """Whether a clause opening on the speaker fills one of the ``KEPT_KINDS`` slots ``slots`` reads, about the
    speaker alone (no other person, no hedge)."""
    if not _SPEAKER_START.match(clause) or _HEDGE.search(clause) or frames.other_subject(clause, ""):
        return False
    third = third_person(clause, "the user", team=True)
    return bool(third) and any(_kept(x, third or "") for x in sl.slots(third or ""))


def _kept(x: sl.Slot, third: str) -> bool:
    """A slot worth a fact of its own: of ``KEPT_KINDS``; a thing one has is the clause's subject with a value of a
    name's shape ("My car is a 2023 Honda Civic", not "my current one is getting old"); a schedule recurs."""
    if x.kind not in KEPT_KINDS:
        return False
    if x.kind == "has":
        subject = re.match(r"(?:the\s+user's|the\s+team's)\s+(?:[a-z]+\s+){0,2}?" + re.escape(x.key.split()[-1]) + r"\b",
                           third, re.IGNORECASE) if x.key else None
        return subject is not None and bool(re.match(r"(?:(?:a|an|the)\s+)?(?:[A-Z0-9]|\w+[-_.]\w)", x.value))  # "billing-core"
    if x.kind == "schedule":
        return _recurring(third)
    return True


def _states(clause: str) -> bool:
    body = clause.strip(" .!")
    if not body or len(body.split()) > 16 or SECOND_PERSON.search(body) or frames.irrealis(body) \
            or notes.secret_in(body):  # "The staging password is Swordfish": never a fact
        return False
    return _speaker_slot(body) or own_activity(body) or own_id(body) or thing_statement(body)


def _recurring(body: str) -> bool:
    """"Team meetings are on Thursdays": when a recurring thing happens (a plural weekday or "every ..."), its slot."""
    return bool(re.search(r"\b(?:every\s+\w+|nightly|daily|weekly|biweekly|monthly|hourly|"
                          r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days)\b", body)) \
        and any(x.kind == "schedule" for x in sl.slots(body)) and not _PERSON.match(body.removeprefix("The user"))


def differs(s: str) -> bool:
    """Whether ``slot_clause`` may find a clause other than the sentence itself (a lead-in, a clause break, a dropped
    subject or a name request): the supersede side reads the clause only then."""
    return bool(_CLAUSE.search(s) or _LEAD.match(s) or _NO_SUBJECT.match(s) or _NAME_REQUEST.match(s))


@functools.lru_cache(maxsize=4096)
def slot_clause(s: str) -> str | None:
    """The clause of a user's sentence ``s`` that states one of their (or their project's) slots, as a sentence of
    its own ("I'm based in Lyon."), or None (see the module docstring)."""
    s = _lead_cut(s.replace("\u2019", "'").strip())
    named = name_request(s)
    if named is not None:
        return named
    if s.rstrip().endswith("?"):
        return None
    parts = [p.strip() for p in _CLAUSE.split(s.rstrip(" .!")) if p.strip()]
    for part in parts:
        part = _with_subject(_SUBORDINATE.sub("", _lead_cut(part)).strip())
        named = name_request(part)  # "For drafts, please just address me as Chidi."
        if named is not None:
            return named
        if _states(part):
            return capitalized(part) + "."
    return None


_STYLE_LEAD = re.compile(r"^(?:(?:from\s+now\s+on|going\s+forward|in\s+future|actually|also|again)\b[\s,:]*)+",
                         re.IGNORECASE)
_STANDING = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|in\s+future|from\s+here\s+on|always|by\s+default)\b",
                       re.IGNORECASE)
_STYLE_PREFER = re.compile(r"^I\s+(?:prefer|like|want)\s+(?P<v>(?:[\w-]+\s+){1,3}?)(?P<k>answers|replies|responses|"
                           r"explanations)\b(?P<rest>[^.!?]*)", re.IGNORECASE)
_STYLE_KEEP = re.compile(r"^(?:(?:please|always|just|and)\s+)*(?:keep|make)\s+(?:your\s+|the\s+|all\s+|my\s+)?"
                         r"(?P<k>answers|replies|responses|explanations)\s+(?P<v>[^.!?]+)", re.IGNORECASE)
_STYLE_RATHER = re.compile(r"^(?:(?:actually|honestly|so|but|and|no)\s*,?\s+)*I(?:'d|\s+would)\s+(?:rather|prefer)\s+"
                           r"(?:(?:that|if)\s+)?you\s+(?P<v>(?:explain|answer|reply|respond|keep|give|write)\b[^.!?]+)",
                           re.IGNORECASE)
_STYLE_HAVE = re.compile(r"^(?:(?:actually|honestly|so|but|and|no)\s*,?\s+)*I(?:'d|\s+would)\s+(?:rather|prefer\s+to|like\s+to)\s+"
                         r"(?:have|get|see|receive)\s+(?P<v>(?:[\w-]+\s+){0,3}?)(?P<k>answers|replies|responses|explanations)\b"
                         r"(?P<rest>[^.!?]*)", re.IGNORECASE)
_STYLE_IN = re.compile(r"^(?:(?:please|always|just|and)\s+)*(?P<k>answer|reply|respond)\s+(?P<v>(?:in|with)\s+[^.!?]+)",
                       re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def answer_style(s: str) -> str | None:
    """How the user wants the assistant to answer, in the third person, or None (see the module docstring)."""
    raw = s
    s = _STYLE_LEAD.sub("", _lead_cut(s.replace("\u2019", "'").strip()))
    s = re.sub(r",?\s+please\s*([.!]*)$", r"\1", s, flags=re.IGNORECASE)  # "Reply in Spanish, please."
    if frames.irrealis(s) or s.rstrip().endswith("?"):
        return None
    m = _STYLE_PREFER.match(s)
    if m:
        return f"The user prefers {m.group('v').strip()} {m.group('k').lower()}{m.group('rest').rstrip(' ,;')}."
    m = _STYLE_KEEP.match(s)
    if m:
        return f"The user wants the assistant's {m.group('k').lower()} {m.group('v').strip(' ,;')}."
    m = _STYLE_RATHER.match(s)
    if m and not _PERSON.search(m.group("v").replace("you", "")):
        return f"The user would rather the assistant {m.group('v').strip(' ,;')}."
    m = _STYLE_HAVE.match(s)  # "I'd rather have detailed explanations with examples from now on"
    if m:
        rest = _STANDING.sub("", m.group("rest")).rstrip(" ,;")
        return f"The user would rather have {m.group('v').strip()} {m.group('k').lower()}{rest}.".replace("  ", " ")
    m = _STYLE_IN.match(s)
    if m and (re.match(r"in\s+(?-i:[A-Z])", m.group("v")) or _STANDING.search(raw)):  # a language, or "from now on"
        return f"The user wants the assistant to {m.group('k').lower()} {m.group('v').strip(' ,;')}."
    return None
