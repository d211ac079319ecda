"""The MEMORY.md budget rule: which facts leave a file (``memory.archived``) so it keeps within its budget.

Used by Dream when it records a run, by ``eventlog.app.memory`` after a user's change and
by the workspace when a hand edit of MEMORY.md becomes events. It reads only the memory
projection and the two budget settings, so none of them imports the others (no circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventlog.events import Event, MemoryAppended, MemoryArchived, MemoryForgotten, MemorySuperseded
from processors.extract.budget import apply_split_budget
from processors.extract.model import ExistingFact
from processors.extract.notes import is_agent_proposed
from projections.memory import HEADER, Fact, fact_line

if TYPE_CHECKING:
    from processors.context import ProcessorConfig
    from projections.memory import MemoryProjection


def existing_of(f: Fact) -> ExistingFact:
    """A projection fact as the extractor's ``ExistingFact``."""
    return ExistingFact(fact_id=f.fact_id, text=f.text, subject=f.subject or ("project" if f.project else "user"),
                        scope="project" if f.scope == "project" else "global", project=f.project, section=f.section,
                        when=f.when, sources=list(f.source_refs), state=f.state, pinned=f.pinned)


def budget_events(mem: MemoryProjection, cfg: ProcessorConfig, pending: list[Event]) -> list[Event]:
    """``memory.archived`` for the facts that must leave a MEMORY.md to keep it within its budget.

    ``pending`` are fact events about to be appended with them (their effect is counted).
    """
    added = [e for e in pending if isinstance(e, MemoryAppended)]
    leaving = {e.fact_id for e in pending if isinstance(e, MemorySuperseded | MemoryForgotten)}
    targets = {f.target for f in mem.all_facts("active")} | {(e.project if e.scope == "project" else "") for e in added}
    out: list[Event] = []
    for target in sorted(targets):
        facts = [existing_of(f) for f in mem.facts(target) if f.fact_id not in leaving]
        facts += [ExistingFact(fact_id=e.fact_id, text=e.text, subject=e.subject, scope=e.scope, project=e.project,
                               section=e.section, when=e.when or e.ts, sources=list(e.source_refs), pinned=e.pinned)
                  for e in added if (e.project if e.scope == "project" else "") == target]
        cited = {f.fact_id: len(f.sources) for f in facts}
        recalled = {f.fact_id: _recalled(mem, f.fact_id) for f in facts}
        # agents' notes compete in their own budget: flooding remember cannot push the user's facts out
        _kept, archived = apply_split_budget(facts, is_agent=lambda f: is_agent_proposed(f.text),
                                             max_lines=cfg.memory_max_lines, max_bytes=cfg.memory_max_bytes,
                                             cited=cited, recalled=recalled, header=HEADER,
                                             line=lambda f: fact_line(f.text))
        out += [MemoryArchived(fact_id=f.fact_id, reason=f"over the budget of {cfg.memory_max_lines} lines / "
                               f"{cfg.memory_max_bytes} bytes") for f in archived]
    return out


def _recalled(mem: MemoryProjection, fact_id: str) -> int:
    fact = mem.get(fact_id)
    return fact.recalled if fact is not None else 0
