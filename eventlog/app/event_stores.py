"""Which event store a device syncs its log with (issue 22): the gateway's HTTP API or its database.

``open_store(home, gateway=URL)`` uses the token ``evlog sync login`` keeps for that gateway
(the account is the token's); ``open_store(home, dsn=URL, user=EMAIL)`` talks to the database
itself (one trusted user). The store classes live with the gateway
(``eventlog.app.gateway.http_events.HttpEventStore``, ``eventlog.app.gateway.event_store.MySQLEventStore``)
and are imported by name only when used. ``store_name`` is how the log's positions name the
store: the gateway's base URL, or ``host:port/database`` (never credentials).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from eventlog.errors import ConfigError
from eventlog.replication.store import EventStore

HTTP_STORE = ("eventlog.app.gateway.http_events", "HttpEventStore")
MYSQL_STORE = ("eventlog.app.gateway.event_store", "MySQLEventStore")


@dataclass
class OpenStore:
    """A store, the account this device syncs as there, and the store's name in the log."""

    store: EventStore
    account: str
    store_name: str

    def close(self) -> None:
        closer = getattr(self.store, "close", None)
        if callable(closer):
            closer()


def _store_class(where: tuple[str, str]) -> Any:
    module, name = where
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"this evlog has no event store {module}.{name} (the gateway's side of issue 22): "
                          "sync the log's events needs it") from e


def open_store(home: str, *, gateway: str | None = None, dsn: str | None = None, user: str | None = None) -> OpenStore:
    """The event store to sync with (see the module docstring)."""
    if gateway:
        from eventlog.app.gateway.credentials import load_token
        from eventlog.app.gateway.http_client import GatewayURL

        base = GatewayURL.parse(gateway).base
        saved = load_token(home, base)
        if saved is None:
            raise ConfigError(f"no token for {base} in this workspace; run 'evlog sync login --gateway {base} "
                              "--user EMAIL' first")
        email, token = saved
        if user is not None and user.strip().lower() != email.strip().lower():
            raise ConfigError(f"this workspace is logged in to {base} as {email}, not {user}")
        return OpenStore(_store_class(HTTP_STORE)(base, token), email, base)
    if dsn:
        from eventlog.app.gateway.connection import DSN

        if not user:
            raise ConfigError("--dsn needs --user EMAIL (direct sync trusts it: one trusted user only)")
        return OpenStore(_store_class(MYSQL_STORE)(dsn), user.strip().lower(), DSN.parse(dsn).target)
    raise ConfigError("give --gateway URL (after 'evlog sync login') or --dsn URL with --user EMAIL")
