"""The query path's shortcuts give what the long way gives (issue 23, query latency).

* ``_Texts.prefixed_words``: ``str.find`` on the lower-cased texts finds the same words as the
  case-blind regex of ``_prefix_pattern`` over the texts, letters that fold oddly included.
* ``Semantic.eligible_neighbours``: the vector neighbours' rows are read only as far down the
  list as the filters need, and the neighbours kept are those of reading them all.
"""

from __future__ import annotations

import re

import pytest

from projections.recall.index import MESSAGE
from projections.recall.search import _Doc, _non_ascii_words, _prefix_pattern, _Texts
from projections.recall.text import CJK_RUN


def _doc(i: int, text: str, speaker: str | None = None) -> _Doc:
    return _Doc((i, MESSAGE, "2026-03-01T10:00:00.000Z", text, len(text), 1, i, f"m{i}", "user", speaker, None, None,
                 None, None, None, None, None, None, None))


def _by_regex(texts: _Texts, stems: list[str]) -> list[tuple[int, int, str]]:
    pattern, _prefixes = _prefix_pattern(stems)
    return [(m.start(), m.end(), m.group().lower()) for m in pattern.finditer(texts.joined) if m.group().isascii()]


TEXTS = [
    "Coffee, COFFEE and coffees; decaf_coffee, coffee2go, recoffee",
    "un café noir, a CAFÉ au lait, the cafe",
    "\u212aelvin keeps KEEPING keep (the first letter is the Kelvin sign)",
    "\u017fpeak, speak, SPEAKING (long s first)",
    "日本語のcoffee and 東京coffee",
    "conversation conversations Conversational convers",
    "",
    "mixed ünïcödé around keep and speak ñ, One of the online ones, on_on",
]


@pytest.mark.parametrize("stems", [["coffe"], ["keep", "speak"], ["caf", "convers"], ["on"], ["coffe", "cof"]])
def test_find_on_lower_cased_texts_gives_the_regex_matches(stems):
    _pattern, prefixes = _prefix_pattern(stems)
    texts = _Texts.of([_doc(i, t, speaker="Keeper Coffee") for i, t in enumerate(TEXTS, 1)], prefixes)
    assert len(texts.lowered) == len(texts.joined)
    pattern, prefixes = _prefix_pattern(stems)
    got = texts.prefixed_words(pattern, prefixes)
    assert got == _by_regex(texts, stems)
    assert got  # the cases above hold matches for each stem set


def test_a_letter_whose_lower_case_is_longer_takes_the_regex():
    # "İ" lower-cases to two characters: offsets of the lower-cased text would shift by one
    texts = _Texts.of([_doc(1, "İstanbul: keep the keys, KEEP them"), _doc(2, "keep")], ("keep",))
    assert len(texts.lowered) != len(texts.joined)
    pattern, prefixes = _prefix_pattern(["keep"])
    got = texts.prefixed_words(pattern, prefixes)
    assert got == _by_regex(texts, ["keep"])
    assert [texts.joined[s:e] for s, e, _w in got] == ["keep", "KEEP", "keep"]


class _Row:
    def __init__(self, eligible: bool) -> None:
        self.eligible = eligible


class _Search:
    """What ``eligible_neighbours`` asks of the running search: ``more_docs``, counted."""

    def __init__(self, eligible: set[int], deleted: frozenset[int] = frozenset()) -> None:
        self.eligible = eligible
        self.deleted = deleted  # rows deleted since the vectors were read
        self.read: list[int] = []

    def more_docs(self, ids: list[int]) -> dict[int, _Row]:
        self.read += ids
        return {i: _Row(i in self.eligible) for i in ids if i not in self.deleted}


def _semantic(k: int):
    pytest.importorskip("numpy")
    from projections.recall.embeddings import Semantic

    return Semantic(None, None, mode="hybrid", vector_k=k)  # type: ignore[arg-type]


def _all_read(near, pool, eligible, k, deleted=frozenset()):
    """The neighbours kept when every row of ``near`` is read (what fuse did before)."""
    pool = dict(pool)
    pool.update(_Search(eligible, deleted).more_docs([i for i, _c in near if i not in pool]))
    return [(i, c) for i, c in near if i in pool and pool[i].eligible][:k]


def test_without_filters_only_the_first_vector_k_rows_are_read():
    near = [(i, 1.0 - i / 1000) for i in range(1, 201)]
    search = _Search(set(range(1, 201)))
    got = _semantic(50).eligible_neighbours(search, {}, near)
    assert len(search.read) == 50
    assert got == _all_read(near, {}, set(range(1, 201)), 50)


@pytest.mark.parametrize("every", [2, 7, 1000])
def test_with_filters_the_same_neighbours_as_reading_them_all(every):
    near = [(i, 1.0 - i / 1000) for i in range(1, 201)]
    eligible = {i for i in range(1, 201) if i % every == 0}
    pool = {4: _Row(True), 5: _Row(False)}  # rows BM25F already holds are not read again
    search = _Search(eligible, frozenset({13, 14}))
    got = _semantic(50).eligible_neighbours(search, dict(pool), near)
    assert got == _all_read(near, pool, eligible, 50, frozenset({13, 14}))
    assert 4 not in search.read and 5 not in search.read
    assert len(search.read) <= 200


#: The words ``_non_ascii_words`` finds, as one regex (what the word counter ran before): a whole word
#: with at least one non-ASCII letter or digit.
_NON_ASCII_WORD = re.compile(r"(?<![^\W_])[^\W_]*[^\x00-\x7f\W_][^\W_]*")


@pytest.mark.parametrize("text", [*TEXTS, "naïve_café-au-lait ÉCOLE écoles", "x\u00b2 vs 2² and Ⅻ, ①②", "日本語 カタカナ 한국어 mixed日本",
                                  "µs ß straße İzmir ΣΊΣΥΦΟΣ", "éé\u0301 e\u0301 combining", "🙂 emoji🙂word 🙂"])
def test_non_ascii_words_are_the_regex_words(text):
    want = [(m.start(), m.end(), m.group()) for m in _NON_ASCII_WORD.finditer(text) if not CJK_RUN.fullmatch(m.group())]
    assert _non_ascii_words(text) == want


# Porter rewrites the end of these words (y -> i in short words, -bility -> -bl): the stem is no prefix of the
# word, and the word counter looked for words starting with the stem itself, so none of them was found
REWRITTEN = ["toy", "day", "boy", "key", "buy", "guy", "0IY", "possibility", "visibility", "nobility", "sensibility"]


def test_a_word_whose_stem_rewrites_its_end_is_found_by_itself(tmp_path):
    from eventlog.events import MessageAppended, SessionCreated
    from projections.recall import RecallIndex, recall

    ix = RecallIndex(str(tmp_path / "recall.sqlite"))
    evs = [SessionCreated(seq=1, ts="2026-03-01T10:00:00.000Z", session_key="k", project="p")]
    evs += [MessageAppended(seq=i + 2, ts="2026-03-01T10:00:00.000Z", session_key="k", message_id=f"m{i}",
                            role="user", content=f"We talked about the {w} there.") for i, w in enumerate(REWRITTEN)]
    evs += [MessageAppended(seq=100 + i, ts="2026-03-01T10:00:00.000Z", session_key="k", message_id=f"f{i}",
                            role="user", content=f"Filler line {i} on other matters.") for i in range(10)]
    ix.catch_up(evs)
    for i, w in enumerate(REWRITTEN):
        hits = recall(ix, w, limit=3)
        assert [h.message_id for h in hits][:1] == [f"m{i}"], w
    ix.close()
