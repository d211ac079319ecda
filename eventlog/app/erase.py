"""``evlog erase``: make a fact, a session, a subject's facts or a text gone from every store (I25).

``forget`` is a soft, reversible state change (``unforget`` undoes it); ``erase`` is the hard,
irreversible one. One call:

1. finishes an erasure that was killed (``eventlog.erasure.resume``), then
2. finds what to erase (``find``): the events that carry the target (a fact's events, a
   session's events, every event whose bytes hold the text) and, by a byte search for the
   texts they hold (``MIN_NEEDLE`` characters or more, first ``NEEDLE_CHARS`` of each, as
   written and with whitespace collapsed), every event derived from them: diary lines, short-
   term entries, history entries, Dream's raw output, the messages a fact came from;
3. (``dry_run``) lists every place it is found and changes nothing, or
4. with a gateway named (``remote``: direct, or the HTTP gateway the workspace is logged in
   to, ``open_remote``), deletes its rows first and records the erasure there for the other
   devices (``eventlog.app.gateway.erasure``): a failure there changes nothing here; then
5. erases those lines in the log (``eventlog.erasure.commit``), deletes the recall embedding
   cache (its keys are text hashes and its vectors can be inverted; semantic recall embeds
   again on first use), rebuilds every projection and the recall index from the erased log
   (new files, so freed pages hold nothing), removes leftover copies that still hold the
   text (``*.bak``, ``*.tmp``, quarantined tails in the workspace; the ``*.evlog.bak``
   copies ``evlog setup`` saved of agents' settings), and only then removes the journal: a
   kill anywhere after the commit is rolled forward by the next writable open.

The erasure event keeps no text: seqs, marker checksums and ``ref_hash`` names of the
messages and facts removed, which a second device matches against its own log.
"""

from __future__ import annotations

import functools
import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eventlog import codec, erasure
from eventlog.errors import EvlogError, InvalidEventError, NotFound
from eventlog.events import (
    DiaryLines,
    ErasureRecorded,
    Event,
    MemoryAppended,
    MemoryEdited,
    MessageAppended,
    MessageUpdated,
    Replica,
    SessionCreated,
    StmAdded,
    SyncPushed,
)
from eventlog.segments import segment_name

if TYPE_CHECKING:
    from eventlog.app.gateway.connection import Timeouts
    from eventlog.app.gateway.sync import Remote
    from eventlog.app.workspace import Workspace
    from eventlog.replication.sync import ReceivedErasure

KINDS = ("fact", "session", "subject", "text", "sync")
MIN_NEEDLE = 16  # shorter texts derived from a target are not searched for (they would match unrelated events)
NEEDLE_CHARS = 64
MAX_ROUNDS = 4
_NEVER = ("log.erased", "log.erasure", "log.recovered")


@dataclass(frozen=True)
class Target:
    """What to erase: ``kind`` is fact, session, subject, text, or sync (``refs`` pulled from another device)."""

    kind: str
    value: str = ""
    refs: tuple[str, ...] = ()
    origin: str = ""
    seqs: tuple[int, ...] = ()  # (sync) this log's copies of the events another device erased, by origin key

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidEventError(f"unknown erase target {self.kind!r}; choose one of {', '.join(KINDS)}", field="kind")
        if self.kind != "sync" and not self.value.strip():
            raise InvalidEventError(f"erase --{self.kind} needs a non-empty value", field=self.kind)


@dataclass
class ErasureReport:
    """What an erase found (``dry_run``) or did: log lines by segment, files and gateway rows."""

    target: str
    dry_run: bool
    segments: dict[str, list[int]] = field(default_factory=dict)  # segment file -> erased seqs
    files: list[str] = field(default_factory=list)  # workspace files that held the text (before)
    removed_files: list[str] = field(default_factory=list)  # leftover copies deleted
    gateway: dict[str, int] = field(default_factory=dict)  # table -> rows found / deleted
    erasure_seq: int = 0
    refs: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)  # places still holding it afterwards (should be none)
    notes: list[str] = field(default_factory=list)  # what the user should know (a gateway not named, ...)

    @property
    def seqs(self) -> list[int]:
        """Every erased (or to-be-erased) seq."""
        return sorted(s for v in self.segments.values() for s in v)

    def summary(self) -> str:
        """One line for people."""
        verb = "would erase" if self.dry_run else "erased"
        n = len(self.seqs)
        parts = [f"{verb} {n} log line(s) in {len(self.segments)} segment(s)"]
        if self.files:
            parts.append(f"{len(self.files)} file(s) held it")
        if self.gateway:
            parts.append("gateway: " + ", ".join(f"{t} {c}" for t, c in sorted(self.gateway.items())))
        if self.remaining:
            parts.append(f"STILL FOUND in {len(self.remaining)} place(s)")
        return f"{self.target}: " + "; ".join(parts)

    def places(self) -> Iterator[dict[str, Any]]:
        """Every place, one dict each (what ``--json`` and ``--dry-run`` print)."""
        for seg, seqs in sorted(self.segments.items()):
            yield {"place": "segment", "path": os.path.join("log", seg), "seqs": seqs}
        for path in self.files:
            yield {"place": "file", "path": path}
        for path in self.removed_files:
            yield {"place": "removed", "path": path}
        for table, count in sorted(self.gateway.items()):
            yield {"place": "gateway", "table": table, "rows": count}
        for where in self.remaining:
            yield {"place": "remaining", "path": where}


@dataclass
class _Found:
    seqs: set[int] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)  # sessions erased whole (their session.created is)
    messages: set[tuple[str, str]] = field(default_factory=set)  # (session key, message id) erased
    pushed_to: set[str] = field(default_factory=set)  # gateways this log pushed to (they may hold copies)


def erase(ws: Workspace, target: Target, *, dry_run: bool = False, remote: Remote | None = None,
          record_empty: bool = False, replica: Replica | None = None) -> ErasureReport:
    """Erase ``target`` everywhere (see the module docstring); ``dry_run`` only lists the places.

    ``remote``: the gateway this workspace syncs with; its rows go first (a failure there
    changes nothing here), and its ``gateway_erasures`` row tells the other devices.
    ``record_empty``: record the erasure even if this log holds none of it (how a device
    remembers it applied a gateway erasure). ``replica``: set when this applies an erasure another
    device made on the event path (``apply_received``).
    """
    label = f"{target.kind} {target.value!r}" if target.kind != "sync" else f"sync from {target.origin or 'a device'}"
    report = ErasureReport(target=label, dry_run=dry_run)
    if not dry_run:
        resume(ws)
    found = find(ws, target)
    needles = _needles(target, found)
    for rec in ws.log.records():
        if rec.seq in found.seqs:
            report.segments.setdefault(segment_name(rec.segment), []).append(rec.seq)
    report.refs = sorted(found.refs)
    report.files = search_files(ws, needles)
    erasure_id = uuid.uuid4().hex
    origin = target.origin
    if remote is not None:
        report.gateway, row = _gateway(remote, found, needles, erasure_id, ws, dry_run=dry_run)
        if not dry_run:
            report.notes.append("the gateway's rows are gone; other devices apply the erasure on their next sync")
        origin = f"{remote.target}#{row}" if row else origin
    elif found.pushed_to and found.messages and target.kind != "sync":
        report.notes.append(f"this workspace pushed to {', '.join(sorted(found.pushed_to))}: the gateway keeps its "
                            "copy (and other devices theirs) unless the erase goes there too (log in with 'evlog sync "
                            "login' and erase without --local-only, or erase with --dsn)")
    if dry_run:
        return report
    origins, projects = _origin_keys(ws, found.seqs)
    if not found.seqs:
        if record_empty or remote is not None:
            ws.append([ErasureRecorded(erasure_id=erasure_id, kind=target.kind, seqs=[], markers=[],
                                       refs=sorted(found.refs), origin=origin, origins=origins, replica=replica)])
            return report
        raise NotFound(f"nothing to erase: no event holds {label}")
    report.erasure_seq = erasure.commit(ws.log, sorted(found.seqs), erasure_id=erasure_id, kind=target.kind,
                                        refs=sorted(found.refs), origin=origin, origins=origins, replica=replica,
                                        projects=sorted(set(projects.values()) - {""}) if replica is None else ())
    if replica is None:
        _route_to_projects(ws, target.kind, origin, projects)
    needles = _erase_late_copies(ws, target, found, report, origin, replica) or needles
    _clean_derived(ws, needles, report)
    erasure.finish(ws.log)
    return report


def _erase_late_copies(ws: Workspace, target: Target, found: _Found, report: ErasureReport,
                       origin: str, replica: Replica | None) -> list[bytes]:
    """Erase copies another writer appended between the find and the commit (a pull, an ingest, an agent).

    ``find`` reads the log before the write lock is taken, so a line appended meanwhile can hold
    the text too; each pass looks again and erases what is new, until a pass finds nothing.
    Returns the needles of the last pass (empty when there was nothing late).
    """
    needles: list[bytes] = []
    erased = set(found.seqs)
    for _ in range(5):
        try:
            again = find(ws, target)
        except NotFound:  # the fact or session itself is gone now: nothing late can name it
            break
        late = sorted(set(again.seqs) - erased)
        if not late:
            break
        origins, projects = _origin_keys(ws, set(late))
        erasure.commit(ws.log, late, erasure_id=uuid.uuid4().hex, kind=target.kind, refs=sorted(again.refs),
                       origin=origin, origins=origins, replica=replica,
                       projects=sorted(set(projects.values()) - {""}) if replica is None else ())
        if replica is None:
            _route_to_projects(ws, target.kind, origin, projects)
        erased.update(late)
        report.refs = sorted(set(report.refs) | again.refs)
        for rec in ws.log.records():
            if rec.seq in late:
                report.segments.setdefault(segment_name(rec.segment), []).append(rec.seq)
        needles = _needles(target, again)
    return needles


def apply_received(ws: Workspace, received: ReceivedErasure) -> None:
    """Apply an erasure another device made (the ``erase`` of ``replication.sync.pull``): this log's copies
    of its events (by origin key), what this device derived from them, and the projections rebuilt."""
    target = Target("sync", refs=tuple(received.refs), origin=received.applied_origin, seqs=tuple(received.seqs))
    erase(ws, target, record_empty=True, replica=received.replica)


def _origin_keys(ws: Workspace, seqs: set[int]) -> tuple[list[tuple[str, int]], dict[tuple[str, int], str]]:
    """The origin keys of the replicated events among ``seqs`` (read before they are erased): what other
    devices erase when the erasure reaches them (``eventlog.replication``), and each one's project."""
    from eventlog.replication.clock import device_of
    from eventlog.replication.origin import REPLICATED_TYPES, OriginFold

    if not seqs:
        return [], {}
    fold = OriginFold.of(ws.log)
    by_seq = {local: key for key, local in fold.held.items()}
    out: dict[tuple[str, int], str] = {}
    for ev in ws.log.read(min(seqs), until_seq=max(seqs)):
        if ev.seq not in seqs or ev.type not in REPLICATED_TYPES:
            continue
        device = by_seq.get(ev.seq, ("", 0))[0] or device_of(fold.claims, ev.seq)
        if device:
            out[by_seq.get(ev.seq, (device, ev.seq))] = fold.project_of(ev)
    return sorted(out), out


def _route_to_projects(ws: Workspace, kind: str, origin: str, projects: dict[tuple[str, int], str]) -> None:
    """After an erasure across several shared projects (its envelope goes to the first one's teammates):
    one empty erasure per other project with that project's origin keys, so its teammates erase too."""
    names = sorted(set(projects.values()) - {""})
    for name in names[1:]:
        keys = sorted(k for k, p in projects.items() if p == name)
        ws.append([ErasureRecorded(erasure_id=uuid.uuid4().hex, kind=kind, seqs=[], markers=[], origin=origin,
                                   origins=keys, projects=[name])])


def resume(ws: Workspace) -> int:
    """Complete an erasure that was killed (its journal is still there); returns its seq or 0."""
    if not erasure.pending(ws.log.dir):
        return 0
    seq = erasure.resume(ws.log)
    if seq:
        _drop_text_caches(ws)
        _rebuild(ws)
    erasure.finish(ws.log)
    return seq


def _clean_derived(ws: Workspace, needles: list[bytes], report: ErasureReport) -> None:
    report.removed_files += _drop_text_caches(ws)
    _rebuild(ws)
    removed, report.remaining = _remove_leftovers(ws, search_files(ws, needles, segments=True), needles)
    report.removed_files += removed


def _drop_text_caches(ws: Workspace) -> list[str]:
    """Delete the caches derived from texts: the SessionStart cache (``context_cache``: rendered memory
    blocks) and the recall embedding cache (its keys hash texts and its vectors can be inverted, and which
    of them came from the erased texts cannot be told without the texts' exact indexed form)."""
    from eventlog.app.agents import context_cache
    from projections.recall.workspace import EMBEDDINGS_FILE

    removed = [context_cache.CACHE_FILE] if context_cache.drop(ws.home) else []
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = ws.path(EMBEDDINGS_FILE + suffix)
        if os.path.exists(path):
            ws.fs.unlink(path)
            removed.append(EMBEDDINGS_FILE + suffix)
    return removed


def _rebuild(ws: Workspace) -> None:
    from eventlog.app import replay

    replay.rebuild(ws)


# --- finding -------------------------------------------------------------------------


def find(ws: Workspace, target: Target) -> _Found:
    """The seqs to erase, the texts they hold and the ``ref_hash`` names of what they are.

    Rounds until nothing new is found: the target's own events; events that point at what
    was found (a fact learned from an erased message, a diary line or short-term entry made
    from it, a fact's later changes); events whose bytes hold a text found so far.
    """
    found = _Found()
    events = [ev for ev in ws.log.read() if ev.type not in _NEVER]
    encoded = {ev.seq: codec.ENCODER.encode(ev) for ev in events}
    found.pushed_to = {ev.target for ev in events if isinstance(ev, SyncPushed)}
    fact_ids = _target_facts(events, target)
    if target.kind in ("fact", "subject") and not fact_ids:
        raise NotFound(f"no fact {'with id' if target.kind == 'fact' else 'about'} {target.value!r}")
    if target.kind == "session":
        found.sessions.add(target.value)
        found.refs.add(erasure.ref_hash("session", target.value))
    for ev in events:
        if _direct(ev, target, fact_ids):
            _take(found, ev)
    searched: set[bytes] = set()  # needles every event was already searched for
    for _round in range(MAX_ROUNDS):
        before = len(found.seqs)
        for ev in events:
            if ev.seq not in found.seqs and _points_at(ev, found, fact_ids):
                _take(found, ev)
        needles = [n for n in _needles(target, found) if n not in searched]
        searched.update(needles)
        for ev in events if needles else ():
            if ev.seq not in found.seqs and _holds(encoded[ev.seq], needles):
                _take(found, ev)
        if len(found.seqs) == before:
            break
    return found


def _points_at(ev: Event, found: _Found, fact_ids: set[str]) -> bool:
    """True for an event made from something found (its sources are erased), or a later change of an erased fact."""
    seqs = found.seqs
    fid = getattr(ev, "fact_id", None)
    if fid is not None and fid in fact_ids:
        return True
    if isinstance(ev, MemoryAppended):
        hit = bool(seqs.intersection(ev.source_seqs) or seqs.intersection(ev.sources)) or any(
            erasure.ref_hash(*ref.split("#", 1)) in found.refs for ref in ev.source_refs if "#" in ref)
        if hit:
            fact_ids.add(ev.fact_id)
        return hit
    if isinstance(ev, StmAdded):
        return bool(seqs.intersection(ev.message_seqs))
    if isinstance(ev, DiaryLines):  # the whole event goes: its other lines with it (the diary is bookkeeping)
        return bool(seqs.intersection(ev.source_seqs))
    src = getattr(ev, "source_seq", 0)
    return bool(src) and src in seqs


def _target_facts(events: list[Event], target: Target) -> set[str]:
    if target.kind == "fact":
        return {ev.fact_id for ev in events if isinstance(ev, MemoryAppended) and ev.fact_id == target.value}
    if target.kind == "subject":
        want = target.value.casefold()
        return {ev.fact_id for ev in events if isinstance(ev, MemoryAppended) and ev.subject.casefold() == want}
    if target.kind == "sync":
        refs = set(target.refs)
        return {ev.fact_id for ev in events if isinstance(ev, MemoryAppended) and erasure.ref_hash("fact", ev.fact_id) in refs}
    return set()


def _direct(ev: Event, target: Target, fact_ids: set[str]) -> bool:
    fid = getattr(ev, "fact_id", None)
    if fid is not None and fid in fact_ids:
        return True
    key = getattr(ev, "session_key", None)
    if target.kind == "session":
        return key == target.value or (isinstance(ev, StmAdded | DiaryLines) and target.value in ev.session_keys)
    if target.kind == "text":
        return _holds(codec.ENCODER.encode(ev), [_json_body(target.value)])
    if target.kind == "sync" and ev.seq in target.seqs:
        return True
    if target.kind == "sync" and isinstance(key, str):
        mid = getattr(ev, "message_id", "")
        return erasure.ref_hash("session", key) in target.refs or (
            bool(mid) and erasure.ref_hash(key, mid) in target.refs)
    return False


def _take(found: _Found, ev: Event, *, texts: bool = True) -> None:
    found.seqs.add(ev.seq)
    if isinstance(ev, MessageAppended | MessageUpdated):
        found.refs.add(erasure.ref_hash(ev.session_key, ev.message_id))
        found.messages.add((ev.session_key, ev.message_id))
        if texts:
            found.texts.append(ev.content)
    elif isinstance(ev, MemoryAppended | MemoryEdited):
        found.refs.add(erasure.ref_hash("fact", ev.fact_id))
        if texts:
            found.texts.append(ev.text)
    elif isinstance(ev, SessionCreated):
        found.refs.add(erasure.ref_hash("session", ev.session_key))
        found.sessions.add(ev.session_key)


def _json_body(text: str) -> bytes:
    return codec.ENCODER.encode(text)[1:-1]


def _needles(target: Target, found: _Found) -> list[bytes]:
    """Byte strings whose presence marks a copy: the target text itself, and the start of each text found."""
    out = [_json_body(target.value)] if target.kind == "text" else []
    for text in found.texts:
        for form in (text.strip(), " ".join(text.split())):
            if len(form) >= MIN_NEEDLE:
                out.append(_json_body(form[:NEEDLE_CHARS]))
                out.append(form[:NEEDLE_CHARS].encode("utf-8", "surrogatepass"))
    return sorted(set(out), key=len, reverse=True)


def _holds(data: bytes, needles: list[bytes]) -> bool:
    return bool(needles) and _matcher(tuple(needles)).search(data)


@functools.lru_cache(maxsize=8)
def _matcher(needles: tuple[bytes, ...]) -> _Needles:
    return _Needles(needles)


class _Needles:
    """Is any of many needles in a text? Sampled k-grams (Rabin-Karp style), one dict lookup every ``STEP`` bytes.

    Every occurrence of a needle of at least ``GRAM + STEP - 1`` bytes covers a position that
    is a multiple of ``STEP``, where one of the needle's first ``STEP`` grams starts; each gram
    found there is checked against its needles in full. Shorter needles are searched plainly.
    """

    GRAM = 12
    STEP = 4

    def __init__(self, needles: tuple[bytes, ...]) -> None:
        self.short = [n for n in needles if n and len(n) < self.GRAM + self.STEP - 1]
        self.grams: dict[bytes, list[tuple[int, bytes]]] = {}
        for n in needles:
            if len(n) >= self.GRAM + self.STEP - 1:
                for off in range(self.STEP):
                    self.grams.setdefault(n[off : off + self.GRAM], []).append((off, n))

    def search(self, data: bytes) -> bool:
        if any(n in data for n in self.short):
            return True
        grams, k = self.grams, self.GRAM
        if not grams:
            return False
        get = grams.get
        for p in range(0, len(data) - k + 1, self.STEP):
            hit = get(data[p : p + k])
            if hit:
                for off, n in hit:
                    if p >= off and data.startswith(n, p - off):
                        return True
        return False


# --- files ---------------------------------------------------------------------------


def _workspace_files(ws: Workspace, *, segments: bool = False) -> Iterator[str]:
    """Every file of the workspace (the log's segments only with ``segments``), the registered projects'
    MEMORY.md mirrors and the settings backups ``evlog setup`` made."""
    log_dir = os.path.abspath(ws.log.dir)
    for root, dirs, files in os.walk(ws.home):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if not segments and os.path.abspath(root) == log_dir and name.endswith(".jsonl"):
                continue
            try:
                regular = stat.S_ISREG(os.lstat(path).st_mode)
            except OSError:
                continue  # gone since the walk listed it (another writer's temporary file)
            if regular:  # not the daemon's hook socket (run/hooks.sock) or a FIFO: they hold no bytes
                yield path
    projects = list(getattr(ws.config, "projects", []) or [])
    for project in projects:
        mirror = os.path.join(project, "memory", "MEMORY.md")
        if os.path.isfile(mirror):
            yield mirror
    yield from _settings_backups(projects)


def _settings_backups(projects: list[str]) -> Iterator[str]:
    """The copies ``evlog setup`` saved of agents' settings files (``~/.claude.json`` holds prompt history)."""
    from eventlog.app.agents.setup import BACKUP_SUFFIX, target_paths

    seen = set()
    for scope, project in [("user", None), *(("project", p) for p in projects)]:
        for path in target_paths(scope, project):
            backup = path + BACKUP_SUFFIX
            if backup not in seen and os.path.isfile(backup):
                seen.add(backup)
                yield backup


def search_files(ws: Workspace, needles: list[bytes], *, segments: bool = False) -> list[str]:
    """Files (relative to the workspace where inside it) whose bytes hold any needle."""
    if not needles:
        return []
    out = []
    for path in _workspace_files(ws, segments=segments):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if _holds(data, needles):
            out.append(os.path.relpath(path, ws.home) if path.startswith(ws.home) else path)
    return out


def _remove_leftovers(ws: Workspace, held: list[str], needles: list[bytes]) -> tuple[list[str], list[str]]:
    """Delete the files in ``held`` no projection owns (backups, temp files, quarantined tails) and scrub the
    daemon's diagnostics (``_scrub_diagnostics``): (removed or scrubbed, kept)."""
    removed, kept = [], []
    for rel in held:
        path = rel if os.path.isabs(rel) else os.path.join(ws.home, rel)
        name = os.path.basename(path)
        leftover = name.endswith((".bak", ".tmp")) or os.sep + "quarantine" + os.sep in path or "~" in name
        if leftover and os.path.isfile(path):
            ws.fs.unlink(path)
            removed.append(rel)
        elif _is_diagnostic(ws, path) and os.path.isfile(path):
            _scrub_diagnostics(ws, path, needles)
            removed.append(rel)
        else:
            kept.append(rel)
    return removed, kept


def _is_diagnostic(ws: Workspace, path: str) -> bool:
    """The daemon's log files (``logs/daemon.log`` and its rotations) and its heartbeat (``state/daemon.json``)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(ws.home))
    return rel.startswith("logs" + os.sep) or rel == os.path.join("state", "daemon.json")


def _scrub_diagnostics(ws: Workspace, path: str, needles: list[bytes]) -> None:
    """Rewrite a diagnostics file without the lines that hold the text (the heartbeat, one JSON document that
    the daemon rewrites every few seconds, is removed whole). Atomic: a kill leaves the old file or the new."""
    if path.endswith(".json"):
        ws.fs.unlink(path)
        return
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    kept = b"".join(line if not _holds(line, needles) else b"[a line erased by evlog erase]\n" for line in lines)
    ws.fs.atomic_write(path, kept)


# --- the gateway ---------------------------------------------------------------------


def _gateway(remote: Remote, found: _Found, needles: list[bytes], erasure_id: str, ws: Workspace, *,
             dry_run: bool) -> tuple[dict[str, int], int]:
    """Delete (or count) the gateway rows of what was found; (rows by table, the gateway erasure's id)."""
    from eventlog.app.gateway import erasure as gateway_erasure
    from eventlog.app.gateway.sync_state import device_origin

    removal = gateway_erasure.Removal(sessions=tuple(sorted(found.sessions)), messages=tuple(sorted(found.messages)),
                                      refs=tuple(sorted(found.refs)), needles=tuple(needles), erasure_id=erasure_id,
                                      origin=device_origin(ws.log), events=origin_keys(ws, found.seqs))
    try:
        return gateway_erasure.purge(remote, removal, dry_run=dry_run)
    except EvlogError as e:  # the gateway goes first: nothing has changed here yet
        raise _nothing_erased(e) from None


def origin_keys(ws: Workspace, seqs: set[int]) -> tuple[tuple[str, int], ...]:
    """The replicated identities (device, origin seq) of the local events ``seqs``: a received event's
    origin, else this log's device of that seq (none before the log's first sync claimed one)."""
    from eventlog.replication.clock import device_of
    from eventlog.replication.origin import OriginFold

    if not seqs:
        return ()
    fold = OriginFold.of(ws.log)
    received = {local: key for key, local in fold.held.items() if local in seqs}
    keys = set(received.values())
    for seq in seqs - set(received):
        device = device_of(fold.claims, seq)
        if device:
            keys.add((device, seq))
    return tuple(sorted(keys))


def _nothing_erased(e: EvlogError) -> EvlogError:
    """``e``, saying that the erase stopped before changing anything (the gateway goes first)."""
    message = (f"{e}; nothing was erased (the gateway goes first): try again when it answers, or erase on this "
               "device only with --local-only")
    try:
        return type(e)(message)
    except TypeError:  # an error whose constructor takes something else (TooManyAttempts)
        from eventlog.errors import BackendError

        return BackendError(message)


def open_remote(home: str, *, dsn: str | None = None, user: str | None = None, gateway: str | None = None,
                local_only: bool = False, timeouts: Timeouts | None = None) -> Remote | None:
    """The gateway an erase goes to first: ``dsn`` (direct, with ``user``), else the HTTP gateway ``gateway``
    or the one the workspace is logged in to (``evlog sync login``); None with ``local_only`` or when the
    workspace names none. A gateway that does not answer raises before anything is erased."""
    if local_only:
        return None
    if dsn:
        from eventlog.app.gateway.sync import Gateway

        return Gateway(dsn, user)
    from eventlog.app.gateway.http_client import HttpRemote, logged_in_gateway

    url = logged_in_gateway(home, gateway)
    if url is None:
        return None
    try:
        return HttpRemote.open(home, url, user=user, timeouts=timeouts)
    except EvlogError as e:
        raise _nothing_erased(e) from None


def erasures(ws: Workspace) -> list[ErasureRecorded]:
    """Every erasure the log records."""
    return [ev for ev in ws.log.read() if isinstance(ev, ErasureRecorded)]
