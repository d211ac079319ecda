"""Time as evlog writes and reads it: UTC, ISO 8601, ``YYYY-MM-DDTHH:MM:SS.fffZ``.

Every time evlog stores or compares (event ``ts``, ``updated_at``, diary dates) goes
through ``normalize_time`` so strings compare in time order; transcripts bring naive
times (taken as UTC), offsets, ``Z`` suffixes and epoch numbers.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_NORMAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z")


def normalize_time(value: str) -> str:
    """A timestamp as UTC ``YYYY-MM-DDTHH:MM:SS.fffZ``, or "" if it cannot be parsed."""
    if not value:
        return ""
    if _NORMAL.fullmatch(value):  # already UTC with 0 or 3 decimals: the common case, no parsing
        return value if len(value) == 24 else value[:19] + ".000Z"
    dt = parse_time(value)
    return "" if dt is None else format_time(dt)


def parse_time(value: str) -> datetime | None:
    """An aware UTC datetime from ISO 8601 (naive = UTC) or epoch seconds/milliseconds; None if neither."""
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        try:
            number = float(value)
            dt = datetime.fromtimestamp(number / (1000 if number > 1e11 else 1), UTC)
        except (ValueError, OverflowError, OSError):
            return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.fffZ`` of an aware datetime."""
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def epoch_of(value: str) -> float:
    """Seconds since the epoch of a timestamp; 0.0 if it cannot be parsed."""
    dt = parse_time(value) if value else None
    return dt.timestamp() if dt is not None else 0.0


def iso_of(epoch: float) -> str:
    """The normalised time of seconds since the epoch."""
    return format_time(datetime.fromtimestamp(epoch, UTC))


def now_iso() -> str:
    """The current time, normalised."""
    return format_time(datetime.now(UTC))
