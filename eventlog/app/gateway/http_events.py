"""The event store over HTTP: ``HttpEventStore(url, token)``, an ``EventStore`` speaking the gateway's event routes.

The routes (``http_api.SyncAPI``, under ``/api/sync/v1``; JSON, the messages below):

==============================  ==================================================================
``POST /events/push``           ``{events}`` -> ``{stored, duplicates, position}`` (one transaction)
``POST /events/pull``           ``{after, limit}`` -> ``{events, cursor, more}``
``POST /events/high-water``     ``{origin}`` -> ``{high_water}``
``POST /events/share``          ``{project, member, read_only}`` -> ``{}``
``POST /events/unshare``        ``{project, member}`` -> ``{removed}``
``GET  /events/shares``         ``{shares}``: those the token's account owns or is a member of
==============================  ==================================================================

The account is always the token's (``Authorization: Bearer``): a store refuses, before any
request, a call naming another account (``ConfigError``), and the server could not be told
otherwise. Envelopes travel as ``Replicated`` structs, bodies verbatim (``msgspec.Raw``; screened
before sending, ``event_store.screen_envelopes``, so the server's refusals name the envelope); a
pull is one request, so a device with nothing to fetch pays one round trip; a page that says
``more`` (a catch-up) has the next one fetched on a second connection while the device applies
it (``_Ahead``). Requests are
retried once on a dropped connection (``http_client.Client``), which is safe: a push is
idempotent by origin, everything else reads or sets. A gateway server of an older version
(no event routes: HTTP 404) is refused with a ``ConfigError`` saying to upgrade it; its
database needs no command, the server applies migrations m009 and m010 when it starts. A request
the server refuses (HTTP 400: its ``ConfigError``, e.g. a push bringing a new envelope of another
account's device) raises ``ConfigError`` with the server's message, as the direct store does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Annotated, Any

import msgspec

from eventlog.app.gateway.connection import Timeouts
from eventlog.app.gateway.event_store import screen_envelopes
from eventlog.app.gateway.http_client import Client, GatewayURL, NoRoute, connect
from eventlog.app.gateway.users import normalize_email
from eventlog.errors import BackendError, ConfigError
from eventlog.replication.envelope import Replicated
from eventlog.replication.store import PullPage, PushResult, Share

Project = Annotated[str, msgspec.Meta(max_length=65_535)]
Email = Annotated[str, msgspec.Meta(min_length=3, max_length=255)]


class PushEventsBody(msgspec.Struct, forbid_unknown_fields=True):
    events: list[Replicated]


class PullEventsBody(msgspec.Struct, forbid_unknown_fields=True):
    after: int
    limit: int = 1000


class HighWaterBody(msgspec.Struct, forbid_unknown_fields=True):
    origin: Annotated[str, msgspec.Meta(max_length=191)]


class HighWaterResult(msgspec.Struct):
    high_water: int


class ShareBody(msgspec.Struct, forbid_unknown_fields=True):
    project: Project
    member: Email
    read_only: bool = False


class UnshareResult(msgspec.Struct):
    removed: bool


class SharesResult(msgspec.Struct):
    shares: list[Share]


def _pull(client: Client, after: int, limit: int) -> PullPage:
    page: PullPage = client.request("POST", "/events/pull", _enc.encode(PullEventsBody(after, limit)), PullPage)
    return page


class _Ahead:
    """The next page of a catch-up, fetched on a second connection while the caller applies this one.

    ``start(after, limit)`` asks for it; ``take(after, limit)`` gives it if that is what was asked
    (None otherwise, or if fetching it failed: the caller's own request then says why). A page
    fetched early is still a page the store could answer (positions commit in order), and only a
    page that said ``more`` starts one, so a pull that brings nothing stays one round trip.
    """

    def __init__(self, client: Callable[[], Client]) -> None:
        self._new_client = client
        self._client: Client | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._wanted: tuple[int, int] | None = None
        self._future: Future[PullPage] | None = None

    def start(self, after: int, limit: int) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="evlog-pull-ahead")
        self._wanted, self._future = (after, limit), self._pool.submit(self._fetch, after, limit)

    def _fetch(self, after: int, limit: int) -> PullPage:
        if self._client is None:
            self._client = self._new_client()
        return _pull(self._client, after, limit)

    def take(self, after: int, limit: int) -> PullPage | None:
        future, wanted = self._future, self._wanted
        self._future = self._wanted = None
        if future is None:
            return None
        try:
            page = future.result()
        except Exception:  # noqa: BLE001 - the caller's own request reports it
            return None
        return page if wanted == (after, limit) else None

    def close(self) -> None:
        self.take(-1, 0)  # wait for one in flight: its connection is closed next
        if self._pool is not None:
            self._pool.shutdown()
        if self._client is not None:
            self._client.close()


REFUSED = "(HTTP 400)"  # how ``http_client`` ends the error of a request the server refused (its ``ConfigError``)
_enc = msgspec.json.Encoder()


class HttpEventStore:
    """``EventStore`` of the token's account at a gateway server (see the module docstring)."""

    def __init__(self, url: str | GatewayURL, token: str, *, timeouts: Timeouts | None = None) -> None:
        self.client, me = connect(url, token, timeouts=timeouts)
        self.account = me.email
        self.max_body_bytes = me.max_body_bytes
        self._ahead = _Ahead(lambda: Client(self.client.url, token=token, timeouts=timeouts))

    def _request(self, method: str, path: str, body: bytes | None, type_: Any) -> Any:
        try:
            return self.client.request(method, path, body, type_)
        except NoRoute:
            raise ConfigError(f"the gateway {self.client.url.base} is an older server without the event log "
                              "(no /events routes); upgrade evlog there and restart it (its database migrates "
                              "itself on start)") from None
        except BackendError as e:
            if str(e).endswith(REFUSED):  # the server refused the request itself (its ConfigError): no retry helps
                raise ConfigError(str(e)) from None
            raise

    def _check(self, account: str) -> None:
        if normalize_email(account) != self.account:
            raise ConfigError(f"this store's token is {self.account}'s at {self.client.url.base}, not {account}'s")

    def push(self, account: str, events: Sequence[Replicated]) -> PushResult:
        self._check(account)
        screen_envelopes(events, self.max_body_bytes)  # here too: a body that is not JSON would spoil the request's
        body = _enc.encode(PushEventsBody(list(events)))
        got: PushResult = self._request("POST", "/events/push", body, PushResult)
        return got

    def pull(self, account: str, after: int, limit: int = 1000) -> PullPage:
        self._check(account)
        page = self._ahead.take(after, limit)
        if page is None:
            page = self._request("POST", "/events/pull", _enc.encode(PullEventsBody(after, limit)), PullPage)
        if page.more:  # a catch-up: the next page is fetched while this one is applied
            self._ahead.start(page.cursor, limit)
        return page

    def high_water(self, account: str, origin: str) -> int:
        self._check(account)
        got = self._request("POST", "/events/high-water", _enc.encode(HighWaterBody(origin)), HighWaterResult)
        return int(got.high_water)

    def share(self, owner: str, project: str, member: str, *, read_only: bool = False) -> None:
        self._check(owner)
        self._request("POST", "/events/share", _enc.encode(ShareBody(project, member, read_only)), None)

    def unshare(self, owner: str, project: str, member: str) -> bool:
        self._check(owner)
        got = self._request("POST", "/events/unshare", _enc.encode(ShareBody(project, member)), UnshareResult)
        return bool(got.removed)

    def shares(self, account: str) -> list[Share]:
        self._check(account)
        return list(self._request("GET", "/events/shares", None, SharesResult).shares)

    def close(self) -> None:
        self._ahead.close()
        self.client.close()
