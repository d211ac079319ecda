"""Writes made on the gateway itself pass the redaction door (INVARIANTS I24).

Every other path redacts at the log writer's door (``eventlog.redact``); text typed into
the gateway's web view or written with ``MySQLSessionStore`` never reaches a log, so the
store redacts at its own write door (message content, tool calls, ``extra``, titles,
previews, metadata). Checked with a forensic byte search of every row of the user's in
every gateway table, for every secret of ``tests/secret_corpus.py``.
"""

from __future__ import annotations

import pytest

from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.app.gateway.store import MySQLSessionStore
from eventlog.app.web.app import key_token
from tests.app.gateway.test_erase_sync import _MySQL
from tests.app.web.test_web_gateway import app, make_user, page_csrf, pool, signed_in  # noqa: F401 - fixtures
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql
from tests.secret_corpus import CORPUS, REMEMBER_NOTE, leftovers

pytestmark = [pytest.mark.mysql, requires_mysql]


def _dump(email: str) -> bytes:
    return _MySQL().dump(email).encode("utf-8", "backslashreplace")


class _Memory:
    def __init__(self) -> None:
        self.gw = MemoryGateway("redact")

    def store(self, email: str):  # noqa: ANN201
        return self.gw.store(email)

    def dump(self, _email: str) -> bytes:
        with self.gw.lock:
            return repr(self.gw._tables).encode("utf-8", "backslashreplace")  # noqa: SLF001 - the whole database


class _MySQLTables:
    def store(self, email: str) -> MySQLSessionStore:
        return MySQLSessionStore(MYSQL_URL, email, password="a password 42")

    def dump(self, email: str) -> bytes:
        return _dump(email)


@pytest.mark.parametrize("backend", [_MySQLTables, _Memory])
def test_no_secret_written_through_the_gateway_session_store_reaches_its_tables(backend):
    email = fresh_email("redact")
    gateway = backend()
    with gateway.store(email) as store:
        for i, case in enumerate(CORPUS):
            key = f"s{i}"
            store.get_or_create(key, title=case.text, metadata={"note": case.text, "nested": [{"v": case.text}]})
            m = store.add_message(key, "user", case.text, tool_calls=[{"name": "bash", "arguments": case.text}],
                                  extra={"raw": case.text})
            assert case.secret not in m.content, f"{case.name}: the stored message came back with its secret"
            store.add_message(key, "assistant", f"ok: {case.text}")
            store.update_message(key, m.id, f"edited: {case.text}", tool_calls=[case.text], extra={"e": case.text})
        store.get_or_create("later", title="plain")
        store.update("later", title=REMEMBER_NOTE, preview=REMEMBER_NOTE, metadata={"n": REMEMBER_NOTE})
        shown = store.get("later")
        assert shown is not None and CORPUS[4].secret not in shown.title
        assert store.history("s0")[0].content.startswith("edited: ")
    found = leftovers(gateway.dump(email))
    assert found == [], f"secrets in the gateway's tables: {sorted({n for n, _ in found})}"


def test_a_message_typed_into_the_gateway_web_view_is_redacted(app, pool):  # noqa: F811 - fixtures
    email = make_user(pool, "webredact", {"s": ["first"]})
    c = signed_in(app, email)
    token = page_csrf(c)
    for case in CORPUS[:12]:
        r = c.post(f"/s/{key_token('s')}/messages", data={"content": case.text, "csrf": token})
        assert r.status_code == 303, case.name
    found = leftovers(_dump(email), CORPUS[:12])
    assert found == [], f"secrets typed into the web view reached the tables: {sorted({n for n, _ in found})}"
