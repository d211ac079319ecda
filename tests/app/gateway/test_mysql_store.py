"""The MySQL gateway store against a real server: schema, indexes and security (the shared contract: test_session_store_contract.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventlog.app.gateway import rows as R
from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.schema import MIGRATIONS, applied_migrations, migrate
from eventlog.app.gateway.store import LIST_SQL, MySQLSessionStore
from eventlog.app.gateway.users import hash_password, verify_password
from eventlog.errors import BackendError, ConfigError, NotFound
from tests.mysql_helpers import MYSQL_URL, admin_connection, fresh_email, kill, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]


@pytest.fixture
def store():
    s = MySQLSessionStore(MYSQL_URL, fresh_email())
    yield s
    s.close()


# --------------------------------------------------------------------------- schema


def test_migrations_are_recorded_by_name_in_order_and_applied_once():
    names = [fn.__name__ for fn in MIGRATIONS]
    assert names == sorted(names) and all(n[0] == "m" and n[1:4].isdigit() for n in names)
    conn = Connection(DSN.parse(MYSQL_URL))
    try:
        migrate(conn)
        assert migrate(conn) == []
        assert applied_migrations(conn) == names
    finally:
        conn.close()


def test_a_fresh_database_is_migrated_from_scratch_and_uses_utf8mb4_everywhere():
    d = DSN.parse(MYSQL_URL)
    scratch = f"{d.database}_mig"
    query(f"DROP DATABASE IF EXISTS `{scratch}`")
    query(f"CREATE DATABASE `{scratch}` CHARACTER SET utf8mb4")
    try:
        url = MYSQL_URL.rsplit("/", 1)[0] + "/" + scratch
        with MySQLSessionStore(url, fresh_email()) as s:
            s.add_message("k", "user", "x")
        cols = query("SELECT table_name, column_name, character_set_name, data_type FROM information_schema.columns "
                     "WHERE table_schema = %s AND table_name LIKE 'gateway%%'", (scratch,))
        texts = [c for c in cols if c[3] in ("varchar", "text", "longtext", "mediumtext", "char")]
        assert texts and {c[2] for c in texts} == {"utf8mb4"}
        types = {(c[0], c[1]): c[3] for c in cols}
        assert types[("gateway_session_messages", "content")] == "longtext"
        rules = query("SELECT constraint_name, delete_rule FROM information_schema.referential_constraints "
                      "WHERE constraint_schema = %s", (scratch,))
        assert dict(rules)["fk_gateway_messages_session"] == "CASCADE"
        assert [r[0] for r in query(f"SELECT name FROM `{scratch}`._evlog_migrations ORDER BY name")] == \
            [fn.__name__ for fn in MIGRATIONS]
    finally:
        query(f"DROP DATABASE IF EXISTS `{scratch}`")


def test_deleting_a_user_cascades_to_their_sessions_and_messages(store):
    store.add_message("s", "user", "x")
    query("DELETE FROM gateway_users WHERE id = %s", (store.user_id,))
    assert query("SELECT COUNT(*) FROM gateway_sessions WHERE user_id = %s", (store.user_id,))[0][0] == 0
    assert query("SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s", (store.user_id,))[0][0] == 0


def _explain(sql: str, params: tuple) -> list[dict]:
    conn = admin_connection()
    try:
        import pymysql

        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("ANALYZE TABLE gateway_sessions, gateway_session_messages")
            cur.fetchall()
            cur.execute("EXPLAIN " + sql, params)
            return list(cur.fetchall())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def crowded():
    """Two users with many sessions and messages, so the optimizer has a real choice."""
    users = [MySQLSessionStore(MYSQL_URL, fresh_email("crowd")) for _ in range(2)]
    for s in users:
        conn = s.conn

        def fill(cur, s=s):
            R.next_change_seq(cur, s.user_id)
            regs = [R.SessionRow(key=f"k{i}", deleted=False, version=(1_000_000 + i, "t", "r"), active_ms=1_000_000 + i)
                    for i in range(300)]
            R.upsert_sessions(cur, s.user_id, regs)
            msgs = [R.MessageRow(key=f"k{i % 10}", message_id=f"m{i}", role="user", content="c", version=(1, "t", "r"))
                    for i in range(2000)]
            R.upsert_messages(cur, s.user_id, msgs)

        conn.transaction(fill)
    yield users
    for s in users:
        s.close()


def test_listing_a_users_sessions_newest_first_uses_an_index_and_no_filesort(crowded):
    plan = _explain(LIST_SQL, (crowded[0].user_id,))
    outer = plan[0]
    assert outer["table"] == "s" and outer["key"] == "ix_gateway_sessions_list", plan
    assert "filesort" not in (outer["Extra"] or ""), plan
    counts = [p for p in plan if p["table"] == "m"]
    assert counts and counts[0]["key"] in ("PRIMARY", "uq_gateway_messages_id"), plan


def test_reading_a_sessions_history_uses_an_index_and_no_filesort(crowded):
    for order in ("ORDER BY pos", "ORDER BY pos DESC LIMIT 50"):
        plan = _explain(f"{R.MESSAGE_SELECT} WHERE user_id = %s AND key_hash = %s {order}",
                        (crowded[0].user_id, R.key_hash("k3")))
        assert plan[0]["key"] == "PRIMARY", plan  # (user_id, key_hash, pos): the session's rows in order
        assert "filesort" not in (plan[0]["Extra"] or ""), plan


def test_pulling_changes_uses_the_change_counter_indexes(crowded):
    for table, index in (("gateway_sessions", "ix_gateway_sessions_changes"),
                         ("gateway_session_messages", "ix_gateway_messages_changes")):
        plan = _explain(f"SELECT change_seq FROM {table} WHERE user_id = %s AND change_seq > %s ORDER BY change_seq "
                        "LIMIT 1 OFFSET 99", (crowded[0].user_id, 0))
        assert plan[0]["key"] == index, plan


# --------------------------------------------------------------------------- content


def test_long_text_and_four_byte_utf8_survive_the_round_trip(store):
    big = ("长文本 🐈‍⬛ 𝄞 " * 70_000)[:1_000_000]
    store.add_message("s", "assistant", big, tool_calls=[{"name": "🔥", "args": "'\"\\"}], extra={"e": "😀"})
    got = store.history("s")[0]
    assert got.content == big and got.tool_calls == [{"name": "🔥", "args": "'\"\\"}] and got.extra == {"e": "😀"}


def test_keys_and_ids_differing_only_in_trailing_spaces_or_case_are_different(store):
    for key in ("a", "a ", "A"):
        store.add_message(key, "user", f"in {key!r}", message_id="m")
    store.add_message("a", "user", "second", message_id="m ")
    assert sorted(s.key for s in store.list()) == ["A", "a", "a "]
    assert [m.content for m in store.history("a")] == ["in 'a'", "second"]


def test_injection_shaped_message_ids_and_metadata_are_stored_verbatim(store):
    evil = "x'); DELETE FROM gateway_users; --"
    store.get_or_create(evil, title=evil, metadata={evil: evil, "%s": "%(x)s"})
    store.add_message(evil, "user", evil, message_id=evil)
    assert store.get(evil).metadata == {evil: evil, "%s": "%(x)s"}
    assert store.history(evil)[0].id == evil
    assert query("SELECT COUNT(*) FROM gateway_users WHERE id = %s", (store.user_id,))[0][0] == 1


@given(st.text())
def test_our_fast_escape_is_exactly_the_drivers(text):
    import pymysql.converters

    assert R.escape_string(text) == pymysql.converters.escape_string(text)
    assert R.literal(text) == "'" + pymysql.converters.escape_string(text) + "'"


def test_rendered_statements_round_trip_any_text(store):
    nasty = ["\\'; DROP TABLE gateway_users; --", "\x00\x1a\r\n\\\"'", "%s %(x)s {}", "😀" * 10, "a\\", "\\"]
    for i, text in enumerate(nasty):
        store.add_message(text or "k", "user", text, message_id=text, extra={text: text})
        got = store.history(text)[0]
        assert (got.id, got.content, got.extra) == (text, text, {text: text}), i


# --------------------------------------------------------------------------- users and security


def test_one_user_never_sees_or_changes_another_users_sessions(store):
    store.get_or_create("shared-key", title="mine")
    store.add_message("shared-key", "user", "private")
    with MySQLSessionStore(MYSQL_URL, fresh_email("other")) as other:
        assert other.list() == [] and other.get("shared-key") is None
        with pytest.raises(NotFound):
            other.history("shared-key")
        with pytest.raises(NotFound):
            other.update("shared-key", title="stolen")
        assert other.delete("shared-key") is False
        other.add_message("shared-key", "user", "theirs")
        assert [m.content for m in other.history("shared-key")] == ["theirs"]
    assert store.get("shared-key").title == "mine"
    assert [m.content for m in store.history("shared-key")] == ["private"]


def test_passwords_are_salted_scrypt_hashes():
    a, b = hash_password("correct horse"), hash_password("correct horse")
    assert a != b and a.startswith("scrypt$n=16384,r=8,p=1$")
    assert verify_password("correct horse", a) and not verify_password("wrong", a)
    assert not verify_password("x", "") and not verify_password("x", "md5$abc")


def test_a_user_created_with_a_password_can_check_it():
    email = fresh_email()
    with MySQLSessionStore(MYSQL_URL, email, password="s3cret") as s:
        assert s.check_password("s3cret") and not s.check_password("nope")
        stored = query("SELECT password_hash FROM gateway_users WHERE id = %s", (s.user_id,))[0][0]
        assert "s3cret" not in stored and stored.startswith("scrypt$")
        s.set_password("new one")
        assert s.check_password("new one")
    with MySQLSessionStore(MYSQL_URL, email.upper()) as again:  # e-mails are case-insensitive
        assert again.check_password("new one")


def test_a_wrong_password_gives_a_backend_error_that_does_not_contain_it():
    d = DSN.parse(MYSQL_URL)
    secret = "Sup3r-S3cret-pw"
    url = f"mysql://{d.user}:{secret}@{d.host}:{d.port}/{d.database}"
    with pytest.raises(BackendError) as info:
        MySQLSessionStore(url, fresh_email())
    message = str(info.value)
    assert secret not in message and d.target in message
    assert "1045" in message or "Access denied" in message
    assert secret not in repr(DSN.parse(url))


def test_a_malformed_dsn_is_a_config_error_that_does_not_echo_it(monkeypatch):
    with pytest.raises(ConfigError) as info:
        DSN.parse("mysql://u:Pw-1234@host:notaport/db")
    assert "Pw-1234" not in str(info.value)
    monkeypatch.delenv("EVLOG_MYSQL_DSN", raising=False)
    with pytest.raises(ConfigError, match="EVLOG_MYSQL_DSN"):
        DSN.parse(None)
    monkeypatch.setenv("EVLOG_MYSQL_DSN", "mysql://a:b@h:1/d")
    assert DSN.parse(None).target == "h:1/d"


def test_the_store_survives_its_connection_being_killed(store):
    store.add_message("s", "user", "before")
    kill(store.conn.thread_id())
    assert [m.content for m in store.history("s")] == ["before"]
    store.add_message("s", "user", "after")
    assert store.conn.reconnects == 1
    assert [m.content for m in store.history("s")] == ["before", "after"]


# --------------------------------------------------------------------------- last write wins


def _upsert(store, regs):
    def run(cur):
        R.next_change_seq(cur, store.user_id)
        R.upsert_sessions(cur, store.user_id, regs)

    store.conn.transaction(run)


def _register(store, key):
    return store.conn.transaction(lambda cur: R.read_sessions(cur, store.user_id, [key])[key])


@pytest.mark.parametrize("order", ["older first", "newer first"])
@pytest.mark.parametrize(("a", "b"), [
    ((1000, "dev:a", "r1"), (2000, "dev:a", "r0")),  # later time wins
    ((1000, "dev:a", "r9"), (1000, "dev:b", "r0")),  # same time: greater origin wins
    ((1000, "dev:a", "r1"), (1000, "dev:a", "r2")),  # same time and origin: greater content hash wins
])
def test_the_greatest_version_wins_whatever_the_arrival_order(store, order, a, b):
    old = R.SessionRow(key="s", title="old", deleted=False, version=a)
    new = R.SessionRow(key="s", title="new", deleted=False, version=b)
    _upsert(store, [old, new] if order == "older first" else [new, old])
    got = _register(store, "s")
    assert got.title == "new" and got.version == b


def test_a_tombstone_beats_older_writes_and_drops_older_messages_but_keeps_newer_ones(store):
    store.add_message("s", "user", "old", message_id="m-old")
    reg = _register(store, "s")
    tomb_ms = reg.version[0] + 10
    tomb = R.SessionRow(key="s", deleted=True, version=(tomb_ms, "dev:x", R.TOMBSTONE_REV), cleared=(tomb_ms, "dev:x", R.TOMBSTONE_REV))
    _upsert(store, [tomb])
    assert store.get("s") is None
    stale = R.SessionRow(key="s", title="stale", deleted=False, version=(tomb_ms - 1, "dev:y", "r"))
    _upsert(store, [stale])
    assert store.get("s") is None

    def late_messages(cur):
        R.next_change_seq(cur, store.user_id)
        R.upsert_messages(cur, store.user_id, [
            R.MessageRow(key="s", message_id="too-old", role="user", content="x", version=(tomb_ms - 5, "dev:y", "r")),
            R.MessageRow(key="s", message_id="newer", role="user", content="y", version=(tomb_ms + 5, "dev:y", "r")),
        ])

    store.conn.transaction(late_messages)
    assert [m.id for m in store.history("s")] == ["newer"]
    assert store.get("s").title == ""  # visible through a message written after the delete, fields empty


def test_hand_written_sql_edits_are_versioned_and_counted_by_triggers(store):
    store.get_or_create("s", title="t")
    before = _register(store, "s")
    query("UPDATE gateway_sessions SET title = 'by hand' WHERE user_id = %s", (store.user_id,))
    after = _register(store, "s")
    assert after.title == "by hand" and after.version[1] == "sql" and after.version[0] > before.version[0]
    assert after.change_seq > before.change_seq
    query("UPDATE gateway_sessions SET active_at = active_at WHERE user_id = %s", (store.user_id,))
    assert _register(store, "s").change_seq == after.change_seq  # no change, no new counter value


def test_a_hand_written_delete_is_a_tombstone_that_clears_the_messages(store):
    store.add_message("s", "user", "x")
    query("UPDATE gateway_sessions SET deleted_at = UTC_TIMESTAMP(3) WHERE user_id = %s", (store.user_id,))
    assert store.get("s") is None
    assert query("SELECT COUNT(*) FROM gateway_session_messages WHERE user_id = %s", (store.user_id,))[0][0] == 0
    reg = _register(store, "s")
    assert reg.deleted and reg.cleared == reg.version and reg.version[1] == "sql"


def test_update_message_replaces_content_and_merges_extra(store):
    store.add_message("s", "assistant", "partial", message_id="m", extra={"a": 1})
    store.update_message("s", "m", "complete", extra={"b": 2})
    got = store.history("s")[0]
    assert (got.content, got.extra) == ("complete", {"a": 1, "b": 2})
    with pytest.raises(NotFound):
        store.update_message("s", "nope", "x")
