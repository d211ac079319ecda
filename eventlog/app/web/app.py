"""The ASGI app of ``evlog web``: server-rendered pages over a ``Source``, in local or gateway mode.

``local_app(home, port)`` serves a workspace read-only to whoever holds its access token;
``gateway_app(pool)`` serves the gateway database to users who sign in, and the HTTP sync
API beside it. Pages (both modes unless noted):

================================  ==============================================================
``/sessions``                     sessions, newest first: filter by project, search box (messages
                                  and, in local mode, facts of every state)
``/s/<key>``                      a transcript, paginated (newest page first), tool calls and harness
                                  wrappers folded, prose as Markdown (``render``: never raw HTML);
                                  gateway mode: a form to add a message
``/s/<key>/m/<id>``               redirects to the page and anchor of one message
``/memory``  (local)              every MEMORY.md; each line links to its "why"
``/memory/past`` (local)          forgotten, archived and superseded facts, each with its why and
                                  how to bring it back
``/memory/why/<fact id>`` (local) run, model, prompt hash, tokens, source entries and messages,
                                  supersede chain
``/dream``  (local)               Dream runs: outcome, attempts, tokens, failures and how to retry
``/processors``  (local)          processor positions, lag and recorded losses
``/plots``                        messages per day per project; Dream tokens per day and memory
                                  size over time (local)
``/live``                         ``{"v": ...}``: changes when the pages may have (the sessions
                                  list and the processors page poll it and refresh themselves)
``/login``, ``/logout`` (gateway) signing in and out
================================  ==============================================================

Keys and ids appear in URLs base64url-encoded (any key, ``../x`` or NUL included, is one
path segment). Handlers are synchronous (Starlette runs them in its thread pool); the
security rules are in ``security``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import logging
import math
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eventlog.app.web import data, plots, render
from eventlog.app.web import security as S
from eventlog.app.web.sources import GatewaySource, LocalSource, Source
from eventlog.errors import BackendError, ConfigError, EvlogError, NotFound
from eventlog.timeutil import normalize_time

log = logging.getLogger("evlog.web")

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "templates")
STATIC = os.path.join(HERE, "static")
SESSIONS_PER_PAGE = 50
MESSAGES_PER_PAGE = 100
MAX_PER_PAGE = 2000
MAX_FORM_BYTES = 2 * 1024 * 1024
FOLD_CHARS = 600
FOLD_LINES = 14


# --------------------------------------------------------------------------- helpers for templates


def key_token(key: str) -> str:
    """A session key (or message id) as one URL path segment: ``k`` + base64url of its UTF-8."""
    return "k" + base64.urlsafe_b64encode(key.encode("utf-8", "surrogatepass")).rstrip(b"=").decode()


def key_from_token(token: str) -> str:
    """The key of ``key_token``; ``NotFound`` for anything else (a 404, like an unknown key)."""
    if not token.startswith("k"):
        raise NotFound("not a key")
    raw = token[1:]
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "surrogatepass")
    except (ValueError, UnicodeDecodeError):
        raise NotFound("not a key") from None


def anchor(message_id: Any) -> str:
    return "m-" + hashlib.sha1(str(message_id).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def show_time(value: Any) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC) of a timestamp, or the text as given if it is not one."""
    t = normalize_time(value) if isinstance(value, str) else ""
    return f"{t[:10]} {t[11:16]}" if t else (str(value) if value not in (None, "") else "")


def iso_time(value: Any) -> str:
    return normalize_time(value) if isinstance(value, str) else ""


def ago(value: Any, now: _dt.datetime | None = None) -> str:
    """A rough "3 h ago" for listings (the page script refines it in the reader's time zone)."""
    t = iso_time(value)
    if not t:
        return ""
    then = _dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    secs = ((now or _dt.datetime.now(_dt.UTC)) - then).total_seconds()
    if secs < 0:
        return show_time(value)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            n = int(secs // size)
            return show_time(value) if unit == "d" and n > 60 else f"{n} {unit} ago"
    return "just now"


def number(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def size(n: int) -> str:
    """Bytes for people: ``812 bytes``, ``4.2 KB``, ``1.3 MB``."""
    if n < 1024:
        return f"{n} byte{'s' if n != 1 else ''}"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


@dataclass
class ToolCall:
    name: str
    summary: str
    body: str


def tool_calls(calls: Any) -> list[ToolCall]:
    """Tool calls of a message for display (OpenAI ``function`` style, Anthropic ``input`` style, or raw)."""
    if not isinstance(calls, list):
        return [ToolCall("tool calls", "", _pretty(calls))] if calls else []
    out = []
    for c in calls:
        if not isinstance(c, dict):
            out.append(ToolCall("tool call", "", _pretty(c)))
            continue
        function = c.get("function")
        fn = function if isinstance(function, dict) else {}
        name = str(fn.get("name") or c.get("name") or c.get("type") or "tool call")
        args = fn.get("arguments", c.get("input", c.get("arguments")))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass
        body = args if isinstance(args, str) else _pretty(args)
        flat = " ".join(str(body).split())
        out.append(ToolCall(name, flat[:90] + ("…" if len(flat) > 90 else ""), body))
    return out


def _pretty(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


@dataclass
class MessageView:
    """One message as the transcript shows it."""

    id: str
    anchor: str
    role: str
    text: str
    time: str
    iso: str
    calls: list[ToolCall]
    fold: bool  # long tool output: shown folded
    summary: str
    thinking: str
    number: int
    parts: list[render.Part] = field(default_factory=list)  # prose: the author's text (Markdown) and folded wrappers


def _prose_parts(m: Any, content: str) -> list[render.Part]:
    """How a person's or a model's message shows: harness text folded, the rest as Markdown ([] for tool output)."""
    if m.role == "tool" or not isinstance(m.content, str) or not content.strip():
        return []
    extra = m.extra if isinstance(m.extra, dict) else {}
    harness = extra.get("harness")
    if harness or extra.get("isMeta") is True:  # a turn the harness wrote itself (Codex's environment, a meta line)
        label = str(harness).replace("_", " ") if harness else "harness text"
        return [render.Part("harness", content, label)]
    return render.parts(content)


def message_view(m: Any, index: int) -> MessageView:
    content = m.content if isinstance(m.content, str) else _pretty(m.content)
    fold = m.role == "tool" and (len(content) > FOLD_CHARS or content.count("\n") > FOLD_LINES)
    flat = " ".join(content.split())
    thinking = m.extra.get("thinking") if isinstance(m.extra, dict) else None
    return MessageView(id=str(m.id), anchor=anchor(m.id), role=str(m.role), text=content, time=show_time(m.timestamp),
                       iso=iso_time(m.timestamp), calls=tool_calls(m.tool_calls), fold=fold,
                       summary=flat[:140] + ("…" if len(flat) > 140 else ""),
                       thinking=thinking if isinstance(thinking, str) else ("" if thinking is None else _pretty(thinking)),
                       number=index + 1, parts=[] if fold else _prose_parts(m, content))


def summary_of(text: str, limit: int = 100) -> str:
    """The first ``limit`` characters of ``text`` on one line (what a folded block's summary shows)."""
    flat = " ".join(text.split())
    return flat[:limit] + ("…" if len(flat) > limit else "")


def pages(total: int, per: int) -> int:
    return max(1, math.ceil(total / per))


def int_arg(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    try:
        return min(hi, max(lo, int(request.query_params.get(name, default))))
    except ValueError:
        return default


def safe_next(value: str | None) -> str:
    """A redirect target on this server only (``/path``), else ``/sessions``."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value and "\n" not in value:
        return value
    return "/sessions"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.globals.update(key_token=key_token, anchor=anchor, show_time=show_time, iso_time=iso_time, ago=ago,
                       number=number, size=size, retry_command=data.RETRY_COMMAND,
                       markdown=render.markdown, summary_of=summary_of)
    env.filters["urlq"] = lambda v: urllib.parse.quote(str(v), safe="")
    return env


# --------------------------------------------------------------------------- the app


class WebApp:
    """Handlers shared by both modes; ``LocalWeb`` and ``GatewayWeb`` add how a request is let in."""

    mode = ""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.env = _env()

    # -- rendering ------------------------------------------------------------------------

    def render(self, request: Request, name: str, status: int = 200, headers: dict[str, str] | None = None,
               **ctx: Any) -> HTMLResponse:
        ctx.setdefault("nav", "")
        ctx.update(mode=self.mode, who=self.who(request), csrf=self.csrf(request), path=request.url.path,
                   writable=self.source.writable)
        return HTMLResponse(self.env.get_template(name).render(**ctx), status_code=status, headers=headers)

    def error(self, request: Request, status: int, title: str, detail: str) -> HTMLResponse:
        return self.render(request, "error.html", status, title=title, detail=detail)

    def who(self, request: Request) -> str:
        return ""

    def csrf(self, request: Request) -> str:
        return ""

    def user(self, request: Request) -> Any:
        return None

    def guard(self, request: Request) -> Response | None:
        """None if the request may go on, else the response that stops it (login page, 403...)."""
        return None

    def page(self, fn: Callable[..., Response]) -> Callable[[Request], Any]:
        """A GET handler: let in, run ``fn(request)`` in a worker thread, turn errors into pages."""
        def endpoint(request: Request) -> Response:
            stop = self.guard(request)
            if stop is not None:
                return stop
            try:
                return fn(request)
            except NotFound:
                return self.error(request, 404, "Not found", "There is no such page, session or message here.")
            except ConfigError as e:
                return self.error(request, 400, "That did not work", str(e))
            except BackendError as e:
                log.warning("web: %s", e)
                return self.error(request, 503, "The gateway database is unavailable", "Try again in a moment.")
            except EvlogError as e:  # e.g. projection files rewritten faster than a reader can read them
                log.warning("web: %s", e)
                return self.error(request, 503, "The workspace is busy", f"Reload the page in a moment ({e}).")

        return endpoint

    # -- pages ----------------------------------------------------------------------------

    def sessions(self, request: Request) -> Response:
        user = self.user(request)
        project = request.query_params.get("project")
        project = None if project is None or project == "*" else project
        q = request.query_params.get("q", "").strip()[:500]
        per = int_arg(request, "per", SESSIONS_PER_PAGE, 10, 500)
        page_no = int_arg(request, "page", 1, 1, 10**9)
        rows, total, projects = self.source.sessions(user, offset=(page_no - 1) * per, limit=per, project=project,
                                                     query=q or None)
        found = self.source.search(user, q, project) if q else None
        return self.render(request, "sessions.html", nav="sessions", rows=rows, total=total, page=page_no,
                           pages=pages(total, per), per=per, project=project, q=q, search=found, projects=projects)

    def transcript(self, request: Request) -> Response:
        user = self.user(request)
        key = key_from_token(request.path_params["k"])
        per = int_arg(request, "per", MESSAGES_PER_PAGE, 10, MAX_PER_PAGE)
        asked = int_arg(request, "page", 0, 0, 10**9) or None
        info, msgs, total, page_no = self.source.transcript(user, key, page=asked, per=per)
        views = [message_view(m, (page_no - 1) * per + i) for i, m in enumerate(msgs)]
        return self.render(request, "session.html", nav="sessions", info=info, key=key, messages=views, total=total,
                           page=page_no, pages=pages(total, per), per=per)

    def goto_message(self, request: Request) -> Response:
        user = self.user(request)
        key = key_from_token(request.path_params["k"])
        mid = key_from_token(request.path_params["m"])
        index = self.source.locate(user, key, mid)
        page_no = index // MESSAGES_PER_PAGE + 1
        return RedirectResponse(f"/s/{key_token(key)}?page={page_no}#{anchor(mid)}", status_code=303)

    def plots_page(self, request: Request) -> Response:
        user = self.user(request)
        charts = [("Messages per day, by project", plots.stacked_bars(
            self.source.messages_per_day(user), title="Messages per day by project", unit="messages"))]
        if isinstance(self.source, LocalSource):
            view = self.source.plots()
            charts.append(("Dream tokens per day", plots.stacked_bars(view.tokens, title="Dream tokens per day",
                                                                       unit="tokens")))
            charts.append(("Facts in MEMORY.md over time", plots.line(view.memory, title="Facts in MEMORY.md",
                                                                       unit="facts", name="facts")))
            charts.append(("MEMORY.md size over time", plots.line(view.memory, title="MEMORY.md size",
                                                                   unit="KB", name="kilobytes")))
        return self.render(request, "plots.html", nav="plots", charts=charts)

    def live(self, request: Request) -> Response:
        """``{"v": ...}``: what the page script polls to refresh a live page only when something changed."""
        return JSONResponse({"v": self.source.version(self.user(request))}, headers={"Cache-Control": "no-store"})

    def home(self, request: Request) -> Response:
        stop = self.guard(request)
        if stop is not None:
            return stop
        return RedirectResponse("/sessions", status_code=303)

    def routes(self) -> list[Any]:
        return [Route("/", self.home), Route("/sessions", self.page(self.sessions)),
                Route("/s/{k}", self.page(self.transcript)), Route("/s/{k}/m/{m}", self.page(self.goto_message)),
                Route("/plots", self.page(self.plots_page)), Route("/live", self.page(self.live)),
                Route("/healthz", lambda r: PlainTextResponse("ok\n")),
                Mount("/static", StaticFiles(directory=STATIC), name="static")]


# --------------------------------------------------------------------------- local mode


class LocalWeb(WebApp):
    """A workspace, read-only, for whoever holds the access token (see ``security``)."""

    mode = "local"

    def __init__(self, source: LocalSource, token: str) -> None:
        super().__init__(source)
        self.local = source
        self.token = token

    def who(self, request: Request) -> str:
        """The workspace shown in the header: only to a request that holds the token."""
        return self.local.home if S.same(request.cookies.get(S.LOCAL_COOKIE, ""), self.token) else ""

    def guard(self, request: Request) -> Response | None:
        given = request.query_params.get("token")
        if given is not None:
            if not S.same(given, self.token):
                return self.error(request, 403, "Wrong access token",
                                  "Open the exact URL that 'evlog web' printed (it holds the access token).")
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            url = request.url.path + ("?" + urllib.parse.urlencode(rest) if rest else "")
            return RedirectResponse(url, status_code=303, headers={"Set-Cookie": S.cookie_header(
                S.LOCAL_COOKIE, self.token, secure=False)})
        if S.same(request.cookies.get(S.LOCAL_COOKIE, ""), self.token):
            return None
        return self.error(request, 403, "This page needs its access token",
                          "Open the URL that 'evlog web' printed in its terminal: it carries a random token, so "
                          "other users of this machine and other web sites cannot read your workspace.")

    def memory(self, request: Request) -> Response:
        return self.render(request, "memory.html", nav="memory", files=self.local.memory_files())

    def past_memory(self, request: Request) -> Response:
        return self.render(request, "memory_past.html", nav="memory", groups=self.local.past_facts())

    def why(self, request: Request) -> Response:
        fact_id = key_from_token(request.path_params["f"])
        view = self.local.why(fact_id)
        if view is None:
            raise NotFound(fact_id)
        return self.render(request, "why.html", nav="memory", why=view)

    def dream(self, request: Request) -> Response:
        runs = self.local.dream_runs()
        return self.render(request, "dream.html", nav="dream", runs=runs, failed=[r for r in runs if r.failed])

    def processors(self, request: Request) -> Response:
        return self.render(request, "processors.html", nav="processors", rows=self.local.offsets(),
                           log_end=self.local.log_end(), home=self.local.home)

    def routes(self) -> list[Any]:
        return super().routes() + [Route("/memory", self.page(self.memory)),
                                   Route("/memory/past", self.page(self.past_memory)),
                                   Route("/memory/why/{f}", self.page(self.why)),
                                   Route("/dream", self.page(self.dream)),
                                   Route("/processors", self.page(self.processors))]


def local_app(home: str, port: int, *, token: str | None = None) -> Starlette:
    """The local-mode app over the workspace at ``home`` for a server on 127.0.0.1:``port``."""
    web = LocalWeb(LocalSource(home), token or S.new_secret())
    app = Starlette(routes=web.routes())
    app.state.web = web
    app.add_middleware(S.SecurityHeaders, allowed_hosts=S.loopback_hosts(port))
    return app


# --------------------------------------------------------------------------- gateway mode


class GatewayWeb(WebApp):
    """The gateway for signed-in users (see ``security`` and ``eventlog.app.gateway.auth``)."""

    mode = "gateway"

    def __init__(self, source: GatewaySource, *, secure_cookies: bool | None = None, policy: Any = None) -> None:
        super().__init__(source)
        self.gw = source
        self.secure_cookies = secure_cookies
        self.policy = policy

    def secure(self, request: Request) -> bool:
        return self.secure_cookies if self.secure_cookies is not None else request.url.scheme == "https"

    def cookie_name(self, request: Request) -> str:
        return S.SECURE_SESSION_COOKIE if self.secure(request) else S.SESSION_COOKIE

    def _session(self, request: Request) -> tuple[str, Any]:
        """(session token, user) of the request, cached on it; ("", None) if not signed in."""
        cached = request.scope.get("evlog.session")
        if cached is not None:
            return cached
        from eventlog.app.gateway import auth

        token = request.cookies.get(self.cookie_name(request), "")
        user = None
        if token:
            with self.gw.pool.connection() as conn:
                user = auth.lookup(conn, token, "web")
        got = (token, user) if user is not None else ("", None)
        request.scope["evlog.session"] = got
        return got

    def user(self, request: Request) -> Any:
        return self._session(request)[1]

    def who(self, request: Request) -> str:
        u = self.user(request)
        return u.email if u is not None else ""

    def csrf(self, request: Request) -> str:
        token = self._session(request)[0]
        return S.csrf_token(token) if token else request.scope.get("evlog.login_csrf", "")

    def guard(self, request: Request) -> Response | None:
        try:
            if self.user(request) is not None:
                return None
        except BackendError as e:
            log.warning("web: %s", e)
            return self.error(request, 503, "The gateway database is unavailable", "Try again in a moment.")
        nxt = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/login?next=" + urllib.parse.quote(nxt, safe=""), status_code=303)

    async def _form(self, request: Request) -> dict[str, str]:
        from eventlog.app.gateway.http_api import HTTPError, read_body

        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded":
            raise ConfigError("forms are sent as application/x-www-form-urlencoded")
        try:
            body = await read_body(request, MAX_FORM_BYTES)
        except HTTPError as e:
            raise ConfigError(e.message) from None
        try:
            pairs = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False,
                                           max_num_fields=20)
        except (UnicodeDecodeError, ValueError):
            raise ConfigError("the form could not be read") from None
        return dict(pairs)

    def _same_origin(self, request: Request) -> bool:
        return S.origin_ok({k.lower(): v for k, v in request.headers.items()}, request.url.scheme,
                           request.headers.get("host", ""))

    def _form_forged(self, request: Request, form: dict[str, str], expected: str) -> bool:
        """The one CSRF rule of every form post: its token is ``expected`` and it came from our origin."""
        return not expected or not S.same(form.get("csrf", ""), expected) or not self._same_origin(request)

    # -- signing in and out ---------------------------------------------------------------

    def login_page(self, request: Request, *, status: int = 200, message: str = "", email: str = "",
                   headers: dict[str, str] | None = None) -> Response:
        token = request.cookies.get(S.LOGIN_CSRF_COOKIE) or S.new_secret()
        request.scope["evlog.login_csrf"] = token
        cookie = S.cookie_header(S.LOGIN_CSRF_COOKIE, token, secure=self.secure(request), max_age=3600)
        resp = self.render(request, "login.html", status, headers=headers, message=message, email=email,
                           next=safe_next(request.query_params.get("next")))
        resp.headers.append("Set-Cookie", cookie)
        return resp

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return await run_in_threadpool(self.login_page, request)
        from eventlog.app.gateway import auth
        from eventlog.app.gateway.http_api import client_address

        try:
            form = await self._form(request)
        except ConfigError as e:
            return self.error(request, 400, "That did not work", str(e))
        expected = request.cookies.get(S.LOGIN_CSRF_COOKIE, "")
        if self._form_forged(request, form, expected):
            return self.error(request, 403, "Form expired", "Reload the sign-in page and try again.")
        email = form.get("email", "")[:255]
        nxt = safe_next(form.get("next"))

        def attempt() -> Response:
            try:
                with self.gw.pool.connection() as conn:
                    user, token = auth.login(conn, email, form.get("password", ""), kind="web",
                                             client=client_address(request), label="web",
                                             **({"policy": self.policy} if self.policy else {}))
            except auth.TooManyAttempts as e:
                return self.login_page(request, status=429, message=str(e), email=email,
                                       headers={"Retry-After": str(e.retry_after)})
            except auth.LoginFailed as e:
                return self.login_page(request, status=401, message=str(e), email=email)
            except BackendError as e:
                log.warning("web: %s", e)
                return self.error(request, 503, "The gateway database is unavailable", "Try again in a moment.")
            resp = RedirectResponse(nxt, status_code=303)
            resp.headers.append("Set-Cookie", S.cookie_header(self.cookie_name(request), token,
                                                              secure=self.secure(request), max_age=auth.WEB_TTL))
            resp.headers.append("Set-Cookie", S.cookie_header(S.LOGIN_CSRF_COOKIE, "", secure=self.secure(request),
                                                              max_age=0))
            return resp

        return await run_in_threadpool(attempt)

    async def logout(self, request: Request) -> Response:
        from eventlog.app.gateway import auth

        try:
            form = await self._form(request)
        except ConfigError as e:
            return self.error(request, 400, "That did not work", str(e))

        def run() -> Response:
            token, user = self._session(request)
            if user is not None:
                if self._form_forged(request, form, S.csrf_token(token)):
                    return self.error(request, 403, "Form expired", "Reload the page and try again.")
                with self.gw.pool.connection() as conn:
                    auth.revoke(conn, token)
            resp = RedirectResponse("/login", status_code=303)
            resp.headers.append("Set-Cookie", S.cookie_header(self.cookie_name(request), "",
                                                              secure=self.secure(request), max_age=0))
            return resp

        return await run_in_threadpool(run)

    async def add_message(self, request: Request) -> Response:
        try:
            form = await self._form(request)
        except ConfigError as e:
            return self.error(request, 400, "That did not work", str(e))

        def run() -> Response:
            stop = self.guard(request)
            if stop is not None:
                return stop
            token, user = self._session(request)
            if self._form_forged(request, form, S.csrf_token(token)):
                return self.error(request, 403, "Form expired", "Reload the page and try again "
                                  "(the form did not carry this session's token).")
            try:
                key = key_from_token(request.path_params["k"])
                msg, total = self.gw.add_message(user, key, form.get("content", ""))
            except NotFound:
                return self.error(request, 404, "Not found", "There is no such page, session or message here.")
            except ConfigError as e:
                return self.error(request, 400, "That did not work", str(e))
            except BackendError as e:
                log.warning("web: %s", e)
                return self.error(request, 503, "The gateway database is unavailable", "Try again in a moment.")
            return RedirectResponse(f"/s/{key_token(key)}?page={pages(total, MESSAGES_PER_PAGE)}#{anchor(msg.id)}",
                                    status_code=303)

        return await run_in_threadpool(run)

    def memory(self, request: Request) -> Response:
        return self.render(request, "memory.html", nav="memory", files=self.gw.memory_files(self.user(request)))

    def routes(self) -> list[Any]:
        return super().routes() + [Route("/memory", self.page(self.memory)),
                                   Route("/login", self.login, methods=["GET", "POST"]),
                                   Route("/logout", self.logout, methods=["POST"]),
                                   Route("/s/{k}/messages", self.add_message, methods=["POST"])]


def gateway_app(pool: Any, *, secure_cookies: bool | None = None, policy: Any = None,
                api: bool = True, max_body_bytes: int | None = None) -> Starlette:
    """The gateway-mode app over a connection pool (``eventlog.app.gateway.pool.Pool``), with the sync API."""
    from eventlog.app.gateway.http_api import SyncAPI

    web = GatewayWeb(GatewaySource(pool), secure_cookies=secure_cookies, policy=policy)
    routes = web.routes()
    sync_api = None
    if api:
        sync_api = SyncAPI(pool, policy=policy, max_body_bytes=max_body_bytes)
        routes = sync_api.routes() + routes
    app = Starlette(routes=routes)
    app.state.web = web
    app.state.sync_api = sync_api
    app.add_middleware(S.SecurityHeaders, hsts=bool(secure_cookies))
    return app


__all__ = ["EvlogError", "GatewayWeb", "LocalWeb", "gateway_app", "key_from_token", "key_token", "local_app"]
