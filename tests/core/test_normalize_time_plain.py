"""``normalize_time``'s one-match path for plain times gives exactly what the general checks give."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import timeutil
from eventlog.timeutil import normalize_time, parse_time


def reference(value: str) -> str:
    """``normalize_time`` as it was before the one-match path (the general checks, then a parse)."""
    if not value or type(value) is not str or len(value) > 64:
        return ""
    if timeutil._NORMAL.fullmatch(value) and value[:4] >= "1970" \
            and "01" <= value[8:10] <= timeutil._LAST_DAY.get(value[5:7], "") \
            and value[11:13] <= "23" and value[14:16] <= "59" and value[17:19] <= "59":
        return value if len(value) == 24 else value[:19] + ".000Z"
    dt = parse_time(value)
    return "" if dt is None else timeutil.format_time(dt)


def test_every_field_at_and_past_its_edges() -> None:
    years = ["0001", "1969", "1970", "1999", "2000", "2026", "9999", "١٩٧٠", "2٠26"]
    months = ["00", "01", "02", "04", "06", "09", "11", "12", "13", "1٢"]
    days = ["00", "01", "28", "29", "30", "31", "32", "٠١"]
    times = ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "0٩:00:00"]
    tails = ["Z", ".000Z", ".123Z", ".12Z", ".1234Z", ".١٢٣Z", "", "+00:00", ".5+02:00", "z"]
    for y, m, d, t, tail in itertools.product(years, months, days, times, tails):
        value = f"{y}-{m}-{d}T{t}{tail}"
        assert normalize_time(value) == reference(value), value


_TIMEISH = st.text(alphabet=st.sampled_from("0123456789-T:.Z+ ٠١٢"), min_size=18, max_size=26)


@settings(max_examples=2000, deadline=None)
@given(_TIMEISH)
def test_time_shaped_text(value: str) -> None:
    assert normalize_time(value) == reference(value)


@given(st.one_of(st.text(max_size=70), st.integers(), st.none()))
def test_anything(value: object) -> None:
    assert normalize_time(value) == reference(value)  # type: ignore[arg-type]
