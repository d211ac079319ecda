"""The web app's defences: access tokens, cookies, CSRF, security headers, allowed hosts.

**Local mode** (``evlog web``) listens on 127.0.0.1 only and needs the random access token
of the URL it prints (like Jupyter). Opening ``/?token=...`` once sets an HttpOnly,
SameSite=Strict cookie holding the token and redirects to the same page without it (so it
does not stay in the address bar or history); every request must carry that cookie or
the token. Requests whose ``Host`` is not the loopback address and port it listens on are
refused (a web page elsewhere cannot reach it through DNS rebinding). Other local users
and other sites cannot use it without the token; it is compared in constant time.

**Gateway mode** (``evlog web --gateway``) signs users in with e-mail and password
(``eventlog.app.gateway.auth``). The web session is a random token in the cookie
``evlog_session`` (``__Host-evlog_session`` over HTTPS: Secure, Path=/, no Domain),
HttpOnly, SameSite=Strict, checked against the database on every request, so any number of
server processes share the sessions and a logout or password change ends them everywhere.
A local-mode cookie has another name and is no database token: it never works here.

**CSRF**: every POST carries a form field ``csrf`` that must equal the session's CSRF
token (a SHA-256 of the session token, which other sites can neither read nor compute);
the login form uses a double-submit cookie. A POST whose ``Origin`` (or ``Referer``) names
another origin is refused as well. Cookies are SameSite=Strict on top.

**Headers** on every response: a strict Content-Security-Policy (scripts, styles and images
from this server only, no inline script or style, no framing, forms only to this server),
``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` (a page's URL never
leaves the site, while same-origin POSTs keep their ``Origin``; ``no-referrer`` would make
browsers send ``Origin: null``), ``X-Frame-Options: DENY``, ``Cross-Origin-Opener-Policy``
/ ``-Resource-Policy: same-origin``, ``no-store`` for pages, and HSTS over HTTPS. Message
text is rendered by autoescaping templates, so HTML or script in a message, title or key
shows as text.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

LOCAL_COOKIE = "evlog_local"
SESSION_COOKIE = "evlog_session"
SECURE_SESSION_COOKIE = "__Host-evlog_session"
LOGIN_CSRF_COOKIE = "evlog_login_csrf"

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def same(a: str, b: str) -> bool:
    """Constant-time string comparison."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def csrf_token(session_token: str) -> str:
    """The CSRF token of a session: derived from its secret, so only pages served to that session know it."""
    return hashlib.sha256(b"evlog-csrf\0" + session_token.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def cookie_header(name: str, value: str, *, secure: bool, max_age: int | None = None, path: str = "/") -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/, Secure when asked."""
    parts = [f"{name}={value}", f"Path={path}", "HttpOnly", "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    return "; ".join(parts)


def origin_ok(headers: dict[str, str], scheme: str, host: str) -> bool:
    """False when the request says it comes from a page of another origin (Origin, else Referer)."""
    origin = headers.get("origin")
    if origin is None or origin == "null":
        ref = headers.get("referer")
        if not ref:
            return origin is None  # no Origin and no Referer (a non-browser client): the CSRF token decides
        parts = urlsplit(ref)
        origin = f"{parts.scheme}://{parts.netloc}"
    return origin.lower() == f"{scheme}://{host}".lower()


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP response; refuses hosts not allowed (local mode)."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: Iterable[str] | None = None, hsts: bool = False) -> None:
        self.app = app
        self.allowed_hosts = {h.lower() for h in allowed_hosts} if allowed_hosts is not None else None
        self.hsts = hsts

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.allowed_hosts is not None:
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            if host not in self.allowed_hosts:
                await _plain(send, 421, b"evlog web: this server only answers requests for its own address\n")
                return
        static = scope.get("path", "").startswith("/static/")
        hsts = self.hsts or scope.get("scheme") == "https"

        async def add_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"
                           or not static]
                have = {k.lower() for k, _ in headers}
                extra = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                         (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY"),
                         (b"cross-origin-opener-policy", b"same-origin"),
                         (b"cross-origin-resource-policy", b"same-origin")]
                if static:
                    extra.append((b"cache-control", b"public, max-age=3600"))
                elif b"cache-control" not in have:
                    extra.append((b"cache-control", b"no-store"))
                if hsts:
                    extra.append((b"strict-transport-security", b"max-age=31536000"))
                message["headers"] = headers + [(k, v) for k, v in extra if k not in have or k == b"cache-control"]
            await send(message)

        await self.app(scope, receive, add_headers)


async def _plain(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


def loopback_hosts(port: int) -> set[str]:
    """The Host headers a local-mode server on ``port`` answers."""
    return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
