"""A catch-up over HTTP fetches its next page while the device applies this one (issue 22).

``HttpEventStore.pull`` of a page that says ``more`` asks a second connection for the page
after it (``http_events._Ahead``); the next ``pull`` from that cursor takes it. A pull that
brings nothing starts nothing, so it stays one round trip; a prefetched page for another
cursor, or one whose request failed, is not used.
"""

from __future__ import annotations

import threading
from typing import Any

import msgspec
import pytest

from eventlog.app.gateway import http_events as HE
from eventlog.errors import BackendError
from eventlog.replication.envelope import Replicated
from eventlog.replication.store import PullPage


def envelope(seq: int) -> Replicated:
    return Replicated(origin="d", origin_seq=seq, hlc=seq, type="note.added", body=msgspec.Raw(b"{}"))


class FakeGateway:
    """Pages of ``page`` envelopes up to ``total``, counted per connection."""

    def __init__(self, total: int, page: int) -> None:
        self.total, self.page = total, page
        self.asked: list[tuple[str, int]] = []
        self.fail = False
        self.lock = threading.Lock()

    def client(self, name: str) -> Any:
        gateway = self

        class Conn:
            def request(self, method: str, path: str, body: bytes, type_: Any) -> Any:
                after = msgspec.json.decode(body, type=HE.PullEventsBody).after
                with gateway.lock:
                    gateway.asked.append((name, after))
                if gateway.fail and name == "ahead":
                    raise BackendError("the gateway went away")
                last = min(gateway.total, after + gateway.page)
                return PullPage([envelope(s) for s in range(after + 1, last + 1)], last, last < gateway.total)

            def close(self) -> None:
                pass

        return Conn()


def store_of(gateway: FakeGateway) -> HE.HttpEventStore:
    s = HE.HttpEventStore.__new__(HE.HttpEventStore)
    s.client, s.account, s.max_body_bytes = gateway.client("main"), "a@example.test", 1 << 20
    s._ahead = HE._Ahead(lambda: gateway.client("ahead"))
    return s


def test_each_next_page_of_a_catch_up_comes_from_the_second_connection():
    gw = FakeGateway(total=10, page=3)
    s = store_of(gw)
    got, after = [], 0
    while True:
        page = s.pull("a@example.test", after, 3)
        got += [e.origin_seq for e in page.events]
        after = page.cursor
        if not page.more:
            break
    s.close()
    assert got == list(range(1, 11))
    assert gw.asked == [("main", 0), ("ahead", 3), ("ahead", 6), ("ahead", 9)]  # without it: all on main


def test_a_pull_that_brings_nothing_is_one_request_and_starts_none():
    gw = FakeGateway(total=0, page=3)
    s = store_of(gw)
    page = s.pull("a@example.test", 0, 3)
    s.close()
    assert page.events == [] and not page.more and gw.asked == [("main", 0)]


def test_a_page_fetched_for_another_cursor_or_that_failed_is_not_used():
    gw = FakeGateway(total=10, page=3)
    s = store_of(gw)
    s.pull("a@example.test", 0, 3)  # asks ahead for 3
    gw.fail = True  # every request ahead fails from now on
    page = s.pull("a@example.test", 5, 3)  # the caller went elsewhere
    assert [e.origin_seq for e in page.events] == [6, 7, 8] and ("main", 5) in gw.asked
    page = s.pull("a@example.test", 8, 3)  # the one ahead for 8 failed
    s.close()
    assert [e.origin_seq for e in page.events] == [9, 10] and gw.asked[-1] == ("main", 8)


def test_a_closed_store_leaves_no_thread_behind():
    gw = FakeGateway(total=10, page=3)
    s = store_of(gw)
    s.pull("a@example.test", 0, 3)
    s.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("evlog-pull-ahead")]


@pytest.mark.parametrize("limit", [1, 4])
def test_pages_match_the_plain_requests(limit):
    gw = FakeGateway(total=9, page=limit)
    s = store_of(gw)
    pages = []
    after = 0
    while True:
        p = s.pull("a@example.test", after, limit)
        pages.append(([e.origin_seq for e in p.events], p.cursor, p.more))
        after = p.cursor
        if not p.more:
            break
    s.close()
    want, after = [], 0
    while True:
        last = min(9, after + limit)
        want.append((list(range(after + 1, last + 1)), last, last < 9))
        after = last
        if last == 9:
            break
    assert pages == want
