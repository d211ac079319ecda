"""Which active facts fit in a MEMORY.md: a line and byte budget (what an agent loads at start-up).

``apply_budget(facts, max_lines=200, max_bytes=25_000, cited=..., recalled=...)`` takes the
facts of ONE file (group them with ``file_key``) and returns ``(kept, archived)``: the
active facts that stay and the active facts that leave (to be archived), each in the
order given. Facts that are not active are in neither list.

**How a file is counted** (``render``): the file is an optional ``header`` (its lines
and bytes as given, e.g. ``"# Memory\\n\\n"``; a newline is added if it lacks a final
one), then one block per non-empty section
(sections in ``model.SECTIONS`` order, any other section after them in name order)::

    ## User Profile
    - Alice is a nurse in Leeds.
    - ...

    ## Events
    - ...

A block is its heading line ``## <section>``, one line ``- <text>`` per fact (``line``
renders it; pass another function if the projection shows more, e.g. a date), and one
blank line before every block but the first. Lines are counted by newline characters;
bytes are the UTF-8 size of exactly that text. A fact whose text holds newlines counts
each of its lines.

**Who leaves first**: the least valuable unpinned fact: least cited + recalled (the
sum, then cited alone), then the oldest (``when``, then ``fact_id``, so the order is
total and the result deterministic). Facts leave one at a time in that order until the
file fits. Pinned facts never leave, even when they alone are over the budget (then
``kept`` is over it; ``fits`` says so). A fact with an empty section counts under
"Notes".

**Agent notes compete in their own budget** (``apply_split_budget``): facts an agent
proposed (MCP ``remember``) may use at most ``AGENT_SHARE`` of the file, and only what the
other facts leave: the others are fitted first as if the agent's were not there, so an
agent flooding ``remember`` archives its own notes, never the user's facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from processors.extract.model import SECTIONS, ExistingFact

AGENT_SHARE = 0.2  # of a file's lines and bytes agent-proposed facts may take at most
MAX_LINES = 200
MAX_BYTES = 25_000
DEFAULT_SECTION = "Notes"


def line(fact: ExistingFact) -> str:
    """The default rendering of a fact: ``- <text>`` (no newline)."""
    return f"- {fact.text}"


def file_key(fact: ExistingFact) -> tuple[str, str]:
    """Which MEMORY.md a fact is in: ``("global", "")`` or ``("project", <project>)``."""
    return ("project", fact.project) if fact.scope == "project" else ("global", "")


def _section_order(section: str) -> tuple[int, str]:
    return (SECTIONS.index(section), "") if section in SECTIONS else (len(SECTIONS), section)


def _header(header: str) -> str:
    return header if not header or header.endswith("\n") else header + "\n"


def render(facts: Iterable[ExistingFact], *, header: str = "", line: Callable[[ExistingFact], str] = line) -> str:
    """The text a MEMORY.md with these facts would have (see the module docstring)."""
    header = _header(header)
    by_section: dict[str, list[ExistingFact]] = {}
    for f in facts:
        by_section.setdefault(f.section or DEFAULT_SECTION, []).append(f)
    blocks = []
    for section in sorted(by_section, key=_section_order):
        blocks.append(f"## {section}\n" + "".join(line(f) + "\n" for f in by_section[section]))
    return header + "\n".join(blocks)


def size(facts: Iterable[ExistingFact], *, header: str = "",
         line: Callable[[ExistingFact], str] = line) -> tuple[int, int]:
    """``(lines, bytes)`` of ``render(facts)``."""
    text = render(facts, header=header, line=line)
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1), len(text.encode())


class _Meter:
    """Lines and bytes of a file as facts are removed, in O(1) per fact."""

    def __init__(self, facts: list[ExistingFact], header: str, line_of: Callable[[ExistingFact], str]) -> None:
        header = _header(header)
        self.header_lines = header.count("\n") + (0 if not header or header.endswith("\n") else 1)
        self.header_bytes = len(header.encode())
        self.count: dict[str, int] = {}
        self.lines = 0
        self.bytes = 0
        self.line_of = line_of
        for f in facts:
            self.add(f, +1)

    def _fact(self, f: ExistingFact) -> tuple[int, int]:
        text = self.line_of(f) + "\n"
        return text.count("\n"), len(text.encode())

    def add(self, f: ExistingFact, sign: int) -> None:
        section = f.section or DEFAULT_SECTION
        n = self.count.get(section, 0)
        if (sign > 0 and n == 0) or (sign < 0 and n == 1):
            self.lines += sign  # the heading
            self.bytes += sign * len(f"## {section}\n".encode())
        self.count[section] = n + sign
        fl, fb = self._fact(f)
        self.lines += sign * fl
        self.bytes += sign * fb

    def total(self) -> tuple[int, int]:
        blocks = sum(1 for n in self.count.values() if n > 0)
        gaps = max(0, blocks - 1)
        return self.header_lines + self.lines + gaps, self.header_bytes + self.bytes + gaps


def leave_order(f: ExistingFact, cited: Mapping[str, int], recalled: Mapping[str, int]) -> tuple[int, int, str, str]:
    """Sort key: the first in this order is the first to leave."""
    c, r = cited.get(f.fact_id, 0), recalled.get(f.fact_id, 0)
    return (c + r, c, f.when, f.fact_id)


def apply_budget(facts: Iterable[ExistingFact], *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES,
                 cited: Mapping[str, int] | None = None, recalled: Mapping[str, int] | None = None,
                 header: str = "", line: Callable[[ExistingFact], str] = line,
                 ) -> tuple[list[ExistingFact], list[ExistingFact]]:
    """``(kept, archived)``: the active facts of one file that fit, and those that leave (see the module docstring)."""
    cited = cited or {}
    recalled = recalled or {}
    active = [f for f in facts if f.state == "active"]
    meter = _Meter(active, header, line)
    leaving: set[int] = set()
    order = sorted((i for i, f in enumerate(active) if not f.pinned),
                   key=lambda i: leave_order(active[i], cited, recalled))
    for i in order:
        lines, size_bytes = meter.total()
        if lines <= max_lines and size_bytes <= max_bytes:
            break
        meter.add(active[i], -1)
        leaving.add(i)
    kept = [f for i, f in enumerate(active) if i not in leaving]
    archived = [f for i, f in enumerate(active) if i in leaving]
    return kept, archived


def apply_split_budget(facts: Iterable[ExistingFact], *, is_agent: Callable[[ExistingFact], bool],
                       max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES, agent_share: float = AGENT_SHARE,
                       cited: Mapping[str, int] | None = None, recalled: Mapping[str, int] | None = None,
                       header: str = "", line: Callable[[ExistingFact], str] = line,
                       ) -> tuple[list[ExistingFact], list[ExistingFact]]:
    """``apply_budget`` with agent-proposed facts in their own share, after the others (see the module docstring)."""
    cited = cited or {}
    recalled = recalled or {}
    active = [f for f in facts if f.state == "active"]
    own = [f for f in active if not is_agent(f)]
    agents = [f for f in active if is_agent(f)]
    kept_own, gone = apply_budget(own, max_lines=max_lines, max_bytes=max_bytes, cited=cited, recalled=recalled,
                                  header=header, line=line)
    kept_agents, gone_agents = apply_budget(agents, max_lines=int(max_lines * agent_share),
                                            max_bytes=int(max_bytes * agent_share), cited=cited, recalled=recalled,
                                            header=header, line=line)
    meter = _Meter(kept_own + kept_agents, header, line)
    leaving = {f.fact_id for f in gone + gone_agents}
    for f in sorted((f for f in kept_agents if not f.pinned), key=lambda f: leave_order(f, cited, recalled)):
        lines, size_bytes = meter.total()
        if lines <= max_lines and size_bytes <= max_bytes:
            break
        meter.add(f, -1)  # the whole file is still over: the agent's notes give way, never the others
        leaving.add(f.fact_id)
    return [f for f in active if f.fact_id not in leaving], [f for f in active if f.fact_id in leaving]


def fits(facts: Iterable[ExistingFact], *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES, header: str = "",
         line: Callable[[ExistingFact], str] = line) -> bool:
    """Whether a file of exactly these facts is within the budget."""
    lines, size_bytes = size(facts, header=header, line=line)
    return lines <= max_lines and size_bytes <= max_bytes
