"""The order key of an event: ``OrderState.key`` inlines ``local_hlc`` and must agree with its definition."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eventlog.events import MessageAppended, Replica
from eventlog.replication.clock import OrderState, local_hlc, ts_ms
from eventlog.replication.envelope import HLC_COUNTER_BITS

_TS = st.one_of(
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"),
    st.text(max_size=30),  # unreadable: ts_ms gives 0
)


@given(_TS, st.integers(min_value=0, max_value=1 << 62), st.integers(min_value=1, max_value=10**9))
def test_local_key_is_the_defined_clock(ts: str, floor: int, seq: int) -> None:
    ev = MessageAppended(session_key="k", message_id="m", role="user", content="c", seq=seq, ts=ts)
    clock = OrderState(floor=floor)
    expected = max(ts_ms(ts) << HLC_COUNTER_BITS, floor + 1)
    assert local_hlc(ts, floor) == expected
    assert clock.key(ev) == (expected, "", seq)


def test_floor_around_the_clock_and_a_received_event() -> None:
    ts = "2026-11-30T10:00:00.250Z"
    hlc = ts_ms(ts) << HLC_COUNTER_BITS
    ev = MessageAppended(session_key="k", message_id="m", role="user", content="c", seq=7, ts=ts)
    assert OrderState(floor=hlc - 2).key(ev) == (hlc, "", 7)
    assert OrderState(floor=hlc - 1).key(ev) == (hlc, "", 7)
    assert OrderState(floor=hlc).key(ev) == (hlc + 1, "", 7)
    got = MessageAppended(session_key="k", message_id="m", role="user", content="c", seq=8, ts=ts,
                          replica=Replica(device="d2", seq=3, hlc=5))
    assert OrderState(floor=hlc + 10).key(got) == (5, "d2", 3)
