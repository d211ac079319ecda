"""The HTTP sync API: devices sync through the gateway server, never with database credentials.

``evlog web --gateway DSN`` serves it under ``/api/sync/v1`` (``SyncAPI.routes``). Only the
server holds the database credentials; a device holds a per-user token from ``login``.

=========================  =======================================================================
``POST /login``            ``{email, password, label}`` -> ``{token, email, epoch}`` (a sync token;
                           rate-limited and enumeration-proof like the web login, ``auth.login``)
``POST /logout``           revokes the token it is called with
``GET  /me``               the token's user, the database served (the sync positions' target) and
                           the server's limits (``max_row_bytes``, ``max_body_bytes``, the
                           database's ``flavour`` and ``json_depth``: ``screen.Limits``)
``POST /push``             ``{sessions, messages}`` -> ``{change_seq, sent, rejected}`` (one batch,
                           one transaction: ``ops.prepare`` + ``ops.write``)
``POST /changes``          ``{after, skip, limit}`` -> one page of changes (``ops.changes``)
``POST /pending``          ``{after, skip}`` -> what a pull would fetch (``ops.pending``)
``POST /erase``            ``{erasure_id, origin, sessions, messages, refs, needles, dry_run, events}``
                           -> ``{rows, id}``: delete the erased rows of the token's user, empty
                           its erased events (``events``: origin keys), and record
                           the erasure for the other devices, in one transaction
                           (``erasure.purge_rows``; the same request twice records it once)
``POST /erasures``         ``{after}`` -> ``{erasures}``: the user's erasures with an id above
                           ``after`` (``erasure.rows_after``; hashed names only, never text)
``/view/...``              the web view's read models of the token's account, as their structs
                           (``read_model``): ``POST /view/sessions`` ``{offset, limit, project,
                           query}`` -> ``{sessions, total, projects}``; ``POST /view/transcript``
                           ``{key, offset, limit}`` -> ``{session, messages, total}``;
                           ``GET /view/facts`` -> ``{facts}``
``/events/...``            the replicated event log of the token's account: push, pull,
                           high-water, share, unshare, shares (``http_events`` lists them; the
                           store is ``event_store``; envelopes are screened by
                           ``event_store.screen_envelopes`` before the transaction)
=========================  =======================================================================

Every route but ``login`` needs ``Authorization: Bearer <token>``; the user is the token's,
never one named in the request, so one user's token can neither read nor write another's
rows. Cookies are ignored here (a browser's session cannot be used against the API, so the
API needs no CSRF token). Bodies are JSON (``wire``), decoded strictly: a body of the wrong
shape, or nested deeper than the parser's bound, is refused (400) before the database is
touched, one over ``max_body_bytes`` with 413. Rows go through the same screen as direct
sync's (``ops.prepare``, ``screen``); rows the database could not take are refused one by
one (``rejected``), never the batch, and only an outage answers 503.
Errors name no credentials and no token; database trouble answers 503.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from eventlog.app.gateway import auth, erasure, ops
from eventlog.app.gateway import event_store as ES
from eventlog.app.gateway import http_events as HE
from eventlog.app.gateway import wire as W
from eventlog.app.gateway.pool import Pool
from eventlog.app.gateway.users import User, normalize_email
from eventlog.errors import BackendError, ConfigError, EvlogError, NotFound
from eventlog.replication.store import PushResult

log = logging.getLogger("evlog.gateway")

MIN_BODY_BYTES = 32 * 1024 * 1024

_enc = msgspec.json.Encoder()


class HTTPError(Exception):
    """An answer other than 200, with a message for the client."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_enc.encode(obj), status_code=status, media_type="application/json",
                    headers={"Cache-Control": "no-store", **(headers or {})})


def error_response(e: HTTPError) -> Response:
    return json_response(W.ErrorBody(e.message), e.status, e.headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing one bigger than ``limit`` bytes (413) without reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise HTTPError(413, f"request body over {limit} bytes")
        except ValueError:
            raise HTTPError(400, "bad Content-Length") from None
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPError(413, f"request body over {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:  # gone, or cut off by the body deadline (``http_deadlines``)
        raise HTTPError(408, "the request body did not arrive in time") from None
    return b"".join(chunks)


def decode(body: bytes, type_: type) -> Any:
    """The body as ``type_``, or a 400 naming the problem (wrong shape, not JSON, nested too deep to parse)."""
    try:
        return msgspec.json.decode(body, type=type_)
    except msgspec.ValidationError as e:
        raise HTTPError(400, f"bad request body: {e}") from None
    except msgspec.DecodeError:
        raise HTTPError(400, "request body is not JSON") from None
    except RecursionError:  # msgspec's parser stops at its depth bound; nothing past it is parsed
        raise HTTPError(400, "request body is nested too deep to parse") from None


def bearer(request: Request) -> str:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPError(401, "this API needs 'Authorization: Bearer <token>' (evlog sync login)",
                        {"WWW-Authenticate": "Bearer"})
    return token.strip()


def client_address(request: Request) -> str:
    """The client's address as the server sees it (uvicorn applies trusted proxy headers)."""
    return request.client.host if request.client else ""


class SyncAPI:
    """The sync routes over a connection pool (see the module docstring)."""

    def __init__(self, pool: Pool, *, policy: auth.LoginPolicy | None = None, max_body_bytes: int | None = None,
                 client_of: Callable[[Request], str] = client_address) -> None:
        self.pool = pool
        self.policy = policy or auth.LoginPolicy()
        self._max_body = max_body_bytes
        self.client_of = client_of
        self._packet: int | None = None

    @property
    def max_packet(self) -> int:
        """The database's max_allowed_packet (read once)."""
        if self._packet is None:
            self._packet = self.pool.max_packet
        return self._packet

    def limits(self) -> tuple[int, int]:
        """(max_row_bytes, max_body_bytes) of this server."""
        row = ops.max_row_bytes(self.max_packet)
        body = self._max_body if self._max_body is not None else max(MIN_BODY_BYTES, row + 8 * 1024 * 1024)
        return min(row, body - 4096), body

    def routes(self) -> list[Route]:
        p = W.API_PREFIX
        return [Route(f"{p}/login", self._endpoint(self.login, auth_needed=False), methods=["POST"]),
                Route(f"{p}/logout", self._endpoint(self.logout), methods=["POST"]),
                Route(f"{p}/me", self._endpoint(self.me), methods=["GET"]),
                Route(f"{p}/push", self._endpoint(self.push), methods=["POST"]),
                Route(f"{p}/changes", self._endpoint(self.changes), methods=["POST"]),
                Route(f"{p}/pending", self._endpoint(self.pending), methods=["POST"]),
                Route(f"{p}/erase", self._endpoint(self.erase), methods=["POST"]),
                Route(f"{p}/erasures", self._endpoint(self.erasures), methods=["POST"]),
                Route(f"{p}/events/push", self._endpoint(self.push_events), methods=["POST"]),
                Route(f"{p}/events/pull", self._endpoint(self.pull_events), methods=["POST"]),
                Route(f"{p}/events/high-water", self._endpoint(self.high_water), methods=["POST"]),
                Route(f"{p}/events/share", self._endpoint(self.share), methods=["POST"]),
                Route(f"{p}/events/unshare", self._endpoint(self.unshare), methods=["POST"]),
                Route(f"{p}/events/shares", self._endpoint(self.shares), methods=["GET"]),
                Route(f"{p}/view/sessions", self._endpoint(self.view_sessions), methods=["POST"]),
                Route(f"{p}/view/transcript", self._endpoint(self.view_transcript), methods=["POST"]),
                Route(f"{p}/view/facts", self._endpoint(self.view_facts), methods=["GET"])]

    def _endpoint(self, fn: Callable[..., Any], *, auth_needed: bool = True) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                token = bearer(request) if auth_needed else ""
                body = b""
                if request.method == "POST":
                    body = await read_body(request, self.limits()[1])
                return await run_in_threadpool(self._call, fn, request, token, body)
            except HTTPError as e:
                return error_response(e)

        return endpoint

    def _call(self, fn: Callable[..., Any], request: Request, token: str, body: bytes) -> Response:
        try:
            with self.pool.connection() as conn:
                user = None
                if token:
                    user = auth.lookup(conn, token, "sync")
                    if user is None:
                        raise HTTPError(401, "the token is unknown, revoked or expired; run 'evlog sync login'",
                                        {"WWW-Authenticate": "Bearer"})
                return json_response(fn(conn, user, token, body, request))
        except HTTPError as e:
            return error_response(e)
        except auth.TooManyAttempts as e:
            return error_response(HTTPError(429, str(e), {"Retry-After": str(e.retry_after)}))
        except auth.AuthError as e:
            return error_response(HTTPError(401, str(e)))
        except NotFound as e:
            return error_response(HTTPError(404, str(e)))
        except ConfigError as e:
            return error_response(HTTPError(400, str(e)))
        except BackendError as e:
            log.warning("sync API: %s", e)
            return error_response(HTTPError(503, "the gateway's database is unavailable; try again later"))
        except EvlogError as e:
            return error_response(HTTPError(400, str(e)))

    # -- the operations (in a worker thread, with a pooled connection) ------------------------

    def login(self, conn: Any, _user: None, _token: str, body: bytes, request: Request) -> W.LoginResult:
        b = decode(body, W.LoginBody)
        user, token = auth.login(conn, b.email, b.password, kind="sync", client=self.client_of(request),
                                 label=b.label, policy=self.policy)
        return W.LoginResult(token=token, email=user.email, epoch=user.epoch)

    def logout(self, conn: Any, _user: User, token: str, _body: bytes, _request: Request) -> dict[str, bool]:
        return {"revoked": auth.revoke(conn, token)}

    def me(self, conn: Any, user: User, _token: str, _body: bytes, _request: Request) -> W.Me:
        row, body = self.limits()
        conn.raw()  # connected: the server's flavour is known
        return W.Me(api=W.API_VERSION, user_id=user.id, email=user.email, created_ms=user.created_ms,
                    target=self.pool.target, max_row_bytes=row, max_body_bytes=body, flavour=conn.limits.flavour,
                    json_depth=conn.limits.json_depth)

    def push(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> W.PushResult:
        b = decode(body, W.PushBody)
        if len(b.sessions) + len(b.messages) > W.MAX_PUSH_ROWS:
            raise HTTPError(413, f"at most {W.MAX_PUSH_ROWS} rows per push")
        sessions = [W.session_from_wire(w) for w in b.sessions]
        messages: list[ops.MessageFields] = [(m.key, m.message_id, m.role, m.content, m.timestamp, m.tool_calls,
                                              m.extra, tuple(m.version)) for m in b.messages]
        conn.raw()  # connect first: prepare needs the server's max_allowed_packet, flavour and clock
        prepared = ops.prepare(user.id, sessions, messages, max_packet=conn.max_packet, limits=conn.limits,
                               now=conn.now_ms())  # the one screen (``screen``): the same as direct sync's
        seq, sent, refused = (0, 0, []) if not prepared.stmts else conn.transaction(
            lambda cur: ops.write(cur, user.id, prepared), doing="pushing a batch")
        return W.PushResult(change_seq=seq, sent=sent,
                            rejected=[W.rejected_to_wire(r) for r in [*prepared.rejected, *refused]])

    def changes(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> W.PageBody:
        b = decode(body, W.ChangesBody)
        if b.after < 0 or not 1 <= b.limit <= 10_000 or len(b.skip) > 100_000:
            raise HTTPError(400, "after must be >= 0, limit in 1..10000")
        page = conn.transaction(lambda cur: ops.changes(cur, user.id, b.after, skip=b.skip, limit=b.limit),
                                doing="reading changes")
        return W.page_to_wire(page)

    def pending(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> W.PendingResult:
        b = decode(body, W.PendingBody)
        if b.after < 0 or len(b.skip) > 100_000:
            raise HTTPError(400, "after must be >= 0")
        regs, n, top = conn.transaction(lambda cur: ops.pending(cur, user.id, b.after, skip=b.skip),
                                        doing="counting changes")
        return W.PendingResult(sessions=[W.page_session(r) for r in regs], messages=n, top=top)

    def erase(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> W.EraseResult:
        b = decode(body, W.EraseBody)
        rows, row_id = erasure.purge_rows(conn, user.id, W.removal_from_wire(b), dry_run=b.dry_run)
        return W.EraseResult(rows=rows, id=row_id)

    def erasures(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> W.ErasuresResult:
        b = decode(body, W.ErasuresBody)
        if b.after < 0:
            raise HTTPError(400, "after must be >= 0")
        return W.ErasuresResult([W.erasure_to_wire(e) for e in erasure.rows_after(conn, user.id, b.after)])

    # -- the replicated event log (``event_store``; messages in ``http_events``) ------------------

    def push_events(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> PushResult:
        b = decode(body, HE.PushEventsBody)
        ES.screen_envelopes(b.events, ES.max_body_bytes(self.max_packet))
        return ES.retrying(conn, lambda cur: ES.push_events(cur, user, b.events), doing="pushing events")

    def pull_events(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> msgspec.Raw:
        b = decode(body, HE.PullEventsBody)
        ES.check_pull(b.after, b.limit)
        page = ES.retrying(conn, lambda cur: ES.pull_json(cur, user.id, b.after, b.limit), doing="pulling events")
        return msgspec.Raw(ES.page_json(*page))  # a ``PullPage``, its envelopes as the database put them together

    def high_water(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> HE.HighWaterResult:
        b = decode(body, HE.HighWaterBody)
        return HE.HighWaterResult(ES.retrying(conn, lambda cur: ES.high_water_of(cur, user.id, b.origin),
                                              doing="reading a high water mark"))

    def share(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> dict[str, Any]:
        b = decode(body, HE.ShareBody)
        member = normalize_email(b.member)
        ES.retrying(conn, lambda cur: ES.share_project(cur, user, b.project, member, b.read_only),
                    doing="sharing a project")
        return {}

    def unshare(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> HE.UnshareResult:
        b = decode(body, HE.ShareBody)
        member = normalize_email(b.member)
        return HE.UnshareResult(ES.retrying(conn, lambda cur: ES.unshare_project(cur, user, b.project, member),
                                            doing="unsharing a project"))

    def shares(self, conn: Any, user: User, _token: str, _body: bytes, _request: Request) -> HE.SharesResult:
        return HE.SharesResult(ES.retrying(conn, lambda cur: ES.shares_of(cur, user.id), doing="listing shares"))

    # -- the read models (``read_model``: what the web view shows, as its structs) ----------------

    def _view(self, conn: Any, user: User, fn: Callable[[Any, int], Any]) -> Any:
        from eventlog.app.gateway import read_model, row_migration

        def run(cur: Any) -> Any:
            read_model.catch_up(cur, user.id)
            row_migration.refuse_unmigrated(cur, user.id)
            return fn(cur, user.id)

        return ES.retrying(conn, run, doing="reading the view")

    def view_sessions(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> Any:
        from eventlog.app.gateway import read_model as RM

        q = decode(body or b"{}", RM.SessionsQuery)
        return self._view(conn, user, lambda cur, uid: RM.sessions_page(cur, uid, q))

    def view_transcript(self, conn: Any, user: User, _token: str, body: bytes, _request: Request) -> Any:
        from eventlog.app.gateway import read_model as RM

        q = decode(body, RM.TranscriptQuery)
        return self._view(conn, user, lambda cur, uid: RM.transcript_page(cur, uid, q))

    def view_facts(self, conn: Any, user: User, _token: str, _body: bytes, _request: Request) -> Any:
        from eventlog.app.gateway import read_model as RM

        return self._view(conn, user, RM.facts_page)
