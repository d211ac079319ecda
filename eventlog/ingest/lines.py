"""Reading a transcript's lines with bounded memory, whatever the length of a line.

``iter_lines(fd, start, end)`` yields the file's lines (``Line``: where it starts, its bytes
without the newline, how many bytes it takes in the file, whether it ended in ``\\n``). It
reads ``READ_CHUNK`` bytes at a time with ``os.pread``, so a line is held only when it is at
most ``max_line`` bytes (``MAX_LINE_BYTES``, 8 MiB, by default).

**A longer line is never held whole.** Its end is found by scanning chunks for the newline,
then ``shorten`` reads it again, chunk by chunk, copying its JSON text with every string
longer than ``KEEP_STRING_BYTES`` (64 KiB; a 16th of a smaller limit) cut to that many bytes plus a notice
(``... [evlog: 471859200 bytes cut: the line was over the 8388608-byte line limit]``); an
escape sequence or a UTF-8 character split by the cut is dropped whole, so the result is
valid JSON when the line was. (Object keys are strings too: a key over 64 KiB would be cut.) The line then reads as the record it was, its long text cut
(``Line.cut`` says how many bytes went); the caller records a diagnostic naming the file and
line. A line that stays over the limit even so (a million small strings) is given back empty
with ``Line.skipped`` set, and the caller skips it with a diagnostic. Either way the line is
consumed: an incremental position moves past it, and the next call never reads it again.
Memory is bounded by ``max_line`` plus two chunks; time by one pass to find the line's end and
one to shorten it (a few seconds for 450 MB).
"""

from __future__ import annotations

import os
from collections.abc import Generator

import msgspec

MAX_LINE_BYTES = 8 * 1024 * 1024
KEEP_STRING_BYTES = 64 * 1024
SHORT_STRING_BYTES = 256  # the second try, when cutting to KEEP_STRING_BYTES is not enough
READ_CHUNK = 1024 * 1024
_MAX_FIX = 16  # bytes dropped at most to mend a cut escape sequence (a surrogate pair: 12) or UTF-8 character


class Line:
    """One line of a file (see the module docstring).

    ``raw``: its bytes without the newline (for a line over the limit: shortened, read only when
    first asked for, so a caller that stops before it pays nothing); ``size``: the bytes it takes
    in the file, newline included; ``cut``: bytes left out by shortening; ``skipped``: it could not
    be shortened enough and ``raw`` is empty.
    """

    __slots__ = ("_cut", "_long", "_raw", "_skipped", "offset", "oversized", "size", "terminated")

    def __init__(self, offset: int, raw: bytes, size: int, *, terminated: bool,
                 long: tuple[int, int, int] | None = None) -> None:
        self.offset, self._raw, self.size, self.terminated = offset, raw, size, terminated
        self._long = long  # (fd, limit, chunk) of a line over the limit, not shortened yet
        self.oversized = long is not None
        self._cut, self._skipped = 0, False

    @property
    def cut(self) -> int:
        self._shorten()
        return self._cut

    @property
    def skipped(self) -> bool:
        self._shorten()
        return self._skipped

    @property
    def raw(self) -> bytes:
        self._shorten()
        return self._raw

    def _shorten(self) -> None:
        if self._long is not None:
            fd, limit, chunk = self._long
            self._long = None
            stop = self.offset + self.size - (1 if self.terminated else 0)
            for keep in (min(KEEP_STRING_BYTES, max(SHORT_STRING_BYTES, limit // 16)), SHORT_STRING_BYTES):
                out = shorten(fd, self.offset, stop, keep=keep, limit=limit, chunk=chunk)
                if out is not None:
                    self._raw, self._cut = out, max(1, stop - self.offset - len(out))
                    break
            else:
                self._skipped = True


def long_line_warning(path: str, lineno: int, line: Line, limit: int | None = None) -> str:
    """The diagnostic for an oversized line: file, line, size, and what was done with it."""
    limit = MAX_LINE_BYTES if limit is None else limit
    head = f"{path}:{lineno}: a line of {line.size} bytes, over the {limit}-byte line limit"
    if line.skipped:
        return f"{head}, could not be shortened below it (too many values): skipped"
    return f"{head}: read with its long strings cut ({line.cut} bytes left out)"


def iter_lines(fd: int, start: int = 0, end: int | None = None, *, max_line: int | None = None,
               chunk: int = READ_CHUNK) -> Generator[Line, None, None]:
    """The lines of ``fd`` from byte ``start`` to ``end`` (None: to the end of the file); see the module docstring.

    The last line has ``terminated=False`` when the range ends before its newline.
    """
    limit = MAX_LINE_BYTES if max_line is None else max_line
    pos = start  # the next byte to read
    buf = bytearray()  # the line begun and not ended yet
    line_start = start
    while True:
        data = _read(fd, pos, end, chunk)
        if not data:
            break
        pos += len(data)
        pieces = data.split(b"\n")
        for piece in pieces[:-1]:
            if buf:
                buf += piece
                raw = bytes(buf)
                buf.clear()
            else:
                raw = piece
            size = len(raw) + 1
            long = (fd, limit, chunk) if size - 1 > limit else None
            yield Line(line_start, b"" if long else raw, size, terminated=True, long=long)
            line_start += size
        buf += pieces[-1]
        if len(buf) > limit:
            buf.clear()
            newline = _find_newline(fd, pos, end, chunk)
            line_end = newline if newline is not None else _end_of(fd, pos, end)
            terminated = newline is not None
            yield Line(line_start, b"", line_end - line_start + terminated, terminated=terminated,
                       long=(fd, limit, chunk))
            if newline is None:
                return
            pos = line_start = newline + 1
    if buf:
        yield Line(line_start, bytes(buf), len(buf), terminated=False)


def _read(fd: int, pos: int, end: int | None, chunk: int) -> bytes:
    want = chunk if end is None else min(chunk, end - pos)
    return os.pread(fd, want, pos) if want > 0 else b""


def _find_newline(fd: int, pos: int, end: int | None, chunk: int) -> int | None:
    """The offset of the first newline at or after ``pos`` (before ``end``), or None."""
    while True:
        data = _read(fd, pos, end, chunk)
        if not data:
            return None
        i = data.find(b"\n")
        if i >= 0:
            return pos + i
        pos += len(data)


def _end_of(fd: int, pos: int, end: int | None) -> int:
    return end if end is not None else max(pos, os.fstat(fd).st_size)


def shorten(fd: int, start: int, stop: int, *, keep: int = KEEP_STRING_BYTES, limit: int = MAX_LINE_BYTES,
            chunk: int = READ_CHUNK) -> bytes | None:
    """The JSON text in bytes ``[start, stop)`` of ``fd``, each string cut to ``keep`` bytes and a notice.

    None if the result would still be over ``limit`` bytes. Reads ``chunk`` bytes at a time.
    """
    cutter = _StringCutter(keep, limit)
    pos = start
    while pos < stop:
        data = os.pread(fd, min(chunk, stop - pos), pos)
        if not data:
            break
        pos += len(data)
        if not cutter.feed(data):
            return None
    return bytes(cutter.out)


def _mask_escapes(data: bytes) -> bytes:
    """``data`` with every escaped backslash and escaped quote turned into ``__`` (same length).

    Backslashes occur only inside JSON strings, in well-formed escapes, so pairing them from
    the start of a piece that does not begin inside an escape is exact: the quotes left are
    the strings' delimiters, and a backslash left at the end starts an escape the next piece
    finishes. Two C-speed passes instead of a look at every escape.
    """
    if b"\\" not in data:  # most of a base64 image or a plain text: nothing to mask
        return data
    return data.replace(b"\\\\", b"__").replace(b'\\"', b"__")


class _StringCutter:
    """Copies JSON text fed in pieces, cutting each string's body after ``keep`` bytes."""

    def __init__(self, keep: int, limit: int) -> None:
        self.keep, self.limit = keep, limit
        self.out = bytearray()
        self.in_string = False
        self.escape_pending = False  # the last piece ended with the backslash of an escape
        self.kept = 0  # bytes of the current string's body copied
        self.dropped = 0  # ... and left out

    def feed(self, data: bytes) -> bool:
        """Take the next piece; False once the output is over the limit."""
        pos, n = 0, len(data)
        if self.escape_pending and n:  # the character the last piece's backslash escapes
            self._body(data[:1])
            self.escape_pending = False
            pos = 1
        masked = data[:pos] + _mask_escapes(data[pos:])  # same length; a '"' in it is a real quote
        while pos < n:
            q = masked.find(b'"', pos)
            stop = q if q >= 0 else n
            if not self.in_string:
                self.out += data[pos : stop + 1]
                if q >= 0:
                    self.in_string, self.kept, self.dropped = True, 0, 0
                pos = stop + 1
                continue
            self._body(data[pos:stop])
            if q >= 0:
                self._close()
                pos = q + 1
            else:
                self.escape_pending = masked.endswith(b"\\")  # the piece ends inside an escape
                pos = n
        return len(self.out) <= self.limit

    def _body(self, part: bytes) -> None:
        room = self.keep - self.kept
        if room > 0:
            self.out += part[:room]
            self.kept += min(room, len(part))
        self.dropped += max(0, len(part) - max(room, 0))

    def _close(self) -> None:
        if self.dropped:
            body_start = len(self.out) - self.kept
            for _ in range(_MAX_FIX):  # drop a cut escape or UTF-8 character at the end of what was kept
                try:
                    msgspec.json.decode(b'"' + self.out[body_start:] + b'"')
                    break
                except msgspec.MsgspecError:
                    del self.out[-1]
                    self.dropped += 1
                    if len(self.out) == body_start:
                        break
            else:  # damaged further back (the line is not valid JSON): keep none of it
                self.dropped += len(self.out) - body_start
                del self.out[body_start:]
            self.out += (f" ... [evlog: {self.dropped} bytes cut: the line was over the {self.limit}-byte "
                         "line limit]").encode()
        self.out += b'"'
        self.in_string = False
