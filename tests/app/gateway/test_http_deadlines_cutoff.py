"""What a connection past its deadline gets (``http_deadlines._cut_off``, split out of the protocol, issue 20)."""

from __future__ import annotations

from types import SimpleNamespace

from eventlog.app.gateway.http_deadlines import _TIMEOUT_RESPONSE, _answers_timeout, _cut_off


class _Transport:
    def __init__(self, closing: bool = False) -> None:
        self.closing, self.written, self.closed = closing, b"", False

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True


def _cycle(started: bool = False, complete: bool = False) -> SimpleNamespace:
    return SimpleNamespace(response_started=started, response_complete=complete, keep_alive=True)


def test_a_slow_body_is_answered_unless_its_answer_has_begun():
    assert _answers_timeout(None, in_body=True, started=True)
    assert _answers_timeout(_cycle(), in_body=True, started=True)
    assert not _answers_timeout(_cycle(started=True), in_body=True, started=True)


def test_slow_headers_are_answered_only_when_a_byte_came_and_no_answer_is_being_written():
    assert not _answers_timeout(None, in_body=False, started=False)  # an idle pre-opened connection
    assert _answers_timeout(None, in_body=False, started=True)
    assert _answers_timeout(_cycle(started=True, complete=True), in_body=False, started=True)
    assert not _answers_timeout(_cycle(started=True), in_body=False, started=True)  # the previous answer is going out


def test_cut_off_writes_the_408_closes_and_ends_keep_alive():
    t, c = _Transport(), _cycle()
    _cut_off(t, c, in_body=True, started=True)
    assert t.written == _TIMEOUT_RESPONSE and t.closed and c.keep_alive is False


def test_cut_off_of_an_idle_connection_closes_without_an_answer():
    t = _Transport()
    _cut_off(t, None, in_body=False, started=False)
    assert t.written == b"" and t.closed


def test_cut_off_leaves_a_closing_connection_alone():
    t, c = _Transport(closing=True), _cycle()
    _cut_off(t, c, in_body=True, started=True)
    assert t.written == b"" and not t.closed and c.keep_alive is True
