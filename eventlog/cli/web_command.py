"""``evlog web``: the web app over the local workspace, or over the gateway for users who sign in."""

from __future__ import annotations

import click

from eventlog.cli import cli
from eventlog.cli.common import note
from eventlog.cli.render import json_line

_ENV = "$EVLOG_MYSQL_DSN"


@cli.command("web")
@click.option("--gateway", "gateway", default=None, is_flag=False, flag_value=_ENV, metavar="DSN",
              help="Serve the gateway database (mysql://user:password@host:port/db; '--gateway' alone reads "
                   "$EVLOG_MYSQL_DSN) to users who sign in, with the HTTP sync API; without it, serve this "
                   "workspace on 127.0.0.1 behind a random access token.")
@click.option("--host", default=None, metavar="ADDRESS",
              help="Gateway mode: the address to listen on (default 127.0.0.1; 0.0.0.0 for every interface). "
                   "Local mode always listens on 127.0.0.1.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port to listen on (local default: any free port; gateway default: 8080).")
@click.option("--secure-cookies/--no-secure-cookies", default=None,
              help="Gateway mode: mark the session cookie Secure (default: when the request came over HTTPS).")
@click.option("--forwarded-allow-ips", default=None, metavar="IPS",
              help="Gateway mode behind a reverse proxy: trust its X-Forwarded-For/-Proto from these addresses "
                   "(client addresses for rate limits, https for cookies).")
@click.option("--pool-size", type=click.IntRange(1, 256), default=16, show_default=True,
              help="Gateway mode: database connections per process.")
@click.option("--json", "as_json", is_flag=True, help="Print the URL as one JSON object ({\"url\": ..., \"mode\": \"local\"|\"gateway\"}).")
@click.pass_context
def web(ctx: click.Context, gateway: str | None, host: str | None, port: int | None, secure_cookies: bool | None,
        forwarded_allow_ips: str | None, pool_size: int, as_json: bool) -> None:
    """Browse sessions, transcripts, MEMORY.md and why each line is there, Dream runs and plots.

    Local mode (default): the workspace, read-only (the daemon and agents keep writing),
    on 127.0.0.1 at the URL printed, which carries a random access token: other local
    users and other web sites cannot use it. Stop it with Ctrl-C.

    Gateway mode (--gateway DSN): the sessions of the gateway database for users who sign
    in with e-mail and password ('evlog gateway user add'); each sees and changes only
    their own sessions and may add messages, which devices receive on 'evlog sync pull'.
    It also serves the HTTP sync API for 'evlog sync --gateway URL'. Stateless: run as many
    processes against one database as you like. Put it behind HTTPS.
    """
    from eventlog.app.web.server import serve_gateway, serve_local

    def ready(url: str) -> None:
        click.echo(json_line({"url": url, "mode": "gateway" if gateway else "local"}) if as_json else url)
        if not as_json:
            note("evlog web: serving " + ("the gateway" if gateway else ctx.obj["home"]) + "; Ctrl-C stops it")

    if gateway is None:
        for name, value in (("--host", host), ("--secure-cookies", secure_cookies),
                            ("--forwarded-allow-ips", forwarded_allow_ips)):
            if value is not None:
                raise click.UsageError(f"{name} is for gateway mode (--gateway); local mode listens on 127.0.0.1 only")
        from eventlog.app.workspace import load_config

        load_config(ctx.obj["home"])  # a clear error for a missing workspace
        serve_local(ctx.obj["home"], port=port or 0, on_ready=ready)
        return
    dsn = None if gateway == _ENV else gateway
    serve_gateway(dsn, host=host or "127.0.0.1", port=8080 if port is None else port, secure_cookies=secure_cookies,
                  forwarded_allow_ips=forwarded_allow_ips, pool_size=pool_size, on_ready=ready)
