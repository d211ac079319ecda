"""Project conventions a user reveals while working with an agent: stack, checks, tracking, instructions.

A user rarely says "this project uses Phoenix"; they type ``mix phx.server doesnt seem to
start`` or ``Work on bead spotter-dov. Run bd show ...``. ``project_signals`` reads the
text users typed themselves (never a skill expansion, tool output or the agent's text:
the caller passes only entries that ``text.skip_reason`` lets through) and finds:

* **stack** and **checks**: names of frameworks, languages, build and lint tools from a
  fixed gazetteer, matched as whole words (ambiguous ones such as React or Go only in
  the forms that cannot be ordinary English: ``React`` capitalised, ``go test``);
* **tracking**: how work is tracked (beads with ``bd``, Jira keys, GitHub issues, Linear);
* **instructions**: an agent instruction file the user keeps (CLAUDE.md, AGENTS.md);

The language the user writes in (``language_of``) is no fact: the agent sees it in every
prompt, and a reader of the coding sessions does not keep it (tools/judged/coding-rubric.md).

Each finding becomes one sentence naming the project or the user, with the (at most 3)
messages it was seen in as sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from processors.extract.model import Entry

# name -> (category, pattern)
_STACK: list[tuple[str, str, str]] = [
    ("Elixir", "stack", r"\belixir\b|\bmix\s+(?:test|compile|deps\.get|format|ecto\.\w+|phx\.\w+)\b|\biex\s+-S\b"),
    ("Phoenix", "stack", r"\bphoenix\b|\bphx\.(?:server|new|gen)\b|\bLiveView\b"),
    ("Ash", "stack", r"\bAsh(?:Computer|Framework|Phoenix|Postgres)\b|\bAsh\s+(?:framework|resources?|actions?)\b"),
    ("Python", "stack", r"\bpython3?\b|\bpip\s+install\b|\bpyproject\.toml\b"),
    ("Django", "stack", r"\bdjango\b"),
    ("Flask", "stack", r"\bFlask\b"),
    ("FastAPI", "stack", r"\bfastapi\b"),
    ("pytest", "checks", r"\bpytest\b"),
    ("Node.js", "stack", r"\bnode\.?js\b|\bnpm\s+(?:run|install|i|test)\b"),
    ("pnpm", "stack", r"\bpnpm\b"),
    ("Yarn", "stack", r"\byarn\s+(?:add|install|run|dev|build|test)\b"),
    ("Next.js", "stack", r"\bnext\.?js\b"),
    ("React", "stack", r"\bReact\b(?!ion)"),
    ("Vue", "stack", r"\bVue(?:\.js)?\b"),
    ("TypeScript", "stack", r"\btypescript\b|\btsconfig\.json\b"),
    ("Tailwind CSS", "stack", r"\btailwind(?:\s*css)?\b"),
    ("Vite", "stack", r"\bVite\b"),
    ("xterm.js", "stack", r"\bxterm\.js\b"),
    ("tmux", "stack", r"\btmux\b"),
    ("Rust", "stack", r"\bcargo\s+(?:build|run|test|add|check|clippy)\b|\bRust\b"),
    ("Go", "stack", r"\bgo\s+(?:test|build|run|mod|vet)\b|\bgolang\b"),
    ("Ruby on Rails", "stack", r"\brails\s+(?:server|s|console|c|generate|g|db:\w+)\b|\bRuby on Rails\b"),
    ("Docker", "stack", r"\bdocker(?:-compose|\s+compose)?\b|\bDockerfile\b"),
    ("PostgreSQL", "stack", r"\bpostgres(?:ql)?\b"),
    ("SQLite", "stack", r"\bsqlite3?\b"),
    ("MySQL", "stack", r"\bmysql\b|\bmariadb\b"),
    ("credo", "checks", r"\bcredo\b"),
    ("dialyzer", "checks", r"\bdialyzer\b"),
    ("mix_audit", "checks", r"\bmix_audit\b"),
    ("ESLint", "checks", r"\beslint\b"),
    ("Prettier", "checks", r"\bprettier\b"),
    ("ruff", "checks", r"\bruff\b"),
    ("mypy", "checks", r"\bmypy\b"),
    ("black", "checks", r"\bblack\s+(?:--|\.|src)|\bformatted\s+with\s+black\b"),
    ("clippy", "checks", r"\bclippy\b"),
    ("RuboCop", "checks", r"\brubocop\b"),
    ("golangci-lint", "checks", r"\bgolangci-lint\b"),
    ("pre-commit", "checks", r"\bpre-commit\b"),
    ("Jest", "checks", r"\bjest\b"),
    ("Vitest", "checks", r"\bvitest\b"),
]
_STACK_RE = [(name, cat, re.compile(p, 0 if name in ("React", "Vue", "Vite", "Flask", "Rust", "Ash", "LiveView")
                                        else re.IGNORECASE)) for name, cat, p in _STACK]

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
    out = set(LANGUAGES) | {"command", "tickets", "issues", "md"}
    for name, _cat, _p in _STACK:
        out.update(w for w in re.findall(r"[^\W_]+", name))
    return out


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
    """One finding: its sentence, the kind (stack, checks, tracking, instructions) and sources."""

    kind: str
    key: str  # what it is about ("Phoenix", "Japanese"): the unit of duplicate checks
    sources: list[Entry] = field(default_factory=list)


def project_signals(entries: list[Entry], texts: dict[str, str]) -> list[Signal]:
    """What ``entries`` (user messages; ``texts[ref]`` is the text the user wrote) reveal, in order of first sight."""
    found: dict[tuple[str, str], Signal] = {}
    for e in entries:
        text = _URL.sub(" ", texts.get(e.ref, ""))  # a name inside a link ("...marketplace-elixir") says nothing
        if not text.strip():
            continue
        for name, cat, pattern in _STACK_RE:
            if pattern.search(text):
                found.setdefault((cat, name), Signal(cat, name)).sources.append(e)
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

    Stack names are joined into one sentence ("The project uses Elixir, Phoenix and tmux."),
    and so are check tools; each sentence's sources are the first (at most 3) messages
    that revealed any of its names.
    """
    out: list[tuple[str, list[Entry]]] = []
    by_kind: dict[str, list[Signal]] = {}
    for s in signals:
        if not known(s, list(known_texts)):
            by_kind.setdefault(s.kind, []).append(s)

    def sources(group: list[Signal]) -> list[Entry]:
        seen: dict[str, Entry] = {}
        for s in group:
            for e in s.sources:
                seen.setdefault(e.ref, e)
        return sorted(seen.values(), key=lambda e: (e.seq, e.time, e.ref))[:3]

    for kind in ("stack", "checks", "tracking", "instructions"):
        group = by_kind.get(kind, [])
        if not group:
            continue
        names = [s.key for s in group]
        if kind == "stack":
            out.append((f"The project uses {_join(names)}.", sources(group)))
        elif kind == "checks":
            out.append((f"The project's code is checked with {_join(names)}.", sources(group)))
        elif kind == "tracking":
            for s in group:
                out.append((f"Work on the project is tracked as {s.key}.", sources([s])))
        else:
            for s in group:
                out.append((f"The project keeps instructions for the coding agent in {s.key}.", sources([s])))
    return out


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
