"""Deadlines on HTTP requests: a client that sends its headers or its body too slowly is cut off.

uvicorn bounds only the idle time between two requests of a kept-alive connection
(``timeout_keep_alive``); a connection that sends half a request line, or headers and then
a body a byte a minute, is held for ever (800 such connections were all still open after
35 s, each holding a socket and its buffers). ``protocol(header_s, body_s)`` is uvicorn's
own httptools protocol with two deadlines added:

* **headers**: from the moment a connection opens, or a new request on it begins, its
  request line and headers must be complete within ``header_s`` seconds (10 by default);
* **body**: from the end of the headers, the whole body must arrive within ``body_s``
  seconds (120 by default: 32 MiB at 2 Mbit/s).

A request past either deadline gets ``408 Request Timeout`` (if no answer has started) and
its connection is closed (one that never sent a byte, as a browser's pre-opened connection,
is closed without an answer); the application, if it was reading the body, sees the client
disconnect (``http_api.read_body`` answers it with 408 too). ``evlog web`` uses it for both
modes (``eventlog.app.web.server``).
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 120.0

_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"content-length: 33\r\nconnection: close\r\n\r\nthe request took too long to send")


def protocol(header_s: float = HEADER_TIMEOUT, body_s: float = BODY_TIMEOUT) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with deadlines on a request's headers and body (see the module docstring)."""
    if not (0 < header_s <= 3600 and 0 < body_s <= 86400):
        raise ValueError("the header deadline must be in (0, 3600] s and the body deadline in (0, 86400] s")
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineProtocol(HttpToolsProtocol):
        """``HttpToolsProtocol`` that closes a connection whose request is sent too slowly."""

        _deadline: asyncio.TimerHandle | None = None
        _in_body = False  # past this request's headers (else: waiting for them)
        _started = False  # a byte of this request arrived (an idle connection is closed without an answer)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            _cut_off(self.transport, self.cycle, in_body=self._in_body, started=self._started)

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(header_s)

        def on_message_begin(self) -> None:  # the parser saw a request's first byte
            super().on_message_begin()
            self._in_body, self._started = False, True
            if self._deadline is None:  # after an answer on a kept-alive connection: its headers' turn
                self._arm(header_s)

        def on_headers_complete(self) -> None:
            self._in_body = True
            self._arm(body_s)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            self._in_body = self._started = False
            super().on_message_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return DeadlineProtocol


def _answers_timeout(cycle: Any, *, in_body: bool, started: bool) -> bool:
    """Whether a request past its deadline gets the 408: ``cycle`` is the connection's current request
    cycle (uvicorn's, or None), ``in_body`` whether the late request is past its headers, ``started``
    whether a byte of it arrived."""
    if in_body:  # this request's cycle: answer unless its answer has begun
        return cycle is None or not cycle.response_started
    # the previous request's cycle, if any: never write into its answer
    return started and (cycle is None or cycle.response_complete)


def _cut_off(transport: Any, cycle: Any, *, in_body: bool, started: bool) -> None:
    """Close a connection whose request is past its deadline, with a 408 when ``_answers_timeout`` says so."""
    if transport.is_closing():
        return
    if _answers_timeout(cycle, in_body=in_body, started=started):
        transport.write(_TIMEOUT_RESPONSE)
    if cycle is not None:
        cycle.keep_alive = False
    transport.close()
