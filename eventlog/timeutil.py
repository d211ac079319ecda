"""Time as evlog writes and reads it: UTC, ISO 8601, ``YYYY-MM-DDTHH:MM:SS.fffZ``.

Every time evlog stores or compares (event ``ts``, ``updated_at``, diary dates) goes
through ``normalize_time`` so strings compare in time order; transcripts bring naive
times (taken as UTC), offsets, ``Z`` suffixes and epoch numbers.

These functions are total: any string goes in, nothing raises. A time that is not a real
instant (month 13, hour 99), cannot be represented in UTC (year 9999 with a negative
offset), or lies outside the sane window ``[1970-01-01, 9999-12-31]`` normalises to ""
(no time), and callers fall back to the event's own ``ts``. ``source_time`` adds the rule
projections use for times a source wrote: one more than a day after the event was
logged is not believed either (a message "dated 2999" must not stay the newest forever).
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import UTC, datetime, timedelta

_NORMAL = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{3})?Z")
FIRST_YEAR, LAST_YEAR = 1970, 9999
_LAST_DAY = {"01": "31", "02": "28", "03": "31", "04": "30", "05": "31", "06": "30", "07": "31", "08": "31", "09": "30",
             "10": "31", "11": "30", "12": "31"}
#: How far after its event's ``ts`` a source's own time may lie and still be believed.
FUTURE_SLACK = timedelta(days=1)


#: A time already normal and plainly real, in ASCII digits: every day of every month but 29 February
#: (which the checks below parse). One match instead of ``_NORMAL`` and six compares; what it
#: does not match goes on to them.
_PLAIN = re.compile(r"(?:19[7-9][0-9]|[2-9][0-9]{3})-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
                    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
                    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{3})?Z").fullmatch


def normalize_time(value: str) -> str:
    """A timestamp as UTC ``YYYY-MM-DDTHH:MM:SS.fffZ``, or "" if it is not a real time in the window."""
    if type(value) is str and _PLAIN(value):
        return value if len(value) == 24 else value[:19] + ".000Z"
    if not value or type(value) is not str or len(value) > 64:
        return ""
    if _NORMAL.fullmatch(value) and value[:4] >= "1970" and "01" <= value[8:10] <= _LAST_DAY.get(value[5:7], "") \
            and value[11:13] <= "23" and value[14:16] <= "59" and value[17:19] <= "59":
        # already UTC with 0 or 3 decimals and plainly a real time: the common case, no parse (29 February is parsed)
        return value if len(value) == 24 else value[:19] + ".000Z"
    dt = parse_time(value)
    return "" if dt is None else format_time(dt)


def parse_time(value: str) -> datetime | None:
    """An aware UTC datetime from ISO 8601 (naive = UTC) or epoch seconds/milliseconds; None if neither or out of the window."""
    if not value or type(value) is not str or len(value) > 64:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        try:
            number = float(value)
            dt = datetime.fromtimestamp(number / (1000 if number > 1e11 else 1), UTC)
        except (ValueError, OverflowError, OSError):
            return None
    try:
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        dt = dt.astimezone(UTC)
    except (OverflowError, ValueError):
        return None  # e.g. 9999-12-31T23:00-05:00 has no UTC representation
    if not FIRST_YEAR <= dt.year <= LAST_YEAR:
        return None
    return dt


def format_time(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.fffZ`` of an aware datetime."""
    dt = dt.astimezone(UTC)
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{dt.microsecond // 1000:03d}Z"


def source_time(value: str, ts: str) -> str:
    """The time a source wrote (normalised), or the event's ``ts`` when it is missing, invalid or implausibly late."""
    t = normalize_time(value)
    if not t:
        return ts
    if ts and t > ts:
        limit = parse_time(ts)
        if limit is not None and t > format_time(min(limit + FUTURE_SLACK, datetime(LAST_YEAR, 12, 31, tzinfo=UTC))):
            return ts
    return t


def epoch_of(value: str) -> float:
    """Seconds since the epoch of a timestamp; 0.0 if it cannot be parsed."""
    dt = parse_time(value) if value else None
    return dt.timestamp() if dt is not None else 0.0


def iso_of(epoch: float) -> str:
    """The normalised time of seconds since the epoch ("" if out of range)."""
    try:
        return format_time(datetime.fromtimestamp(epoch, UTC))
    except (OverflowError, ValueError, OSError):
        return ""


def now_iso() -> str:
    """The current time, normalised."""
    return format_time(datetime.now(UTC))


def ts_ms(ts: str) -> int:
    """Milliseconds since the epoch of a log ``ts`` (``YYYY-MM-DDTHH:MM:SS.fffZ``); -1 if unreadable."""
    try:
        return calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(ts[20:23])
    except (ValueError, OverflowError):
        return -1


class LogStamp:
    """The ``ts`` a writer gives its appends: UTC, millisecond precision, never going backwards.

    ``ms`` and ``text`` are the newest stamp given or seen (in another writer's records);
    an append made in the same millisecond, or while the clock is behind, reuses ``text``.
    """

    __slots__ = ("ms", "text")

    def __init__(self) -> None:
        self.ms = -1
        self.text = b""

    def at(self, ms: int) -> bytes:
        """The stamp for an append at ``ms`` (milliseconds since the epoch)."""
        if ms > self.ms:
            self.ms = ms
            self.text = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z").encode()
        return self.text

    def see(self, ts: str) -> None:
        """Another record's ``ts``: later appends are stamped no earlier."""
        ms = ts_ms(ts)
        if ms > self.ms:
            self.ms = ms
            self.text = ts.encode()
