"""The query path: every word is stemmed once, and what a question says about itself is not searched.

A word is found by itself whatever its stem (the index's tokenizer stems it; the query
must not stem that stem again), and the words that frame a question ("how many",
"currently", "two weeks ago", "one") are not search terms.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eventlog.events import MessageAppended, SessionCreated
from projections.recall import RecallIndex, recall
from projections.recall.query import split_question

_seq = itertools.count(1)


def _add(ix: RecallIndex, key: str, texts: list[str]) -> None:
    evs = [SessionCreated(seq=next(_seq), ts="2026-03-01T10:00:00.000Z", session_key=key, project="p")]
    for i, text in enumerate(texts):
        evs.append(MessageAppended(seq=next(_seq), ts="2026-03-01T10:00:00.000Z", session_key=key,
                                   message_id=f"m{i}", role="user", content=text))
    ix.catch_up(evs)


@pytest.fixture(scope="module")
def ix(tmp_path_factory):
    index = RecallIndex(str(tmp_path_factory.mktemp("terms") / "recall.sqlite"))
    _add(index, "filler", [f"Filler line {i} about the weather on the way to work." for i in range(20)])
    yield index
    index.close()


# words whose Porter stem is not a fixed point of the stemmer (stemming the stem changes it)
UNSTABLE = ["conversation", "coffee", "course", "purchased", "previously", "increase", "exercises", "generation",
            "relational", "happiness", "agreed"]


@pytest.mark.parametrize("word", UNSTABLE)
def test_a_word_is_found_by_itself_when_its_stem_is_not_stable(ix, word):
    key = f"unstable-{word}"
    _add(ix, key, [f"We talked about {word} yesterday."])
    hits = recall(ix, word, session=key)
    assert [h.message_id for h in hits] == ["m0"]


_LETTERS = st.characters(categories=("Ll", "Lu", "Lo", "Nd"), codec="utf-8")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.text(alphabet=_LETTERS, min_size=1, max_size=12), min_size=1, max_size=6))
@example(words=["0IY"])  # stem 0ii: a y the stemmer turns into i in a short word
@example(words=["Ꭰ"])  # Cherokee: str.lower() gives a letter the tokenizer (Unicode 6.1) never folds to
@example(words=["Ᏸ", "CAFÉ", "Straße"])
@example(words=["0\u19b00"])  # U+19B0 is a letter to Python, a separator to the tokenizer: a phrase MATCH, refused
def test_every_indexed_word_is_findable_by_itself(ix, words):
    key = f"prop-{next(_seq)}"
    _add(ix, key, [" ".join(words) + "."])
    for w in words:
        if split_question(w).empty:
            continue
        hits = recall(ix, w, session=key, limit=3)
        assert [h.message_id for h in hits] == ["m0"], (w, words)
