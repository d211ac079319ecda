"""Whatever a user types, recall answers with hits or a ConfigError that says what is wrong.

FTS5 has a query language (quotes, ``*``, ``NEAR``, ``AND``/``OR``/``NOT``, parentheses,
``-``, ``:``, ``^``, ``+``); user text must never reach it as syntax. Filters (scope,
project, session, role, time) must hold exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.errors import ConfigError
from eventlog.events import HistoryAppended, MemoryAppended, MessageAppended, SessionCreated
from projections.recall import Hit, RecallIndex, recall
from projections.recall.query import split_question, time_bound

HOSTILE = [
    '"', '""', '"unbalanced quote', "it's", "a'b\"c", "*", "**", "bug*", "*bug", "NEAR", "NEAR(a b)", "NEAR(a b, 2)",
    "NEAR/3", "a AND", "AND", "OR", "NOT", "a NOT b", "NOT a", "(", ")", "((a)", "a)", "()", "-", "-a", "a-b", "--",
    ":", "body:", "t : x", "tags: xk0", "{body aux}: x", "^a", "+a", "a+b", "col:(x OR y)", "xk0", "xp123 xs456",
    "'; DROP TABLE docs; --", "\x00", "a\x00b", "\ud800", "%", "_", "\\", "[", "]", "{", "}", "|", "~", "@#$%^&*",
    "rank", "rowid", "MATCH", "bm25(fts)", "delete", "'delete-all'", "integrity-check", "東京\"", "「引用」", "\u3000",
    "\u200b", "🙂", "e\u0301", "ı", "ß", "ǅ", "x" * 5000, "NEAR(" * 200, "(" * 500 + "a", '"' * 999,
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    ix = RecallIndex(str(tmp_path_factory.mktemp("q") / "recall.sqlite"))
    evs = [
        SessionCreated(seq=1, ts="2026-01-01T09:00:00.000Z", session_key="work:1", project="evlog", title="t"),
        MessageAppended(seq=2, ts="2026-01-01T09:01:00.000Z", session_key="work:1", message_id="a", role="user",
                        content="Should the cache use xxhash or sha256 for keys? NEAR(bug) is a funny string."),
        MessageAppended(seq=3, ts="2026-01-01T09:02:00.000Z", session_key="work:1", message_id="b",
                        role="assistant", content="We decided: xxhash, because it is fast. Bug 42 was the NOT case.",
                        timestamp="2026-01-02T10:00:00Z"),
        SessionCreated(seq=4, ts="2026-01-03T09:00:00.000Z", session_key="home:1", project="garden", title="g"),
        MessageAppended(seq=5, ts="2026-01-03T09:01:00.000Z", session_key="home:1", message_id="a", role="user",
                        content="The tomato plants need more water; the cache of seeds is in the shed."),
        HistoryAppended(seq=6, ts="2026-01-04T00:00:00.000Z", text="Summary: chose xxhash for the cache keys.",
                        source="consolidator", project="evlog", session_key="work:1"),
        MemoryAppended(seq=7, ts="2026-01-05T00:00:00.000Z", fact_id="f1", scope="project",
                       section="## Project Context", text="The cache keys are xxhash digests.", project="evlog"),
    ]
    ix.catch_up(evs)
    yield ix
    ix.close()


@pytest.mark.parametrize("q", HOSTILE)
def test_hostile_queries_return_hits_or_a_clear_error(index, q):
    try:
        hits = recall(index, q)
    except ConfigError as e:
        assert "no words" in str(e)
        assert split_question(q).empty
    else:
        assert all(isinstance(h, Hit) for h in hits)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(list('"*():-^+{}NEARORNOTAND ')), max_size=80),
       scope=st.sampled_from(["all", "messages", "history", "facts"]),
       role=st.sampled_from([None, "user", '"', "NOT"]), project=st.sampled_from([None, "evlog", '")', ""]))
def test_any_text_any_filter_never_raises_anything_but_config_error(index, q, scope, role, project):
    try:
        hits = recall(index, q, scope=scope, role=role, project=project, limit=5)
    except ConfigError:
        assert split_question(q).empty
        return
    assert len(hits) <= 5
    for h in hits:
        assert role is None or (h.kind == "message" and h.role == role)
        assert project is None or h.project == project


def test_ten_kilobyte_query(index):
    q = ("what did we decide about the cache keys xxhash " * 250)[:10_240]
    hits = recall(index, q)
    assert hits and hits[0].text


def test_empty_and_wordless_queries_say_why(index):
    for q in ("", "   ", "?!", "***", "()", "\u3000"):
        with pytest.raises(ConfigError, match="no words to search for"):
            recall(index, q)


def test_only_stop_words_still_search(index):
    hits = recall(index, "it is the")
    assert hits and "is" in hits[0].text.split() or any(" is " in h.text for h in hits)


def test_operators_are_plain_words(index):
    hits = recall(index, "NEAR(bug)")  # user text with FTS5 syntax: searched as the words near, bug
    assert hits[0].message_id == "a" and "[NEAR]([bug])" in hits[0].snippet
    assert {h.message_id for h in recall(index, '"NOT" -case')} >= {"b"}


@pytest.mark.parametrize("bad", [
    {"scope": "everything"}, {"limit": 0}, {"limit": -1}, {"limit": 10**6}, {"limit": "10"}, {"limit": True},
    {"since": "yesterday-ish"}, {"until": "2026-13-45"}, {"states": ["gone"]}, {"project": 3}, {"session": b"k"},
    {"since": 12},
])
def test_bad_arguments_raise_config_error(index, bad):
    with pytest.raises(ConfigError):
        recall(index, "cache", **bad)


def test_filters_hold(index):
    assert {h.kind for h in recall(index, "cache xxhash")} == {"message", "history", "fact"}
    assert {h.kind for h in recall(index, "cache xxhash", scope="facts")} == {"fact"}
    assert {h.kind for h in recall(index, "cache xxhash", scope="history")} == {"history"}
    assert {h.project for h in recall(index, "cache", project="garden")} == {"garden"}
    assert {(h.session_key, h.message_id) for h in recall(index, "cache", session="home:1")} == {("home:1", "a")}
    assert {h.role for h in recall(index, "cache xxhash", role="assistant")} == {"assistant"}
    # time: the message's own timestamp counts (b says 2026-01-02), else the event's
    assert {h.message_id for h in recall(index, "xxhash", scope="messages", since="2026-01-02")} == {"b"}
    assert {h.message_id for h in recall(index, "xxhash", scope="messages", until="2026-01-01")} == {"a"}
    assert recall(index, "xxhash", since="2026-02-01") == []
    assert recall(index, "xxhash", since="2026-01-05", until="2026-01-01") == []
    assert [h.kind for h in recall(index, "xxhash", since="2026-01-04T12:00:00Z")] == ["fact"]
    assert recall(index, "xxhash", project="nope") == []


def test_hits_carry_their_sources(index):
    h = next(h for h in recall(index, "decided xxhash fast", scope="messages"))
    assert (h.kind, h.seq, h.session_key, h.message_id, h.role, h.project) == ("message", 3, "work:1", "b",
                                                                               "assistant", "evlog")
    assert h.time == "2026-01-02T10:00:00.000Z"
    assert "[decided]" in h.snippet and "[xxhash]" in h.snippet and "[fast]" in h.snippet
    f = recall(index, "digests", scope="facts")[0]
    assert (f.fact_id, f.state, f.section, f.project) == ("f1", "active", "## Project Context", "evlog")
    hist = recall(index, "summary chose", scope="history")[0]
    assert (hist.source, hist.session_key, hist.seq) == ("consolidator", "work:1", 6)


def test_time_bounds():
    now = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)
    assert time_bound("7d", name="since", now=now) == "2026-11-17T18:00:00.000Z"
    assert time_bound("36h ago", name="since", now=now) == "2026-11-23T06:00:00.000Z"
    assert time_bound("90m", name="since", now=now) == "2026-11-24T16:30:00.000Z"
    assert time_bound("2026-11-24", name="since") == "2026-11-24T00:00:00.000Z"
    assert time_bound("2026-11-24", name="until", end=True) == "2026-11-24T23:59:59.999Z"
    assert time_bound("2026-11-24T18:00:00+02:00", name="until", end=True) == "2026-11-24T16:00:00.000Z"
    assert time_bound("1795000000", name="since") == "2026-11-18T11:06:40.000Z"
    assert time_bound(None, name="since") is None
    assert time_bound(datetime(2026, 1, 1), name="since") == "2026-01-01T00:00:00.000Z"
    for bad in ("soon", "7 fortnights", "2026-02-30", "--"):
        with pytest.raises(ConfigError, match="since"):
            time_bound(bad, name="since")
