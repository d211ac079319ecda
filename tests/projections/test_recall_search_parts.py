"""The parts of ``projections.recall.search`` split out of its pipeline (issue 20).

Which terms generate candidates within the row budget, and which texts the word counter
scans (the cheap prefix test) with where each starts in the joined string.
"""

from __future__ import annotations

import pytest

from projections.recall.index import FACT, MESSAGE
from projections.recall.search import _Doc, _generation_terms, _Texts


def _doc(i: int, text: str, kind: int = MESSAGE, speaker: str | None = None, section: str | None = None) -> _Doc:
    return _Doc((i, kind, "2026-03-01T10:00:00.000Z", text, len(text), 1, i, f"m{i}", "user", speaker, None, None,
                 None, None, None, None, None, section, None))


def test_generation_stops_before_the_term_that_would_pass_the_budget():
    dfs = {"rare": 10, "mid": 50, "common": 900, "rarer": 1}
    assert _generation_terms(["rare", "mid", "common", "rarer"], dfs, 100) == ["rare", "mid"]


def test_generation_keeps_the_rarest_term_even_over_the_budget():
    assert _generation_terms(["huge", "small"], {"huge": 5000, "small": 1}, 100) == ["huge"]


def test_generation_of_no_terms_is_empty():
    assert _generation_terms([], {}, 100) == []


def test_texts_keep_only_those_with_a_prefix_and_map_offsets_back():
    a = _doc(1, "We went camping", speaker="Caroline")
    b = _doc(2, "Nothing here")
    c = _doc(3, "camp fire", kind=FACT, section="Camping trips")
    texts = _Texts.of([a, b, c], ("camp",))
    assert [(d.id, aux) for d, aux in texts.owners] == [(1, False), (3, False), (3, True)]
    assert texts.joined == "We went camping\x00camp fire\x00Camping trips"
    assert [texts.joined[s:s + 4] for s in texts.starts] == ["We w", "camp", "Camp"]
    assert texts.found == []


def test_texts_take_non_ascii_words_one_by_one_with_joined_offsets():
    a = _doc(1, "plain words")
    b = _doc(2, "un café noir")
    texts = _Texts.of([a, b], ("caf",))
    assert [d.id for d, _aux in texts.owners] == [2]
    assert texts.found == [(3, 7, "café")]
    assert texts.joined[3:7] == "café"


def _long_turn_index(path: str):
    """An index of agent-transcript-like sessions: short user turns, replies of ~1,500 characters."""
    from eventlog.events import MessageAppended, SessionCreated
    from projections.recall import RecallIndex

    pad = " ".join(f"word{i} filler text about general matters" for i in range(40))  # ~1,500 characters
    sessions = {
        "echoed": [("user", "Any tips for a first trip this spring?"),
                   ("assistant", "A kayak trip needs a good kayak paddle: a light paddle, a spare paddle, a kayak "
                                 "helmet, a kayak cart, and a paddle leash for the kayak. " + pad[:400])],
        "said": [("user", "I bought a new kayak paddle yesterday at the shop near the lake, after a long search "
                           "through catalogues, reviews and forums, and now I want to care for it well."),
                 ("assistant", "Rinse it with fresh water after each outing. " + pad)],
    }
    for i in range(6):
        sessions[f"filler-{i}"] = [("user", f"Question {i} about lunch."), ("assistant", pad)]
    ix = RecallIndex(path)
    seq = 0
    for key, turns in sessions.items():
        seq += 1
        evs = [SessionCreated(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=key, project="p")]
        for j, (role, text) in enumerate(turns):
            seq += 1
            evs.append(MessageAppended(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=key, message_id=str(j),
                                       role=role, content=text, timestamp="2026-03-01T10:00:00.000Z"))
        ix.catch_up(evs)
    return ix


def test_among_long_turns_context_counts_less_than_among_chat_lines(tmp_path):
    """Context weight shrinks with the index's mean item length (``Ranking.context_ref``): in a
    transcript of long replies a user turn found mostly through its reply's words scores lower,
    while the turn that says the words itself keeps its score (chat lines, shorter than
    ``context_ref`` on average, are not affected)."""
    import dataclasses

    from projections.recall import recall
    from projections.recall.search import DEFAULT_RANKING

    def scores(ix, ranking):
        return {h.session_key: h.score for h in recall(ix, "kayak paddle tips", scope="messages", role="user",
                                                       limit=2, ranking=ranking)}

    with _long_turn_index(str(tmp_path / "r.sqlite")) as ix:
        assert ix.snapshot()[2] / ix.snapshot()[1] > DEFAULT_RANKING.context_ref  # long turns on average
        on, off = scores(ix, DEFAULT_RANKING), scores(ix, dataclasses.replace(DEFAULT_RANKING, context_ref=0.0))
        assert on["echoed"] < 0.95 * off["echoed"]
        assert on["said"] == pytest.approx(off["said"], rel=0.01)
