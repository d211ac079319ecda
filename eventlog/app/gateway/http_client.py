"""Sync over HTTP: ``HttpRemote`` (a ``sync.Remote`` speaking the HTTP sync API) and the device's token.

``login(home, url, email, password)`` asks the gateway server for a sync token and keeps it
in the workspace (``credentials``); ``HttpRemote.open(home, url)`` uses it. The device never
holds database credentials, and the server decides whose rows a request touches.

* **Transport**: one keep-alive HTTP/1.1 connection (``http.client``; HTTPS with the
  system's certificate store), JSON bodies (``wire``). A connection that drops is opened
  again and the request sent once more: every request is a read, a last-write-wins
  batch or an erasure the server records once by its id, so running one twice changes nothing.
* **Timeouts** (``connection.Timeouts``): connecting gives up after ``connect`` seconds,
  every read or write on the socket after ``read``; a server that accepts and never answers
  fails the sync with ``BackendError`` within about connect + 2 x read seconds.
* **Plain HTTP** carries the token in clear, so it is accepted only to a loopback address
  (``127.0.0.1``, ``::1``, ``localhost``) unless ``$EVLOG_GATEWAY_ALLOW_HTTP=1``.
* **Errors** never contain the token or the password: a refused token is ``AuthError``
  (log in again), too many logins ``TooManyAttempts``, anything else ``BackendError``
  naming the URL and the server's message.
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import socket
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any

import msgspec

from eventlog.app.gateway import ops
from eventlog.app.gateway import rows as R
from eventlog.app.gateway import screen as S
from eventlog.app.gateway import wire as W
from eventlog.app.gateway.auth import AuthError, TooManyAttempts
from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.connection import Timeouts
from eventlog.app.gateway.credentials import forget_token, load_token, logged_in, save_token
from eventlog.app.gateway.erasure import GatewayErasure, Removal
from eventlog.app.gateway.ops import Prepared, Rejected
from eventlog.app.gateway.sync import Remote
from eventlog.app.gateway.users import User
from eventlog.errors import BackendError, ConfigError

ENV_ALLOW_HTTP = "EVLOG_GATEWAY_ALLOW_HTTP"
_enc = msgspec.json.Encoder()
_RETRYABLE = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError,
              ConnectionAbortedError)


class NoRoute(BackendError):
    """The server has no such sync API route (HTTP 404): not an evlog gateway, or an older one."""


@dataclass(frozen=True)
class GatewayURL:
    """A gateway server's base URL, normalised: ``scheme://host:port[/path]``."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"

    @classmethod
    def parse(cls, url: str) -> GatewayURL:
        """A checked gateway URL; ``ConfigError`` for anything but plain http(s)://host[:port][/path]."""
        try:
            parts = urllib.parse.urlsplit(url.strip())
            port = parts.port
        except ValueError:
            raise ConfigError(f"not a gateway URL: {url!r}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"the gateway URL must be http(s)://host[:port] (got {url!r})")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ConfigError("the gateway URL takes no user, password, query or fragment (log in with "
                              "'evlog sync login --gateway URL --user EMAIL')")
        g = cls(parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80),
                parts.path.rstrip("/"))
        if g.scheme == "http" and not _loopback(g.host) and os.environ.get(ENV_ALLOW_HTTP) != "1":
            raise ConfigError(f"plain http:// sends the token in clear; use https:// for {g.host} (or set "
                              f"{ENV_ALLOW_HTTP}=1 on a network you trust)")
        return g


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Conn(http.client.HTTPConnection):
    """HTTP connection whose connect timeout differs from its read/write timeout."""

    def __init__(self, host: str, port: int, timeouts: Timeouts) -> None:
        super().__init__(host, port, timeout=timeouts.read)
        self._timeouts = timeouts

    def connect(self) -> None:
        self.sock = socket.create_connection((self.host, self.port), self._timeouts.connect)
        self.sock.settimeout(self._timeouts.read)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _TLSConn(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, timeouts: Timeouts) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeouts.read, context=self._tls)
        self._timeouts = timeouts

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self._timeouts.connect)
        sock.settimeout(self._timeouts.read)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


class Client:
    """JSON requests to one gateway server over a kept-alive connection (see the module docstring)."""

    def __init__(self, url: str | GatewayURL, *, token: str = "", timeouts: Timeouts | None = None) -> None:
        self.url = url if isinstance(url, GatewayURL) else GatewayURL.parse(url)
        self.token = token
        self.timeouts = timeouts or Timeouts.default()
        self._conn: http.client.HTTPConnection | None = None
        self.reconnects = 0

    def _open(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = _TLSConn if self.url.scheme == "https" else _Conn
            self._conn = cls(self.url.host, self.url.port, self.timeouts)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: bytes | None = None, type_: Any = None) -> Any:
        """Send one request; the decoded answer (``type_``) or an error (see the module docstring)."""
        headers = {"Accept": "application/json", "User-Agent": "evlog-sync"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        where = f"gateway {self.url.base}"
        for attempt in (1, 2):
            conn = self._open()
            try:
                conn.request(method, self.url.path + W.API_PREFIX + path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except _RETRYABLE as e:
                self.close()
                if attempt == 1:
                    self.reconnects += 1
                    continue
                raise BackendError(f"{where}: the connection dropped ({e.__class__.__name__})") from None
            except TimeoutError:
                self.close()
                raise BackendError(f"{where}: no answer within {self.timeouts.read:g} s (timeout)") from None
            except ssl.SSLError as e:
                self.close()
                raise BackendError(f"{where}: TLS failed: {e.reason or e}") from None
            except OSError as e:
                self.close()
                raise BackendError(f"{where}: cannot connect: {e.strerror or e.__class__.__name__}") from None
            if resp.status == 200:
                try:
                    return msgspec.json.decode(data, type=type_) if type_ is not None else msgspec.json.decode(data)
                except msgspec.MsgspecError as e:
                    raise BackendError(f"{where}: the answer is not what evlog expects ({e}); is this an evlog "
                                       "gateway of the same version?") from None
            raise self._error(resp.status, data, resp.getheader("Retry-After"))
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, status: int, data: bytes, retry_after: str | None) -> Exception:
        try:
            message = msgspec.json.decode(data, type=W.ErrorBody).error
        except msgspec.MsgspecError:
            message = f"HTTP {status}"
        where = f"gateway {self.url.base}"
        if status == 429:
            e = TooManyAttempts(int(retry_after) if retry_after and retry_after.isdigit() else 900)
            return e
        if status == 401:
            return AuthError(f"{where}: {message}")
        if status == 404:
            return NoRoute(f"{where}: no evlog sync API here (HTTP 404); is the URL that of 'evlog web --gateway'?")
        return BackendError(f"{where}: {message} (HTTP {status})")


# --------------------------------------------------------------------------- logging in


def connect(url: str | GatewayURL, token: str, *, timeouts: Timeouts | None = None) -> tuple[Client, W.Me]:
    """A client of the gateway server with the token, and who the server says the token is (``/me``).

    Refused (``BackendError``, the client closed) when the server speaks another sync API version.
    """
    client = Client(url, token=token, timeouts=timeouts)
    try:
        me = client.request("GET", "/me", None, W.Me)
    except BaseException:
        client.close()
        raise
    if me.api != W.API_VERSION:
        client.close()
        raise BackendError(f"gateway {client.url.base} speaks sync API {me.api}, this evlog {W.API_VERSION}")
    return client, me


def login(home: str, url: str, email: str, password: str, *, label: str = "",
          timeouts: Timeouts | None = None) -> W.LoginResult:
    """Get a sync token for ``email`` from the gateway at ``url`` and keep it in the workspace at ``home``."""
    client = Client(url, timeouts=timeouts)
    try:
        body = _enc.encode(W.LoginBody(email=email, password=password, label=label or _default_label(home)))
        got = client.request("POST", "/login", body, W.LoginResult)
    finally:
        client.close()
    save_token(home, client.url.base, got.email, got.token)
    return got


def logout(home: str, url: str, *, timeouts: Timeouts | None = None) -> bool:
    """Revoke this workspace's token at the gateway (if it still works) and forget it; True if one was kept."""
    base = GatewayURL.parse(url).base
    saved = load_token(home, base)
    if saved is None:
        return False
    client = Client(base, token=saved[1], timeouts=timeouts)
    try:
        client.request("POST", "/logout", b"{}")
    except (AuthError, BackendError):
        pass  # revoked already, or the server is away: forgetting it here is what matters
    finally:
        client.close()
    forget_token(home, base)
    return True


def logged_in_gateway(home: str, url: str | None = None) -> str | None:
    """The gateway this workspace reaches over HTTP: ``url`` (normalised) if given, else the one it is logged in
    to; None when it is logged in to none; ``ConfigError`` when to several and none is named."""
    if url:
        return GatewayURL.parse(url).base
    urls = sorted(logged_in(home))
    if len(urls) > 1:
        raise ConfigError(f"this workspace is logged in to several gateways ({', '.join(urls)}); name one with "
                          "--gateway URL")
    return urls[0] if urls else None


def _default_label(home: str) -> str:
    return f"{socket.gethostname()}:{os.path.abspath(home)}"[:255]


# --------------------------------------------------------------------------- the remote


class HttpRemote(Remote):
    """The gateway as an HTTP sync API (see the module docstring); a ``sync.Remote``."""

    def __init__(self, url: str | GatewayURL, token: str, *, timeouts: Timeouts | None = None) -> None:
        self.client, me = connect(url, token, timeouts=timeouts)
        self.user = User(me.user_id, me.email, me.created_ms)
        self.target = me.target
        self.max_row_bytes = me.max_row_bytes
        self.max_body_bytes = me.max_body_bytes
        self.limits = S.Limits(me.flavour, me.json_depth)

    @classmethod
    def open(cls, home: str, url: str, *, user: str | None = None, timeouts: Timeouts | None = None) -> HttpRemote:
        """The remote for the token this workspace keeps for ``url`` (``ConfigError`` if it has none)."""
        base = GatewayURL.parse(url).base
        saved = load_token(home, base)
        if saved is None:
            raise ConfigError(f"no token for {base} in this workspace; run 'evlog sync login --gateway {base} "
                              "--user EMAIL' first")
        email, token = saved
        remote = cls(base, token, timeouts=timeouts)
        if user is not None and user.strip().lower() != remote.user.email:
            remote.close()
            raise ConfigError(f"this workspace is logged in to {base} as {remote.user.email}, not {user}; "
                              "'evlog sync login' again to change")
        return remote

    @property
    def reconnects(self) -> int:
        return self.client.reconnects

    def prepare(self, sessions: list[R.SessionRow], messages: list[ops.MessageFields]) -> Prepared:
        """The request body of one push, screened first (``screen``: what the server would refuse is not sent)."""
        kept, fields, rejected = S.screen_push(sessions, messages, self.limits)
        sent: list[tuple[str, str, R.Version]] = []
        parts: list[bytes] = []
        for key, mid, role, content, timestamp, tool_calls, extra, version in fields:
            try:
                data = _enc.encode(W.WireMessage(key, mid, role, content, timestamp, tool_calls, extra, version))
            except S.ENCODE_ERRORS as e:
                rejected.append(Rejected(key, mid, f"cannot be encoded for the gateway: {e}"))
                continue
            if len(data) > self.max_row_bytes:
                rejected.append(Rejected(key, mid, f"{len(data)} bytes, more than the gateway takes in one row "
                                                   f"({self.max_row_bytes}); raise its max_allowed_packet, then "
                                                   "'evlog sync push --retry-rejected' sends it again", len(data)))
                continue
            parts.append(data)
            sent.append((key, mid, version))
        body = (b'{"sessions":' + _enc.encode([W.session_to_wire(r) for r in kept])
                + b',"messages":[' + b",".join(parts) + b"]}")
        return Prepared(stmts=[], sessions=len(kept), messages=sent, rejected=rejected, body=body)

    def write(self, batch: Prepared) -> tuple[int, int, list[Rejected]]:
        got = self.client.request("POST", "/push", batch.body, W.PushResult)
        return got.change_seq, got.sent, [W.rejected_from_wire(r) for r in got.rejected]

    def changes(self, after: int, skip: list[int], limit: int) -> Page:
        body = _enc.encode(W.ChangesBody(after=after, skip=skip, limit=limit))
        return W.page_from_wire(self.client.request("POST", "/changes", body, W.PageBody))

    def pending(self, after: int, skip: list[int]) -> tuple[list[R.SessionRow], int, int]:
        got = self.client.request("POST", "/pending", _enc.encode(W.PendingBody(after=after, skip=skip)),
                                  W.PendingResult)
        return [W.session_from_page(w) for w in got.sessions], got.messages, got.top

    def purge(self, removal: Removal, *, dry_run: bool = False) -> tuple[dict[str, int], int]:
        """``erasure.purge`` at the server, for this token's user: (rows by table, the gateway erasure's id)."""
        try:
            got = self.client.request("POST", "/erase", _enc.encode(W.removal_to_wire(removal, dry_run)),
                                      W.EraseResult)
        except NoRoute:
            raise ConfigError(f"the gateway {self.client.url.base} is an older server that does not relay erasures; "
                              "upgrade it, or erase with --dsn") from None
        return got.rows, got.id

    def erasures_after(self, after: int) -> list[GatewayErasure]:
        """``erasure.erasures_after`` at the server: this user's erasures with an id above ``after``."""
        try:
            got = self.client.request("POST", "/erasures", _enc.encode(W.ErasuresBody(after=after)),
                                      W.ErasuresResult)
        except NoRoute:  # an older server: it records none, and sync goes on as before
            return []
        return [W.erasure_from_wire(w) for w in got.erasures]

    def close(self) -> None:
        self.client.close()
