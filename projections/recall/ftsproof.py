"""Proving the recall index's full-text table without tokenising its rows again.

The full-text table is contentless: what it holds is only known by handing every row's
text to the tokenizer once more (what ``RecallIndex.verify(tokenise=True)`` does, about
35x a raw decode of the log). Instead the index's writer keeps, in ``meta`` under
``ftsdig``, the sum (mod 2**64) of ``row_hash(rowid, text, aux, tags)`` over every row it
inserted into the full-text table, minus the same hash of every row it deleted from it, in
the same transaction as the rows. The hash is of the row as stored, before the CJK rewrite
(``text.index_text``, a pure function of it), so a check computes it from the rows alone. The full-text table is a function of those operations
(FTS5 is SQLite's code), so when the net sum equals the sum over the stored rows of what
each hands the tokenizer, every insert was of a stored row's current input and every
delete removed exactly what had been inserted (a delete with another text than the
insert's, the way a contentless index goes wrong, leaves the sums apart).

What this does not see, and ``tokenise=True`` does: a write to the full-text table from
outside the writer that keeps its row count (the count of rows it holds is compared with
the stored rows through FTS5's own totals record, so a ghost row or a lost one is seen) and
every term's document count: each term's row list is read and counted, and compared with
the counts the writer keeps (``dfs``, schema 3: what ``RecallIndex.df`` answers from), so a
hand edit that moves a term from one row to another fails here, and so does a damaged page.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable

import xxhash

MASK = (1 << 64) - 1
META_KEY = "ftsdig"
INITIAL = "0"
#: ``meta``'s key while ``dfs`` is not kept: a build from empty is under way (``RecallIndex.catch_up``)
DFS_PENDING = "dfs_pending"


def row_hash(rowid: int, text: str, aux: str, tags: str) -> int:
    """The hash of one full-text row: its rowid and its three parts as stored (before ``index_text``)."""
    return xxhash.xxh3_64_intdigest(f"{text}\n{aux}\n{tags}".encode("utf-8", "surrogatepass"), rowid & MASK)


def add(digest: int, rows: Iterable[tuple[int, str, str, str]], sign: int = 1) -> int:
    """``digest`` with every row's hash added (``sign`` -1: taken away), mod 2**64."""
    for row in rows:
        digest += sign * row_hash(*row)
    return digest & MASK


def stored(db: sqlite3.Connection) -> int | None:
    """The digest the writer recorded (None: an index made before digests were kept)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return None if row is None else int(str(row[0]), 16)


def save(db: sqlite3.Connection, delta: int) -> None:
    """Add ``delta`` to the recorded digest (inside the writer's transaction; no-op without one)."""
    old = stored(db)
    if old is not None and delta & MASK:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (format((old + delta) & MASK, "x"), META_KEY))


def total_rows(db: sqlite3.Connection, table: str = "fts") -> int:
    """How many rows the full-text table holds, from FTS5's totals record (0 when empty)."""
    row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0
    value, block = 0, bytes(row[0])
    for i, byte in enumerate(block[:9]):  # SQLite varint: big-endian 7-bit groups, high bit continues
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


def problems(db: sqlite3.Connection, expected: Iterable[tuple[int, str, str, str]], rows: int) -> list[str]:
    """What is wrong with the full-text table given what the ``rows`` stored rows hand the tokenizer."""
    out: list[str] = []
    held = total_rows(db)
    if held != rows:
        out.append(f"the full-text index holds {held} rows, the index {rows} items")
    out += df_problems(db)  # reads every term's rows: damage raises
    want, have = add(0, expected), stored(db)
    if have != want:
        out.append(f"the full-text index was not written with the stored rows (digest {have:x} recorded, "
                   f"the rows give {want:x})" if have is not None else "the full-text index has no digest")
    return out


def df_problems(db: sqlite3.Connection, limit: int = 3) -> list[str]:
    """Where the document counts the writer keeps (``dfs``) differ from FTS5's own, which fts5vocab counts by
    reading every term's row list ([] when they are equal, term by term). While a build from empty is under
    way (``DFS_PENDING``) ``dfs`` is not read: the row lists are still read (damage raises), compared with nothing."""
    if db.execute("SELECT 1 FROM meta WHERE key = ?", (DFS_PENDING,)).fetchone() is not None:
        db.execute("SELECT count(*), sum(doc) FROM fts_row").fetchone()
        return []
    have = db.execute("SELECT term, n FROM dfs ORDER BY term")
    want = db.cursor().execute("SELECT term, doc FROM fts_row ORDER BY term")
    try:
        wrong = [(w, h) for w, h in itertools.zip_longest(want, have) if w != h]
    finally:
        have.close()
        want.close()
    if not wrong:
        return []
    return [f"the document counts (dfs) differ from the full-text index for {len(wrong)} terms "
            f"((term, rows) held vs kept: {wrong[:limit]})"]
