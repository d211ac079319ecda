"""Running the web app with uvicorn: ``serve_local`` / ``serve_gateway`` (what ``evlog web`` calls), ``Running``.

The listening socket is bound here before the app is built, so a port of 0 (any free
port) is known to the app (local mode answers only its own ``Host``) and to the URL
printed. Uvicorn's access log is off: URLs can carry the local access token, and nothing
secret is ever logged; warnings and errors go to stderr.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from eventlog.errors import ConfigError

LOOPBACK = "127.0.0.1"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(512)
    sock.setblocking(False)
    return sock


def _config(app: Any, *, proxy_headers: bool = False, forwarded_allow_ips: str | None = None,
            header_timeout: float | None = None, body_timeout: float | None = None) -> Any:
    """uvicorn's config; requests sent too slowly are cut off (``eventlog.app.gateway.http_deadlines``)."""
    import uvicorn

    from eventlog.app.gateway import http_deadlines as D

    http = D.protocol(header_timeout or D.HEADER_TIMEOUT, body_timeout or D.BODY_TIMEOUT)
    return uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=proxy_headers,
                          forwarded_allow_ips=forwarded_allow_ips, server_header=False, date_header=True,
                          timeout_keep_alive=30, lifespan="off", http=http)


class Running:
    """A uvicorn server in a background thread (tests, benchmarks, embedding): ``url``, ``stop()``."""

    def __init__(self, app: Any, sock: socket.socket, url: str, **config: Any) -> None:
        import uvicorn

        self.app, self.sock, self.url = app, sock, url
        self.server = uvicorn.Server(_config(app, **config))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, name="evlog-web",
                                       daemon=True)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def start(self, timeout: float = 20.0) -> Running:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        web = getattr(self.app.state, "web", None)
        if web is not None:
            web.source.close()

    def __enter__(self) -> Running:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def local(home: str, *, port: int = 0, token: str | None = None) -> tuple[Any, socket.socket, str]:
    """The local-mode app bound to 127.0.0.1:``port``, its socket and the URL with its access token."""
    from eventlog.app.web import security
    from eventlog.app.web.app import local_app

    token = token or security.new_secret()
    sock = bind(LOOPBACK, port)
    port = sock.getsockname()[1]
    try:
        app = local_app(home, port, token=token)
    except BaseException:
        sock.close()
        raise
    return app, sock, f"http://{LOOPBACK}:{port}/?token={token}"


def gateway(dsn: Any, *, host: str = LOOPBACK, port: int = 8080, secure_cookies: bool | None = None,
            pool_size: int = 16, policy: Any = None, timeouts: Any = None,
            max_body_bytes: int | None = None) -> tuple[Any, socket.socket, str]:
    """The gateway-mode app (schema migrated) bound to ``host``:``port``, its socket and its URL."""
    from eventlog.app.gateway.pool import Pool
    from eventlog.app.web.app import gateway_app

    pool = Pool(dsn, size=pool_size, timeouts=timeouts)
    try:
        pool.migrate()
        app = gateway_app(pool, secure_cookies=secure_cookies, policy=policy, max_body_bytes=max_body_bytes)
        if app.state.sync_api is not None:
            app.state.sync_api.max_packet  # noqa: B018 - read it now, not on the event loop later
        sock = bind(host, port)
    except BaseException:
        pool.close()
        raise
    shown = f"[{host}]" if ":" in host else host
    return app, sock, f"http://{shown}:{sock.getsockname()[1]}/"


def serve_local(home: str, *, port: int = 0, token: str | None = None,
                on_ready: Callable[[str], None] = print) -> None:
    """Serve the workspace at ``home`` on 127.0.0.1 until interrupted; ``on_ready(url)`` gets the URL to open."""
    import uvicorn

    from eventlog.app import recall as rc

    app, sock, url = local(home, port=port, token=token)
    rc.warm(home)  # a long-lived process: hybrid recall once the model is loaded (in the background)
    on_ready(url)
    try:
        uvicorn.Server(_config(app)).run(sockets=[sock])
    finally:
        sock.close()
        app.state.web.source.close()


def serve_gateway(dsn: Any, *, host: str = LOOPBACK, port: int = 8080, secure_cookies: bool | None = None,
                  forwarded_allow_ips: str | None = None, pool_size: int = 16, timeouts: Any = None,
                  on_ready: Callable[[str], None] = print) -> None:
    """Serve the gateway database (pages and sync API) on ``host``:``port`` until interrupted."""
    import uvicorn

    app, sock, url = gateway(dsn, host=host, port=port, secure_cookies=secure_cookies, pool_size=pool_size,
                             timeouts=timeouts)
    on_ready(url)
    try:
        uvicorn.Server(_config(app, proxy_headers=forwarded_allow_ips is not None,
                               forwarded_allow_ips=forwarded_allow_ips)).run(sockets=[sock])
    finally:
        sock.close()
        app.state.web.source.close()
