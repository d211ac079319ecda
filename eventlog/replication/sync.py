"""Push and pull of the log through an event store (``EventStore``): the library behind ``evlog sync push/pull``.

* ``push(log, store, account, store_name=...)`` sends every local event that travels
  (``origin.REPLICATED_TYPES``) and the store lacks: per device id this log ever wrote as, what
  is above the store's ``high_water``. So a push killed at any point resumes where the store
  stands (the store keeps a call's envelopes all or none), and a re-sent envelope is a
  duplicate that changes nothing. A push that stored something records ``replication.pushed``.
* ``pull(log, store, account, store_name=...)`` fetches the envelopes above the position this
  log last pulled to (kept IN THE LOG: the newest ``replication.pulled`` of that store and
  account) and appends, in ONE atomic batch, the ``replication.pulled`` with the new position
  followed by the received events. A pull killed between the fetch and the append wrote
  nothing and fetches again; after the append, the position has moved with the events: never
  half applied, never applied twice. The append happens under the log's write turn after
  checking that no other pull moved the position meanwhile.
* A received event keeps its origin in ``Event.replica`` and its dedup key becomes
  ``rep:<device>:<seq>``: an envelope this log holds (or wrote itself) is skipped, and the
  log's dedup index refuses it anyway.

* Erasure travels as an event (``origin`` module docstring): a received ``log.erasure`` is
  appended as a pending record in the page's batch (so a pull killed after the append still
  applies it: the next pull does), then ``apply_erasures`` erases this log's copies by origin
  key (``erase``: the app's ``apply_received`` also erases what this device derived from them and
  rebuilds the projections; the default erases the lines only). An envelope of an erased event
  is skipped, in the same page or any later one.

``store_name`` names the store in the log's positions (e.g. the gateway's URL without
credentials); ``account`` is the gateway account (its email). ``share``/``unshare`` show one
project's events to another account (the store decides who sees what).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from eventlog import erasure
from eventlog.errors import ConfigError, EvlogError
from eventlog.events import AnyEvent, ErasureRecorded, Event, Replica, ReplicationPulled, ReplicationPushed
from eventlog.log import Log
from eventlog.replication.envelope import Replicated
from eventlog.replication.origin import (
    APPLIED_PREFIX,
    REPLICATED_TYPES,
    SEQ_FIELDS,
    OriginFold,
    claim_event,
    envelopes,
)
from eventlog.replication.store import EventStore, Share

PUSH_BATCH = 1000
PULL_LIMIT = 1000

_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(AnyEvent)


class _Refs(msgspec.Struct):
    refs: dict[str, list[tuple[str, int]]] = msgspec.field(default_factory=dict, name="_refs")


_refs_decoder = msgspec.json.Decoder(_Refs)
#: A body holding neither has no ``_refs`` member, so its second decode is skipped (inside a JSON string a quote
#: is escaped, and only a \\u escape could spell the key otherwise).
_REFS_HINTS = (b'"_refs"', b"\\u")


class _Origins(msgspec.Struct):
    origins: list[tuple[str, int]] = []


_origins_decoder = msgspec.json.Decoder(_Origins)


@dataclass(frozen=True)
class ReceivedErasure:
    """An erasure another device made, to apply here: ``seqs`` are this log's copies of what it erased."""

    replica: Replica
    kind: str
    seqs: list[int]
    refs: list[str]
    origins: list[tuple[str, int]]

    @property
    def applied_origin(self) -> str:
        """``ErasureRecorded.origin`` of the local erasure that applies it (how the fold knows it is done)."""
        return f"{APPLIED_PREFIX}{self.replica.device}:{self.replica.seq}"


Eraser = Callable[[ReceivedErasure], None]


class PushReport(msgspec.Struct, kw_only=True):
    """What a push did."""

    device: str
    sent: int = 0
    stored: int = 0
    duplicates: int = 0
    position: int = 0


class PullReport(msgspec.Struct, kw_only=True):
    """What a pull did: events appended, envelopes skipped (held already, ours, or refused), the new position."""

    received: int = 0
    skipped: int = 0
    refused: list[str] = []
    cursor: int = 0
    pages: int = 0
    erased: int = 0  # erasures received from other devices and applied here


def ensure_device(log: Log, fold: OriginFold | None = None) -> str:
    """This log's device id, claiming one first if it has none or was copied (``origin.claim_event``).

    ``fold``: a fold of this log to bring up to date (read outside the write turn; the turn only
    reads what was written since)."""
    fold = fold if fold is not None else OriginFold()
    fold.catch_up(log)
    if claim_event(log, fold) is None:
        return fold.device
    with log.turn():
        fold.catch_up(log)
        claim = claim_event(log, fold)
        if claim is not None:
            log.append(claim)
            fold.catch_up(log)
        return fold.device


def push(log: Log, store: EventStore, account: str, *, store_name: str, batch: int = PUSH_BATCH,
         checkpoint: str | None = None) -> PushReport:
    """Send what the store lacks (see the module docstring); ``checkpoint``: a file to keep the log's fold in."""
    fold = OriginFold.of(log, checkpoint)
    device = ensure_device(log, fold)
    report = PushReport(device=device)
    for dev in sorted(fold.devices):
        buf: list[Replicated] = []
        for env in envelopes(log, fold, dev, store.high_water(account, dev)):
            buf.append(env)
            if len(buf) >= batch:
                _send(store, account, buf, report)
        _send(store, account, buf, report)
    if report.stored:
        log.append(ReplicationPushed(store=store_name, account=account, device=device, upto_seq=fold.seq,
                                     stored=report.stored))
    if checkpoint:
        fold.catch_up(log)
        fold.save(checkpoint, log)
    return report


def _send(store: EventStore, account: str, buf: list[Replicated], report: PushReport) -> None:
    if not buf:
        return
    res = store.push(account, buf)
    report.sent += len(buf)
    report.stored += res.stored
    report.duplicates += res.duplicates
    report.position = res.position
    buf.clear()


def pull(log: Log, store: EventStore, account: str, *, store_name: str, limit: int = PULL_LIMIT,
         max_pages: int | None = None, checkpoint: str | None = None, erase: Eraser | None = None) -> PullReport:
    """Fetch and append what the store holds above this log's position (see the module docstring);
    ``checkpoint``: a file to keep the log's fold in; ``erase``: how a received erasure is applied
    (``apply_erasures``)."""
    fold = OriginFold.of(log, checkpoint)
    ensure_device(log, fold)
    report = PullReport()
    report.erased = apply_erasures(log, fold, erase)  # what a killed pull received but did not apply
    while max_pages is None or report.pages < max_pages:
        fold.catch_up(log)
        after = fold.cursors.get((store_name, account), 0)
        page = store.pull(account, after, limit)
        report.pages += 1
        with log.turn():
            fold.catch_up(log)
            if fold.cursors.get((store_name, account), 0) != after:
                continue  # another pull moved the position meanwhile: fetch again from there
            batch = _received(page.events, fold, log.last_seq + 2, report)
            if batch or page.cursor != after:
                marker = ReplicationPulled(store=store_name, account=account, cursor=page.cursor, count=len(batch),
                                           max_hlc=max((e.replica.hlc for e in batch if e.replica), default=0))
                written = [marker, *batch]
                seqs = log.append_batch(written)
                if seqs == list(range(fold.seq + 1, fold.seq + 1 + len(written))):  # ours, just after the fold
                    for ev, seq in zip(written, seqs, strict=True):
                        fold.apply(msgspec.structs.replace(ev, seq=seq))
            report.received += len(batch)
            report.cursor = page.cursor
        if not page.more:
            break
    report.erased += apply_erasures(log, fold, erase)
    if checkpoint:
        fold.save(checkpoint, log)
    return report


def apply_erasures(log: Log, fold: OriginFold, erase: Eraser | None = None) -> int:
    """Apply every received erasure this log has not applied yet (``fold.pending``); returns how many.

    ``erase`` does the work (default ``erase_lines``); it must record a local ``log.erasure`` with the
    erasure's ``replica`` and origin ``applied_origin``, even when nothing here held its events."""
    done = 0
    fold.catch_up(log)
    for key, seq in sorted(fold.pending.items(), key=lambda kv: kv[1]):
        rec = log.find(seq)
        ev = rec.event if rec is not None else None
        if not isinstance(ev, ErasureRecorded) or ev.replica is None:
            continue
        seqs = sorted({s for s in (fold.local_seq(k) for k in ev.origins) if s is not None})
        (erase or (lambda r: erase_lines(log, r)))(
            ReceivedErasure(replica=ev.replica, kind=ev.kind, seqs=seqs, refs=list(ev.refs),
                            origins=[(d, s) for d, s in ev.origins]))
        fold.catch_up(log)
        if key in fold.pending:
            raise EvlogError(f"the erasure {key[0]}#{key[1]} was not recorded as applied")
        done += 1
    return done


def erase_lines(log: Log, received: ReceivedErasure) -> None:
    """The default ``Eraser``: erase this log's copies (``eventlog.erasure.commit``) and record it as applied."""
    common: dict[str, Any] = {"erasure_id": uuid.uuid4().hex, "kind": "sync", "refs": received.refs,
                              "origin": received.applied_origin, "origins": received.origins,
                              "replica": received.replica}
    if not erasure.commit(log, received.seqs, **common):
        log.append(ErasureRecorded(seqs=[], markers=[], **common))
    erasure.finish(log)


def _received(envs: Sequence[Replicated], fold: OriginFold, first_seq: int, report: PullReport) -> list[Event]:
    """The events to append for a page: new, not ours, of a type that travels; their seq fields mapped here."""
    out: list[Event] = []
    batch_keys: dict[tuple[str, int], int] = {}
    erased, erased_before = _erased_in(envs), fold.erased
    held, devices = fold.held, fold.devices  # (``devices`` is computed: once per page, not per envelope)
    for env in envs:
        key = (env.origin, env.origin_seq)
        if key in held or key in batch_keys or env.origin in devices or key in erased or key in erased_before:
            report.skipped += 1
            continue
        try:
            ev = receive(env, fold, batch_keys)
        except EvlogError as e:
            report.skipped += 1
            report.refused.append(str(e))
            continue
        batch_keys[key] = first_seq + len(out)
        out.append(ev)
    return out


def _erased_in(envs: Sequence[Replicated]) -> set[tuple[str, int]]:
    """The origin keys the page's erasures erase (so an erased event in the same page is never appended)."""
    out: set[tuple[str, int]] = set()
    for env in envs:
        if env.type == "log.erasure":
            try:
                out.update((d, s) for d, s in _origins_decoder.decode(env.body).origins)
            except msgspec.MsgspecError:
                continue  # refused by ``receive``
    return out


def receive(env: Replicated, fold: OriginFold, batch_keys: dict[tuple[str, int], int] | None = None) -> Event:
    """The local event for an envelope: its body with its origin kept and its seq fields mapped to this log."""
    if env.type not in REPLICATED_TYPES:
        raise EvlogError(f"envelope {env.origin}#{env.origin_seq}: type {env.type!r} does not travel")
    body = bytes(env.body)
    try:
        ev: Event = _decoder.decode(body)
        refs = _refs_decoder.decode(body).refs if any(h in body for h in _REFS_HINTS) else {}
    except msgspec.MsgspecError as e:
        raise EvlogError(f"envelope {env.origin}#{env.origin_seq}: bad body: {e}") from e
    if ev.__struct_config__.tag != env.type:
        raise EvlogError(f"envelope {env.origin}#{env.origin_seq}: body is a {ev.type}, not a {env.type}")
    mapped: dict[str, list[int]] = {}
    for name in SEQ_FIELDS.get(env.type, ()):
        seqs = []
        for key in refs.get(name, []):
            local = fold.local_seq(key) if batch_keys is None or key not in batch_keys else batch_keys[key]
            if local is not None:
                seqs.append(local)
        mapped[name] = seqs
    replica = Replica(device=env.origin, seq=env.origin_seq, hlc=env.hlc, ts=ev.ts, author=env.author, refs=refs)
    if isinstance(ev, ErasureRecorded):  # its seqs are the origin's lines: here it is pending (``apply_erasures``)
        ev = msgspec.structs.replace(ev, seqs=[], markers=[])
    return msgspec.structs.replace(ev, seq=0, ts="", dedup=f"rep:{env.origin}:{env.origin_seq}", replica=replica,
                                   **mapped)


def project_name(directory: str) -> str:
    """How events name a project directory (``Workspace.register_project``'s form: the absolute path)."""
    return os.path.abspath(directory)


def share(store: EventStore, account: str, directory: str, member: str, *, read_only: bool = False) -> Share:
    """Show the project's envelopes to ``member`` (who may not write there if ``read_only``)."""
    project, member = project_name(directory), member.strip().lower()
    if not member or member == account:
        raise ConfigError(f"share {project} with another account, not {member or 'nobody'!r}")
    store.share(account, project, member, read_only=read_only)
    return Share(account, project, member, read_only)


def unshare(store: EventStore, account: str, directory: str, member: str) -> bool:
    """Stop showing the project's envelopes to ``member``; True if it was shared with them."""
    return store.unshare(account, project_name(directory), member.strip().lower())
