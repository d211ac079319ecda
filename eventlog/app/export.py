"""Export and import memory: every fact with its provenance and validity, as JSON lines or Markdown.

``export_facts`` gives the facts (active by default; ``states`` picks others) as
``ExportedFact`` rows: id, text, file (``""`` = the global MEMORY.md, else the project),
section, subject, state, pinned, who added it (``by``) and when (``learned_at``), the
run, validity (``valid_from``: when it became true; ``valid_until``: when it was
superseded, forgotten or archived, ``""`` while it holds; ``replaced_by``; ``valid_from`` is ``""`` when
the source gave no time: ``learned_at`` is then the best bound) and its source
messages (``session#message`` refs with time, role and an excerpt).

Formats (``render``): ``json`` is one JSON object per line, a header first
(``{"evlog_export": "memory", "version": 1, "exported_at", "facts"}``) then one fact per
line; ``markdown`` is one ``## Global`` / ``## Project `<path>``` part per file, ``### <section>``
headings and a bullet per fact, its provenance in an HTML comment
(``<!-- evlog: {...} -->``, invisible when rendered) and its sources as sub-bullets.

``import_facts`` reads either format back (a hand-written Markdown list works too: bullets
under ``###`` section headings) and adds the facts that hold (active or archived ones;
superseded and forgotten ones are counted, not added) as ``memory.appended`` events with
``by: "import"``, their provenance (subject, ``when`` = valid_from, source refs) and
pins kept. Import is idempotent: a fact whose id the workspace has, or whose text its file
already holds, is skipped, and each event has the dedup key ``import:<fact id>``. Input is
checked whole before anything is written: a bad line names its line and field.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import xxhash

from eventlog.errors import InvalidEventError
from eventlog.events import Event, MemoryAppended, MessageAppended
from eventlog.timeutil import now_iso
from projections.memory import STATES, USER_SECTION

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

FORMATS = ("json", "markdown")
VERSION = 1
EXCERPT = 200
#: The states an import adds (a fact that still holds); the others are history, not memory.
IMPORTED_STATES = ("active", "archived")
_ENDS = {"superseded", "forgotten", "archived"}


@dataclass
class SourceRef:
    """A message a fact came from."""

    ref: str  # "<session key>#<message id>"
    time: str = ""
    role: str = ""
    excerpt: str = ""


@dataclass
class ExportedFact:
    """One fact as an export holds it (see the module docstring)."""

    fact_id: str
    text: str
    file: str = ""
    section: str = USER_SECTION
    subject: str = ""
    state: str = "active"
    pinned: bool = False
    by: str = ""
    learned_at: str = ""
    run_id: str = ""
    valid_from: str = ""
    valid_until: str = ""
    replaced_by: str = ""
    sources: list[SourceRef] = field(default_factory=list)


@dataclass
class ImportReport:
    """What an import did: facts added, already there, and not added because they no longer hold."""

    added: list[str] = field(default_factory=list)
    existing: int = 0
    not_holding: int = 0


def export_facts(ws: Workspace, *, states: tuple[str, ...] = ("active",), project: str | None = None) -> list[ExportedFact]:
    """The facts in ``states`` (of one file if ``project`` is given: "" = global), oldest first, with provenance."""
    from processors.audit import fact_history

    bad = [s for s in states if s not in STATES]
    if bad:
        raise InvalidEventError(f"unknown fact state {bad[0]!r}; choose from {', '.join(STATES)}")
    facts = [f for f in ws.memory.all_facts() if f.state in states and (project is None or f.target == project)]
    history = fact_history(ws, [f.fact_id for f in facts])
    out = []
    for f in facts:
        steps = history.get(f.fact_id, [])
        learned = next((h.time for h in steps if h.action == "learned"), "")
        ended = [h.time for h in steps if h.action in _ENDS] if f.state != "active" else []
        out.append(ExportedFact(
            fact_id=f.fact_id, text=f.text, file=f.target, section=f.section, subject=f.subject, state=f.state,
            pinned=f.pinned, by=f.by, learned_at=learned, run_id=f.run_id, valid_from=f.when,
            valid_until=ended[-1] if ended else "", replaced_by=f.superseded_by, sources=_sources(ws, f)))
    return out


def _sources(ws: Workspace, f: Any) -> list[SourceRef]:
    refs = {}
    for seq in f.source_seqs:
        rec = ws.log.find(seq)
        if rec is not None and isinstance(rec.event, MessageAppended):
            ev = rec.event
            flat = " ".join(ev.content.split())
            refs[f"{ev.session_key}#{ev.message_id}"] = SourceRef(
                f"{ev.session_key}#{ev.message_id}", ev.timestamp or ev.ts, ev.role,
                flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…")
    for ref in f.source_refs:
        refs.setdefault(ref, SourceRef(ref))
    return list(refs.values())


# --------------------------------------------------------------------------- writing


def render(facts: list[ExportedFact], fmt: str) -> str:
    """The export as text in ``fmt`` (``json`` lines or ``markdown``)."""
    if fmt == "json":
        head = {"evlog_export": "memory", "version": VERSION, "exported_at": now_iso(), "facts": len(facts)}
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in [head, *map(asdict, facts)])
    if fmt == "markdown":
        return _markdown(facts)
    raise InvalidEventError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")


def _markdown(facts: list[ExportedFact]) -> str:
    lines = [f"# evlog memory export ({now_iso()})", ""]
    files: dict[str, dict[str, list[ExportedFact]]] = {}
    for f in facts:
        files.setdefault(f.file, {}).setdefault(f.section, []).append(f)
    for target in sorted(files, key=lambda t: (t != "", t)):
        lines += ["## Global" if not target else f"## Project `{target}`", ""]
        for section, rows in files[target].items():
            lines += [f"### {section}", ""]
            for f in rows:
                meta = {k: v for k, v in asdict(f).items() if k not in ("text", "file", "section") and v not in ("", [], False)}
                meta["sources"] = [s.ref for s in f.sources]
                lines.append(f"- {' '.join(f.text.split())} <!-- evlog: {json.dumps(meta, ensure_ascii=False)} -->")
                lines += [f"  - from {s.ref}" + (f" ({s.role}, {s.time})" if s.time else "")
                          + (f": {s.excerpt}" if s.excerpt else "") for s in f.sources]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- reading


def parse(text: str, fmt: str = "auto", *, name: str = "<input>") -> list[ExportedFact]:
    """The facts of an export (``fmt`` ``auto`` tells JSON lines from Markdown by the first character)."""
    if fmt == "auto":
        fmt = "json" if text.lstrip().startswith("{") else "markdown"
    if fmt == "json":
        return _parse_json(text, name)
    if fmt == "markdown":
        return _parse_markdown(text, name)
    raise InvalidEventError(f"unknown import format {fmt!r}; choose from auto, {', '.join(FORMATS)}")


def _fact_of(d: Any, where: str) -> ExportedFact:
    """One fact from its JSON object, every field checked (``where`` names the line)."""
    if not isinstance(d, dict):
        raise InvalidEventError(f"{where}: a fact must be a JSON object")
    text = d.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidEventError(f"{where}: field 'text' must be a non-empty string", field="text")
    for key in ("fact_id", "file", "section", "subject", "state", "by", "learned_at", "run_id", "valid_from",
                "valid_until", "replaced_by"):
        if not isinstance(d.get(key, ""), str):
            raise InvalidEventError(f"{where}: field {key!r} must be a string", field=key)
    if d.get("state", "active") not in STATES:
        raise InvalidEventError(f"{where}: field 'state' must be one of {', '.join(STATES)}", field="state")
    sources = d.get("sources", [])
    if not isinstance(sources, list):
        raise InvalidEventError(f"{where}: field 'sources' must be a list", field="sources")
    refs = [SourceRef(s) if isinstance(s, str) else SourceRef(**{k: str(s.get(k, "")) for k in ("ref", "time", "role", "excerpt")})
            for s in sources if isinstance(s, str) or (isinstance(s, dict) and isinstance(s.get("ref"), str))]
    known = {k: d[k] for k in ExportedFact.__dataclass_fields__ if k in d and k not in ("text", "sources", "pinned")}
    return ExportedFact(text=" ".join(text.split()), pinned=d.get("pinned") is True, sources=refs,
                        **{"fact_id": "", **known})


def _parse_json(text: str, name: str) -> list[ExportedFact]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise InvalidEventError(f"{name}:{n}: not JSON ({e})") from None
        if isinstance(d, dict) and "evlog_export" in d:
            if d.get("evlog_export") != "memory" or d.get("version") != VERSION:
                raise InvalidEventError(f"{name}:{n}: not an evlog memory export of version {VERSION}")
            continue
        out.append(_fact_of(d, f"{name}:{n}"))
    return out


_BULLET = re.compile(r"^[-*] (.+?)\s*(?:<!-- evlog: (\{.*\}) -->)?\s*$")
_PROJECT = re.compile(r"^## Project `(.+)`\s*$")


def _parse_markdown(text: str, name: str) -> list[ExportedFact]:
    out = []
    target, section = "", USER_SECTION
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            m = _PROJECT.match(line)
            target, section = (m.group(1) if m else ""), USER_SECTION
        elif line.startswith("### "):
            section = line[4:].strip() or USER_SECTION
        elif (m := _BULLET.match(line)) is not None:
            meta: dict[str, Any] = {}
            if m.group(2):
                try:
                    meta = json.loads(m.group(2))
                except ValueError as e:
                    raise InvalidEventError(f"{name}:{n}: the evlog comment is not JSON ({e})") from None
                if not isinstance(meta, dict):
                    raise InvalidEventError(f"{name}:{n}: the evlog comment must be a JSON object")
            out.append(_fact_of({**meta, "text": m.group(1), "file": target, "section": section}, f"{name}:{n}"))
    return out


# --------------------------------------------------------------------------- importing


def import_facts(ws: Workspace, facts: list[ExportedFact]) -> ImportReport:
    """Add the facts that hold and are not in the workspace yet (see the module docstring); one atomic batch."""
    from processors.dream import budget_events

    report = ImportReport()
    with ws.lock:
        have = {(f.target, f.text.casefold()) for f in ws.memory.all_facts("active")}
        events: list[Event] = []
        for f in facts:
            if f.state not in IMPORTED_STATES:
                report.not_holding += 1
                continue
            fid = f.fact_id or "fact-i" + xxhash.xxh3_64_hexdigest(f"{f.file}\0{f.text}".encode())[:11]
            if ws.memory.get(fid) is not None or (f.file, f.text.casefold()) in have or fid in report.added:
                report.existing += 1
                continue
            have.add((f.file, f.text.casefold()))
            events.append(MemoryAppended(
                fact_id=fid, scope="project" if f.file else "user", section=f.section or USER_SECTION, text=f.text,
                project=f.file, subject=f.subject, when=f.valid_from, source_refs=[s.ref for s in f.sources],
                pinned=f.pinned, by="import", dedup=f"import:{fid}"))
            report.added.append(fid)
        if events:
            ws.append([*events, *budget_events(ws, events)])
    return report
