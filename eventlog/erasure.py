"""Erasure: the one sanctioned change to sealed segments (INVARIANTS I25).

An append-only log cannot forget by appending, so erasure rewrites history the way Kafka
compaction and EventStoreDB scavenging do, but in place and authorised:

* each erased line is replaced by a ``log.erased`` marker line with the **same seq, ts and
  dedup keys** (``dedup`` and any ``dedup_keys``, in their hashed form, ``hashed_dedup``), the same batch ``more``
  counter, a valid checksum and no payload. Seqs stay dense, batches stay whole, and a
  re-ingest of the erased message is still a duplicate (the writer's dedup index holds the
  same 128-bit key), so it never comes back;
* a marker is padded (``pad``, spaces) to the erased line's length whenever it is shorter, so
  every byte position stays where it was: processors' offsets, sparse indexes and readers'
  cached positions remain valid (only a line shorter than a marker moves what follows it);
* the erasure is authorised by one ``log.erasure`` event appended *after* the lines it
  erases, listing every rewritten seq and the checksum of its marker line. It never holds
  the erased text, nor a hash of it (a hash of a short text is a leak).

``verify`` (``unauthorised``) tells an authorised erasure from damage: a marker is fine only
if a later ``log.erasure`` lists its seq with exactly its checksum. Any other change to a
sealed segment is still damage (checksums, seqs and the I5/I6 checks are untouched).

**Atomicity.** ``commit`` runs in one turn of the write lock: (1) write the journal
``log/ERASING`` (the erasure's seq and id, no text) atomically; (2) append the
``log.erasure`` event with fsync: the commit point; (3) seal the active segment, so only
sealed segments are rewritten (another writer's descriptor may point at the active file;
a sealed file makes it look again); (4) rewrite each affected segment: new file next to
it, write, fsync, mark read-only, rename over, fsync the directory; then its sparse index.
A kill before (2) leaves the old log (the journal names an erasure that does not exist and
is dropped); a kill after it is rolled forward by ``resume``: rewriting is idempotent
(lines already erased are skipped). ``finish`` removes the journal once the caller has
also cleaned what is derived from the log (``eventlog.app.erase``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import xxhash

from eventlog import codec
from eventlog.errors import CorruptionError, InvalidEventError
from eventlog.events import ErasureRecorded, RecordErased, Replica
from eventlog.fsio import TMP_SUFFIX, FileSystem
from eventlog.log import Log
from eventlog.segments import (
    ERASE_JOURNAL,
    ERASURE_LINE_PREFIX,
    encode_index,
    index_path,
    scan_segment,
    segment_bases,
)

REF_PREFIX = "xxh3_128:"
_PAD_MEMBER = len(b',"pad":""')


class _Head(msgspec.Struct):
    type: str = ""
    seq: int = 0
    ts: str = ""
    dedup: str = ""
    dedup_keys: list[str] = []
    more: int = 0


class _Journal(msgspec.Struct):
    erasure_seq: int
    erasure_id: str


_HEAD = msgspec.json.Decoder(_Head)
_MARKER = msgspec.json.Decoder(RecordErased)
_ERASURE = msgspec.json.Decoder(ErasureRecorded)


def ref_hash(*parts: str) -> str:
    """How an erasure names what it removed for other devices: a hash of identifiers (never of text)."""
    return REF_PREFIX + xxhash.xxh3_128_hexdigest("\0".join(parts).encode("utf-8", "surrogatepass"))


def is_marker(line: bytes) -> bool:
    """True for a ``log.erased`` line."""
    return line.startswith(b'{"type":"log.erased"')


def hashed_dedup(key: str) -> str:
    """A dedup key in the form the writer stores it (``codec.hash_key``), so a marker keeps the key's
    effect (a re-ingest is still a duplicate) without its text (ingest keys name sessions and messages)."""
    if not key:
        return ""
    return codec.HASH128_PREFIX + f"{codec.hash_key(key):032x}"


def marker_line(line: bytes, erasure_seq: int, *, first: bool = False) -> bytes:
    """The ``log.erased`` line that replaces ``line``: same seq, ts, dedup key and batch counter.

    ``first``: the line is the log's first, whose checksum names this device to the gateway
    (``sync_state.device_origin``); the marker keeps that name (already public: every row
    this device pushed carries it), so erasing it does not make the device someone else.
    """
    head = _HEAD.decode(line)
    origin = "evlog:" + codec.fingerprint(line).split(":")[-1] if first else ""
    ev = RecordErased(seq=head.seq, ts=head.ts, dedup=hashed_dedup(head.dedup), erasure=erasure_seq, was=head.type,
                      origin=origin, dedup_keys=[hashed_dedup(k) for k in head.dedup_keys])
    shortest = b""
    for candidate in (ev, msgspec.structs.replace(ev, was="")):  # a short line: without the type it had
        marker = codec.frame(candidate, more=head.more)
        gap = len(line) - len(marker) - _PAD_MEMBER
        if gap >= 0:  # same length: every byte position in the segment (offsets, sparse index) stays valid
            marker = codec.frame(msgspec.structs.replace(candidate, pad=" " * gap), more=head.more)
        if len(marker) == len(line):
            return marker
        shortest = marker if not shortest or len(marker) < len(shortest) else shortest
    return shortest


@dataclass(frozen=True)
class Place:
    """Where an erased line lives: segment base, byte range and seq."""

    seq: int
    segment: int
    pos: int
    end: int
    fingerprint: str = ""  # the line's checksum when it was located


def locate(log: Log, seqs: Sequence[int]) -> list[Place]:
    """The places of ``seqs`` in the log (lines already erased are left out)."""
    want = set(seqs)
    if not want:
        return []
    out, seen = [], set()
    for rec in log.records(min(want), until_seq=max(want)):  # one pass over the range
        if rec.seq in want:
            seen.add(rec.seq)
            if rec.event.type not in ("log.erased", "log.erasure"):
                out.append(Place(rec.seq, rec.segment, rec.pos, rec.end, rec.fingerprint))
    missing = sorted(want - seen)
    if missing:
        raise InvalidEventError(f"seq {missing[0]} is not in the log", field="seq")
    return out


def commit(log: Log, seqs: Sequence[int], *, erasure_id: str, kind: str, refs: Sequence[str] = (), origin: str = "",
           origins: Sequence[tuple[str, int]] = (), replica: Replica | None = None, projects: Sequence[str] = ()) -> int:
    """Erase the lines of ``seqs`` (see the module docstring); returns the ``log.erasure`` seq (0: nothing to do).

    ``origins``: the origin keys of the replicated events erased (what other devices erase, by
    ``eventlog.replication``); ``replica``: set when this applies an erasure another device made;
    ``projects``: the shared projects of what it erases (``ErasureRecorded.projects``).

    Leaves the journal in place: call ``finish`` once what is derived from the log is clean.
    """
    w = log.writer
    if w is None:
        raise InvalidEventError("erasing needs a writable log")
    places = locate(log, seqs)  # before the lock: lines never move (only an erasure rewrites them: checked below)
    with log.turn():
        lines = [_line(log, p) for p in places]
        if any(codec.fingerprint(ln) != p.fingerprint for ln, p in zip(lines, places, strict=True)):
            places = locate(log, seqs)  # another erasure ran meanwhile: look again, under the lock
            lines = [_line(log, p) for p in places]
        if not places:
            return 0
        e_seq = log.last_seq + 1
        first = log.log_start
        markers = [codec.fingerprint(marker_line(ln, e_seq, first=p.seq == first)) for ln, p in zip(lines, places, strict=True)]
        _write_journal(w.fs, log.dir, _Journal(e_seq, erasure_id))
        ev = ErasureRecorded(erasure_id=erasure_id, kind=kind, seqs=[p.seq for p in places], markers=markers,
                             refs=sorted(set(refs)), origin=origin, origins=sorted(set(origins)), replica=replica,
                             projects=sorted(set(projects)))
        got = log.append(ev)
        if got != e_seq:
            raise CorruptionError(f"the erasure was written at seq {got}, {e_seq} was expected")
        log.sync()  # durable before any line it authorises is rewritten, whatever the durability policy
        _apply(log, e_seq, places)
    return e_seq


def pending(log_dir: str) -> bool:
    """True while an erasure is under way or was killed (the journal exists)."""
    return os.path.exists(os.path.join(log_dir, ERASE_JOURNAL))


def resume(log: Log) -> int:
    """Roll a killed erasure forward (or drop a journal whose erasure was never written); returns its seq or 0.

    Leaves the journal for ``finish`` when there was an erasure to complete.
    """
    path = os.path.join(log.dir, ERASE_JOURNAL)
    try:
        with open(path, "rb") as f:
            journal = msgspec.json.decode(f.read(), type=_Journal)
    except FileNotFoundError:
        return 0
    except (msgspec.DecodeError, msgspec.ValidationError):
        journal = None  # torn before its rename: no erasure was written after it
    with log.turn():
        rec = log.find(journal.erasure_seq) if journal else None
        ev = rec.event if rec is not None else None
        if not isinstance(ev, ErasureRecorded) or journal is None or ev.erasure_id != journal.erasure_id:
            finish(log)  # the erasure never reached the log: the old state stands
            return 0
        _apply(log, ev.seq, locate(log, ev.seqs))
    return ev.seq


def finish(log: Log) -> None:
    """Remove the journal: the erasure is complete everywhere the caller cleans."""
    fs = log.writer.fs if log.writer is not None else None
    path = os.path.join(log.dir, ERASE_JOURNAL)
    if fs is None or not os.path.exists(path):
        return
    try:
        fs.unlink(path)
    except FileNotFoundError:
        return  # another process finishing the same erasure (its writable open rolled it forward) was first
    fs.fsync_dir(log.dir)


def _write_journal(fs: FileSystem, log_dir: str, journal: _Journal) -> None:
    fs.atomic_write(os.path.join(log_dir, ERASE_JOURNAL), msgspec.json.encode(journal))


def _line(log: Log, p: Place) -> bytes:
    with open(log.reader.seg_path(p.segment), "rb") as f:
        f.seek(p.pos)
        return f.read(p.end - p.pos)


def _apply(log: Log, e_seq: int, places: list[Place]) -> None:
    """Seal the active segment if it holds an erased line, then rewrite every affected segment (idempotent)."""
    w = log.writer
    assert w is not None
    bases = segment_bases(log.dir)
    if places and bases and max(p.segment for p in places) == bases[-1]:
        w.seal_active()
    by_segment: dict[int, list[Place]] = defaultdict(list)
    for p in places:
        by_segment[p.segment].append(p)
    for base, here in sorted(by_segment.items()):
        rewrite_segment(w.fs, log, base, here, e_seq)


def rewrite_segment(fs: FileSystem, log: Log, base: int, places: list[Place], e_seq: int) -> None:
    """Replace the lines at ``places`` of sealed segment ``base`` by their markers, atomically."""
    path = log.reader.seg_path(base)
    with open(path, "rb") as f:
        data = f.read()
    parts, at = [], 0
    first = log.log_start
    for p in sorted(places, key=lambda p: p.pos):
        parts += [data[at : p.pos], marker_line(data[p.pos : p.end], e_seq, first=p.seq == first)]
        at = p.end
    parts.append(data[at:])
    new = b"".join(parts)
    tmp = path + TMP_SUFFIX
    fd = fs.open_trunc(tmp)
    try:
        fs.write(fd, new)
        fs.fsync(fd)
        fs.seal(fd)
    finally:
        fs.close(fd)
    fs.rename(tmp, path)
    fs.fsync_dir(log.dir)
    if len(new) != len(data):  # a marker longer than its line moved what follows: the sparse index too
        res = scan_segment(path, base)
        fs.atomic_write(index_path(log.dir, base), encode_index(base, res.size, res.index), sync=False)


# --- verify: is every marker authorised? ----------------------------------------------


def unauthorised(erasure_lines: list[tuple[str, int, int, bytes]]) -> list[tuple[str, int, int, str]]:
    """Markers no later ``log.erasure`` allows, as (segment, byte offset, seq, why); ``erasure_lines``
    are (segment, offset, seq, line) of every erasure line the verifying scan found, in log order."""
    allowed: dict[int, set[tuple[int, str]]] = defaultdict(set)  # marker seq -> {(erasure seq, marker checksum)}
    for _seg, _off, seq, line in erasure_lines:
        if not is_marker(line) and line.startswith(ERASURE_LINE_PREFIX):
            ev = _ERASURE.decode(line)
            for s, fp in zip(ev.seqs, ev.markers, strict=False):
                allowed[s].add((seq, fp))
    out = []
    for seg, off, seq, line in erasure_lines:
        if not is_marker(line):
            continue
        m = _MARKER.decode(line)
        by = {fp for e, fp in allowed.get(seq, ()) if e == m.erasure and e > seq}
        if not by:
            out.append((seg, off, seq, f"a log.erased line at seq {seq} that no later log.erasure authorises"))
        elif codec.fingerprint(line) not in by:
            out.append((seg, off, seq, f"the log.erased line at seq {seq} is not the one log.erasure {m.erasure} wrote"))
    return out
