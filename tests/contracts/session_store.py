"""The contract every SessionStore backend keeps (see eventlog.app.session_store.SessionStore).

A subclass provides a ``store`` fixture (a fresh, empty store) and ``reopen(store)`` (the
same data seen through a new store object, as after a process restart); every test here
then runs against it. ``tests/app/gateway/test_session_store_contract.py`` does so for every backend:
the local store, the in-memory gateway store and (with ``EVLOG_TEST_MYSQL_URL``) MySQL.
"""

from __future__ import annotations

import threading

import pytest

from eventlog.errors import EvlogError, NotFound

WEIRD_KEYS = ["../x", "a/b", "nul\x00key", "line\nbreak", "emoji 😀🎉", "k" * 1000, "'; DROP TABLE x; --", "%41", ""]


class SessionStoreContract:
    """Behaviour every session store shares (local, in-memory gateway, MySQL gateway)."""

    def reopen(self, store):  # pragma: no cover - overridden by each backend
        raise NotImplementedError

    def test_get_or_create_creates_once_and_returns_the_existing_session_unchanged(self, store):
        first = store.get_or_create("s1", title="first", metadata={"a": 1})
        again = store.get_or_create("s1", title="second", metadata={"b": 2})
        assert first.key == again.key == "s1"
        assert again.title == "first" and again.metadata == {"a": 1}
        assert [s.key for s in store.list()] == ["s1"]

    def test_messages_come_back_in_order_with_their_fields(self, store):
        store.get_or_create("s")
        sent = [store.add_message("s", role, f"text {i} 😀", extra={"n": i})
                for i, role in enumerate(["user", "assistant", "tool", "user"])]
        got = store.history("s")
        assert [m.content for m in got] == [f"text {i} 😀" for i in range(4)]
        assert [m.role for m in got] == ["user", "assistant", "tool", "user"]
        assert [m.id for m in got] == [m.id for m in sent]
        assert got[2].extra.get("n") == 2
        assert [m.content for m in store.history("s", 2)] == ["text 2 😀", "text 3 😀"]
        assert store.get("s").message_count == 4

    def test_add_message_creates_the_session_if_needed(self, store):
        store.add_message("new", "user", "hi")
        assert store.get("new") is not None and store.get("new").message_count == 1

    def test_a_message_id_given_twice_is_stored_once(self, store):
        a = store.add_message("s", "user", "one", message_id="m1")
        b = store.add_message("s", "user", "one again", message_id="m1")
        assert a.id == b.id == "m1" and b.content == "one"
        assert [m.content for m in store.history("s")] == ["one"]

    def test_tool_calls_round_trip(self, store):
        calls = [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{\"cmd\": \"ls\"}"}}]
        store.add_message("s", "assistant", "", tool_calls=calls)
        assert store.history("s")[0].tool_calls == calls

    def test_list_is_newest_first(self, store):
        for key, ts in [("old", "2026-01-01T00:00:00Z"), ("new", "2026-03-01T00:00:00Z"), ("mid", "2026-02-01T00:00:00Z")]:
            store.add_message(key, "user", "x", timestamp=ts)
        assert [s.key for s in store.list()] == ["new", "mid", "old"]

    def test_update_changes_only_what_is_given(self, store):
        store.get_or_create("s", title="t", metadata={"a": 1})
        store.update("s", title="t2")
        store.update("s", metadata={"b": 2})
        store.update("s", preview="pv")
        info = store.get("s")
        assert (info.title, info.preview, info.metadata) == ("t2", "pv", {"a": 1, "b": 2})
        with pytest.raises(NotFound):
            store.update("missing", title="x")

    def test_delete_removes_the_session_and_a_new_one_starts_empty(self, store):
        store.add_message("s", "user", "before", message_id="m1")
        assert store.delete("s") is True
        assert store.delete("s") is False
        assert store.get("s") is None and [s.key for s in store.list()] == []
        with pytest.raises(NotFound):
            store.history("s")
        store.add_message("s", "user", "after", message_id="m1")
        assert [m.content for m in store.history("s")] == ["after"]

    def test_unknown_session_history_is_not_found(self, store):
        with pytest.raises(NotFound):
            store.history("nope")
        assert store.get("nope") is None

    def test_an_unknown_role_is_rejected(self, store):
        with pytest.raises(EvlogError):
            store.add_message("s", "wizard", "x")

    @pytest.mark.parametrize("key", WEIRD_KEYS, ids=lambda k: repr(k)[:20])
    def test_any_key_and_content_is_stored_verbatim(self, store, key):
        content = "'; DROP TABLE gateway_sessions; -- \\ \" \x01 " + "长" * 3000 + " 😀"
        store.add_message(key, "user", content)
        assert store.get(key).key == key
        assert store.history(key)[-1].content == content
        assert key in [s.key for s in store.list()]

    def test_data_survives_reopening(self, store):
        store.get_or_create("s", title="kept")
        store.add_message("s", "user", "persisted")
        again = self.reopen(store)
        assert again.get("s").title == "kept"
        assert [m.content for m in again.history("s")] == ["persisted"]

    def test_concurrent_writers_in_threads_lose_nothing(self, store):
        def worker(n: int) -> None:
            for i in range(25):
                store.add_message(f"t{n % 2}", "user", f"{n}-{i}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total = sum(len(store.history(k)) for k in ("t0", "t1"))
        assert total == 100
        for k in ("t0", "t1"):
            for n in range(4):
                mine = [m.content for m in store.history(k) if m.content.startswith(f"{n}-")]
                assert mine == sorted(mine, key=lambda c: int(c.split("-")[1]))
