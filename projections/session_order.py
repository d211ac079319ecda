"""The order of a session's events across devices (issue 22): where a message goes, which change wins.

Every event has one place in the order ``(hlc, origin device, origin seq)``
(``eventlog.replication.clock``), the same on every device whatever order the events arrived in.
The sessions projection is a function of the *set* of a session's events through these rules:

* **messages** are in that order (a message another device wrote before ours lands before it);
  a session file keeps the last ``MAX_FILE_MESSAGES`` of them;
* **a value several events set** takes the newest setter's value: the title and the explicit
  title (``session.updated``; else the session's ``session.created``), each metadata key, an
  explicit preview, and per message its content, tool calls and each extra field
  (``message.updated``);
* **first of**: the session's ``session.created`` is its oldest one (else its oldest message:
  ``created_at``, project, created title and metadata), the request title and the command title
  come from the oldest message that gives one; the preview from the newest user or assistant
  message; ``updated_at`` and ``last_consolidated`` are maxima, the count is the number of messages;
* **a delete** removes the session with everything of it before the delete in the order; an event
  of it older than the delete that arrives later is dropped; what is newer than the delete starts
  the session again (when it arrived before the delete, the session is started again from the
  messages newer than it and the changes newer than it).

Not covered: a session deleted on one device and re-created under the same key by a
``session.created`` on another before the delete reached it keeps the oldest creation's title and
metadata where the delete arrived last; ``last_consolidated`` (a count of this device's messages) and
``created_seq`` stay local positions.

A local event's device is resolved when compared (``OrderState.resolve``), so the keys are kept
as folded (``""`` for a local event). The keys of a file's lines are kept packed in the index
(``pack_keys``: 16 bytes a line, zlib-compressed, a device as an index into the session's list of
devices), so a message that arrives late is put in its place without reading the log.
"""

from __future__ import annotations

import zlib
from array import array

from eventlog.replication.clock import OrderState

Key = tuple[int, str, int]
NO_KEY: Key = (0, "", 0)
_SEQ_BITS = 40
_SEQ_MASK = (1 << _SEQ_BITS) - 1


def pack_keys(keys: list[Key], devices: list[str]) -> bytes:
    """The keys of a file's lines as bytes; ``devices`` (the session's, ``""`` not in it) grows as needed."""
    out = array("Q")
    index = {d: i + 1 for i, d in enumerate(devices)}
    for hlc, device, seq in keys:
        i = 0
        if device:
            i = index.get(device, 0)
            if not i:
                devices.append(device)
                i = index[device] = len(devices)
        out.append(hlc)
        out.append((i << _SEQ_BITS) | (seq & _SEQ_MASK))
    return zlib.compress(out.tobytes(), 1)  # a batch's keys share a clock and count up: they compress well


def unpack_keys(data: bytes, devices: list[str]) -> list[Key]:
    """``pack_keys`` undone."""
    a = array("Q")
    a.frombytes(zlib.decompress(data) if data else b"")
    names = ["", *devices]
    return [(a[i], names[a[i + 1] >> _SEQ_BITS], a[i + 1] & _SEQ_MASK) for i in range(0, len(a), 2)]


def in_order(lines: list[bytes], keys: list[Key], order: OrderState) -> tuple[list[bytes], list[Key]]:
    """``lines`` and their ``keys`` sorted in the ``order`` (unchanged when they are in it already)."""
    later = order.later
    if not any(later(keys[i], keys[i + 1]) for i in range(len(keys) - 1)):
        return lines, keys
    resolve = order.resolve
    order_ = sorted(range(len(lines)), key=lambda i: resolve(keys[i]))
    return [lines[i] for i in order_], [keys[i] for i in order_]
