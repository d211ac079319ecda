"""A compact map from 128-bit hashes to 64-bit values: the memory of what was seen.

Dedup keys (of log events and of diary entries) are 128-bit xxh3 hashes, each mapped to
where it was first seen (a seq). A Python ``dict`` of a million such ints costs well
over 100 MB; this index costs 24 bytes a key (about 25 MB at a million), loads from
disk in tens of milliseconds and inserts in about a microsecond.

Layout: the top 12 bits of a hash pick one of 4096 buckets; each bucket is three
parallel ``array('Q')``: high halves (sorted), low halves and values. Lookups bisect one
small bucket; inserts shift one small bucket (a C ``memmove``), so nothing is ever
re-sorted globally. The file form is a header (magic, count, xxh3-64 of the payload)
and then all high halves, all low halves and all values in bucket order.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right

import xxhash

_BUCKET_BITS = 12
_BUCKETS = 1 << _BUCKET_BITS
_SHIFT = 64 - _BUCKET_BITS
_MASK64 = (1 << 64) - 1
_MAGIC = b"EVHI1\n"
_HEADER = struct.Struct("<6sQQ")  # magic, count, xxh3_64 of the payload
_EMPTY = array("Q")  # shared by empty buckets; never modified


class HashIndex:
    """A map of 128-bit integer keys to unsigned 64-bit values, 24 bytes a key."""

    __slots__ = ("_hi", "_lo", "_val", "_len")

    def __init__(self) -> None:
        self._hi = [_EMPTY] * _BUCKETS  # buckets are created on first insert
        self._lo = [_EMPTY] * _BUCKETS
        self._val = [_EMPTY] * _BUCKETS
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: int) -> bool:
        return self.get(key) is not None

    def get(self, key: int) -> int | None:
        """The value stored for ``key``, or None."""
        hi = key >> 64
        b = hi >> _SHIFT
        his = self._hi[b]
        i = bisect_left(his, hi)
        n = len(his)
        if i == n or his[i] != hi:
            return None
        lo = key & _MASK64
        los = self._lo[b]
        while i < n and his[i] == hi:
            if los[i] == lo:
                return self._val[b][i]
            i += 1
        return None

    def add(self, key: int, value: int = 0) -> int | None:
        """Insert ``key -> value`` unless present; returns the existing value, or None if added."""
        hi = key >> 64
        lo = key & _MASK64
        b = hi >> _SHIFT
        his = self._hi[b]
        i = bisect_left(his, hi)
        n = len(his)
        if i < n and his[i] == hi:
            los = self._lo[b]
            while i < n and his[i] == hi:
                if los[i] == lo:
                    return self._val[b][i]
                i += 1
        if his is _EMPTY:
            his = self._hi[b] = array("Q")
            self._lo[b] = array("Q")
            self._val[b] = array("Q")
        his.insert(i, hi)
        self._lo[b].insert(i, lo)
        self._val[b].insert(i, value)
        self._len += 1
        return None

    def discard(self, key: int) -> bool:
        """Remove ``key``; True if it was present."""
        hi = key >> 64
        lo = key & _MASK64
        b = hi >> _SHIFT
        his, los, vals = self._hi[b], self._lo[b], self._val[b]
        i = bisect_left(his, hi)
        while i < len(his) and his[i] == hi:
            if los[i] == lo:
                del his[i], los[i], vals[i]
                self._len -= 1
                return True
            i += 1
        return False

    def memory_bytes(self) -> int:
        """Bytes allocated for keys and values (the fixed per-bucket overhead is ~0.6 MB)."""
        return sum(a.buffer_info()[1] * a.itemsize for arrays in (self._hi, self._lo, self._val) for a in arrays)

    def to_bytes(self) -> bytearray:
        """Serialise to the file form (little-endian hosts, as the arrays are native).

        The buckets are copied straight into one buffer of the file's size, which is returned: the only
        copy of the keys it makes (a writer saves its index at segment rolls, so at a million keys each
        extra copy was 24 MB more of peak memory).
        """
        n = self._len
        out = bytearray(_HEADER.size + 24 * n)
        words = memoryview(out)[_HEADER.size :].cast("Q")
        for column, arrays in enumerate((self._hi, self._lo, self._val)):
            at = column * n
            for a in arrays:
                if a:  # most buckets of a small index are empty
                    words[at : at + len(a)] = a
                    at += len(a)
        words.release()
        _HEADER.pack_into(out, 0, _MAGIC, n, xxhash.xxh3_64_intdigest(memoryview(out)[_HEADER.size :]))
        return out

    @classmethod
    def from_bytes(cls, data: bytes) -> HashIndex:
        """Load what ``to_bytes`` wrote; raises ValueError on a damaged or foreign file."""
        if len(data) < _HEADER.size:
            raise ValueError("hash index file is too short")
        magic, count, digest = _HEADER.unpack_from(data)
        if magic != _MAGIC or len(data) != _HEADER.size + 24 * count:
            raise ValueError("hash index file has a bad header or length")
        payload = memoryview(data)[_HEADER.size :]
        if xxhash.xxh3_64_intdigest(payload) != digest:
            raise ValueError("hash index file fails its checksum")
        hi, lo, val = array("Q"), array("Q"), array("Q")
        hi.frombytes(payload[: 8 * count])
        lo.frombytes(payload[8 * count : 16 * count])
        val.frombytes(payload[16 * count :])
        out = cls()
        start = 0
        for b in range(_BUCKETS):
            end = bisect_right(hi, ((b + 1) << _SHIFT) - 1, start)
            out._hi[b], out._lo[b], out._val[b] = hi[start:end], lo[start:end], val[start:end]
            start = end
        if start != count:
            raise ValueError("hash index file is not sorted")
        out._len = count
        return out
