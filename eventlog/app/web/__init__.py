"""``evlog web``: the web end, over the local workspace or the MySQL gateway.

* ``app`` builds the ASGI apps (Starlette, server-rendered Jinja2 templates, the script and
  stylesheet in ``static/`` served by evlog itself): ``local_app`` (a workspace read-only,
  behind a random access token, on 127.0.0.1) and ``gateway_app`` (users sign in; the HTTP
  sync API of ``eventlog.app.gateway.http_api`` beside the pages).
* ``sources`` is where pages get sessions and messages (``LocalSessionStore`` or
  ``MySQLSessionStore`` behind one interface); ``data`` is the ONE adapter to evlog's
  memory, audit, recall and processor APIs; ``plots`` draws SVG charts; ``security``
  holds the rules for tokens, cookies, CSRF and headers; ``server`` runs uvicorn.
"""

from __future__ import annotations

from eventlog.app.web.app import gateway_app, local_app
from eventlog.app.web.server import Running, serve_gateway, serve_local

__all__ = ["Running", "gateway_app", "local_app", "serve_gateway", "serve_local"]
