"""Project conventions a user reveals while working with an agent: the tools named, tracking, instructions.

A user rarely says "this project uses Phoenix"; they type ``websearch xterm.js tmux
interactions`` or ``Work on bead spotter-dov. Run bd show ...``. ``project_signals`` reads the
text users typed themselves (never a skill expansion, tool output or the agent's text:
the caller passes only entries that ``text.skip_reason`` lets through) and finds:

* **stack**: the tools and libraries the user names, recognised by the shape of the name
  and by what the session ran, never from a list of tool names (``tool_names``):

  - a library named the JavaScript way (``xterm.js``, ``Next.js``) that is no file the
    session's tools touched;
  - a name with its version (``Elixir 1.19``, ``Postgres v16``, ``ruff 0.6.2``);
  - a package the user installs (``pip install httpx``, ``npm i zod``, ``cargo add serde``);
  - what the team says it uses, one word each ("we use pytest and ruff", "in this project I
    lint with ruff"; "we use the new API" names nothing);
  - a program the session's shell ran (its first word, beyond the shell utilities of
    ``workflow.SHELL_UTILITIES``) that the user names in their own words;
  - the other items of a list of names in which two items are names by the rules above or
    words of a command the session ran ("setup credo, dialyzer, mix_audit" where
    ``mix credo`` and ``mix dialyzer`` ran);

* **tracking**: how work is tracked (beads with ``bd``, Jira keys, GitHub issues, Linear);
* **instructions**: an agent instruction file the user keeps (CLAUDE.md, AGENTS.md);

The language the user writes in (``language_of``) is no fact: the agent sees it in every
prompt, and a reader of the coding sessions does not keep it (tools/judged/coding-rubric.md).

Each finding becomes one sentence naming the project, with the (at most 3) messages it was
seen in as sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from processors.extract.model import Entry

#: A library named the JavaScript way: a name with a ``.js`` tail, not inside a path or a longer file name.
_JS_NAME = re.compile(r"(?<![\w./\\-])([A-Za-z][\w-]*\.js)(?![\w./\\-])")
#: A name and its version: ``Elixir 1.19``, ``Postgres v16``, ``ruff 0.6.2`` (a bare integer is no version: "page 2").
_VERSIONED = re.compile(r"(?<![\w.@/\\-])([A-Za-z][\w+#-]*(?:\.[A-Za-z]\w*)?)\s+(?:v(\d+(?:\.\d+)*)|(\d+\.\d+(?:\.\d+)*))"
                        r"(?![\w.]*%)\b")
#: Nouns that number a part of a text or a count, not a tool ("version 1.2", "Section 3.1", "step 2.5"): a closed class.
_NUMBERED_NOUNS = frozenset("""version release v step section chapter page line lines figure fig table item part phase
level round option rule issue pr ticket question note about around over under at of to in by from is was are were be
and or than the a an with for on its it only just takes took last costs cost weighs ms seconds minutes hours days
percent pct x""".split())
#: A package install: the names after ``PROG install|add|i|get`` (``pip install httpx``, ``npm i -D zod``).
_INSTALL = re.compile(r"\b[\w.-]+\s+(?:install|add|i|get)\s+((?:-{1,2}[\w-]+\s+)*(?:@?[\w.-]+(?:/[\w.-]+)?"
                      r"(?:[@=<>~^]+[\w.*^~-]+)?\s*)+)")
_PACKAGE = re.compile(r"^@?[A-Za-z][\w.-]*(?:/[\w.-]+)?")
#: A list of one-word items: "credo, dialyzer, mix_audit", "ruff, mypy and pytest".
_LIST = re.compile(r"(?<![\w.-])[\w.+-]+(?:\s*,\s*[\w.+-]+)+(?:,?\s+(?:and|or)\s+[\w.+-]+(?=\s*(?:[,.;:!?()]|$)))?"
                   r"(?![\w-])")  # "and X" ends the list only where the clause ends: "..., a and move the pane" is none
_LIST_SPLIT = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")
_WORDISH = re.compile(r"^[A-Za-z][\w.+-]*[A-Za-z0-9+]$")
#: Words that are never a tool's name in a list (function words), a closed class.
_FUNCTION_WORDS = frozenset("""a an the and or but if then else so to of in on at by for with from as is are was were be
been it its this that these those i you we they he she me my our your their not no yes do does did all any some each
both also too very just only etc e.g i.e""".split())

#: What the team says it uses: "we use pytest and ruff", "in this project I lint with ruff" (the objects, one word each).
_WE_USE = re.compile(r"\b(?P<who>we|we're|I)\s+(?:(?:always|only|mostly|now|are)\s+)?"
                     r"(?:use|using|run|build\s+with|test\s+with|lint\s+with|format\s+with|deploy\s+with|rely\s+on)\s+"
                     r"([\w.+#-]+(?:\s*,\s*[\w.+#-]+)*(?:,?\s+and\s+[\w.+#-]+)?)", re.IGNORECASE)
_THIS_PROJECT = re.compile(r"\b(?:this|our|the)\s+(?:project|repo|repository|codebase)\b", re.IGNORECASE)
_DETERMINERS = frozenset("the a an my our your their his her its this that these those some any every all no it them".split())
#: A name written as code: snake_case, an inner capital (``LiveView``), or a dotted name (``phx.server``).
_CODE_SHAPED = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$|^[A-Za-z][a-z0-9]+[A-Z]\w*$|^[a-z][\w-]*\.[a-z][\w-]*$")
_COMMAND_ARG = re.compile(r"^(?:-{1,2}\w|[\w-]*[.:_/][\w.:/-]*$)")  # what follows a program typed as a command


@dataclass(frozen=True)
class SessionTools:
    """What the session's tool calls show: the programs its shell ran and the words of those commands (program and
    subcommand, casefolded), and the base names of the files its tools touched (``workflow.session_tools``)."""

    programs: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()


def _versioned(text: str, ran: SessionTools) -> Iterable[tuple[str, str]]:
    for m in _VERSIONED.finditer(text):
        name, version = m.group(1), m.group(2) or m.group(3)
        if name.casefold() in _NUMBERED_NOUNS or len(name) < 2:
            continue
        if name[0].isupper() or _CODE_SHAPED.match(name) or name.casefold() in ran.words:
            yield name, f"{name} {'v' if m.group(2) else ''}{version}"


def _installed(text: str, ran: SessionTools) -> Iterable[str]:
    for m in _INSTALL.finditer(text):
        if m.group(0).split()[0].casefold() not in ran.programs:
            continue  # "please add tests": only a package manager the session ran installs packages
        tokens = [t for t in m.group(1).split() if not t.startswith("-")]
        for i, token in enumerate(tokens):
            p = _PACKAGE.match(token)
            if not p or p.group(0).casefold() in _FUNCTION_WORDS or (i and not re.search(r"[\d@/_.=<>~^-]", token)):
                break  # after the first package, only what is written like one ("zod@3", "wombat-ui"): not "then"
            yield p.group(0).rstrip(".")


def _programs_named(text: str, ran: SessionTools) -> Iterable[str]:
    """A program the session ran that the user types as a command ("mix phx.server does not start")."""
    words = text.split()
    for w, nxt in zip(words, words[1:], strict=False):
        if w.casefold() in ran.programs and (nxt.casefold().strip(",.") in ran.words or _COMMAND_ARG.match(nxt)):
            yield w


def _used(text: str, ran: SessionTools) -> Iterable[str]:
    """The one-word objects of "we use X and Y" (a determiner first means a description, not names: "we use the API").

    "Run" takes activities as well as programs ("we always run tests against a real Postgres"): its object counts
    only when it is written as a name (a capital, a digit, code-shaped) or the session ran that program."""
    for m in _WE_USE.finditer(text):
        if m.group("who") == "I" and not _THIS_PROJECT.search(text):
            continue  # "I use vim": the user's own tool, unless the sentence is about this project
        items = [i.strip(".") for i in _LIST_SPLIT.split(m.group(2)) if i.strip(".")]
        if not items or not all(_WORDISH.match(i) and i.casefold() not in _FUNCTION_WORDS | _DETERMINERS for i in items):
            continue
        if _RAN_VERB.search(m.group(0)) and not all(_named_program(i, ran) for i in items):
            continue
        yield from items


_RAN_VERB = re.compile(r"\brun\s+[\w.+#-]+", re.IGNORECASE)


def _named_program(item: str, ran: SessionTools) -> bool:
    """Whether ``item`` reads as a program's name: capitalised, holding a digit, code-shaped, or run by the session."""
    return (item[:1].isupper() or any(c.isdigit() for c in item) or bool(_CODE_SHAPED.match(item))
            or bool(_JS_NAME.fullmatch(item)) or item.casefold() in ran.programs)


def _listed(text: str, named: set[str], ran: SessionTools) -> Iterable[str]:
    """The items of a list of one-word names in which one item is written as code and another is a name or a word
    of a command the session ran ("setup credo, dialyzer, mix_audit")."""
    for m in _LIST.finditer(text):
        items = [i.strip(".") for i in _LIST_SPLIT.split(m.group(0)) if i.strip(".")]
        if len(items) < 3 or not all(_WORDISH.match(i) and i.casefold() not in _FUNCTION_WORDS for i in items):
            continue
        shaped = [i for i in items if _CODE_SHAPED.match(i) or _JS_NAME.fullmatch(i)]
        known = [i for i in items if i.casefold() in ran.words or i in named]
        if shaped and set(known) - {shaped[0]}:
            yield from items


def tool_names(text: str, ran: SessionTools = SessionTools()) -> list[tuple[str, str]]:
    """``(key, as written)`` of the tools and libraries ``text`` names (see the module docstring), rule by rule."""
    found: dict[str, str] = {}

    def add(key: str, shown: str) -> None:
        found.setdefault(key.casefold(), shown)

    for m in _JS_NAME.finditer(text):
        if m.group(1).casefold() not in ran.files:
            add(m.group(1), m.group(1))
    for name, shown in _versioned(text, ran):
        add(name, shown)
    for name in _installed(text, ran):
        add(name, name)
    for name in _programs_named(text, ran):
        add(name, name)
    for name in _used(text, ran):
        add(name, name)
    for name in _listed(text, set(found.values()) | set(found), ran):
        add(name, name)
    return [(k, v) for k, v in found.items()]


_TRACKING: list[tuple[str, re.Pattern[str]]] = [  # (how work is tracked, what reveals it)
    ("beads, with the bd command", re.compile(r"\bbd\s+(?:show|ready|create|update|close|list)\b"
                                              r"|\bbeads?\s+[a-z][a-z0-9]*-[a-z0-9.]+\b", re.IGNORECASE)),
    ("Jira tickets", re.compile(r"\bjira\b", re.IGNORECASE)),
    ("Linear issues", re.compile(r"\blinear\s+(?:issue|ticket)s?\b", re.IGNORECASE)),
    ("GitHub issues", re.compile(r"\bgithub\s+issues?\b|\bgh\s+issue\b", re.IGNORECASE)),
]
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_INSTRUCTIONS = re.compile(r"\b(CLAUDE\.md|AGENTS\.md|\.cursorrules|GEMINI\.md)\b")

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_EN_WORDS = frozenset("the a an and or to of in is it this that for with on not do does be can please i you my we "
                      "what how why when some now make add use".split())


LANGUAGES = ("Japanese", "Korean", "Chinese", "Russian", "English")


def vocabulary() -> set[str]:
    """Every word a signal sentence may end in that its sources need not contain (for cut-word checks)."""
    return set(LANGUAGES) | {"command", "tickets", "issues", "md"}


def language_of(text: str) -> str | None:
    """The language ``text`` is written in, by script (English only with English function words), or None."""
    if _KANA.search(text):
        return "Japanese"
    if _HANGUL.search(text):
        return "Korean"
    if len(_HAN.findall(text)) >= 2:
        return "Chinese"
    if len(_CYRILLIC.findall(text)) >= 3:
        return "Russian"
    words = re.findall(r"[A-Za-z']+", text)
    non_ascii = len(re.findall(r"[^\x00-\x7f]", text))
    if len(words) >= 4 and sum(w.lower() in _EN_WORDS for w in words) >= 1 and non_ascii < len(text) / 4:
        return "English"
    return None


@dataclass
class Signal:
    """One finding: the kind (stack, tracking, instructions), what it is about, how it is shown, and sources."""

    kind: str
    key: str  # what it is about ("Elixir", "CLAUDE.md"): the unit of duplicate checks
    sources: list[Entry] = field(default_factory=list)
    shown: str = ""  # as the sentence names it ("Elixir 1.19"); the key when empty


def project_signals(entries: list[Entry], texts: dict[str, str], ran: SessionTools = SessionTools()) -> list[Signal]:
    """What ``entries`` (user messages; ``texts[ref]`` is the text the user wrote) reveal, in order of first sight;
    ``ran``: what the session's tool calls show (``workflow.session_tools``)."""
    found: dict[tuple[str, str], Signal] = {}
    for e in entries:
        text = _URL.sub(" ", texts.get(e.ref, ""))  # a name inside a link ("...marketplace-elixir") says nothing
        if not text.strip():
            continue
        for key, shown in tool_names(text, ran):
            found.setdefault(("stack", key), Signal("stack", shown.split()[0], shown=shown)).sources.append(e)
        for what, pattern in _TRACKING:
            if pattern.search(text):
                found.setdefault(("tracking", what), Signal("tracking", what)).sources.append(e)
        for m in _INSTRUCTIONS.finditer(text):
            found.setdefault(("instructions", m.group(1)), Signal("instructions", m.group(1))).sources.append(e)
    return list(found.values())


def known(signal: Signal, texts: list[str]) -> bool:
    """Whether one of ``texts`` (facts already known) names what ``signal`` found."""
    term = signal.key.split(",")[0]
    pattern = re.compile(rf"(?<![\w.]){re.escape(term)}(?![\w])", re.IGNORECASE)
    return any(pattern.search(t) for t in texts)


def signal_sentences(signals: list[Signal], known_texts: list[str] = ()) -> list[tuple[str, list[Entry]]]:  # type: ignore[assignment]
    """``(sentence, sources)`` for the findings not named by ``known_texts``, grouped by kind.

    Stack names are joined into one sentence ("The project uses Elixir 1.19, xterm.js and
    mix_audit."); each sentence's sources are the first (at most 3) messages that revealed any
    of its names.
    """
    out: list[tuple[str, list[Entry]]] = []
    by_kind: dict[str, list[Signal]] = {}
    for s in signals:
        if not known(s, list(known_texts)):
            by_kind.setdefault(s.kind, []).append(s)
    said_otherwise = [s.key for s in signals if s.kind != "stack"]  # "bd" is told by "tracked as beads, with bd"
    by_kind["stack"] = [s for s in by_kind.get("stack", []) if not known(s, said_otherwise)]

    def sources(group: list[Signal]) -> list[Entry]:
        seen: dict[str, Entry] = {}
        for s in group:
            for e in s.sources:
                seen.setdefault(e.ref, e)
        return sorted(seen.values(), key=lambda e: (e.seq, e.time, e.ref))[:3]

    for kind in ("stack", "tracking", "instructions"):
        group = by_kind.get(kind, [])
        if not group:
            continue
        if kind == "stack":
            out.append((f"The project uses {_join([s.shown or s.key for s in group])}.", sources(group)))
        elif kind == "tracking":
            for s in group:
                out.append((f"Work on the project is tracked as {s.key}.", sources([s])))
        else:
            for s in group:
                out.append((f"The project keeps instructions for the coding agent in {s.key}.", sources([s])))
    return out


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
