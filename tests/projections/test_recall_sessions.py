"""Ranking as questions need it: sessions by their evidence, the user's words first, time as a prior.

Each test builds a small index by hand and states one behaviour of ``rank.py``/``when.py``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.errors import ConfigError
from projections.recall import RecallIndex, recall, recall_sessions
from projections.recall.when import bump, is_current_state, time_cues

NOW = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


class Book:
    """Sessions added to one index, each with its own date."""

    def __init__(self, ix: RecallIndex) -> None:
        self.ix = ix
        self.seq = itertools.count(ix.seq + 1)

    def add(self, key: str, when: str, turns: list[tuple[str, str]]) -> None:
        from eventlog.events import MessageAppended, SessionCreated

        evs = [SessionCreated(seq=next(self.seq), ts=when, session_key=key, project="p")]
        for i, (role, text) in enumerate(turns):
            evs.append(MessageAppended(seq=next(self.seq), ts=when, session_key=key, message_id=str(i), role=role,
                                       content=text, timestamp=when))
        self.ix.catch_up(evs)


@pytest.fixture
def book(tmp_path):
    ix = RecallIndex(str(tmp_path / "recall.sqlite"))
    b = Book(ix)
    for i in range(12):
        b.add(f"filler-{i}", f"2026-01-{i + 1:02d}T09:00:00.000Z",
              [("user", f"Question {i} about the weather, lunch and the bus timetable."),
               ("assistant", "Here is an answer about weather, lunch and buses in general.")])
    yield b
    ix.close()


def _keys(hits):
    return [h.session_key for h in hits]


def test_scaffolding_words_are_not_search_terms(book):
    book.add("framing", "2026-02-01T09:00:00.000Z",
             [("user", "There are many ways to compute a total, and one of them is on paper.")])
    book.add("evidence", "2026-02-02T09:00:00.000Z", [("user", "I did three hikes in the Alps this summer.")])
    hits = recall(book.ix, "How many hikes did I do in total?", limit=5)
    assert _keys(hits) == ["evidence"]
    assert recall(book.ix, "which one was it", limit=5) != []  # only scaffolding left: it is still searched


def test_a_sessions_second_turn_never_outranks_another_sessions_best(book):
    book.add("big", "2026-02-01T09:00:00.000Z", [
        ("user", "My guitar lessons with the guitar teacher started, guitar every Monday."),
        ("assistant", "Guitar lessons are great; a guitar teacher helps."),
        ("user", "The guitar teacher also fixed my guitar strings."),
    ])
    book.add("small", "2026-02-02T09:00:00.000Z", [("user", "I sold my old guitar case.")])
    sessions = recall_sessions(book.ix, "guitar teacher lessons", limit=5)
    assert _keys(sessions)[:2] == ["big", "small"]
    assert sessions[0].matched == 3 and len(sessions[0].hits) == 3
    assert [h.score for h in sessions[0].hits] == sorted((h.score for h in sessions[0].hits), reverse=True)
    assert recall_sessions(book.ix, "guitar", limit=1, turns=1)[0].hits[0].session_key in ("big", "small")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.lists(st.sampled_from(["kayak", "river", "paddle", "the", "map", "camp"]), min_size=1,
                               max_size=6), min_size=2, max_size=8))
def test_session_groups_are_ordered_by_score_and_cover_every_matching_session(book, turns):
    key = f"prop-{book.ix.seq}"
    book.add(key, "2026-02-03T09:00:00.000Z", [("user" if i % 2 == 0 else "assistant", " ".join(t))
                                                for i, t in enumerate(turns)])
    groups = recall_sessions(book.ix, "kayak river paddle map camp", session=key, limit=50, turns=100)
    hits = recall(book.ix, "kayak river paddle map camp", session=key, limit=100)
    assert len(groups) <= 1 and sum(g.matched for g in groups) == len(hits)
    scores = [g.score for g in recall_sessions(book.ix, "kayak river paddle map camp", limit=50)]
    assert scores == sorted(scores, reverse=True)


def test_an_assistant_echo_ranks_below_the_users_own_words(book):
    book.add("bike", "2026-02-01T09:00:00.000Z", [
        ("user", "I bought a red bicycle at Halfords yesterday."),
        ("assistant", "A red bicycle from Halfords! Red bicycles are lovely, and Halfords bicycles last."),
    ])
    hits = recall(book.ix, "Where did I buy my red bicycle from Halfords?", limit=2)
    assert [(h.session_key, h.role) for h in hits] == [("bike", "user"), ("bike", "assistant")]


def test_a_relative_time_prefers_turns_near_it(book):
    # the same words twice; the question's "two weeks ago" (before --now) points at the first
    book.add("early-march", "2026-03-01T10:00:00.000Z", [("user", "I went to the dentist for a cleaning.")])
    book.add("yesterday", "2026-03-14T10:00:00.000Z", [("user", "I went to the dentist for a cleaning.")])
    q = "When did I go to the dentist two weeks ago?"
    assert _keys(recall(book.ix, q, limit=2, now=NOW)) == ["early-march", "yesterday"]
    assert _keys(recall(book.ix, "When did I go to the dentist yesterday?", limit=2, now=NOW))[0] == "yesterday"
    # as text: the same question with another now moves the window
    assert _keys(recall(book.ix, q, limit=2, now="2026-03-28T12:00:00Z"))[0] == "yesterday"


def test_a_current_state_question_prefers_the_newest_turn(book):
    book.add("new", "2026-03-10T10:00:00.000Z", [("user", "I live in Denver with my partner.")])
    book.add("old", "2025-06-01T10:00:00.000Z", [("user", "I live in Boston with my partner.")])
    assert _keys(recall(book.ix, "Where do I currently live with my partner?", limit=2, now=NOW)) == ["new", "old"]


def test_now_must_be_a_time(book):
    with pytest.raises(ConfigError, match="--now"):
        recall(book.ix, "dentist", now="next tuesday-ish")
    with pytest.raises(ConfigError, match="turns"):
        recall_sessions(book.ix, "dentist", turns=0)


@pytest.mark.parametrize(("text", "days_back", "width_days"), [
    ("what did I buy two weeks ago?", 14, 3.5), ("3 days ago", 3, 1), ("a month ago", 30.44, 7.61),
    ("yesterday", 1, 1), ("last week", 7, 3.5), ("in the last 10 days", 5, 5), ("last Friday", 2, 1),
    ("this month", 15.22, 15.22),
])
def test_relative_times_resolve_against_now(text, days_back, width_days):
    cues, rest = time_cues(text, NOW)  # NOW is a Sunday
    assert len(cues) == 1
    assert (NOW - cues[0].center) / timedelta(days=1) == pytest.approx(days_back, abs=0.01)
    assert cues[0].width / timedelta(days=1) == pytest.approx(width_days, abs=0.01)
    assert "ago" not in rest and "last" not in rest
    assert bump(cues[0].center, cues) == 1.0 and bump(cues[0].center - 3 * cues[0].width, cues) < 0.01


def test_current_state_cues():
    assert is_current_state("What is my current job?") and is_current_state("Do I still play tennis?")
    assert not is_current_state("What did I play last summer?")


def test_a_duration_question_frame_is_not_searched():
    for q, gone in (("How many days ago did I run the 5K?", "days"), ("How many months before the wedding did I move?",
                                                                    "months"), ("How long after the move did I start?",
                                                                                "after")):
        cues, rest = time_cues(q, NOW)
        assert cues == [] and gone not in rest.split() and "how" not in rest.lower().split()
    assert "hours" in time_cues("How many hours have I spent playing games?", NOW)[1]  # a quantity, not a frame


@pytest.mark.parametrize(("text", "day", "width_days"), [
    ("What did I cook on 25 May, 2022?", "2022-05-25T12:00", 1), ("on May 25th 2022", "2022-05-25T12:00", 1),
    ("the 2022-05-25 meeting", "2022-05-25T12:00", 1), ("in July 2022", "2022-07-16T12:00", 15.5),
    ("camping in June", "2025-06-16T00:00", 15), ("on March 3", "2026-03-03T12:00", 1),
    ("on December 3", "2025-12-03T12:00", 1), ("what happened in 2024", "2024-07-01T15:00", 182.625),
    ("where was I in summer 2024", "2024-07-01T15:00", 182.625),
])
def test_written_dates_are_soft_windows(text, day, width_days):
    cues, rest = time_cues(text, NOW)  # NOW is 2026-03-15: a date without its year is the latest one before it
    assert len(cues) == 1 and cues[0].calendar
    assert cues[0].center.isoformat()[:16] == day
    assert cues[0].width / timedelta(days=1) == pytest.approx(width_days, abs=0.01)
    assert not any(ch.isdigit() for ch in rest)  # its month name stays searchable, its digits go
    months = ("May", "July", "June", "March", "December", "summer")
    assert [w for w in rest.split() if w in months] == [w.strip(",") for w in text.split() if w.strip(",") in months]


def test_a_written_month_is_still_a_search_term(book):
    book.add("bike", "2026-03-01T09:00:00.000Z", [("user", "In mid-February I had the bike repaired.")])
    book.add("other", "2026-03-02T09:00:00.000Z", [("user", "I had the bike cleaned.")])
    assert _keys(recall(book.ix, "What did I do to the bike in February?", limit=2, now=NOW))[0] == "bike"


def test_may_the_verb_is_no_month():
    assert time_cues("What may I bring to the party?", NOW) == ([], "What may I bring to the party?")
    assert time_cues("Is 30 February, 2023 a date?", NOW)[0] == []


def test_a_written_date_prefers_the_sessions_of_that_day(book):
    book.add("that-day", "2025-05-03T18:00:00.000Z", [("user", "I cooked a mushroom risotto for dinner.")])
    book.add("later", "2025-11-20T18:00:00.000Z", [("user", "I cooked a mushroom risotto again.")])
    hits = recall(book.ix, "What did I cook on 3 May, 2025?", limit=2, now=NOW)
    assert _keys(hits) == ["that-day", "later"]
    assert _keys(recall(book.ix, "What did I cook in May 2025?", limit=2, now=NOW))[0] == "that-day"
