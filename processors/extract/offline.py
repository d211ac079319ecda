"""The offline fact extractor: deterministic rules, no network, precision first.

``extract(entries, existing) -> list[FactOp]`` reads a batch of source messages (in
order) and the facts already in memory (pass the active ones), and proposes
operations. Same input, same output, byte for byte; rule set ``NAME``.

**Sources.** Only text a person wrote is read (``text.skip_reason``): user messages,
notes, and the turns of a named speaker (a conversation between people). Never an AI
assistant's text, tool output, system messages, ``isMeta`` / compact-summary lines,
local commands, subagent prompts, harness notices ("[Request interrupted ...",
"Caveat: ...", "[Scheduled Task] ..."), nor an entry without a time (a fact needs a
date). Inside a message, injected blocks (``<system-reminder>``, ``<command-name>``,
``<memory>``, any tag with ``-`` or ``_``, except ``<command-args>``: the user's own
arguments), fenced code, quoted lines, a pasted MEMORY.md section, lines equal to a
known fact and what the user pasted or quoted (``pasted``: introduced pastes, reported
speech, chat logs, documents, quotations, text after an orphan closing tag) are removed
first (``text.own_text``). Sentences longer than
``MAX_SENTENCE`` characters are not read (so the work stays linear in the input).

**Sentences.** Each message is split into sentences. Questions are dropped, and so
are requests ("please ...", "can you ...", "let's ...", "check out ...", 帮我...),
sentences addressed to the other person (a second-person pronoun), pleasantries and
reactions ("Thanks!", "I agree", "I'm so glad", "I hope ..."), opinions ("I think
..."), sentences that open on something said before ("It was ...", "That's why ...",
"Reminds me of ...") and sentences too short or too generic to be a fact. Leading
interjections, vocatives and announcements ("Yeah Mel,", "By the way,", "Since we last
talked,", "I've got some great news -") are removed; an announcement's time phrase is
kept. A sentence without its subject ("Just got back from Rome") is the speaker's.

**What is a fact** (English). A sentence about the speaker (I / my ... / we) that
states one of: an event (a past-tense verb: "I went", "we adopted"), identity (job,
home, origin, family, pets, "I'm a ..."), a preference ("I love", "my favorite ... is"),
a habit ("I usually", "every morning"), a plan or goal ("I'm planning to", "my dream
is"). Its score (``_score``) adds ``WEIGHTS`` for those kinds and for specifics
(proper names, titles in quotes, numbers, a resolved date, content words) and takes
``PENALTIES`` for weaknesses (mostly feelings, vague words such as "something" or "a
great time", pronouns whose referent is in another sentence, promises, length). In
every message only its best sentence is a candidate (a second one only if it scores
``SECOND_SCORE`` and says something else), and it becomes a fact with a score of at
least ``MIN_SCORE``. Nothing depends on the batch's size: a conversation fed in one
call or one session at a time gives the same facts (unless a correction in it meets a
fact of another batch). A user working with a coding agent (speaker "user") is held
to more: only conventions ("always use pytest", "never push to main", "we use ruff",
"this project targets 3.11"), preferences, habits and identity count, not the work
they ask for. A note (role ``note``, from ``evlog remember``) and a sentence opening
with "remember that" are kept whatever they state (a statement without "I" verbatim); a
note the rules find no fact in is kept as ``notes.note_verdict`` words it, or refused
with a ``noop`` naming the reason. An agent's note (``meta["by"] == "agent"``, MCP
``remember``) is never read as the user's: ``notes.agent_note_verdict`` makes it an
agent-proposed fact of its project, or a ``noop`` with the reason.

**Chinese.** Sentences are cut into clauses at ``，``; a clause with a trigger (我习惯,
我喜欢, 我用, 我在…工作, 我叫, 我是, 不要, 别, 记住, 我们用, 这个项目, 去了, 买了 ...)
starts a fact and clauses without one join the fact before it (the rules of the
previous extractor, kept); questions and requests (吗, 能不能, 帮我 ...) are dropped.
我 becomes 用户 or the speaker's name, 我们 团队; a request such as 不要… becomes
用户要求不要…; relative dates (昨天, 上周, 去年 ...) are resolved.

**Fact text.** Relative times are resolved against the message's time ("yesterday" ->
"on 7 May 2023", see ``timeref``), then the sentence is put in the third person naming
its subject ("I went" -> "Alice went", "The user prefers ...", "we bought" ->
"Bob says they bought"; see ``voice``). Facts are whole sentences: never cut,
never with an ellipsis; a sentence longer than ``MAX_CHARS`` is shortened only at a
clause boundary (" - ", "; ", ", but ", ", and ") and dropped if no clause fits, and
the subject must be named within its first ten words. Each fact has a subject
("user", a person's name, or "project"), a scope (a named person's facts belong to the
project of their conversation when there is one; the user's go to the global file
unless they are about the project), a section (``model.SECTIONS``), ``when`` = the
message's time (normalised to UTC) and ``sources`` = that one message.

**Corrections by meaning** (``slots``). A statement about a slot an active fact fills
with another value (where the user lives or works, their name, job, a thing they have,
a tool's use, a version, a preference between options, a place) becomes an ``update``
of that fact, whatever the wording: a value it names as gone ("from X to Y", "left X",
"no longer ... X", "not X", 离开X) finds the fact holding it; else a shared slot; else,
with a sign of change ("now", "these days", "actually", "switched", 现在 ...), the same
sentence with one short span changed. The new text is the clause that states the new
value ("The user lives in Lisbon."), or for "from X to Y" the old fact with X replaced.
A named person of a conversation corrects only home, employer and name, with a sign of
change. Short statements of a slot ("I live in Berlin.", "Call me Sam.") are facts.
A temporary state ("this week I'm on call", "until Friday") is kept with its end as a
date and deleted once a later message is read (``validity``).

**Corrections and forget requests** are never facts. "I no longer ...", "I don't ...
anymore", "not X anymore, Y now" (不再, 已经不, 改用, 换成) become an ``update`` of the
best matching active fact of the same subject (matching = shared content words, at
least one of them specific), whose text is the corrected statement; with no matching
fact they are a ``noop``. Weaker signs ("I switched to", "I stopped going", "instead
of") need a closer match, and without one the sentence is read as an ordinary event.
"Forget that ...", "please forget ...", "don't remember ..." (忘记, 忘掉, 别记) become a
``delete`` of each matching active fact (an ``update`` without the forgotten part when
the fact says more: "Forget that I'm a product manager" keeps the name beside it) (at most ``MAX_DELETES``; pinned facts are
never changed by rules: that is a ``noop`` with the reason), or a ``noop``. A
correction or forget request that matches a fact proposed earlier in the same batch
changes (its sources then are both messages) or drops that proposal instead.

**No duplicates.** A fact ``similar`` (``text.similar``) to an active existing fact or to
one proposed earlier in the batch is not added.

**Project signals.** From the user's messages, ``signals.project_signals`` adds the
tools the user names (by the shape of the name and what the session's shell ran,
``workflow.session_tools``), how work is tracked and the agent instruction file, as facts
of the project, each unless a known fact names it already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from eventlog.timeutil import normalize_time
from processors.extract import change, frames, keep, notes, quality, referents, rename, tails, truecase, validity
from processors.extract import signals as sig
from processors.extract import slots as sl
from processors.extract.model import (
    EVENTS,
    MAX_SOURCES,
    PREFERENCES,
    PROFILE,
    PROJECT,
    Entry,
    ExistingFact,
    FactOp,
)
from processors.extract.text import (
    STOPWORDS,
    capitalized,
    content_tokens,
    fact_key,
    has_cjk,
    own_text,
    sentences,
    similar,
    skip_reason,
    words,
)
from processors.extract.timeref import PAST_BE, TIME_HINT, as_of, by_day, message_date, resolve
from processors.extract.voice import FIRST_PERSON, SECOND_PERSON, third_person, zh_third_person
from processors.extract.workflow import command_facts, manifest_facts, session_tools

NAME = "offline-facts-v1"
#: The score a sentence needs to become a fact.
MIN_SCORE = 4.0
#: ... when a named speaker says it (a conversation between people): 3.5 (less a margin for the float sums of the
#: weights), lower, because ``quality`` and ``referents`` drop what a reader marks junk or trivial before scoring
#: (issue 21; LoCoMo coverage 40.2% at 4.0 before those filters, 34.7% with them at 4.0, 41.5% with them here).
PEOPLE_MIN_SCORE = 3.4
#: A named speaker's own preference or habit ("I love discovering new cities", "I usually work regular hours") is
#: durable, what a reader keeps, where a one-off scores the same and is not: it is kept from this score when it
#: points at nothing said before (``_durable_own``). Measured on LoCoMo's even half (issue 21, round 12).
DURABLE_MIN_SCORE = 2.5
#: A second fact from one message needs this score.
SECOND_SCORE = 5.0
#: Facts are at most this long (characters); longer sentences are shortened at a clause boundary.
MAX_CHARS = 240
MIN_WORDS = 5
#: Longer sentences are not read at all (they cannot become a fact of at most MAX_CHARS).
MAX_SENTENCE = 2000
#: Only this many sentences of a message are read: a message of more is a document (a paste, a log, a wall of
#: repeated lines), and reading each of 20,000 sentences (about 1 ms each) kept Dream on one message for 20 s.
MAX_SENTENCES = 300
#: At most this many facts are forgotten by one request.
MAX_DELETES = 3


# --- the speaker ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Speaker:
    """Who a message's facts are about and where they go."""

    name: str  # "the user" or a person's name: how the fact names its subject
    subject: str  # FactOp.subject: "user" or the person's name
    named: bool  # a named person of a conversation (not "the user")
    project: str

    @property
    def zh_name(self) -> str:
        return "用户" if not self.named else self.name


def _speaker(e: Entry) -> Speaker:
    named = e.meta.get("speaker") if isinstance(e.meta, dict) else None
    if isinstance(named, str) and named.strip() and named.strip().casefold() not in ("user", "assistant", "note"):
        n = " ".join(named.split())
        return Speaker(n, n, True, e.project)
    return Speaker("the user", "user", False, e.project)


# --- sentence cleaning ------------------------------------------------------------------------

_INTERJECTION = re.compile(
    r"^(?:yeah|yea|yes|yep|yup|yay|oh|ohh|ooh|wow|whoa|woah|woo+|omg|oh\s+my\s+(?:god|gosh)|gosh|geez|dude|man|well|hey|hi|hello|haha+|hah|hehe|lol|lmao|so|ok|okay|sure|"
    r"totally|absolutely|definitely|aww+|omg|hmm+|um+|uh|and|but|plus|anyway|anyways|btw|by\s+the\s+way|"
    r"guess\s+what|oh\s+yeah|no\s+way|right|true|indeed|cool|nice|great|awesome|also|honestly|"
    r"funny\s+you\s+(?:should\s+)?(?:mention|ask)\w*|speaking\s+of\s+(?:which|that)|"
    r"(?:ever\s+)?since\s+(?:we|I)\s+last\s+(?:talked|spoke|chatted|caught\s+up|met)|"
    r"since\s+our\s+last\s+(?:chat|talk|conversation)|(?:a\s+lot|lots|so\s+much|much|tons?|loads)(?:'s|\s+has|\s+have)\s+"
    r"(?:been\s+going\s+on|happened)(?:\s+since\s+(?:we|I|our)\s+(?:last\s+)?\w+(?:\s+(?:last|talked|spoke|chatted))?)?|"
    r"it'?s\s+been\s+(?:a\s+while|ages|crazy|busy|hectic|wild)|long\s+time\s+no\s+(?:talk|see|chat)|"
    r"good\s+to\s+(?:hear|see)\s+from\s+you|great\s+to\s+hear\s+from\s+you|thanks|thank\s+you|"
    r"actually|fun\s+fact|news|funny\s+thing|crazy\s+thing|now|so\s+yeah|best\s+of\s+all|worst\s+of\s+all|"
    r"most\s+importantly|luckily|fortunately|unfortunately|sadly|thankfully|"
    r"you\s+know\s+what|I\s+must\s+say|like\s+I\s+(?:said|mentioned|told\s+you)(?:\s+(?:before|earlier))?|"
    r"I\s+gotta\s+say|I\s+have\s+to\s+say|to\s+be\s+honest|tbh|truth\s+is)\b[\s,!.:;—–-]*",
    re.IGNORECASE,
)
#: "Funny thing happened on Monday - I met ..." / "I have big news: ...", "Good news - ...":
#: an announcement before the news; its time phrase (if any) is kept and moved to the end.
_NEWS_INTRO = re.compile(
    r"^(?:(?:some|one|a|crazy|funny|cool|big|huge|awesome|amazing|exciting|great)\s*)?(?:thing|things|news|update)"
    r"(?:\s+\w+){0,2}\s+happened(?:\s+to\s+me)?(?P<t1>[^-–—:!.]{0,30})\s*[-–—:!]+\s*"
    r"|^I(?:'ve(?:\s+got)?|\s+(?:actually\s+|just\s+)?(?:'ve\s+)?(?:got|have|had))\s+(?:some\s+|a\s+(?:bit\s+of\s+)?)?(?:\w+\s+){0,2}"
    r"(?:news|update|something\s+new)(?:\s+to\s+share)?(?:\s+with\s+you)?(?P<t2>[^-–—:!.,]{0,30})\s*[-–—:!,]+\s*"
    r"|^(?P<t3>yesterday|today|tonight|last\s+\w+|this\s+(?:past\s+)?\w+|the\s+other\s+day)\s+(?:was|has\s+been)\s+"
    r"(?:\w+\s+){0,3}?(?:cool|great|amazing|awesome|crazy|wild|busy|fun|nice|good|special|big|huge|hectic|intense)\s*[-–—:!,]+\s*"
    r"|^(?:(?:good|great|big|some|exciting|awesome)\s+news|I\s+(?:want|have|gotta|got)\s+to\s+brag|"
    r"since\s+(?:speaking|talking|we\s+spoke|we\s+talked)\s+last)\s*[-–—:!,]+\s*"
    r"|^(?:on\s+(?:another|a\s+(?:different|side|lighter|happier|sadder|related))\s+note|speaking\s+of\s+\w+(?:\s+\w+)?|for\s+me|as\s+for\s+me|in\s+other\s+news|"
    r"other\s+than\s+that|apart\s+from\s+that|besides\s+that|other\s+news|that\s+said|fun\s+fact)\s*[,:-]\s*",
    re.IGNORECASE,
)
#: Tails that add nothing: ", take a look!", ", for example", "- yum!".
_TAIL = re.compile(
    r"[\s,;:\-–—]+(?:take\s+a\s+look|check\s+(?:it|this|them)\s+out|look|see|for\s+example|for\s+instance|lol|haha+|"
    r"yum+|yay|woo+hoo+|though|too|as\s+well|you\s+know|right|huh|ha)\s*([.!]*)$",
    re.IGNORECASE,
)
#: A sentence without its subject: "Just got back from ...", "Went to ..." (the speaker did it).
_NO_SUBJECT_PAST = re.compile(
    r"^(?:(?:just|finally|recently|also|actually)\s+)*(?:went|got|took|made|bought|started|finished|visited|joined|lost|"
    r"quit|left|broke|hurt|received|sold|drove|flew|ate|cooked|threw|caught|"
    r"tried|saw|watched|met|found|signed|booked|adopted|skyped|called|spent|had|did|ran|won|learned|learnt|picked|"
    r"wrapped|checked|headed|moved|decided|entered|attended|hosted|baked|cooked|painted|wrote|read|played|"
    r"finished|completed|passed|launched|opened|released)\s+(?!me\b|you\b|it\b|that\b)",
    re.IGNORECASE,
)
_NO_SUBJECT_BEEN = re.compile(r"^(?:(?:just|really|also|finally)\s+)*been\s+\w+ing\b", re.IGNORECASE)
_NO_SUBJECT_OTHER = re.compile(r"^(?:\w+s|makes?|reminds?|gets?|got|keeps?|helps?|gives?)\s+(?:me|us)\b", re.IGNORECASE)
_FILLER = re.compile(r"(?:^|(?<=,)|(?<=\s-))\s*(?:you\s+know|I\s+mean|if\s+you\s+know\s+what\s+I\s+mean)\s*(?:,|$)\s*",
                     re.IGNORECASE)
#: A declarative said with a question mark in surprise: "I" and a verb that is no modal (a question inverts it).
_SURPRISE = re.compile(r"^(?:(?:weirdly|honestly|somehow|apparently|oddly|so|and|ok|lol|wow|now)\s*,?\s+)*I(?:'m|\s+(?!can\b|"
                       r"could\b|should\b|will\b|would\b|might\b|may\b|must\b|shall\b)[a-z]+)\b", re.IGNORECASE)
_ANY_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|our|me)\b", re.IGNORECASE)
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+")
_LEAD_PUNCT = re.compile(r"^[\s\-–—*•·|>:;,.!]+")


def _strip_intro(s: str, vocatives: tuple[str, ...]) -> str:
    """Leading interjections and vocatives ("Yeah Mel, ..."), trailing vocatives (", Mel!") removed."""
    voc = "|".join(re.escape(v) for v in vocatives if v)
    for _ in range(6):
        before = s
        s = _INTERJECTION.sub("", s).lstrip()
        if voc:
            s = re.sub(rf"^(?:{voc})\b[\s,!.:;—–-]*", "", s).lstrip()
        s = _LEAD_PUNCT.sub("", s)
        m = _NEWS_INTRO.match(s)
        if m:
            when = (m.group("t1") or m.group("t2") or m.group("t3") or "").strip()
            rest = s[m.end():].strip()
            if rest:
                s = rest
                if when and re.search(r"\b(?:last|this|yesterday|today|ago|week|weekend|month|year)\b", when, re.I):
                    end = re.search(r"[.!?]*$", s)
                    s = f"{s[:end.start()]} {when}{end.group(0)}" if end else f"{s} {when}"
        if s == before:
            break
    if voc:
        s = re.sub(rf"[\s,]+(?:{voc})\s*([.!?]*)$", r"\1", s)
    return s.strip()


def _finish(text: str) -> str:
    """One space runs, a capital first letter, one final period (or the CJK stop)."""
    text = " ".join(_EMOJI.sub(" ", text).split())
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[.!?…]+$", "", text).rstrip(" ,;:-–—")
    if not text:
        return ""
    if text[-1:] in "\"”'’" and text[-2:-1] in ".!?":
        return capitalized(text[:-2]) + text[-1] + "."
    if has_cjk(text[-1:]) or text[-1:] in "。！？）)」』":
        return text.rstrip("！？!?") + ("" if text.endswith("。") else "。") if has_cjk(text) else text
    return capitalized(text) + "."


# --- English classification --------------------------------------------------------------------

_REQUEST = re.compile(
    r"^(?:(?:just|so|now|then|and)\s+)?(?:please|pls|kindly|can\s+you|could\s+you|would\s+you|will\s+you|let'?s|let\s+me|let\s+us|help\s+me|"
    r"make\s+sure\s+you|don'?t\s+forget|remember\s+to|check\s+(?:out|this|it)|take\s+a\s+look|look\s+at|"
    r"tell\s+me|show\s+me|give\s+me|send\s+me|keep\s+(?:it|up|going|me)|have\s+a|enjoy|good\s+luck|"
    r"create|make|add|fix|run|start|write|update|implement|explain|read|find|search|websearch|edit|delete|remove|"
    r"continue|try|test|install|build|deploy|ultrathink|think|go|do|use\s+the|look|guess|see|imagine|picture|"
    r"remember\s+(?:when|the|that\s+time|how))\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:who|whom|whose|what|when|where|why|which|how|anything|any\s+\w+)\b"
    r"|^(?:can|could|would|will|do|does|did|is|are|was|were|should|shall|may|might|have|has|am|isn't|aren't|don't)\s+"
    r"(?:you|i|we|it|they|he|she|this|that|there|these|those|my|our|your)\b",
    re.IGNORECASE,
)
#: First-person openers that react, hedge or promise rather than state a fact.
_REACTION = re.compile(
    r"^(?:I|we)\s+(?:(?:totally|completely|fully|really|so|just|also|definitely|absolutely)\s+)*"
    r"(?:agree|understand|know|bet|hear|appreciate|can'?t\s+wait|cannot\s+wait|hope|wish|guess|think|believe|mean|"
    r"feel\s+(?:like|that|you)|can\s+(?:imagine|relate|see|tell)|see|get\s+(?:it|that|what|how|why)|wonder|must\s+say|"
    r"gotta\s+say|have\s+to\s+say|admire|respect|remember\s+you|miss\s+you|love\s+(?:that|it|this|how|the\s+idea|hearing|seeing|your)|"
    r"like\s+(?:that|it|this|how)|'?ll\s+(?:keep|let|send|check|try|definitely|have|be\s+sure|think|look)|"
    r"will\s+(?:keep|let|send|check|try|definitely|have|be\s+sure|think|look)|'?d\s+love\s+to\s+(?:see|hear|check|try|join)|"
    r"would\s+love\s+to\s+(?:see|hear|check|try|join)|totally\s+get|feel\s+you|can\s+do\s+that|'?m\s+(?:so\s+|really\s+|super\s+)?"
    r"(?:glad|happy\s+(?:for|to\s+hear|you)|sorry|sure|curious|looking\s+forward|thrilled\s+for|proud\s+of\s+you|all\s+ears|in|down))\b",
    re.IGNORECASE,
)
_SUBJECT = r"(?:I|we|my\s+(?:\w+\s+){0,2}?\w+|our\s+(?:\w+\s+){0,2}?\w+)"
_PAST = re.compile(
    rf"\b{_SUBJECT}\s+(?:(?:just|finally|recently|also|even|actually|really|already|first|once|totally|"
    r"officially|both|all)\s+)*"
    r"((?!(?:need|feed|bed|seed|speed|indeed|proceed|succeed|exceed|red|shed|wed|bred|led|fed|sled)\b)[a-z]+ed|"
    r"went|got|made|took|saw|did|ran|won|bought|found|met|left|came|began|wrote|gave|kept|lost|sold|taught|"
    r"caught|brought|built|spent|sent|heard|held|paid|woke|ate|drove|flew|grew|rode|sang|spoke|swam|threw|wore|"
    r"chose|became|fell|fought|quit|drew|had|read|set|put|hit|cut|broke|learnt|met|won|signed)\b",
    re.IGNORECASE,
)
_PRESENT_PERFECT = re.compile(
    r"\b(?:I've|I\s+have|we've|we\s+have|I'd)\s+(?:(?:just|finally|recently|also|even|been\s+)\s*)*"
    r"(?:been\s+\w+ing|started|joined|finished|taken|begun|got(?:ten)?|bought|adopted|made|learned|learnt|"
    r"decided|signed|completed|moved|visited|found|met|won|launched|opened|created|written|published|picked|"
    r"become|been\s+(?:to|a|an|in|at|on|working|volunteering|practicing|playing|learning|doing|taking|going|"
    r"training|painting|writing|reading|running|teaching|studying))\b",
    re.IGNORECASE,
)
_EVENT_VERB = re.compile(
    r"\b(?:went|visited|started|joined|bought|adopted|made|painted|ran|won|finished|moved|signed\s+up|took|attended|"
    r"met|traveled|travelled|tried|learned|learnt|read|watched|saw|played|lost|found|received|volunteered|organized|"
    r"created|wrote|published|launched|opened|graduated|quit|competed|performed|hosted|celebrated|baked|cooked|built|"
    r"planted|sold|hiked|camped|explored|completed|passed|applied|landed|hired|promoted|injured|broke|recovered|gave|"
    r"donated|raised|taught|mentored|helped|booked|planned|decided|chose|picked|switched|married|retired|enrolled|"
    r"released|recorded|exhibited|presented|got|began|bought|rescued|fostered|designed|invented|started)\b",
    re.IGNORECASE,
)
_IDENTITY = re.compile(
    r"\b(?:I'm|I\s+am|I\s+was)\s+(?:a|an)\s+\w+"
    r"|\bI\s+work(?:ed)?\s+(?:as|at|for|in|on)\b|\bmy\s+(?:job|work|career|profession|role|position|company|boss|"
    r"business|shop|store|studio|band|team|degree|major)\b"
    r"|\bI'?m\s+from\b|\bI\s+am\s+from\b|\bI\s+(?:live|lived|grew\s+up)\s+(?:in|on|at|near|with)\b"
    r"|\bI\s+moved\s+(?:to|from|here|back)\b|\bmy\s+(?:home\s*town|home\s+country|hometown|country|city|town|house|"
    r"apartment|place|neighborhood|neighbourhood)\b"
    r"|\bmy\s+(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|son|daughter|kids?|children|child|baby|"
    r"mom|mum|mother|dad|father|parents|sister|brother|siblings?|family|grand\w+|aunt|uncle|cousin|niece|nephew|"
    r"best\s+friend|friends?|roommate|dog|dogs|cat|cats|pet|pets|puppy|puppies|kitten|turtles?|fish|bird|horse|"
    r"hamster|rabbit|bunny)\b"
    r"|\b(?:named|called)\s+[A-Z][a-z]+"
    r"|\bI\s+have\s+(?:a|an|two|three|four|five|\d+)\s+(?:kids?|children|sons?|daughters?|dogs?|cats?|pets?|"
    r"siblings?|sisters?|brothers?|turtles?|jobs?)\b"
    r"|\bI'?m\s+(?:married|single|pregnant|engaged|divorced|retired|vegan|vegetarian|allergic|studying|majoring|"
    r"training\s+(?:to|as|for)|learning|transgender|trans|gay|lesbian|bisexual|a\s+(?:mom|dad|mother|father|parent))\b"
    r"|\bI'?ve\s+been\s+(?:a|an|working|playing|painting|writing|doing|teaching|volunteering|practicing|married|"
    r"together|dating)\b[^.]*\bfor\s+(?:\w+\s+)?(?:years?|months?|decades?)\b"
    r"|\bmy\s+name\s+is\b|\bcall\s+me\b",
    re.IGNORECASE,
)
_FAVORITE = re.compile(r"\b(?:favorite|favourite|fave|fav|top\s+pick|all[- ]time)\b", re.IGNORECASE)
_STRONG_IDENTITY = re.compile(
    r"\b(?:I'm|I\s+am)\s+(?:a|an)\s+\w+|\bI\s+work\s+(?:as|at|for|in)\b|\bmy\s+(?:job|career|profession)\b"
    r"|\bI'?m\s+from\b|\bI\s+am\s+from\b|\bI\s+(?:live|grew\s+up)\s+(?:in|on|at|near)\b|\bmy\s+name\s+is\b"
    r"|\bI\s+have\s+(?:a|an|two|three|four|five|\d+)\s+(?:kids?|children|sons?|daughters?|dogs?|cats?|pets?|"
    r"siblings?|sisters?|brothers?|turtles?)\b|\bI'?m\s+(?:married|single|engaged|divorced|retired|vegan|vegetarian|"
    r"allergic|transgender|trans|gay|lesbian|bisexual)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:I|we)\s+(?:(?:really|absolutely|totally|just|also|still|especially|truly|so|do|definitely)\s+)*"
    r"(?:love|like|enjoy|adore|prefer|hate|dislike|despise|can'?t\s+stand|'?m\s+(?:really\s+|so\s+|totally\s+|"
    r"super\s+|big\s+)?(?:into|passionate\s+about|a\s+(?:big\s+|huge\s+)?fan\s+of|obsessed\s+with|crazy\s+about|"
    r"addicted\s+to|allergic\s+to|afraid\s+of|scared\s+of))\b"
    r"|\bmy\s+(?:(?:all[- ]time|absolute|very|new)\s+)?(?:favorite|favourite|fave|fav|go-to)\b"
    r"|\b(?:is|are)\s+my\s+(?:(?:all[- ]time|absolute|very)\s+)?(?:favorite|favourite|fave|fav|top\s+pick|jam|thing)\b"
    r"|\bI'?d\s+rather\b|\bI\s+would\s+rather\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(?:I|we)\s+(?:usually|always|often|regularly|normally|sometimes|typically|never|tend\s+to|try\s+to|"
    r"make\s+(?:sure|a\s+point)|still)\b"
    r"|\bevery\s+(?:day|morning|evening|night|week|weekend|month|year|summer|winter|sunday|saturday|monday|"
    r"tuesday|wednesday|thursday|friday)\b|\b(?:once|twice|three\s+times)\s+a\s+(?:week|month|day|year)\b"
    r"|\b(?:I|we)\s+(?:\w+\s+)?(?:daily|weekly|each\s+(?:day|week|morning))\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(?:I'?m|I\s+am|we'?re|we\s+are)\s+(?:(?:really|also|still|seriously|actually)\s+)*(?:planning|going|gonna|"
    r"hoping|thinking\s+(?:about|of)|looking\s+(?:to|into)|about\s+to|aiming|saving|training|preparing|trying|"
    r"working\s+(?:on|towards?)|considering|researching|starting|organizing|learning|taking|volunteering|"
    r"applying|getting|heading|off\s+to)\b"
    r"|\b(?:I|we)\s+(?:plan|want|hope|intend|decided|'ve\s+decided|have\s+decided|signed\s+up|registered|applied|"
    r"booked|aim)\s+(?:to|for|on)\b"
    r"|\bmy\s+(?:goal|dream|plan|plans|aim|mission|hope|next\s+step|new\s+project|project)\b"
    r"|\b(?:I'm|I\s+am|we're|we\s+are)\s+(?:\w+\s+)?\w+ing\b(?=.*\b(?:next|tomorrow|tonight|soon|this\s+(?:weekend|"
    r"summer|fall|winter|spring|month|year)|in\s+(?:a|two|three|\d+)\s+(?:days?|weeks?|months?))\b)",
    re.IGNORECASE,
)
_CONVENTION = re.compile(
    r"^(?:please\s+)?(?:always|never|don'?t|do\s+not|avoid|make\s+sure\s+to|prefer|stop)\b"
    r"|\b(?:I|we)\s+(?:always|never|usually|prefer|use|don'?t\s+use|do\s+not\s+use)\b"
    r"|\b(?:this|our|the)\s+(?:project|repo|repository|codebase|code\s*base|team)\s+(?:uses|requires|prefers|targets|"
    r"runs|needs|follows|has)\b|\bin\s+this\s+(?:project|repo|repository|codebase)\b"
    r"|\bremember\s+that\b|\bmy\s+name\s+is\b|\bcall\s+me\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(r"^(?:please\s+)?(always|never|don'?t|do\s+not|avoid|make\s+sure\s+to|stop)\s+(.+)$",
                         re.IGNORECASE)
_PHOTO = re.compile(r"^(?:here'?s|here\s+is|this\s+is|check\s+out|look\s+at)\s+(?:a|an|the|this|my|one|some)?\s*"
                    r"(?:(?:quick|recent|cute|little)\s+)?(?:pic|picture|photo|snap|shot|selfie)s?\s+(of|from)\s+(.+)$",
                    re.IGNORECASE)
#: Sentences that open like this say something general or lean on an earlier sentence.
_GENERIC_START = re.compile(
    r"^(?:it|it's|its|this|that|that's|these|those|they|they're|he|she|there|there's|here|here's|being|something|"
    r"everything|nothing|anything|life|family|moments?|conversations?|seeing|knowing|having|sharing|taking|doing|"
    r"getting|making|finding|trying|stuff|things|what|which|who|when|where|if|because|though|although|even|"
    r"sometimes|hopefully|luckily|unfortunately|sadly|honestly|overall|all\s+in\s+all|can'?t\s+wait|cannot\s+wait|"
    r"glad|so\s+glad|hope|wish|gotta|got\s+to|need\s+to|have\s+to|just\s+wanted|wanted\s+to\s+(?:say|tell|share|let)|"
    r"the\s+(?:best|worst|hardest|most|biggest|main|only|whole|same)|[a-z]+ing)\b",
    re.IGNORECASE,
)
#: Objects that only an earlier sentence can explain ("I found it last week").
_DANGLING = re.compile(
    r"\b(?:found|got|get|made|make|bought|buy|saw|see|love|loved|like|liked|chose|wrote|did|do|adopted|painted|tried|"
    r"try|have|take|enjoyed|enjoy|"
    r"picked|took|gave|finished|started|built|created|read|watched|use|used|named|called)\s+(?:it|this|that|them|"
    r"her|him|these|those|one)\b(?!\s+(?:of|from|at|in|called|named)\b)"
    r"|\b(?:about|of|with|from|for)\s+(?:it|this|that|them|these|those)\s*[.!,]*$",
    re.IGNORECASE,
)
_VAGUE = re.compile(r"\b(?:someone|somebody|something|stuff|things|anything|everything|some\s+(?:amazing|great|cool|"
                    r"interesting|new)\s+\w+|a\s+few\s+more|some\s+more|more\s+of\s+them|similar|"
                    r"(?:gonna|going\s+to)\s+(?:do|order|make|try|keep|get|take|have|be|see|go\s+for)\b|"
                    r"(?:motivated|inspired|grateful|thankful|blessed|lucky|couragous|courageous)\b|"
                    r"(?:a|an)\s+(?:\w+\s+)?(?:experience|incident|moment|setback|time|day|week|blast|game|night|adventure|thing)\b(?!\s+(?:of|in|at|with)\b)|"
                    r"\b(?:organizing|organising|made|got|bought|found|tried|making|getting|doing|did|planning|hosting)\s+"
                    r"(?:one|some)\b(?=\s*(?:with|for|in|at|on|and|,|\.|!|$))|hard\s+to\s+(?:choose|say|pick|tell)|"
                    r"milestone|a\s+(?:real|big|huge)\s+(?:battle|deal)|\b(?:been|is|was|am|'m|be)\s+one\b(?!\s+of)|"
                    r"\b(?:want|wanted|wanting|going|trying|hoping|planning)\s+to\s*(?:[,.!]|for\b|but\b|since\b|$)|"
                    r"been\s+(?:so\s+|really\s+|super\s+)?(?:busy|swamped|crazy|hectic|tough|rough))\b", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(r"\b(?:this|that|these|those)\b(?!\s+(?:week|weekend|month|year|morning|evening|afternoon|"
                            r"time|summer|winter|spring|fall|autumn|past|coming|is|was|'s|project|repo|repository|codebase|team)\b)",
                            re.IGNORECASE)
_FEELING = re.compile(
    r"^(?:I|we)(?:'m|'re|\s+am|\s+are|\s+was|\s+were|\s+feel|\s+felt|\s+have\s+been|'ve\s+been)"
    r"(?:\s+(?:so|really|super|very|truly|pretty|also|just|totally|getting|feeling|kinda|a\s+bit|quite))*\s+"
    r"(?:happy|glad|grateful|thankful|excited|proud|blessed|lucky|nervous|stressed|sad|tired|fortunate|inspired|"
    r"motivated|amazed|overwhelmed|relieved|hopeful|confident|determined|stoked|pumped|thrilled|anxious|worried|"
    r"scared|busy|swamped|slammed|crazy\s+busy|down|bummed|upset)\b",
    re.IGNORECASE,
)
_EXCITED = re.compile(r"\b(?:so|really|super|very|totally|pretty|getting|feeling)\s+"
                      r"(?:excited|happy|proud|glad|grateful|thankful|stoked|"
                      r"pumped|thrilled|relieved|nervous|anxious)\b", re.IGNORECASE)
#: Pronouns whose referent is in another sentence.
_LOOSE_PRONOUN = re.compile(r"\b(?:it|them|he|she|him|her|they|there|this\s+one|that\s+one)\b(?!'s)", re.IGNORECASE)
_PROMISE = re.compile(r"^(?:I|we)\s+(?:'ll|will|won't|wouldn't|'d|would|can|could|can't|should|must|gotta|have\s+to|"
                      r"need\s+to|'m\s+gonna\s+(?:keep|try|make|let))\b", re.IGNORECASE)
_GENERIC = frozenset("""
happy glad grateful thankful excited proud awesome amazing great good fun cool nice love loved lovely feel feeling felt
felt special meaningful rewarding inspiring inspired blessed lucky wonderful fantastic incredible beautiful time
times moments moment things thing stuff lot lots really super totally definitely always much many way life day
experience people everyone something anything everything important best better exciting hard tough easy
""".split())
_PROPER_STOP = frozenset("""
I I'm I've I'd I'll My We Our The A An It This That These Those There Here Yes Yeah Oh Wow Thanks Thank Hey Hi So
And But Also Plus Just Well Okay OK Sure Totally Absolutely Definitely He She They His Her Their Its What When Where Why
How Which Who Since After Before Last Next Every Some Any Not No Mom Dad God Lol Haha Congrats Omg Btw
""".split())
_NUMBER = re.compile(r"\b\d+\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty|"
                     r"hundred|"
                     r"thousand|dozen)\b", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“][^\"”]{2,60}[\"”]")
_CORRECTION_STRONG = re.compile(
    r"\bno\s+longer\b|\b(?:any\s*more|any\s+longer)\b|\bnot\s+\w+(?:\s+\w+)?\s+(?:any\s*more|now)\b"
    r"|\bnot\s+(?:a|an)\s+\w+\s+(?:any\s*more|now)\b|\b(?:I|we)\s+(?:now|actually)\s+(?:use|prefer|work|live)\b",
    re.IGNORECASE,
)
_CORRECTION_WEAK = re.compile(
    r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:switched\s+(?:from|to|over)|changed\s+(?:from|to|my|our)|moved\s+(?:from|to|away)|"
    r"stopped\s+\w+ing|quit\s+(?:my|our|the|\w+ing)|gave\s+up|dropped)\b|\binstead\s+of\b",
    re.IGNORECASE,
)
#: Words a request may open with before its verb ("hmm could you forget my age?", "actually drop the Pablo part").
_REQUEST_LEAD = r"^(?:(?:hmm+|um+|ok(?:ay)?|oh|actually|also|and|so|btw|wait|right)\s*,?\s+)*"
_FORGET = re.compile(
    _REQUEST_LEAD + r"(?:please\s+|can\s+you\s+|could\s+you\s+|you\s+can\s+|kindly\s+)?(?:forget|don'?t\s+remember|stop\s+remembering|"
    r"remove\s+(?:the\s+)?(?:fact|memory|note)|delete\s+(?:the\s+)?(?:fact|memory|note)|erase\s+(?:the\s+)?(?:fact|memory))"
    r"(?:\s+(?:that|about|the\s+fact\s+that|what\s+I\s+said\s+about|my))?\s*[,:]?\s*(.*)$",
    re.IGNORECASE,
)
#: A forget request naming a part of what was said ("scratch what I said about X", "forget the part about X", "please
#: disregard the X bit"): the target ends at the first clause break.
_FORGET_PART = re.compile(
    r"^(?:(?:please|pls|just|oh|and|so|also|actually|hmm+|ok(?:ay)?|btw|you\s+can|feel\s+free\s+to)\s*,?\s+)*"
    r"(?:scratch|disregard|forget|drop|delete|remove)\s+"
    r"(?:(?:what|everything)\s+I\s+(?:said|told\s+you|"
    r"mentioned|wrote)\s+(?:about|regarding)\s+(?P<t>[^,;.!:()-]+)|the\s+(?:part|bit|thing|stuff)\s+(?:about|on|with|where)\s+"
    r"(?P<t3>[^,;.!:()-]+)|the\s+(?P<t2>[\w.+-]+(?:\s+[\w.+-]+)?)\s+(?:part|bit|thing|stuff|note|one)\b)", re.IGNORECASE)
#: A forget request pointing back at the clause before it ("the band broke up so scratch that part", 鱼缸清掉了，这条你删了吧):
#: that clause names what to forget.
_FORGET_THAT = re.compile(
    r"^(?P<t>.+?)(?:,\s*|\s+)(?:so\s+|and\s+)?(?:(?:please|pls|you\s+can|just)\s+)*(?:scratch|forget|drop|delete|remove|disregard)"
    r"\s+that(?:\s+(?:part|bit|one|note|fact))?\b", re.IGNORECASE)
_ZH_FORGET_THAT = re.compile(r"^(?P<t>.+?)[，,]\s*(?:这条|这个|这件事|那条|那个)(?:你|就)?(?:可以|就)?(?:删了吧|删掉吧?|删了|删除|忘掉吧?|忘了吧|"
                             r"忘记吧?|别记了|不用再?记了|不用记了)")
#: The same, topic first, in Chinese: 金毛那个你忘掉吧, 住址的事忘了吧, 把学吉他那条忘掉吧.
_ZH_FORGET_TOPIC = re.compile(r"^(?:请|你)?把?(?P<t>[\u4e00-\u9fffA-Za-z0-9 ]{1,10}?)(?P<t2>)(?:那个|这个|那条|这条|那件事|这件事|的事|的部分|那部分)"
                              r"(?:你|就)?(?:忘掉|忘记|忘了|别记了?|不用记)")
#: A time still to come: what a statement says of it holds not yet, so it replaces nothing.
_FUTURE = re.compile(r"\b(?:next\s+(?:week|weekend|month|year|spring|summer|autumn|fall|winter|(?:Mon|Tues|Wednes|Thurs|"
                     r"Fri|Satur|Sun)day)|tomorrow|later\s+this\s+(?:week|month|year)|in\s+(?:a|two|three|\d+)\s+"
                     r"(?:days?|weeks?|months?))\b|明天|下周|下个?月|明年", re.IGNORECASE)
_CALL_ME = re.compile(r"^(?:(?:please|pls|plz|so|and|just)\s+)*call\s+me\s+([A-Z][\w'-]*)", re.IGNORECASE)
_REMEMBER = re.compile(r"^(?:please\s+)?(?:remember|note|keep\s+in\s+mind)\s+(?:that\s+)?[,:]?\s*", re.IGNORECASE)
_CONTROL_WORDS = frozenset("""
no longer anymore any more now actually switched switch changed change moved stopped stop quit gave give up dropped
instead use uses used using prefer prefers like likes forget remember please don't do not
""".split())
_SPECIFIC_WEAK = frozenset("use uses used using like likes love loves prefer prefers go goes work works have has get "
                           "make want need try".split())


# --- Chinese -------------------------------------------------------------------------------------

_ZH_TRIGGER = re.compile(
    r"我(?:习惯|喜欢|不喜欢|讨厌|偏好|一般|通常|平时|总是|从不|用|使用|爱|养了|有一?[个只条位]|住在|来自|毕业|学)"
    r"|我在.{1,20}?(?:工作|上班|上学|读书)"
    r"|我叫|我的名字|叫我|我是(?!不是|说|想)"
    r"|(?<!要)不要|(?:^|[，,；;：:\s]|请|你|千万)别(?![人的处])"
    r"|记住(?=$|[：:，,\s]|我(?!们))"
    r"|我们(?:用|使用|一般|习惯|约定|统一|都)"
    # a team's or a project's thing and what it uses or is called: 团队沟通用钉钉, 项目用的是 Java 11, 我们的仓库叫 X
    r"|^(?:我们|团队|项目|仓库)的?[\u4e00-\u9fff]{0,4}?(?:用的是|使用的是|用|使用|叫)"
    r"|^[\u4e00-\u9fff]{1,4}(?:用的是|使用的是)\s*[A-Za-z]"  # 缓存用的是 Memcached
    r"|这个项目|本项目|项目里|项目中|仓库里|代码库"
    r"|我(?:[^，。！？]{0,12}?)(?:去了|买了|搬到|开始|参加了|换了|学会了|完成了|认识了|报名了|养了)"
    # one's own diet or habit: 我不吃辣, 我不喝酒, 我每天早上七点起床跑步; what one drives or rides: 我开的是一辆丰田
    r"|^我(?:从来)?不(?:吃|喝|抽)|^我每[天周晚月年]|^我(?:开|骑|用)的是"
    # where a service or a project's thing runs: 服务部署在阿里云上, 数据库托管在 AWS
    r"|^[\u4e00-\u9fff]{1,6}(?:部署|托管|运行|跑)在"
)
_ZH_QUESTION_END = re.compile(r"[吗嘛么呢][\s~～。！!…]*$")
_ZH_QUESTION_START = re.compile(r"^(?:请问|你|您)?(?:能不能|可不可以|是不是|要不要|有没有|为什么|怎么|什么|哪)")
_ZH_REQUEST = re.compile(r"^(?:请?帮我|你(?:帮|给|去|能|可以)(?!叫我)|麻烦)")
_ZH_IMPERATIVE = re.compile(r"^(?:请|千万)?(?:不要|别)")
_ZH_REMEMBER = re.compile(r"^请?记住\s*[,:：，]?\s*")
_ZH_FORGET = re.compile(r"^(?:请|你)?(?:忘记|忘掉|忘了|别记(?:住)?|不要记(?:住)?|删除|删掉)(?:掉)?\s*[,:：，]?\s*(.*)$")
_ZH_CORRECTION = re.compile(r"不再|已经不|不.{1,8}了|改用|换成|现在(?:用|改)")


# --- candidates --------------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A proposed fact before selection."""

    text: str
    score: float
    section: str
    entry: Entry
    speaker: Speaker
    about_project: bool = False
    order: int = 0
    forced: bool = False  # a correction folded into a proposal of this batch: always kept
    sources: list[str] = field(default_factory=list)
    dropped: bool = False
    durable: bool = False  # a named speaker's own standing preference or habit (``_durable_own``)


def _vocatives(speakers: set[str], own: str) -> tuple[str, ...]:
    """Names (and their 3+ letter prefixes as nicknames) a message may address the other person by."""
    out: set[str] = set()
    for s in speakers:
        first = s.split()[0] if s.split() else s
        out.add(first)
        for n in range(3, len(first)):
            out.add(first[:n])
    out.discard("")
    out.discard(own)
    return tuple(sorted(out, key=len, reverse=True))


def _shorten(text: str, limit: int, need: re.Pattern[str] | None) -> str | None:
    """``text`` if it fits; else its longest leading clause that fits and still holds ``need``; else None."""
    if len(text) <= limit:
        return text
    for sep in (" - ", " – ", " — ", "; ", ", but ", ", and ", ", so ", " but ", " and ", ", "):
        parts = text.split(sep)
        for n in range(len(parts) - 1, 0, -1):
            head = sep.join(parts[:n]).strip()
            if len(head) <= limit and len(head.split()) >= MIN_WORDS and (need is None or need.search(head)):
                return head
    return None


def _prepare(sentence: str, vocatives: tuple[str, ...]) -> str | None:
    """A sentence without its question mark, interjections, vocatives, fillers and empty tails; None for a question."""
    raw = sentence.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'").strip()
    if _EMOJI.sub("", raw).rstrip(" )]*_~\"'").endswith("?"):
        return None
    s = _strip_intro(_EMOJI.sub(" ", raw), vocatives)
    s = _FILLER.sub(" ", s).strip()
    s = _TAIL.sub(r"\1", s).strip()
    if not s or _QUESTION.match(s):
        return None
    if _NO_SUBJECT_PAST.match(s):  # "Just got back from Rome": the speaker did it
        s = "I " + s[0].lower() + s[1:]
    elif _NO_SUBJECT_BEEN.match(s):  # "Been discussing a fan project": the speaker has been
        s = "I've " + s[0].lower() + s[1:]
    elif _NO_SUBJECT_OTHER.match(s):  # "Reminds me of ...": about something said before
        return None
    return s


def _photo(s: str) -> str | None:
    """"Here's a pic of my garden" -> "I shared a photo of my garden"; None when it is no photo (or shows nothing)."""
    photo = _PHOTO.match(s.rstrip(".!"))
    if not photo:
        return None
    what = photo.group(2)
    if not re.sub(r"\b(?:the|a|an|my|our|last|this|past|recent|yesterday|today|week|weekend|month|year|trip|day|"
                  r"night|morning|when|we|I|were|was|at|in|on)\b", "", what, flags=re.IGNORECASE).strip(" .,!"):
        return ""  # "Here's a photo from Sunday": nothing but a time
    return f"I shared a photo {photo.group(1).lower()} {what}"


def _user_said(s: str, e: Entry, sp: Speaker, explicit: bool) -> Candidate | None:
    """A convention stated as an order ("Never push to main"), or a note (``explicit``) in its own words, as a fact."""
    imp = _IMPERATIVE.match(s.rstrip(".!"))
    if imp and not FIRST_PERSON.search(imp.group(2)) and not SECOND_PERSON.search(imp.group(2)):
        word, rest = " ".join(imp.group(1).lower().split()), imp.group(2)
        verb = {"always": "to always ", "never": "to never ", "don't": "not to ", "dont": "not to ",
                "do not": "not to ", "avoid": "to avoid ", "make sure to": "to ", "stop": "to stop "}.get(word, "to ")
        text = _finish("The user wants the assistant " + verb + rest)
        about = bool(re.search(r"\b(?:repo|repository|project|codebase|commit|branch|PR|tests?|CI)\b", rest))
        if len(text) > MAX_CHARS or len(text.split()) < MIN_WORDS:
            return None
        return Candidate(text, MIN_SCORE + 2.0, PROJECT if about else PREFERENCES, e, sp, about)
    if explicit and not FIRST_PERSON.search(s) and not SECOND_PERSON.search(s) and not _REQUEST.match(s):
        text = _finish(s)  # a note states a fact in its own words
        if len(text.split()) < 3 or len(text) > MAX_CHARS:
            return None
        return Candidate(text, MIN_SCORE + 2.0, PREFERENCES, e, sp, _about_project(s))
    return None


#: How much each kind of statement and each specific adds to a sentence's score (``_score``).
WEIGHTS = {"identity": 2.5, "preference": 2.0, "favorite": 1.0, "event": 1.5, "event_verb": 0.7, "plan": 1.5,
           "habit": 1.0, "convention": 2.5, "date": 1.5, "time_hint": 0.3, "proper_noun": 1.0, "quote": 1.5,
           "number": 0.7, "content_word": 0.25, "project_convention": 1.0}
#: And how much each weakness takes away.
PENALTIES = {"few_content_words": 2.5, "long": 1.0, "feeling": 2.0, "dangling": 2.0, "vague": 1.0, "excited": 1.5,
             "loose_pronoun": 1.0, "demonstrative": 0.75, "promise": 1.5}


def _score(s: str, sp: Speaker, vocatives: tuple[str, ...], dated: bool) -> tuple[float, list[str]]:
    """The score of a prepared sentence and the sections its kinds point to (empty: no kind of fact at all)."""
    w, p = WEIGHTS, PENALTIES
    score = 0.0
    kinds: list[str] = []
    past = bool(_PAST.search(s) or _PRESENT_PERFECT.search(s))
    for found, weight, section in (
        (_IDENTITY.search(s), w["identity"], PROFILE),
        (_PREFERENCE.search(s), w["preference"] + (w["favorite"] if _FAVORITE.search(s) else 0.0), PREFERENCES),
        (past, w["event"] + (w["event_verb"] if _EVENT_VERB.search(s) else 0.0), EVENTS),
        (_PLAN.search(s), w["plan"], EVENTS),
        (_HABIT.search(s), w["habit"], PREFERENCES),
        (not sp.named and _CONVENTION.search(s), w["convention"], PREFERENCES),
    ):
        if found:
            score += weight
            kinds.append(section)
    if not kinds:
        return 0.0, []
    if not sp.named and _CONVENTION.search(s) and _about_project(s):
        score += w["project_convention"]  # "in this project we use black": a convention the agent must keep
    score += w["date"] if dated else w["time_hint"] if TIME_HINT.search(s) else 0.0
    proper = _proper_nouns(s, (*vocatives, sp.name))
    score += min(len(proper), 3) * w["proper_noun"]
    score += w["quote"] if _QUOTED.search(s) else 0.0
    score += w["number"] if _NUMBER.search(s) else 0.0
    content = [t for t in content_tokens(s) if t not in _GENERIC and len(t) > 2]
    score += min(len(content), 8) * w["content_word"]
    score -= p["few_content_words"] if len(content) < 2 else 0.0
    score -= p["long"] if len(s.split()) > 45 else 0.0
    score -= p["feeling"] if _FEELING.match(s) and not proper else 0.0
    score -= p["dangling"] if _DANGLING.search(s) else 0.0
    score -= min(len(_VAGUE.findall(s)), 2) * p["vague"]
    score -= p["excited"] if _EXCITED.search(s) and not proper else 0.0
    score -= min(len(_LOOSE_PRONOUN.findall(s)), 3) * p["loose_pronoun"]
    score -= min(len(_DEMONSTRATIVE.findall(s)), 2) * p["demonstrative"]
    score -= p["promise"] if _PROMISE.match(s) and not dated and not proper else 0.0
    if _STRONG_IDENTITY.search(s):
        sections = [PROFILE]
    elif dated or past or _PLAN.search(s):
        sections = [EVENTS]
    elif _PREFERENCE.search(s) or _HABIT.search(s):
        sections = [PREFERENCES]
    else:
        sections = kinds
    return score, sections


def _english(sentence: str, e: Entry, sp: Speaker, vocatives: tuple[str, ...]) -> Candidate | None:
    """The candidate fact of one English sentence, or None (see the module docstring)."""
    s = _prepare(sentence, vocatives)
    if s is not None and sp.named and quality.agrees(sentence, _proper_nouns(s, (*vocatives, sp.name))):
        return None  # "I'm a fan too!": it answers what the other person said
    if s is not None and sp.named:  # what an intro left behind, "meet Toby, my puppy", a storyteller's "this"
        s = referents.tidy(s, sentence)
    if s is not None and sp.named:  # "I'm so excited, I opened my shop": the clause with the news, not the mood
        s = quality.strong_clause(s, lambda t: _proper_nouns(t, (*vocatives, sp.name))) or s
    if s is None:
        return None
    photo = _photo(s)
    if photo == "":
        return None
    s = photo or s
    explicit = e.role == "note"  # a note, or "remember that ...": the user asked for it to be kept
    if not sp.named:
        rem = _REMEMBER.match(s)
        if rem:
            s, explicit = s[rem.end():], True
        said = _user_said(s, e, sp, explicit)
        if said is not None:
            return said
    style = None if sp.named else keep.answer_style(s)  # "Please keep answers short": a standing preference
    if style is not None:
        return Candidate(style, MIN_SCORE + 2.0, PREFERENCES, e, sp, False)
    whole = _english_fact(s, e, sp, vocatives, explicit) if _english_statement(s, sp, photo, vocatives) else None
    if whole is not None or sp.named:
        return whole
    clause = keep.slot_clause(s)  # "I'm based in Lyon, just so you know ...": the clause that states a slot
    if clause is None or not (_english_statement(clause, sp, None, vocatives) or keep.thing_statement(clause)):
        return None
    return _english_fact(clause, e, sp, vocatives, explicit, state=True)


def _english_statement(s: str, sp: Speaker, photo: str | None, vocatives: tuple[str, ...]) -> bool:
    """Whether ``s`` states something about its speaker: not a request, a reaction, a generic remark or a mood."""
    if (_REQUEST.match(s) and not _CALL_ME.match(s)) or not (_ANY_FIRST_PERSON.search(s)
                                                              or (not sp.named and _states_a_slot(s))):
        return False  # "Please call me Dan." is no request: it states a name
    if _REACTION.match(s) or re.search(r"\bI\s+mean\b", s) \
            or (sp.named and not photo and _GENERIC_START.match(s.lstrip("\"'“‘("))):
        return False
    # a mood, an echo of the other speaker, an unnamed thing, a one-off outing
    return not (sp.named and quality.weak_reason(s, _proper_nouns(s, (*vocatives, sp.name))))


def _english_fact(s: str, e: Entry, sp: Speaker, vocatives: tuple[str, ...], explicit: bool, *,
                  state: bool = False) -> Candidate | None:
    """The candidate of a statement worth keeping (see ``_english``), or None; ``state``: it states a slot."""
    s = _CALL_ME.sub(r"I want to be called \1", s)
    if not sp.named and _PREFERENCE.match(s) and _ANSWERING_OBJECT.search(s):
        return None  # "I prefer the first one", "I like the idea": it answers the conversation, no fact of the user's
    temporary = not sp.named and validity.is_temporary(s)
    if temporary:
        s = validity.with_end(s, e.time)
    state = state or temporary or _states_a_slot(s) or _own_short_statement(s, sp)
    if not sp.named and not explicit and not state and not (
            _CONVENTION.search(s) or _PREFERENCE.search(s) or _IDENTITY.search(s) or _HABIT.search(s)):
        return None  # a user talking to a coding agent: only stated conventions, preferences, habits and identity
    min_words = 3 if state or explicit else MIN_WORDS
    if len(re.sub(r"'(m|re|s|ve|d|ll)\b", r" \1", s).split()) < min_words:  # "I'm married": three words
        return None
    resolved, dated = resolve(s, e.time)
    score, sections = _english_score(s, sp, vocatives, dated, state=state, explicit=explicit)
    if not sections:
        return None
    c = _english_candidate(s, resolved, e, sp, score, sections, min_words)
    if c is not None:
        c.durable = sp.named and _durable_own(s)
    return c


def _english_score(s: str, sp: Speaker, vocatives: tuple[str, ...], dated: bool, *, state: bool,
                   explicit: bool) -> tuple[float, list[str]]:
    """``_score`` raised for what must be kept: the user's own habit, a stated slot, an explicit request."""
    score, sections = _score(s, sp, vocatives, dated)
    if not sp.named and _HABIT.search(s) and _ANY_FIRST_PERSON.match(s) and score < MIN_SCORE:
        score = MIN_SCORE  # the user's own habit ("I drink coffee every morning") is worth keeping
    if sp.named and DURABLE_MIN_SCORE <= score < PEOPLE_MIN_SCORE and _durable_own(s):
        score, sections = PEOPLE_MIN_SCORE, [PREFERENCES]
    if state and score < MIN_SCORE + 1.0:
        floor = PEOPLE_MIN_SCORE if sp.named else MIN_SCORE + 1.0  # a person's state is kept, not preferred to news
        score, sections = max(score, floor), sections or [PROFILE if re.match(r"(?:I|my)\b", s, re.I) else PREFERENCES]
    if explicit:
        score, sections = max(score, MIN_SCORE + 1.0), sections or [PREFERENCES]
    return score, sections


def _durable_own(s: str) -> bool:
    """Whether ``s`` opens on the speaker's own preference or habit ("I love ...", "we usually ...") and leans on
    nothing said before (no pronoun, demonstrative or dangling object, no mood): a standing trait, not an episode."""
    return bool((_PREFERENCE.match(s) or _HABIT.match(s)) and not _LOOSE_PRONOUN.search(s)
                and not _DEMONSTRATIVE.search(s) and not _DANGLING.search(s) and not _FEELING.match(s)
                and not _EXCITED.search(s) and not _RECALL.search(s) and not _LIKES_THE.search(s))


#: "I love the connection to nature", "I love the theme": a definite object met earlier in the chat (a photo, a place).
_LIKES_THE = re.compile(r"\b(?:love|like|enjoy|adore|prefer)\s+the\b", re.IGNORECASE)
#: A memory, a wish or a thought is no standing trait ("I still remember when ...", "I still miss ...").
_RECALL = re.compile(r"\b(?:remember|remembers|miss|misses|think|thinks|wonder|wish|wishes|hope|hopes|regret)\b",
                     re.IGNORECASE)


def _english_candidate(s: str, resolved: str, e: Entry, sp: Speaker, score: float, sections: list[str],
                       min_words: int) -> Candidate | None:
    """The candidate with the fact's text (third person, shortened, dated "as of"), or None when the text fails."""
    text = third_person(resolved, sp.name, team=not sp.named)
    if text is None or (sp.named and text.startswith(f"{sp.name} says ")):
        return None  # "Bob says their team bond is awesome": who "we" are is lost (``referents.resolve_we``)
    text = _shorten(_finish(text), MAX_CHARS, None)
    if text is None or len(text.split()) < min_words or text.count('"') % 2 or text.count("“") != text.count("”"):
        return None
    if sp.named:  # after the score: the same facts, without what leans on the chat
        text = tails.without_comment(referents.without_additive(tails.without_aside(text, sp.name)), sp.name)
    text = as_of(text, e.time)  # "just started", "lately", "for now": true as of that day, never read as current
    if sp.named and (_PAST.search(s) or _PRESENT_PERFECT.search(s) or PAST_BE.search(s)):
        text = by_day(text, e.time)  # "Dave opened his own shop", "we have decided", "we were at": when
    about_project = not sp.named and (_about_project(s) or bool(_PROJECT_THING.match(s)) or keep.thing_statement(s))
    if not about_project and sp.name.casefold() not in " ".join(text.split()[:10]).casefold():
        return None  # the subject must be named near the start ("Just skyped with ..." has none)
    return Candidate(text, score, PROJECT if about_project else sections[0], e, sp, about_project)


#: "I drive a Toyota Corolla", "We deploy the app on Heroku", "I'm learning Spanish": a short present-tense statement
#: about the speaker with a proper noun (or a weekday) in it states what holds now.
_STATE = re.compile(
    r"^(?:(?:until|since|on)\s+\w+,?\s+)?(?:I|we)(?:'m|'re|\s+am|\s+are)?\s+(?:usually\s+|currently\s+)?"
    r"(?!(?:need|want|think|guess|hope|see|get|got|have|had|was|were|will|would|can|could|should|must|might|just|"
    r"tried|try|trying|getting|seeing|having|looking|going|wonder|feel|know|mean|ran|asked|found|saw|did|do|don't|"
    r"made|said|told|added|fixed|wrote|read|changed|moved|left|started|finished)\b)[a-z]+\s+"
    r"(?:[a-z]+\s+){0,4}?(?-i:[A-Z][\w.'-]*)(?:\s+[\w.'-]+){0,4}$", re.IGNORECASE)


#: A user's sentence whose subject is the project's own thing ("The app uses React 17", "Production runs MySQL 8").
_PROJECT_THING = re.compile(r"(?:the|this|our)\s+(?:project|api|app|repo|service|backend|frontend|site)\b|production\b",
                            re.IGNORECASE)


#: What a preference or a trait of one's own points at when it answers the conversation rather than states
#: something about the speaker ("I like the idea", "I prefer the second option", "I love your plan"): the
#: language's anaphoric nouns and ordinals, a closed class, not a list of the data's topics.
_ANSWERING_OBJECT = re.compile(
    r"\b(?:the|your|this|that|these|those|both|either|neither)\s+(?:(?:first|second|third|last|former|latter|other|"
    r"new|old|current|original|proposed|suggested|above|previous|next)\s+)?(?:one|ones|idea|ideas|option|options|"
    r"approach|approaches|way|plan|version|solution|suggestion|proposal|change|changes|fix|answer|result|output|"
    r"draft|design|name|choice|sound\s+of\s+(?:it|that))\b|\bthe\s+(?:former|latter)\b|"
    r"\bthe\s+(?:first|second|third|last)\s*(?:[.!,;]|$|(?:a\s+lot|better|more|most|best|too|over|instead)\b)",  # not "first thing"
    re.IGNORECASE)


def _own_short_statement(s: str, sp: Speaker) -> bool:
    """Whether an unnamed user (the one person an agent works for) states a preference or a trait of their own in
    a short sentence ("I prefer dark mode.", "I'm vegetarian.", "I like tea."): kept as a fact, which the word count
    and the score of talk between people would drop. It must start in the first person and point at nothing in
    the conversation (no pronoun, no "this", no "the second option")."""
    if sp.named or len(s.split()) > 14 or not re.match(r"(?:I\b|I'm\b|we\b|we're\b)", s, re.IGNORECASE):
        return False
    if not (_PREFERENCE.match(s) or _STRONG_IDENTITY.match(s)):
        return False
    return not (_LOOSE_PRONOUN.search(s) or _DEMONSTRATIVE.search(s) or _ANSWERING_OBJECT.search(s)
                or SECOND_PERSON.search(s) or s.rstrip().endswith("?"))


def _states_a_slot(s: str) -> bool:
    """Whether a sentence states what fills one of the speaker's slots (``slots``) or what holds now (``_STATE``)."""
    body = s.rstrip(" .!")
    if len(body.split()) > 14 or _REQUEST.match(body) or SECOND_PERSON.search(body):
        return False
    if not re.match(r"(?:(?:until|since|on)\s+\w+,?\s+)?(?:I\b|I'm|we\b|we're|my\b|our\b|[a-z]+\s+calls?\s+me\b|"
                    r"(?:the|this)\s+(?:project|api|app|repo)\b)", body, re.IGNORECASE) and not _PROJECT_THING.match(body):
        return False
    return bool(sl.slots(body)) or bool(_STATE.match(body))


def _about_project(s: str) -> bool:
    """Whether a user's sentence is about their project (we, our, this project, the repo, the codebase)."""
    return bool(re.search(r"\b(?:we|our)\b|\b(?:this|the)\s+(?:project|repo|repository|codebase)\b|\brepo(?:sitory)?\b|"
                          r"\bcode\s*base\b", s, re.IGNORECASE))


def _proper_nouns(s: str, names: tuple[str, ...]) -> list[str]:
    """Capitalised words that are not the sentence's first word, a pronoun, a known name or a filler."""
    out = []
    toks = re.findall(r"[A-Za-z][\w'’-]*", s)
    skip = {n.split()[0] for n in names if n} | _PROPER_STOP
    for i, w in enumerate(toks):
        if i == 0 or not w[:1].isupper() or w in skip or w.removesuffix("'s") in skip:
            continue
        out.append(w)
    return out


def _chinese(sentence: str, e: Entry, sp: Speaker) -> list[Candidate]:
    """Candidates of one Chinese sentence (clauses joined to the trigger before them)."""
    s = sentence.strip()
    if s.endswith(("?", "？")) or _ZH_QUESTION_END.search(s) or _ZH_QUESTION_START.match(s) or _ZH_REQUEST.match(s):
        return []
    groups: list[str] = []
    pending: list[str] = []
    for clause in re.split(r"[，,]", s):
        c = clause.strip()
        if not c or _ZH_QUESTION_END.search(c) or _ZH_QUESTION_START.match(c) or _ZH_REQUEST.match(c):
            continue
        own = "我" in c or any("我" in p for p in pending)  # 我老家在湖南，现在住在广州: the subject carries over
        if _ZH_TRIGGER.search(c) or (not sp.named and own and sl.states_own_slot(c)) \
                or (not sp.named and any(x.kind == "style" for x in sl.slots(c))):  # 回答请用英文
            groups.append("，".join([*pending, c]))
            pending = []
        elif groups:
            groups[-1] += "，" + c
        else:
            pending.append(c)
    out = []
    for g in groups:
        g = _ZH_REMEMBER.sub("", g.strip(" 。！!～~"))
        if len(re.findall(r"[\u3400-\u9fff]|[A-Za-z0-9][\w.+-]*", g)) < 4:  # a Latin word (Python, 3.8) counts
            continue
        resolved, dated = resolve(g, e.time)
        if _ZH_IMPERATIVE.match(resolved):
            text = f"{sp.zh_name}要求" + zh_third_person(re.sub(r"^(?:请|千万)", "", resolved), sp.zh_name)
        elif "我" not in resolved and not sp.named and not re.search(r"项目|仓库|代码库|^团队", resolved):
            text = f"{sp.zh_name}说" + resolved
        else:
            text = zh_third_person(resolved, sp.zh_name)
            if not text.startswith((sp.zh_name, "团队")) and sp.zh_name not in text[:12]:
                text = f"{sp.zh_name}说" + text
        text = _finish(text.replace("团队团队", "团队"))  # 我们团队 -> 团队
        if len(text) > MAX_CHARS:
            continue
        about = bool(re.search(r"我们|项目|仓库|代码库", g)) and not sp.named
        section = PROJECT if about else (EVENTS if dated or re.search(r"了", g) else PREFERENCES)
        if re.search(r"我叫|我的名字|叫我|我是|我在.{1,20}?(?:工作|上班)|住在|来自", g):
            section = PROFILE if not about else PROJECT
        out.append(Candidate(text, MIN_SCORE + 2.0 + (1.0 if dated else 0.0), section, e, sp, about))
    return out


# --- corrections and forget requests ----------------------------------------------------------


_CLAUSE_JOIN = re.compile(r",?\s+and\s+(?=(?:the\s+user|the\s+team|[A-Z][a-z]+)\b)|,\s+(?=(?:the\s+user|the\s+team)\b)|;\s+"
                          r"|，|、")


def _without_part(fact: str, target: str, sp: Speaker, *, kind: str | None = None) -> str:
    """``fact`` without the part a forget request names ("" when that is all of it, or no part can be cut).

    A fact of several clauses ("The user's name is Sam and the user is a product manager.") loses the clauses the
    request matches; a single clause loses the phrase holding the value the request names ("at Shopify")."""
    want = _match_tokens(target)
    clauses = [c.strip(" .。") for c in _CLAUSE_JOIN.split(fact) if c.strip(" .。")]
    if len(clauses) > 1:
        kept = [c for c in clauses if not any(x.kind == kind for x in sl.slots(c))] if kind else \
            [c for c in clauses if len(want & _match_tokens(c)) < max(1, len(want) / 2)]
        if not kind and len(kept) == len(clauses):  # a long target ("鱼缸上个月清掉了，鱼都送人了"): the clause it shares most with
            shared = [len(want & _match_tokens(c)) for c in clauses]
            top = max(shared)
            kept = [c for c, n in zip(clauses, shared, strict=True) if n < top] \
                if shared.count(top) == 1 and (top >= 2 or shared.count(0) == len(shared) - 1) else kept
        if kept and len(kept) < len(clauses):
            return _finish(("，" if has_cjk(fact) else " and ").join(kept))
        return ""
    if kind:
        return ""  # a single clause holding the named slot goes whole
    rest = _without_conjunct(fact, want, sp)
    if rest:
        return rest
    third = third_person(target, sp.name, team=not sp.named) or target
    for slot in sl.slots(third):
        cut = re.sub(rf"\s+(?:at|for|in|with|from|on)\s+(?:the\s+)?{re.escape(slot.value)}(?![\w])", "", fact, count=1)
        if cut != fact and len(_match_tokens(cut) - _match_tokens(sp.name)) >= 2:
            return _finish(cut)
    return ""


def _without_conjunct(fact: str, want: set[str], sp: Speaker) -> str:
    """``fact`` without the one "and" conjunct a forget request names, when the other still says something: the last
    ("has a cat called Biscuit and a parrot called Nimbus" -> "has a cat called Biscuit"), or the first when the
    second is a verb phrase of the same subject ("has two kids and drive a Prius" -> "drives a Prius"); else ""."""
    m = re.match(r"^(?P<a>.+?)\s+and\s+(?P<b>[^,;]+?)[.。]?$", fact)
    if not m or has_cjk(fact) or " and " in m.group("b"):
        return ""
    a, b = m.group("a"), m.group("b")
    in_a, in_b = bool(want & _match_tokens(a)), bool(want & _match_tokens(b))
    if in_b and not in_a and len(_match_tokens(a) - _match_tokens(sp.name)) >= 2:
        return _finish(a)
    verb = re.match(r"(?!(?:a|an|the|my|his|her|their|two|three|some)\b)[a-z]+\b", b)
    if in_a and not in_b and verb:
        said = third_person("I " + b, sp.name, team=not sp.named)
        return _finish(said) if said and len(_match_tokens(said) - _match_tokens(sp.name)) >= 2 else ""
    return ""


def _stem(w: str) -> str:
    for suf in ("ing", "ies", "es", "ed", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def _match_tokens(text: str) -> set[str]:
    return {_stem(w) for w in content_tokens(text) if w not in _CONTROL_WORDS}


@dataclass
class _Known:
    """A fact a correction or forget request may target: an existing fact or a proposal of this batch."""

    fact: ExistingFact | None
    cand: Candidate | None

    @property
    def text(self) -> str:
        return self.fact.text if self.fact else self.cand.text  # type: ignore[union-attr]

    @property
    def subject(self) -> str:
        return self.fact.subject if self.fact else self.cand.speaker.subject  # type: ignore[union-attr]


def _matches(target: str, pool: list[_Known], subject: str, *, limit: int, least: float = 0.34) -> list[tuple[float, _Known]]:
    """Facts of ``pool`` about ``subject`` (or the project) that ``target`` talks about (sharing at least ``least`` of
    the shorter side's words), best first."""
    want = _match_tokens(target)
    zh = has_cjk(target)
    out = []
    for k in pool:
        if k.subject not in (subject, "project") and not (subject == "user" and k.subject == "user"):
            continue
        have = _match_tokens(k.text)
        if zh:
            a = set(re.findall(r"[\u3400-\u9fff]", target)) - set("我用的了不再已经现在改换成忘记掉别记住要请你是")
            b = set(re.findall(r"[\u3400-\u9fff]", k.text)) - set("用户的了")
            shared = a & b
            if len(shared) >= 2 or (shared and len(a) <= 2):
                out.append((len(shared) / max(1, len(a)), k))
            continue
        shared = want & have
        if not shared or not (shared - {_stem(w) for w in _SPECIFIC_WEAK}):
            continue
        ratio = len(shared) / max(1, min(len(want), len(have)))
        if ratio >= least:
            out.append((ratio, k))
    out.sort(key=lambda p: -p[0])
    return out[:limit]


# --- the extractor ---------------------------------------------------------------------------------


def extract(entries: list[Entry], existing: list[ExistingFact]) -> list[FactOp]:
    """Operations for ``entries`` given the ``existing`` facts (see the module docstring)."""
    active = [f for f in existing if f.state == "active"]
    known_keys = {fact_key(f.text) for f in existing}
    speakers = {_speaker(e).name for e in entries if _speaker(e).named}
    ops: list[FactOp] = []
    cands: list[Candidate] = []
    pool: list[_Known] = [_Known(f, None) for f in active]
    user_texts: dict[str, str] = {}
    user_entries: list[Entry] = []
    said = ("", "")
    for e in entries:
        if _is_agent_note(e):
            ops.append(_agent_note_op(e))
            continue
        if skip_reason(e) is not None or not _when(e):
            continue  # never a source, or no time to date a fact with
        text = own_text(e.text, known_keys)
        if not text:
            continue
        before = (len(ops), len(cands))
        sp = _speaker(e)
        if not sp.named and e.role == "user":
            user_texts[e.ref] = text
            user_entries.append(e)
        other = said[1] if sp.named and said[0] not in ("", sp.name) else ""
        asked = referents.asked_companion(other) if other else ""
        said = (sp.name if sp.named else "", text)  # the other person's last words: whom "we" may mean
        for c in _best_of(_entry_candidates(text, e, sp, _vocatives(speakers, sp.name), pool, ops, cands, asked,
                                            other)):
            c.order = len(cands)
            cands.append(c)
            pool.append(_Known(None, c))
        if e.role == "note" and len(cands) == before[1] and _unmatched_only(ops[before[0]:]):
            del ops[before[0]:]  # a note changing nothing known ("I no longer eat gluten") states what holds now
            _keep_note(e, sp, ops, cands, pool)
    ops.extend(_select(cands, active))
    ops.extend(_signal_ops(user_entries, user_texts, active, ops, session_tools(entries)))
    ops.extend(_ended(entries, active, ops))
    known = {f.text.casefold() for f in active} | {o.text.casefold() for o in ops if o.op == "add"}
    ops.extend(command_facts(entries, known))  # coding sessions: the commands of the verification loop
    ops.extend(manifest_facts(entries, known))  # ... and what the project's own manifests declare
    return ops


def _entry_candidates(text: str, e: Entry, sp: Speaker, vocatives: tuple[str, ...], pool: list[_Known],
                      ops: list[FactOp], cands: list[Candidate], asked: str = "", other: str = "") -> list[Candidate]:
    """The candidates of the sentences of one entry's ``text``; a control sentence ("forget that ...")
    writes its operations into ``ops`` / ``cands`` instead. ``other``: the other speaker's message just before."""
    per_entry: list[Candidate] = []
    earlier: list[str] = [asked] if asked else []  # whom the other person just asked about ("you and your partner")
    own = not sp.named and e.role in ("user", "note")
    caser = truecase.Truecaser([k.text for k in pool]) if own else None
    parts = [caser(x) if caser else x for x in sentences(text)[:MAX_SENTENCES]]  # "i'm in austin now": lower case
    skip = -1
    for i, sentence in enumerate(parts):
        if len(sentence) > MAX_SENTENCE or i == skip:
            continue  # a wall of text without a full stop states no fact we could keep whole; a pair's second half
        if own and i + 1 < len(parts) and _pair_change(sentence, parts[i + 1], e, sp, pool, ops):
            skip = i + 1
            continue
        if _control(sentence, e, sp, pool, ops, cands):
            continue
        if has_cjk(sentence):
            per_entry.extend(_chinese(sentence, e, sp))
        else:
            said = referents.resolve_we(sentence, earlier) if sp.named else sentence  # "we": who, if the message says
            if sp.named:  # "I adopted her in May": whom, if this message or the question before it names one
                said = referents.resolve_pronoun(said, earlier[1 if asked else 0:], other, (*vocatives, sp.name))
            earlier.append(sentence)
            c = _english(said, e, sp, vocatives)
            if c is not None:
                per_entry.append(c)
    return per_entry


def _pair_change(first: str, second: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """A change told in two sentences, the old value in the first and the new one in the second ("left spotify in the
    spring. i'm at Klarna now", "we finally killed the jenkins box. everything runs in GitHub Actions now"): both
    carry a sign of change and the first names a value a known fact holds; read as one statement (True if it was)."""
    if not (change.marked(first) and change.marked(second)) or first.rstrip().endswith(("?", "？")):
        return False
    facts = [k.text for k in _subject_pool(pool, sp)]
    gone = sl.gone_values(first)
    if not any(sl.holds_value(f, g) for f in facts for g in gone) \
            and not any(change.repeated_names(first + " " + second, f) for f in facts):
        return False
    joined = f"{first.rstrip(' .!。！')}{'；' if has_cjk(first) else '; '}{second}"
    return _slot_change(joined, e, sp, pool, ops) or _general_change(joined, e, sp, pool, ops)


def _best_of(per_entry: list[Candidate]) -> list[Candidate]:
    """The best candidate of one entry, and a second one if it scores well and says something else."""
    if not per_entry:
        return []
    per_entry = sorted(per_entry, key=lambda c: -c.score)
    best = [per_entry[0]]
    for c in per_entry[1:]:
        second = c.score >= SECOND_SCORE or (c.durable and c.score >= PEOPLE_MIN_SCORE)  # news, or a standing trait
        if second and not any(similar(c.text, b.text) for b in best) and len(best) < 2:
            best.append(c)
    return best


def _ended(entries: list[Entry], active: list[ExistingFact], ops: list[FactOp]) -> list[FactOp]:
    """``delete`` for the user's temporary facts whose last day (``validity.ends_on``) is before the newest message."""
    dated = [e for e in entries if skip_reason(e) is None and message_date(_when(e))]
    if not dated:
        return []
    last = max(dated, key=lambda e: _when(e))
    today = message_date(_when(last))
    taken = {o.fact_id for o in ops if o.fact_id}
    out = []
    for f in active:
        end = validity.ends_on(f.text) if f.subject in ("user", "project") and not f.pinned else None
        if end is not None and today is not None and today > end and f.fact_id not in taken:
            out.append(FactOp(op="delete", fact_id=f.fact_id, when=_when(last), sources=[last.ref],
                              reason=f"temporary fact ended on {end.isoformat()}"))
    return out


def _is_agent_note(e: Entry) -> bool:
    return e.role == "note" and isinstance(e.meta, dict) and e.meta.get("by") == "agent"


def _agent_note_op(e: Entry) -> FactOp:
    """An agent's note: an agent-proposed fact of its project, or a ``noop`` with the reason it is refused."""
    verdict = notes.agent_note_verdict(e.text, e.project)
    if not verdict.kept:
        return FactOp(op="noop", sources=[e.ref], reason=verdict.reason)
    return FactOp(op="add", text=verdict.text, subject="project", scope="project", project=e.project,
                  section=PROJECT, when=_when(e), sources=[e.ref], reason=verdict.reason)


def _unmatched_only(new_ops: list[FactOp]) -> bool:
    """Whether ``new_ops`` (those of one note) are none, or only corrections that matched no fact."""
    return all(o.op == "noop" and o.reason.startswith(("correction matches no fact", "correction could not be"))
               for o in new_ops)


def _keep_note(e: Entry, sp: Speaker, ops: list[FactOp], cands: list[Candidate], pool: list[_Known]) -> None:
    """A user's note the rules found no fact in: kept as ``notes.note_verdict`` words it, or refused with a noop."""
    verdict = notes.note_verdict(e.text)
    if not verdict.kept:
        ops.append(FactOp(op="noop", sources=[e.ref], reason=verdict.reason))
        return
    about = _about_project(e.text)
    section = PROJECT if about else PROFILE if _IDENTITY.search(e.text) else PREFERENCES
    c = Candidate(verdict.text, MIN_SCORE + 2.0, section, e, sp, about, order=len(cands), forced=True)
    cands.append(c)
    pool.append(_Known(None, c))


def _loose_target(target: str, pool: list[_Known]) -> str:
    """``target`` with each word a known fact holds with the same first five letters written as the fact has it
    ("the allergy" -> "the allergic" when a fact says "allergic to peanuts")."""
    if has_cjk(target):
        return target
    words = {w.casefold() for k in pool for w in re.findall(r"[A-Za-z][\w-]{4,}", k.text)}
    out = []
    for w in target.split():
        alike = sorted(x for x in words if len(w) >= 5 and x[:5] == w.casefold()[:5])
        out.append(w if not alike or w.casefold() in words else alike[0])
    return " ".join(out)


def _forget(s: str, target: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp], *,
            pointed: bool = False) -> None:
    """A forget request naming ``target``: the facts it names (or that fill the slot it names, ``slots.asked_kind``)
    are dropped, deleted, or lose the part it names; a noop says why when it names nothing. ``pointed``: the target is
    a clause the request points back at ("..., so scratch that part"), which talks of more than the fact: the one
    fact it shares most with is meant."""
    zh = has_cjk(s)
    if not _match_tokens(target) and not (zh and len(target) >= 2):
        ops.append(FactOp(op="noop", sources=[e.ref], reason=f"forget request names nothing to match: {s[:80]}"))
        return
    kind = sl.asked_kind(target)
    hits = [(1.0, k) for k in _subject_pool(pool, sp) if any(x.kind == kind for x in sl.slots(k.text))][:1] \
        if kind else [(r, k) for r, k in _matches(target, pool, sp.subject, limit=1 if pointed else MAX_DELETES,
                                                  least=0.2 if pointed else 0.34) if r >= (0.2 if pointed else 0.5)]
    if not hits:
        ops.append(FactOp(op="noop", sources=[e.ref], reason=f"forget request matches no fact: {s[:80]}"))
    for _r, k in hits:
        if k.cand is not None:
            k.cand.dropped = True
        elif k.fact is not None and k.fact.pinned:
            ops.append(FactOp(op="noop", fact_id=k.fact.fact_id, sources=[e.ref],
                              reason="forget request matches a pinned fact; pinned facts are only removed by hand"))
        elif k.fact is not None and not any(o.fact_id == k.fact.fact_id for o in ops):
            rest = _without_part(k.fact.text, target, sp, kind=kind)
            if rest:
                part = k.fact
                ops.append(FactOp(op="update", fact_id=part.fact_id, text=rest, subject=part.subject,
                                  scope=part.scope, project=part.project, section=part.section or PREFERENCES,
                                  when=_when(e),
                                  sources=[e.ref], reason=f"forget request (part of the fact): {_cut_reason(s)}"))
            else:
                ops.append(FactOp(op="delete", fact_id=k.fact.fact_id, when=_when(e), sources=[e.ref],
                                  reason=f"forget request: {_cut_reason(s)}"))
        pool.remove(k)


def _forget_target(said: str) -> str:
    """What an English forget request names: its words up to the first clause break, the reason after it left out
    ("that I have kids, I'd rather that wasn't stored" -> "I have kids"), and "the X thing / part / bit" as X."""
    target = re.split(r"\s*(?:[,;:!?]|\s[-–—]+\s|\.(?!\w))\s*", said.strip(), maxsplit=1)[0]
    return re.sub(r"^the\s+(.+?)\s+(?:thing|part|bit|stuff|note)$", r"\1", target.strip(" ."), flags=re.IGNORECASE)


def _control(sentence: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp],
             cands: list[Candidate]) -> bool:
    """Handle a forget request or a correction in ``sentence``; True if it was one (and is no fact)."""
    s = sentence.replace("\u2019", "'").strip()
    zh = has_cjk(s)
    part = (_ZH_FORGET_TOPIC.match(s) if zh else _FORGET_PART.match(s)) if not sp.named else None
    if part:  # "Scratch what I said about the allergy, ...", "Forget the part about Vue - ...", 金毛那个你忘掉吧
        _forget(s, _loose_target((part.group("t") or part.group("t2") or part.groupdict().get("t3") or "").strip(" .。!！"), pool), e, sp, pool, ops)
        return True
    that = None if sp.named else (_ZH_FORGET_THAT if zh else _FORGET_THAT).match(s)
    if that:  # "the band broke up so scratch that part": the clause before names it
        _forget(s, _loose_target(that.group("t").strip(" .。!！，,"), pool), e, sp, pool, ops, pointed=True)
        return True
    forget = _ZH_FORGET.match(s) if zh else _FORGET.match(s)
    if forget:
        _forget(s, forget.group(1).strip(" .。!！") if zh else _forget_target(forget.group(1)), e, sp, pool, ops)
        return True
    if zh and (s.endswith(("?", "？")) or _ZH_QUESTION_END.search(s) or _ZH_QUESTION_START.match(s)
               or re.search(r"[吗嘛么呢][？?！!。…~～]*$", s) or s.startswith(("你", "您"))):
        return False
    if not zh and not sp.named and s.rstrip().endswith("?") and _SURPRISE.match(s) and change.marked(s):
        s = s.rstrip(" ?!")  # "weirdly I love cilantro now??": a statement said in surprise, no question
    if not zh and (s.rstrip().endswith("?") or _QUESTION.match(s)):
        return False
    if not zh and not sp.named and _style_change(s, e, sp, pool, ops):
        return True
    if _rename_change(s, e, sp, pool, ops):
        return True
    if _slot_change(s, e, sp, pool, ops):
        return True
    clause = None if zh or sp.named or not keep.differs(s) else keep.slot_clause(s)  # "..., prod is running PG 16."
    if clause and clause != s and _slot_change(clause, e, sp, pool, ops):
        return True
    if _return_change(s, e, sp, pool, ops):
        return True
    if _general_change(s, e, sp, pool, ops):
        return True
    return _correction(s, e, sp, pool, ops)


def _rename_change(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """The user's statement that a thing was renamed ("we renamed the repo to harbor-api", 项目改名了，现在叫银河计划):
    the one fact naming that thing (``rename.target``) names it anew; False when none or two fit."""
    said = None if sp.named or e.role not in ("user", "note") else rename.renamed(s)
    if said is None or frames.irrealis(s.replace(said[2], " ")) or frames.one_off(s):
        return False  # "we might rename it to X"; not "现在叫银河计划", whose new name holds 计划
    subjects = [k for k in _subject_pool(pool, sp) if not (k.cand is not None and k.cand.entry.ref == e.ref)]
    found = rename.target(s, [k.text for k in subjects])
    if found is None:
        return False
    at, text = found
    return _apply_update(subjects[at], text, s, e, pool, ops, step="rename")


#: A return told without its subject ("back home in Gdańsk now", "back in my own flat since saturday").
_BARE_RETURN = re.compile(r"^(?:(?:and|so|now|finally|ok|anyway)\s*,?\s+)*back\s+(?:in|at|to|home|on|from)\b", re.IGNORECASE)


def _return_change(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """The user says they are back ("back home in Gdańsk now, the visit went great", "I'm back at work since Monday"):
    the one temporary fact of theirs (``validity.ends_on``: "until Friday 7 March 2025", "in March 2025") has ended, and
    the clause of the return replaces it (``update``). False for another person, a plan, or not exactly one such fact."""
    if sp.named or e.role not in ("user", "note") or not sl.returns(s) or frames.irrealis(s) or _FUTURE.search(s) \
            or frames.about_others(s):
        return False  # "my sister is back home": not the user's stay that ended
    temps = [k for k in _subject_pool(pool, sp) if validity.ends_on(k.text) is not None
             and not (k.cand is not None and k.cand.entry.ref == e.ref)]  # a stay "at my brother's" is still the user's
    if len(temps) != 1:
        return False
    clause = next((p for p in change.clauses(s) if sl.returns(p)), s)
    if _BARE_RETURN.match(clause) and not has_cjk(clause):
        clause = "I'm " + clause.lstrip()
    text = _restated(clause, e, sp, [])
    if not text or fact_key(text) == fact_key(temps[0].text):
        return False
    return _apply_update(temps[0], text, s, e, pool, ops, step="temporary fact ended")


def _correction(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """A statement worded as a correction ("actually ...", "I meant ..."): the best-matching known fact updated with
    its restatement; True if it was one (a noop with the reason when it matches or restates nothing)."""
    zh = has_cjk(s)
    strong = _ZH_CORRECTION.search(s) if zh else _CORRECTION_STRONG.search(s)
    weak = None if zh else _CORRECTION_WEAK.search(s)
    if not strong and not weak:
        return False
    if not zh and (s.rstrip().endswith("?") or _QUESTION.match(s) or SECOND_PERSON.search(s)):
        return False
    hits = [(r, k) for r, k in _matches(s, pool, sp.subject, limit=1) if strong or r >= 0.5]
    if not hits:
        if strong:
            ops.append(FactOp(op="noop", sources=[e.ref], reason=f"correction matches no fact: {_cut_reason(s)}"))
            return True
        return False
    _r, k = hits[0]
    if change.said_again(s, k.text):
        return False  # the fact already says it: a statement read again corrects nothing
    text = _restated(s, e, sp, sl.gone_values(s))
    if not text:
        ops.append(FactOp(op="noop", sources=[e.ref], reason=f"correction could not be restated: {_cut_reason(s)}"))
        return True
    return _apply_update(k, text, s, e, pool, ops)


def _general_change(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """The user's own statement of change that the slot grammar did not read: ``change.target`` finds the one known
    fact it updates, and the statement restated replaces it (an ``update``); False when nothing fits."""
    if sp.named or e.role not in ("user", "note") or frames.imperative(s):
        return False
    zh = has_cjk(s)
    known = [k for k in _subject_pool(pool, sp) if not (k.cand is not None and k.cand.entry.ref == e.ref)]
    if not zh and not (_ANY_FIRST_PERSON.search(s) or keep.thing_statement(s) or keep.dropped_subject(s)
                       or frames.reports_change(s) or change.other_version(s, [k.text for k in known])):
        return False  # "React 18 everywhere" after "uses React 17": a known tool's other version needs no subject
    if zh and not re.search(r"我|项目|团队|我们", s) and not sl.slots(s) and not change.marked(s):
        return False
    at, step = change.explain(s, [k.text for k in known])
    if at is None:
        return False
    k = known[at]
    named_gone = sl.gone_values(s)
    gone = named_gone or change.repeated_names(s, k.text)  # "最近改用 Cursor 了，PyCharm 太吃内存"
    body = s if zh else keep.with_subject(_strip_intro(s, ()))
    if step == "tool":  # only the new tool is named: the old fact says what it is for
        text = change.tool_swap(s, k.text) or ""
        named_gone = named_gone or [k.text]
    elif step == "preference":  # the clause that says what is liked now, not the reason beside it
        text = _restated(keep.with_subject(_strip_intro(change.preference_clause(s), ())), e, sp, gone)
    else:
        text = _swapped(s, k.text) or _restated(body, e, sp, gone)
    if text and not zh and step not in ("tool", "preference"):
        text = _family_clause(body, text, k.text, gone, e, sp)
    if zh and text and not change.families(text) & change.families(k.text) & change.families(s):
        text = _restated(s, e, sp, gone, entire=True)  # "辞职了，现在做自由翻译": the clause with the value lost the slot
    text = _unless_lost(text, s, k.text)
    if not text or not change.adds_value(text, k.text):
        return False
    if not named_gone and step != "preference" and not change.families(text) & change.families(k.text):
        return False  # the new fact is not about what the old one is ("..., and I'm excited to explore Kyoto")
    if fact_key(text) in {fact_key(x.text) for x in pool} | {fact_key(o.text) for o in ops if o.text}:
        return True  # already known as stated, or stated by this batch: the same statement again changes nothing
    _retire_rewordings(k, text, s, e, known, pool, ops)
    return _apply_update(k, text, s, e, pool, ops, step=step if step == "own slot" else "")


def _family_clause(body: str, text: str, old: str, gone: list[str], e: Entry, sp: Speaker) -> str:
    """``text``, or when it lost what the replaced fact ``old`` is about (its predicate family), the clause of ``body``
    that keeps it, in the third person ("upgraded django to 4.2 (the newer LTS), took a week ..." -> the first)."""
    shared = change.families(body) & change.families(old)
    if not shared or change.families(text) & shared:
        return text
    for part in [p for p in re.split(r"\s*(?:[,;]|\s[-–—]+\s|\()\s*", body) if p] + [body]:
        if change.families(part) & shared and not any(sl.names(part, g) for g in gone):
            said = third_person(resolve(keep.with_subject(part), e.time)[0], sp.name, team=True)
            return _finish(said) if said else text
    return text


#: A fact on how the assistant answers: it speaks of answers, replies, responses or explanations.
_ANSWER_NOUN = re.compile(r"\b(?:answers?|replies|repl(?:y|ies)|responses?|explanations?)\b", re.IGNORECASE)


def _style_change(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """"Actually, I'd rather you explain things in detail": an ``update`` of the known fact on how the assistant
    answers (``keep.answer_style``), when the statement carries a sign of change."""
    style = keep.answer_style(s)
    if style is None:
        return False
    own = _subject_pool(pool, sp)
    k = next((k for k in own if sl.shared_slot(k.text, style, cue=sl.has_cue(s)) is not None), None)
    if k is None and change.marked(s):  # "I'd rather have detailed explanations from now on": the one fact on answers
        styled = [k for k in own if _ANSWER_NOUN.search(k.text) and fact_key(k.text) != fact_key(style)]
        k = styled[0] if len(styled) == 1 else None
        return k is not None and _apply_update(k, style, s, e, pool, ops, step="answer style")
    return k is not None and _apply_update(k, style, s, e, pool, ops)


def _subject_pool(pool: list[_Known], sp: Speaker) -> list[_Known]:
    """The facts a statement by ``sp`` may change: their own (and, for the user, the project's), newest first."""
    allowed = ("user", "project") if not sp.named else (sp.subject,)
    return [k for k in reversed(pool) if k.subject in allowed]


def _slot_target(third: str, pool: list[_Known], gone: list[str], cue: bool, *, owner: bool) -> _Known | None:
    """The fact ``third`` (a statement in the third person) changes: one holding a value it names as gone, else one
    filling the same slot with another value, else (with a sign of change) the same sentence with one span changed.

    ``owner``: the statement is the user's (every slot kind); a named person of a conversation corrects only
    ``slots.PERSONAL`` kinds, with a sign of change."""
    pool = [k for k in pool if not frames.other_subject(third, k.text)]  # "my brother moved ...": not the user's
    if gone and (owner or cue):
        for k in pool:
            if any(sl.holds_value(k.text, g) for g in gone):
                return k
    if not owner and not cue:
        return None
    for k in pool:
        if sl.shared_slot(k.text, third, cue=cue, kinds=None if owner else sl.PERSONAL) is not None:
            return k
    if cue and owner:
        for k in pool:
            if sl.one_span_changed(k.text, third):
                return k
        if sl.returns(third):  # "I'm back in the office": the temporary state ("until June") ended
            return next((k for k in pool if validity.ends_on(k.text) is not None), None)
        words = len(third.split())  # chatty prose with "actually" / "lately" changes no frame; a short statement may
        strong = (sl.has_strong_cue(third) and words <= 24) or words <= 12
        at = frames.frame_target(third, [k.text for k in pool]) if strong else None  # the same frame, another value
        if at is not None:
            return pool[at]
    return None


def _restated(s: str, e: Entry, sp: Speaker, gone: list[str], *, entire: bool = False) -> str:
    """The new fact a change statement states: its clause with the new value (``entire``: in Chinese, the whole
    statement), dated, in the third person."""
    resolved, _dated = resolve(s, e.time)
    if has_cjk(resolved):
        clause = resolved.strip() if entire else sl.restate_clause(resolved, gone)
        text = zh_third_person(clause, sp.zh_name)
        if not text.startswith((sp.zh_name, "团队")) and "我" not in clause:
            text = ("团队" if re.search(r"数据库|项目|仓库|代码|持续集成|部署", clause) and not sp.named else sp.zh_name) + text
        return _finish(text.replace("团队团队", "团队"))  # 我们团队 -> 团队
    whole = _strip_intro(resolved, ())
    clause = _CALL_ME.sub(r"I want to be called \1", sl.restate_clause(whole, gone))
    stated = None if sp.named or sl.slots(clause) else keep.slot_clause(whole)  # "Deploys go to Fly.io these days; ..."
    if stated and not any(sl.names(stated, g) for g in gone):
        clause = stated
    if not _ANY_FIRST_PERSON.search(clause) and not re.match(r"(?:the|this)\s+(?:project|repo|team)\b|[A-Z]", clause):
        clause = whole  # "..., only tea": no clause stands alone, the statement is restated whole
    converted = third_person(clause, sp.name, team=not sp.named)
    return _finish(converted) if converted else ""


def _swapped(s: str, old_fact: str) -> str:
    """For "from X to Y", "replaced X with Y", "not X but Y" (``slots.swap``): the old fact with X replaced by Y, when
    it holds X as written."""
    pair = sl.swap(s)
    if not pair:
        return ""
    old, new = pair
    name = rf"(?:(?-i:[A-Z])[\w.&'+-]*\s+)*{re.escape(old)}" if old[:1].isupper() else re.escape(old)  # "Honda Civic" whole
    pattern = re.compile(re.escape(old) if has_cjk(old) else rf"(?<![\w]){name}(?![\w])", re.IGNORECASE)
    if not pattern.search(old_fact):
        return ""
    return pattern.sub(lambda _m: new, old_fact, count=1)


def _slot_change(s: str, e: Entry, sp: Speaker, pool: list[_Known], ops: list[FactOp]) -> bool:
    """A statement about a slot an active fact fills with another value: an ``update`` of that fact (True), else
    False (and the sentence is read as usual)."""
    if SECOND_PERSON.search(s) and not has_cjk(s):
        return False
    if frames.irrealis(s) or frames.one_off(s) or (frames.additive(s) and not sl.gone_values(s)) or change.told_as_past(s):
        return False  # "if I moved to ...", "I also use ...", "back in 2019 it was still on ...": nothing changes
    zh = has_cjk(s)
    if zh and not re.search(r"我|这个项目|本项目", s) and not (not sp.named and sl.has_cue(s) and sl.slots(s)):
        return False
    if not zh and not (_ANY_FIRST_PERSON.search(s) or _CALL_ME.search(s) or (not sp.named and sl.swap(s))
                       or re.match(r"(?:the|this)\s+(?:project|repo|api|app|team)\b|production\b", s, re.I)
                       or _PROJECT_THING.match(s) or (not sp.named and (frames.reports_change(s)
                                                                         or keep.thing_statement(s)))):
        return False
    subjects = _subject_pool(pool, sp)
    if not subjects:
        return False
    cue = sl.has_cue(s)
    owner = not sp.named
    if not owner and not cue:
        return False
    body = _CALL_ME.sub(r"I want to be called \1", _strip_intro(s, ()))
    third = (zh_third_person(body, sp.zh_name) if zh else third_person(body, sp.name, team=not sp.named)) or body
    gone = sl.gone_values(s)
    k = _slot_target(third, subjects, gone, cue, owner=owner)
    text = ""
    if k is None and (cue or gone):
        text = _restated(s, e, sp, gone)
        k = _slot_target(text, subjects, gone, cue, owner=owner) if text else None
    if k is None or ((validity.is_temporary(s) or _FUTURE.search(s)) and validity.ends_on(k.text) is None and not gone
                     and not cue):
        return False  # "This week / next week I'm in Lisbon for a conference": kept beside a durable fact
    text = _swapped(s, k.text) or text or _restated(s, e, sp, gone)
    olds = [] if gone else sl.old_values(k.text, third)
    if olds and any(sl.names(text, v) for v in olds):  # the value the matched fact holds is the one gone
        text = _restated(s, e, sp, olds) or text  # ("handed in my notice at Airbus and now work for Rolls-Royce")
    text = _unless_lost(text, s, k.text)
    if not text or similar(text, k.text) and fact_key(text) == fact_key(k.text):
        return False
    if not gone and _restates(text, k.text):
        return False  # says nothing the fact does not, in its order: a repeated message, never a change
    _retire_rewordings(k, text, s, e, subjects, pool, ops)
    return _apply_update(k, text, s, e, pool, ops)


def _unless_lost(text: str, s: str, old: str) -> str:
    """``text``, the restated change, or when it lost the new value or kept the old one ("Auth0 got too pricey so the
    team is on Keycloak."; "The team ontoes Woodpecker.", which lost what CI is) the old fact with its one value swapped (``change.value_swap``:
    "Login goes through Keycloak."), undated: the fact's own frame says what the value is for."""
    swap = change.value_swap(s, old)
    if swap is None:
        return text
    gone, new, swapped = swap
    kept = change.families(old) - {"prefer"}  # what the old fact is about, which the new one must still say
    if text and sl.holds_value(text, new) and not sl.holds_value(text, gone) \
            and (not kept or change.families(text) & kept):
        return text
    return _finish(re.sub(r"\s*\((?:as\s+of|by)\s+[^)]*\)", "", swapped).rstrip(" .")) or text


def _restates(text: str, fact: str) -> bool:
    """Whether ``text``'s content words are ``fact``'s, or some of them, in the same order: nothing is swapped
    ("prefers email over phone calls" / "phone calls over email" is a change) and nothing is new."""
    mine = [w for w in words(text) if w not in STOPWORDS]
    theirs = iter(w for w in words(fact) if w not in STOPWORDS)
    return bool(mine) and all(w in theirs for w in mine)  # a subsequence: ``in`` consumes the iterator


def _retire_rewordings(k: _Known, text: str, s: str, e: Entry, subjects: list[_Known], pool: list[_Known],
                       ops: list[FactOp]) -> None:
    """Delete the known facts that word ``k`` another way (``frames.same_change``): the change replaces them too."""
    for other in subjects:
        if other is k or other.fact is None or other.fact.pinned or any(o.fact_id == other.fact.fact_id for o in ops):
            continue
        if frames.same_change(other.text, k.text, text) or change.rewords(other.text, k.text, text, s):
            ops.append(FactOp(op="delete", fact_id=other.fact.fact_id, when=_when(e), sources=[e.ref],
                              reason=f"correction (another wording of the replaced fact): {_cut_reason(s)}"))
            pool.remove(other)


def _kept_clauses(old: str, text: str, s: str) -> str:
    """The replacement of ``old`` when a statement ``s`` names as gone a value only one of its clauses holds ("no longer
    training for the marathon" of "... training for a marathon and the user uses a standing desk"): the other clauses,
    and the new fact ``text`` only when it is about what the dropped clause was (a value replacing it); else ``text``."""
    gone = sl.gone_values(s)
    clauses = [c.strip(" .") for c in _CLAUSE_JOIN.split(old) if c.strip(" .")]
    if not gone or has_cjk(old) or len(clauses) < 2:
        return text
    dropped = [c for c in clauses if any(sl.holds_value(c, g) for g in gone)]
    if len(dropped) != 1:
        return text
    rest = [c for c in clauses if c is not dropped[0]]
    if all(c.casefold() in text.casefold() for c in rest):
        return text  # the new fact keeps them already (the old fact with its value swapped)
    if change.families(text) & change.families(dropped[0]):
        rest.append(text.rstrip(" ."))
    joined = [capitalized(r) if i == 0 else re.sub(r"^The (user|team)\b", r"the \1", r) for i, r in enumerate(rest)]
    return _finish(" and ".join(joined))


def _apply_update(k: _Known, text: str, s: str, e: Entry, pool: list[_Known], ops: list[FactOp], *,
                  step: str = "") -> bool:
    """Replace ``k`` by ``text``: a proposal of this batch changes in place, an existing fact gets an ``update``
    (its reason names the ``step`` that found the fact, when given, for ``evlog audit why``)."""
    text = _kept_clauses(k.text, text, s)
    if k.cand is not None:
        c = k.cand
        c.text, c.forced = text, True
        c.sources = [c.entry.ref, e.ref] if c.entry.ref != e.ref else [e.ref]
        return True
    f = k.fact
    assert f is not None
    if f.pinned:
        ops.append(FactOp(op="noop", fact_id=f.fact_id, sources=[e.ref],
                          reason="correction of a pinned fact; pinned facts are only changed by hand"))
        return True
    ops.append(FactOp(op="update", fact_id=f.fact_id, text=text, subject=f.subject, scope=f.scope, project=f.project,
                      section=f.section or PREFERENCES, when=_when(e), sources=[e.ref],
                      reason=f"correction{f' ({step})' if step else ''}: {_cut_reason(s)}"))
    pool.remove(k)
    return True


def _when(e: Entry) -> str:
    """The message's time, normalised to UTC ``YYYY-MM-DDTHH:MM:SS.fffZ`` (as given if it cannot be parsed)."""
    return normalize_time(e.time) or e.time


def _cut_reason(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= 100 else s[:100].rsplit(" ", 1)[0] + " (...)"


def _scope(c: Candidate) -> tuple[str, str, str]:
    """``(scope, project, subject)`` of a candidate."""
    if c.speaker.named:
        return ("project", c.entry.project, c.speaker.subject) if c.entry.project else ("global", "", c.speaker.subject)
    if c.about_project and c.entry.project:
        return "project", c.entry.project, "project"
    return "global", "", "user"


def _select(cands: list[Candidate], active: list[ExistingFact]) -> list[FactOp]:
    """The candidates scoring at least ``MIN_SCORE`` (or forced), in order, none ``similar`` to a known or an earlier
    one."""
    chosen: list[Candidate] = []
    for c in cands:
        if c.dropped or (not c.forced and c.score < (PEOPLE_MIN_SCORE if c.speaker.named else MIN_SCORE)):
            continue
        if any(similar(c.text, f.text) for f in active) or any(similar(c.text, x.text) for x in chosen):
            continue
        chosen.append(c)
    ops = []
    for c in chosen:
        scope, project, subject = _scope(c)
        srcs = (c.sources or [c.entry.ref])[:MAX_SOURCES]
        ops.append(FactOp(op="add", text=c.text, subject=subject, scope=scope, project=project, section=c.section,
                          when=_when(c.entry), sources=srcs, reason=f"offline rules, score {c.score:.1f}"))
    return ops


def _signal_ops(user_entries: list[Entry], texts: dict[str, str], active: list[ExistingFact],
                ops: list[FactOp], ran: sig.SessionTools) -> list[FactOp]:
    """Project facts from what the user's messages reveal (see ``signals``), unless a known fact names them."""
    out = []
    taken = [f.text for f in active] + [o.text for o in ops if o.text]
    for sentence, srcs in sig.signal_sentences(sig.project_signals(user_entries, texts, ran), taken):
        if any(similar(sentence, t) for t in taken):
            continue
        e = srcs[0]
        if not e.project and "user writes" not in sentence:
            continue  # a convention needs a project to belong to
        scope = "project" if e.project else "global"
        out.append(FactOp(op="add", text=sentence, subject="user" if "user writes" in sentence else "project",
                          scope=scope, project=e.project, section=PROJECT, when=_when(e),
                          sources=[s.ref for s in srcs][:MAX_SOURCES], reason="offline rules, project signal"))
        taken.append(sentence)
    return out
