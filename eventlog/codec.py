"""Bytes on disk: how an event becomes one checksummed JSON line, and back.

A log line is the event's canonical JSON with up to two framing members appended
before the closing brace, and ends in ``\\n``::

    {"type":"message.appended","seq":7,"ts":"...",...,"more":2,"h":"xxh3-64:<16 hex>"}

* ``h`` is always last. It is ``xxh3_64`` of every byte of the line *before* the
  ``,"h":"`` member, as 16 lowercase hex digits. So a line can be checked from its raw
  bytes without decoding it: ``xxh3_64(line[:-33]).hexdigest() == line[-19:-3]``.
* ``more`` appears only inside an atomic batch of several events: it says how many
  lines of the same batch follow this one. Recovery cuts an incomplete batch whole.

The event JSON is produced by one msgspec encoder with ``order="deterministic"``, so
``frame(decode(line))`` gives back the same bytes. ``canonical_json`` and
``content_hash`` are the project's dedup-hash contract: changing the canonical form
changes every stored hash, which is why hashes carry an algorithm prefix.
"""

from __future__ import annotations

from typing import Any

import msgspec
import xxhash

from eventlog.events import AnyEvent, Event

ENCODER = msgspec.json.Encoder(order="deterministic")
DECODER: msgspec.json.Decoder[Event] = msgspec.json.Decoder(AnyEvent)  # every tagged event type, decoded as Event

CHECKSUM_PREFIX = b',"h":"xxh3-64:'
SUFFIX_LEN = len(CHECKSUM_PREFIX) + 16 + 3  # prefix, 16 hex digits, '"}' and '\n'
HASH128_PREFIX = "xxh3_128:"

_xxh64_hex = xxhash.xxh3_64_hexdigest
_xxh128_hex = xxhash.xxh3_128_hexdigest
_replace = msgspec.structs.replace


class Frame(msgspec.Struct):
    """The few members recovery and writers need from a line, decoded without the whole event."""

    seq: int = 0
    ts: str = ""
    more: int = 0
    dedup: str = ""
    dedup_keys: list[str] = []  # further keys the event claims (``events`` module docstring)

    def all_keys(self) -> list[str]:
        """Every dedup key the line carries: ``dedup`` (if any), then ``dedup_keys``."""
        return [self.dedup, *self.dedup_keys] if self.dedup else self.dedup_keys


FRAME_DECODER = msgspec.json.Decoder(Frame)


def frame(event: Event, more: int = 0) -> bytes:
    """Encode ``event`` as one checksummed log line (``more`` = batch lines still to come)."""
    body = ENCODER.encode(event)
    if more:
        head = body[:-1] + b',"more":%d' % more
    else:
        head = body[:-1]
    return head + CHECKSUM_PREFIX + _xxh64_hex(head).encode() + b'"}\n'


def stamp_and_frame(event: Event, seq: int, ts: bytes, more: int = 0) -> bytes:
    """``frame(replace(event, seq=seq, ts=ts))``: the event stamped with ``seq`` and ``ts``, as one line.

    One ``structs.replace`` (C) and one encode: the encoder writes ``type`` first and then
    ``seq`` and ``ts`` (the base fields). It takes about 0.8x the CPU time of splicing the
    stamp into the unstamped encoding, which copied the body three times (notes/append.md).
    A test checks that it gives the bytes of ``frame`` on the stamped event.
    """
    head = ENCODER.encode(_replace(event, seq=seq, ts=ts.decode()))[:-1]
    if more:
        head += b',"more":%d' % more
    return b"".join((head, CHECKSUM_PREFIX, _xxh64_hex(head).encode(), b'"}\n'))


def line_ok(line: bytes) -> bool:
    """True when ``line`` (without its ``\\n``) carries a correct ``h`` member: THE checksum check."""
    return line[-32:-18] == CHECKSUM_PREFIX and line[-2:] == b'"}' and _xxh64_hex(line[:-32]).encode() == line[-18:-2]


def lines_ok(lines: list[bytes]) -> bool:
    """``all(line_ok(ln) for ln in lines)`` without a call per line: the loop of every verified read."""
    hexdigest, prefix = _xxh64_hex, CHECKSUM_PREFIX
    for line in lines:
        if line[-32:-18] != prefix or line[-2:] != b'"}' or hexdigest(line[:-32]).encode() != line[-18:-2]:
            return False
    return True


def checksum_ok(line: bytes | memoryview) -> bool:
    """``line_ok`` for a line that ends in ``\\n`` (as read from a segment)."""
    line = bytes(line)
    return len(line) > SUFFIX_LEN and line[-1:] == b"\n" and line_ok(line[:-1])


def fingerprint(line: bytes | memoryview) -> str:
    """The checksum a line carries (``xxh3-64:<hex>``): a cheap identity for offsets."""
    n = len(line)
    return "xxh3-64:" + bytes(line[n - 19 : n - 3]).decode()


def decode(line: bytes | memoryview) -> Event:
    """Decode one line (framing members are ignored) into its event Struct, upcasting old shapes.

    Writers refuse a wrong shape at the door (``writer._check_types`` decodes strictly); a
    line an older evlog wrote before that door existed is read through ``UPCASTS``.
    """
    try:
        return DECODER.decode(line)
    except msgspec.ValidationError:
        fixed = upcast(line)
        if fixed is None:
            raise
        return fixed


def upcast_numeric_message_ids(d: dict[str, Any]) -> bool:
    """``history.appended`` whose ``message_ids`` hold numbers (a seed-format session's own
    ids, written by the consolidator before validation at the door) -> their decimal text."""
    ids = d.get("message_ids")
    if d.get("type") != "history.appended" or not isinstance(ids, list):
        return False
    if not any(isinstance(x, int) and not isinstance(x, bool) for x in ids):
        return False
    d["message_ids"] = [str(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in ids]
    return True


#: Fixes for shapes an older evlog wrote; each changes a raw event dict in place and says if it did.
UPCASTS = [upcast_numeric_message_ids]


def upcast(line: bytes | memoryview) -> Event | None:
    """The event of a line that only decodes after an upcast, or None (no upcast applies)."""
    try:
        d = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    if not isinstance(d, dict) or not any([fn(d) for fn in UPCASTS]):
        return None
    try:
        ev: Event = msgspec.convert(d, AnyEvent)
    except msgspec.ValidationError:
        return None
    return ev


def canonical_json(value: Any) -> bytes:
    """The canonical form hashes are taken over: sorted keys, compact, UTF-8, no escaping.

    Changing this form changes every stored hash; bump ``HASH128_PREFIX`` if you must.
    """
    return ENCODER.encode(value)


def content_hash(value: Any) -> str:
    """``xxh3_128:<32 hex>`` of ``canonical_json(value)``."""
    return HASH128_PREFIX + _xxh128_hex(canonical_json(value))


def hash_key(key: str) -> int:
    """The 128-bit integer a dedup key is stored as in a HashSet."""
    if key.startswith(HASH128_PREFIX) and len(key) == len(HASH128_PREFIX) + 32:
        return int(key[len(HASH128_PREFIX) :], 16)
    return xxhash.xxh3_128_intdigest(key.encode("utf-8", "surrogatepass"))
