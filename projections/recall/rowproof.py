"""Proving the recall index's ``docs`` rows against the log by a digest, without a copy of them.

``replay --check`` used to fold the log into a rows-only scratch index (every row inserted
into SQLite) and compare it row by row with the live index. Instead a *digest fold*
(``RecallIndex.digest_fold``) hashes each message row as the fold makes it and keeps only the
sum (mod 2**64) of ``row_hash`` over them; the few other rows (history entries, facts, which
later events read and change) still go into its scratch file and are hashed at the end
(``RecallIndex.expected_docs_digest``). The live index's rows are hashed in the same pass that
proves its full-text table (``RecallIndex.verify``'s ``docs_digest``). Equal sums: the live
rows are the rows the log gives (a changed, missing or extra row moves the sum).

A message row is only ever final when it is made unless a later ``message.updated`` or
``session.deleted`` reads it back; a digest fold holds no message rows to read, so such an
event raises ``NeedsRows`` and the caller falls back to the rows-only fold (the older proof,
which also names the rows that differ).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import xxhash

from projections.recall.ftsproof import MASK

_encode = msgspec.msgpack.Encoder().encode


class NeedsRows(Exception):
    """A digest fold met an event that reads message rows back (it holds none): fold rows-only instead."""


def row_hash(row: tuple[Any, ...]) -> int:
    """The hash of one ``docs`` row: every column in ``_DOC_COLUMNS`` order, the text unpacked (a str)."""
    return xxhash.xxh3_64_intdigest(_encode(row))


def add(digest: int, rows: Iterable[tuple[Any, ...]]) -> int:
    """``digest`` with every row's hash added, mod 2**64."""
    for row in rows:
        digest += row_hash(row)
    return digest & MASK
