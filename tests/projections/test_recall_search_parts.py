"""The parts of ``projections.recall.search`` split out of its pipeline (issue 20).

Which terms generate candidates within the row budget, and which texts the word counter
scans (the cheap prefix test) with where each starts in the joined string.
"""

from __future__ import annotations

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
