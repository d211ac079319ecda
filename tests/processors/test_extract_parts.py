"""The parts the extractor's long functions were split into (issue 20): each does its one job.

``third_person`` (voice), ``parse_ops`` (llm) and ``extract`` / ``_english`` (offline) keep
their behaviour; these tests pin the helpers they are now made of.
"""

from __future__ import annotations

import pytest

from processors.extract import llm, offline
from processors.extract.model import Entry
from processors.extract.voice import third_person


def _entry(n: int, text: str = "I love tea.") -> Entry:
    return Entry(ref=f"s#{n}", seq=n, session_key="s", message_id=str(n), project="/p", speaker="user",
                 role="user", time="2024-05-01T10:00:00Z", text=text)


@pytest.mark.parametrize(("sentence", "team", "expected"), [
    ("I practice and train every day.", False, "Alice practices and trains every day."),  # "and" + common verb agrees
    ("I don't know; and play", False, "Alice doesn't know; and play"),  # a clause break ends the agreement
    ("Was I tired, and I really love tea.", False, "Was Alice tired, and Alice really loves tea."),
    ("My partner and I went hiking.", False, "Alice's partner and Alice went hiking."),
    ("We went to Paris.", False, "Alice says they went to Paris."),
    ("We're shipping it and our repo is big.", True, "The team is shipping it and the project's repo is big."),
    ("Do you like it?", False, None),
])
def test_third_person_rewrites_each_kind_of_token(sentence: str, team: bool, expected: str | None) -> None:
    assert third_person(sentence, "Alice", team=team) == expected


def test_answer_items_keeps_the_complete_items_of_a_cut_off_list_and_says_so() -> None:
    assert llm._answer_items('{"ops": [{"op": "noop"}, {"op": "ad') == (
        [{"op": "noop"}], ["the answer is cut off after 1 complete item(s); the rest is ignored"])
    assert llm._answer_items("nothing") == ([], ["no JSON object or list found in the answer"])
    assert llm._answer_items('[{"op": "noop"}]') == ([{"op": "noop"}], [])


def test_batch_refuses_changes_to_unknown_pinned_or_already_changed_facts() -> None:
    batch = llm._Batch({"f1", "f2"}, [_entry(1)], {"f2"})
    assert batch.refuse_change("f1") == ""
    assert batch.refuse_change("nope") == "unknown fact id 'nope'"
    assert batch.refuse_change("") == "unknown fact id ''"
    assert batch.refuse_change("f2") == "fact f2 is pinned"
    batch.touched.add("f1")
    assert batch.refuse_change("f1") == "fact f1 is changed by an earlier item"
    assert batch.by_ref == {"s#1": batch.lab["m1"]} and batch.check_sources


def test_parse_item_names_the_item_and_the_op_in_its_reason() -> None:
    batch = llm._Batch({"f1"}, [_entry(1)], set())
    assert llm._parse_item(3, "item 1", batch) == "item 1: not an object"
    assert llm._parse_item({"op": "fly"}, "item 2", batch) == "item 2: unknown op 'fly'"
    assert llm._parse_item({"op": "update", "fact_id": "f9", "sources": ["m1"]}, "item 3", batch) \
        == "item 3 (update): unknown fact id 'f9'"
    item = {"op": "add", "sources": ["m1"], "text": "The user loves tea.", "subject": "user"}
    op = llm._parse_item(item, "item 4", batch)
    assert not isinstance(op, str) and op.op == "add" and op.sources == ["s#1"]
    assert llm._parse_item(dict(item), "item 5", batch) == "item 5 (add): the same fact twice"


def _cand(text: str, score: float) -> offline.Candidate:
    sp = offline.Speaker("the user", "user", False, "/p")
    return offline.Candidate(text, score, "preferences", _entry(1), sp)


def test_best_of_keeps_the_best_and_one_other_good_different_candidate() -> None:
    assert offline._best_of([]) == []
    low = _cand("The user likes green tea in the morning.", offline.SECOND_SCORE - 1)
    top = _cand("The user works at a bakery in Lisbon.", offline.SECOND_SCORE + 3)
    good = _cand("The user plays the cello on weekends.", offline.SECOND_SCORE + 1)
    same = _cand("The user works at a bakery in Lisbon!", offline.SECOND_SCORE + 2)
    extra = _cand("The user speaks Portuguese and French.", offline.SECOND_SCORE + 0.5)
    assert [c.text for c in offline._best_of([low, good, top, same, extra])] == [top.text, good.text]
    assert [c.text for c in offline._best_of([low, top])] == [top.text]  # the second must score SECOND_SCORE
