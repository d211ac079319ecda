"""The SessionStore contract (``tests/contracts/session_store.py``) run against every backend.

* ``local``: ``LocalSessionStore`` over a fresh workspace;
* ``memory``: ``MemorySessionStore`` over a fresh ``MemoryGateway`` (no server needed);
* ``mysql``: ``MySQLSessionStore`` under a fresh user, when ``EVLOG_TEST_MYSQL_URL`` is set.

What only one backend promises is tested next to it: ``test_session_store.py`` (files),
``test_memory_store.py``, ``test_mysql_store.py`` (schema, indexes, security).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from eventlog.app.gateway.memory_store import MemoryGateway, MemorySessionStore
from eventlog.app.session_store import LocalSessionStore, SessionStore
from tests.contracts.session_store import SessionStoreContract
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql


class Backend:
    """Opens fresh stores of one kind and reopens them (the same data through a new store object)."""

    def __init__(self, open_: Callable[[], SessionStore], reopen: Callable[[SessionStore], SessionStore]) -> None:
        self._open, self._reopen = open_, reopen
        self.opened: list[SessionStore] = []

    def open(self) -> SessionStore:
        self.opened.append(self._open())
        return self.opened[-1]

    def reopen(self, store: SessionStore) -> SessionStore:
        store.close()
        self.opened.append(self._reopen(store))
        return self.opened[-1]

    def close(self) -> None:
        for s in self.opened:
            s.close()


def _local(workspace: str) -> Backend:
    def reopen(store: SessionStore) -> SessionStore:
        assert isinstance(store, LocalSessionStore)
        return LocalSessionStore.open(store.ws.home)

    return Backend(lambda: LocalSessionStore.open(workspace), reopen)


def _memory() -> Backend:
    gateway = MemoryGateway()

    def reopen(store: SessionStore) -> SessionStore:
        assert isinstance(store, MemorySessionStore)
        return gateway.store(store.user.email)

    return Backend(lambda: gateway.store(fresh_email()), reopen)


def _mysql() -> Backend:
    from eventlog.app.gateway.store import MySQLSessionStore

    def reopen(store: SessionStore) -> SessionStore:
        assert isinstance(store, MySQLSessionStore)
        return MySQLSessionStore(MYSQL_URL, store.user.email)

    return Backend(lambda: MySQLSessionStore(MYSQL_URL, fresh_email()), reopen)


@pytest.fixture(params=["local", "memory", pytest.param("mysql", marks=[pytest.mark.mysql, requires_mysql])])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "local":
        b = _local(request.getfixturevalue("workspace"))
    else:
        b = _memory() if request.param == "memory" else _mysql()
    yield b
    b.close()


class TestSessionStore(SessionStoreContract):
    @pytest.fixture
    def store(self, backend: Backend) -> SessionStore:
        self.backend = backend
        return backend.open()

    def reopen(self, store: SessionStore) -> SessionStore:
        return self.backend.reopen(store)
