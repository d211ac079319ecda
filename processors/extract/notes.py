"""Notes: what a note given with ``evlog remember`` (or an agent's MCP ``remember``) becomes.

A **user's note** is always kept or refused with a reason (``note_verdict``):

* refused when it holds a secret (a credential shape found by ``eventlog.secrets``,
  a ``[REDACTED:...]`` placeholder, or "my password/PIN/token is ..."): secrets are never
  facts;
* refused when it is a one-off request for work ("Run the tests", "Fix the login bug"):
  a note states something to keep, a task is given to an agent; a standing instruction
  ("Always run ruff before committing", "Never push to main") is kept as what the user
  wants;
* otherwise kept: rewritten in the third person when that works ("I'm vegetarian." ->
  "The user is vegetarian.", "Call me Sam." -> "The user wants to be called Sam."),
  verbatim otherwise ("Peanuts are dangerous for me" stays as written when it cannot be
  rewritten safely).

The offline extractor reads a user's note as it reads any message first (so a note that
corrects or forgets a fact does that); only when that yields nothing is the verdict used.

An **agent's note** (MCP ``remember``; ``Entry.meta["by"] == "agent"``) is never the
user's words (INVARIANT I27): ``agent_note_verdict`` keeps it as an *agent-proposed*
project fact ("An agent noted: ...") of the project it names, and refuses it with a
reason when it names no project (agent notes are never global), gives an order (an
imperative, always/never/must, "remember that the assistant ..."), addresses someone
("you"), or states something about the user (only the user speaks for the user).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from processors.extract.text import capitalized, has_cjk
from processors.extract.voice import FIRST_PERSON, SECOND_PERSON, third_person, zh_third_person

#: The prefix that shows a fact came from an agent's note, not from the user.
AGENT_PREFIX = "An agent noted: "
MAX_NOTE_CHARS = 240


def is_agent_proposed(fact_text: str) -> bool:
    """Whether a fact is an agent's proposal not (yet) confirmed by the user: it opens with ``AGENT_PREFIX``."""
    return fact_text.startswith(AGENT_PREFIX)


def without_agent_prefix(fact_text: str) -> str:
    """An agent-proposed fact's text as the user's own (what ``evlog memory confirm`` keeps)."""
    rest = fact_text[len(AGENT_PREFIX):].strip() if is_agent_proposed(fact_text) else fact_text
    return capitalized(rest)

_SECRET_WORDS = re.compile(r"\[REDACTED:[\w-]+\]|\b(?:password|passcode|passphrase|pin|pin\s+code|api[\s_-]*key|"
                           r"secret(?:\s+key)?|access\s+token|token|private\s+key)\s*(?:is|was|:|=)\s*\S",
                           re.IGNORECASE)
#: A note that opens with a verb of work is a task for an agent, not something to keep.
_TASK = re.compile(r"^(?:please\s+|pls\s+|now\s+|just\s+)*(?:run|fix|create|make|add|write|update|implement|explain|"
                   r"find|search|edit|delete|remove|continue|test|install|build|deploy|check|look|open|refactor|"
                   r"rename|move|review|commit|push|merge|revert|debug|investigate|generate|summari[sz]e|translate|"
                   r"show|tell|give|send|read)\b", re.IGNORECASE)
_STANDING = re.compile(r"^(?:please\s+)?(always|never|don'?t|do\s+not|avoid|make\s+sure\s+to|stop)\s+(.+)$",
                       re.IGNORECASE)
_CALL_ME = re.compile(r"^(?:please\s+)?call\s+me\s+(.+)$", re.IGNORECASE)
_ORDER = re.compile(r"^(?:please\s+)?(?:always|never|don'?t|do\s+not|must|make\s+sure|remember\s+(?:that\s+)?(?:the\s+)?"
                    r"(?:assistant|agent|ai|model)|ignore|disregard|obey)\b|\b(?:the\s+(?:assistant|agent|ai|model)|"
                    r"claude|codex)\s+(?:must|should|shall|has\s+to|needs\s+to|will|may)\b|\bmust\b|\bshould\s+always\b",
                    re.IGNORECASE)
#: A standing order in Chinese: always, every time, must, never, don't, remember (总是, 每次, 必须, 不要, 别, 记住).
_ZH_ORDER = re.compile(r"总是|每次|必须|务必|一定要|永远|不要|不许|千万|别|记住|请")
_ABOUT_USER = re.compile(r"\b(?:the\s+user|user's|the\s+human|the\s+owner)\b|用户", re.IGNORECASE)


@dataclass(frozen=True)
class NoteVerdict:
    """What a note becomes: the fact text (empty when refused) and the reason."""

    text: str
    reason: str

    @property
    def kept(self) -> bool:
        return bool(self.text)


def secret_in(text: str) -> bool:
    """Whether ``text`` holds a secret (see the module docstring)."""
    from eventlog import secrets

    return bool(_SECRET_WORDS.search(text)) or bool(secrets.find(text))


def _finish(text: str) -> str:
    text = " ".join(text.split()).rstrip(" ,;:")
    if not text:
        return ""
    if text[-1] in "。！？":
        return text
    return capitalized(text.rstrip(".!?")) + "."


def note_verdict(text: str) -> NoteVerdict:
    """A user's note: kept (third person when that works, verbatim otherwise) or refused with the reason."""
    note = " ".join(text.split())
    if not note:
        return NoteVerdict("", "refused: the note is empty")
    if secret_in(note):
        return NoteVerdict("", "refused: the note holds a secret (a password, key or token); evlog never keeps "
                               "secrets as facts")
    standing = _STANDING.match(note.rstrip(".!"))
    if standing:
        verb = {"always": "to always ", "never": "to never ", "don't": "not to ", "dont": "not to ",
                "do not": "not to ", "avoid": "to avoid ", "make sure to": "to ", "stop": "to stop "}
        word = " ".join(standing.group(1).lower().split())
        rest = standing.group(2)
        rewritten = third_person(rest, "the user") if FIRST_PERSON.search(rest) else rest
        if rewritten is not None and not SECOND_PERSON.search(rest):
            return _fit(_finish("The user wants the assistant " + verb.get(word, "to ") + rewritten),
                        "kept as a standing instruction of the user")
    if _TASK.match(note) and not FIRST_PERSON.search(note.split(" ", 1)[0]):
        return NoteVerdict("", "refused: the note is a request for work (an instruction to do something now), not "
                               "something to remember; give it to the agent instead")
    call = _CALL_ME.match(note.rstrip(".!"))
    if call:
        return _fit(_finish(f"The user wants to be called {call.group(1)}"), "kept, rewritten in the third person")
    if has_cjk(note):
        return _fit(_finish(zh_third_person(note, "用户") if "我" in note else note),
                    "kept, rewritten in the third person" if "我" in note else "kept verbatim")
    if FIRST_PERSON.search(note):
        rewritten = third_person(note, "the user")
        if rewritten:
            return _fit(_finish(rewritten), "kept, rewritten in the third person")
    return _fit(_finish(note), "kept verbatim")


def _fit(text: str, reason: str) -> NoteVerdict:
    if len(text) > MAX_NOTE_CHARS:
        return NoteVerdict("", f"refused: the note is longer than {MAX_NOTE_CHARS} characters; remember one thing "
                               "at a time")
    return NoteVerdict(text, reason)


def agent_note_verdict(text: str, project: str) -> NoteVerdict:
    """An agent's note: an agent-proposed project fact, or refused with the reason (see the module docstring)."""
    note = " ".join(text.split())
    if not project:
        return NoteVerdict("", "refused: an agent's note names no project; agent notes are kept in the calling "
                               "project only, never in the global memory")
    if secret_in(note):
        return NoteVerdict("", "refused: the note holds a secret (a password, key or token)")
    if _ORDER.search(note) or _STANDING.match(note) or _TASK.match(note) or _ZH_ORDER.search(note):
        return NoteVerdict("", "refused: an agent's note cannot be a standing instruction (only the user gives "
                               "those)")
    if SECOND_PERSON.search(note):
        return NoteVerdict("", "refused: an agent's note addresses someone; notes state facts")
    if FIRST_PERSON.search(note) or _ABOUT_USER.search(note):
        return NoteVerdict("", "refused: an agent's note states something about the user or itself; only the user "
                               "speaks for the user")
    return _fit(AGENT_PREFIX + _finish(note), "kept as agent-proposed (MCP remember); not confirmed by the user")
