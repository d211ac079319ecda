"""The recall index of a workspace: where it lives, catching it up, rebuilding and checking it.

The CLI (``evlog recall``), ``evlog replay`` / ``replay --check`` and the daemon call these;
they only use the stable facade (``eventlog.open_workspace`` and ``ws.log.read``).

* ``state/recall.sqlite``: the index (disposable, like every file outside ``log/``);
* ``state/recall-embeddings.sqlite``: the embedding cache (kept across rebuilds: a replay
  that rebuilds the index recomputes no embedding).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import tempfile
from typing import Any

import eventlog
from eventlog.errors import EvlogError
from projections.recall import ftsproof, rowproof
from projections.recall.files import EMBEDDINGS_FILE as EMBEDDINGS_FILE  # re-exported: where the files live
from projections.recall.files import INDEX_FILE as INDEX_FILE
from projections.recall.files import embeddings_path as embeddings_path
from projections.recall.files import index_path as index_path
from projections.recall.index import RecallIndex


def _read_log(home: str, from_seq: int, ws: Any = None) -> Any:
    if ws is not None:
        return contextlib.nullcontext(ws.log.read(from_seq))
    return _Reading(home, from_seq)


class _Reading:
    def __init__(self, home: str, from_seq: int) -> None:
        self.ws = eventlog.open_workspace(home)
        self.from_seq = from_seq

    def __enter__(self) -> Any:
        return self.ws.log.read(self.from_seq)

    def __exit__(self, *exc: object) -> None:
        close = getattr(self.ws, "close", None)
        if close is not None:
            close()


def update(home: str, *, ws: Any = None, path: str | None = None) -> RecallIndex:
    """Open the workspace's index for writing and catch it up with the log; the caller closes it."""
    ix = RecallIndex(path or index_path(home))
    try:
        with _read_log(home, ix.seq + 1, ws) as events:
            ix.catch_up(events)
    except BaseException:
        ix.close()
        raise
    return ix


def unwritable_index(home: str, *, ws: Any = None, notes: list[str] | None = None) -> RecallIndex:
    """The index of a workspace whose ``state/`` cannot be written (a read-only disk, no permission).

    Nothing is written: the file is read as it is when it is caught up with the log; otherwise
    (behind, missing, unreadable) a copy in memory is caught up for this search only, and a line
    in ``notes`` says so. The caller closes it.
    """
    path = index_path(home)
    last = ws.log.last_seq if ws is not None else None
    ix: RecallIndex | None = None
    why = "missing"
    if os.path.exists(path):
        try:
            ix = RecallIndex(path, readonly=True)
            if last is not None and ix.seq >= last:
                return ix
            ix.close()
            ix = RecallIndex.copy_in_memory(path)
            why = f"{(last or 0) - ix.seq} event(s) behind the log"
        except EvlogError as e:
            why = str(e)
            ix = None
    if ix is None:
        ix = RecallIndex(":memory:")
    try:
        with _read_log(home, ix.seq + 1, ws) as events:
            ix.catch_up(events)
    except BaseException:
        ix.close()
        raise
    if notes is not None:
        notes.append(f"the recall index cannot be updated (the workspace is read-only) and is {why}: "
                     "searched a copy caught up in memory, which is not kept")
    return ix


def rebuild(home: str, *, ws: Any = None) -> RecallIndex:
    """Delete the index and build it again from seq 1 (the embedding cache stays)."""
    path = index_path(home)
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)
    return update(home, ws=ws)


def glance(home: str, ws: Any) -> str:
    """Why the workspace's index must be rebuilt, judged without reading its texts ("" if it need not):
    missing, unreadable, of another schema, ahead of the log, its item counter not its row count, or
    without the full-text digest that lets ``check`` prove it without tokenising (``ftsproof``).
    (``check`` is the proof; this is what ``evlog replay`` looks at before it keeps an index.)"""
    path = index_path(home)
    if not os.path.exists(path):
        return "missing"
    try:
        ix = RecallIndex(path, readonly=True)
    except EvlogError as e:
        return str(e)
    try:
        if ix.seq > ws.log.last_seq:
            return f"at seq {ix.seq}, past the log's end {ws.log.last_seq}"
        (rows,) = ix.db.execute("SELECT count(*) FROM docs").fetchone()
        if rows != int(ix._meta("ndocs", 0)):
            return f"{rows} items but its counter says {ix._meta('ndocs')}"
        if ftsproof.stored(ix.db) is None:
            return "made before the full-text digest (replay --check would tokenise every row to prove it)"
        return ""
    except sqlite3.DatabaseError as e:
        return f"unreadable ({e})"
    finally:
        ix.close()


def refresh(home: str, ws: Any) -> str:
    """Keep the index when ``glance`` finds nothing wrong (caught up with the log), else rebuild it.

    Returns what was done: "kept", or "rebuilt (<why>)". ``replay --check`` proves a kept index;
    ``rebuild`` is the unconditional way (what an erase needs).
    """
    why = glance(home, ws)
    if why:
        rebuild(home, ws=ws).close()
        return f"rebuilt ({why})"
    update(home, ws=ws).close()
    return "kept"


def check(home: str, *, ws: Any = None, full: bool = False) -> list[str]:
    """Problems of the live index ([] when none), up to the live index's seq.

    ``verify`` proves the full-text index against the index's own rows with the digest its
    writer kept (``ftsproof``; an index without one, or ``full``, tokenises every row again)
    and the counters with the rows, and hashes every row in the same pass; then the log is
    folded into a digest fold (``RecallIndex.digest_fold``: message rows hashed, not stored, no
    tokenising) and the two digests are compared (``rowproof``), with the sessions, speakers
    and counters row by row. Together: the index is what the log gives. A log whose messages
    are updated or whose sessions are deleted (the fold reads rows back), or any difference,
    takes the rows-only fold and its row-by-row comparison instead (``row_differences``: it
    names the rows that differ). ``full`` builds a whole second index from the log and compares
    ``content_digest`` (the older, slower proof: about twice the tokenising). The live index
    is read in one transaction, so a writer that commits meanwhile is not seen half-way. A
    file that cannot be opened or read (torn, not an index) is a problem, not an error.
    (``IndexProof`` is the same proof for a caller that reads the log anyway.)
    """
    with IndexProof(home, ws=ws, full=full) as proof:
        return proof.finish()


class IndexProof:
    """``check`` in steps, for a caller that reads the log anyway (``replay --check`` replays the
    projections from it, so the log is read once): ``feed`` it the log's events from seq 1 in order
    (any prefix of them, or none), then ``finish`` reads the rest itself and says what is wrong.
    The live index is opened and its rows hashed when it is made; use it as a context manager."""

    def __init__(self, home: str, *, ws: Any = None, full: bool = False) -> None:
        self.home, self.ws, self.full = home, ws, full
        self.path = index_path(home)
        self.problems: list[str] = []
        self.live: RecallIndex | None = None
        self.fold: RecallIndex | None = None  # the digest fold being fed (None: none, or it met NeedsRows)
        self.seq = 0  # the live index's seq: the fold stops there
        self.fed = 0  # the last seq the fold was given
        self.digest = 0  # the live rows' rowproof digest
        self._tmp = tempfile.TemporaryDirectory(prefix="evlog-recall-check-")
        if os.path.exists(self.path):
            self._open()

    def _open(self) -> None:
        try:
            self.live = RecallIndex(self.path, readonly=True)
        except (EvlogError, sqlite3.DatabaseError) as e:  # not an index of this schema, or a torn file
            self.problems.append(f"recall index {self.path} cannot be opened ({e})")
            return
        try:
            self.live.db.execute(f"PRAGMA cache_size = -{_PROOF_CACHE_KIB}")  # one pass: a big cache only costs memory
            if not self.full:
                self.live.db.execute("BEGIN")  # one snapshot of the live index for the whole proof
            digest = [0]
            found = self.live.verify(tokenise=self.full, docs_digest=None if self.full else digest)
            self.problems.extend(f"recall index: {p}" for p in found)
            self.digest, self.seq = digest[0], self.live.seq
        except sqlite3.DatabaseError as e:  # a torn or damaged file: what check reports, not a crash
            self.problems.append(f"recall index {self.path} is unreadable ({e})")
            self.live.close()
            self.live = None
            return
        if not self.full:
            self.fold = RecallIndex.digest_fold(os.path.join(self._tmp.name, "digest.sqlite"))

    def feed(self, ev: Any) -> None:
        """The next event of the log (seq 1, 2, ...): folded when the live index holds it."""
        if self.fold is None or ev.seq > self.seq:
            return
        self.fed = ev.seq
        try:
            self.fold.apply(ev)
            if self.fold.pending >= _PROOF_BATCH:
                self.fold.commit()
        except rowproof.NeedsRows:
            self._drop_fold()

    def _drop_fold(self) -> None:
        if self.fold is not None:
            self.fold.close()
            self.fold = None

    def finish(self) -> list[str]:
        """Every problem found ([] when the index is what the log gives): folds the events not fed yet."""
        if self.live is None:
            return self.problems
        try:
            return self.problems + self._differences()
        except sqlite3.DatabaseError as e:
            return self.problems + [f"recall index {self.path} is unreadable ({e})"]

    def _differences(self) -> list[str]:
        if self.full:
            return self._fold_and_compare("full")
        found: list[str] | None = None
        if self.fold is not None:
            try:
                self._fold_rest(self.fold, self.fed + 1)
                found = self._compare(self.fold, "digest")
            except rowproof.NeedsRows:
                found = None
        if found is None or found:  # the rows-only fold proves what a digest fold cannot, and names the rows
            found = self._fold_and_compare("rows") or found or []
        return found

    def _fold_rest(self, fresh: RecallIndex, from_seq: int) -> None:
        with _read_log(self.home, from_seq, self.ws) as events:
            fresh.catch_up(itertools.takewhile(lambda ev: ev.seq <= self.seq, events))

    def _fold_and_compare(self, fold: str) -> list[str]:
        """The log up to ``seq`` folded into a new scratch index (``fold``: "full" or "rows"), compared."""
        fresh = _FOLDS[fold](os.path.join(self._tmp.name, f"{fold}.sqlite"))
        try:
            self._fold_rest(fresh, 1)
            return self._compare(fresh, fold)
        finally:
            fresh.close()

    def _compare(self, fresh: RecallIndex, fold: str) -> list[str]:
        live = self.live
        assert live is not None
        if fresh.seq != self.seq:
            return [f"recall index is at seq {self.seq} but the log ends at {fresh.seq}"]
        if fold == "full":
            same = fresh.content_digest() == live.content_digest()
            return [] if same else ["recall index content differs from a rebuild from the log"]
        found = live.row_differences(fresh) if fold == "rows" else live.digest_differences(fresh, self.digest)
        return [f"recall index: {p}" for p in found]

    def close(self) -> None:
        self._drop_fold()
        if self.live is not None:
            self.live.close()
            self.live = None
        self._tmp.cleanup()

    def __enter__(self) -> IndexProof:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_PROOF_CACHE_KIB = 8192  # the page cache of the live index while it is proved (its default is 64 MiB)
_PROOF_BATCH = 2_000  # events a fed digest fold holds before it commits (each holds its event: 20k held ~50 MiB)
_FOLDS = {"full": RecallIndex, "rows": RecallIndex.rows_only}
