"""Ranking on small hand-made conversations (no LoCoMo): each test states one behaviour."""

from __future__ import annotations

import pytest

from eventlog.events import MessageAppended, SessionCreated
from projections.recall import RecallIndex, recall
from projections.recall.search import Ranking, snippet


def _conv(ix: RecallIndex, key: str, turns: list[tuple[str, str]], *, project: str = "p", start: int | None = None):
    seq = start if start is not None else ix.seq + 1
    evs = [SessionCreated(seq=seq, ts="2026-03-01T10:00:00.000Z", session_key=key, project=project)]
    for i, (speaker, text) in enumerate(turns):
        evs.append(MessageAppended(seq=seq + 1 + i, ts="2026-03-01T10:00:00.000Z", session_key=key,
                                   message_id=f"{key}:{i}", role="user" if i % 2 == 0 else "assistant", content=text,
                                   extra={"speaker": speaker} if speaker else {}))
    ix.catch_up(evs)


@pytest.fixture
def ix(tmp_path):
    index = RecallIndex(str(tmp_path / "recall.sqlite"))
    filler = [("Alice", f"Filler line number {i} about the weather and lunch plans today.") for i in range(30)]
    _conv(index, "noise", [(s if i % 2 == 0 else "Bob", t) for i, (s, t) in enumerate(filler)])
    yield index
    index.close()


def _ids(hits):
    return [h.message_id for h in hits]


def test_an_answer_is_found_through_the_question_it_answers(ix):
    _conv(ix, "c", [
        ("Bob", "Hey Alice, how are things?"),
        ("Alice", "Great! Busy week at work."),
        ("Bob", "Where did you go on your vacation last month?"),
        ("Alice", "Lisbon, with my sister. The pastries were amazing."),
        ("Bob", "Sounds lovely. Did you see the tram?"),
    ])
    hits = recall(ix, "Where did Alice go on vacation?", limit=3)
    # the answer shares no word with the question: its context (the question turn) finds it,
    # and the question names Alice, who said it
    assert hits[0].message_id == "c:3"
    assert "c:2" in _ids(hits)
    without_context = recall(ix, "Where did Alice go on vacation?", limit=3, ranking=Ranking(context=0.0))
    assert "c:3" not in _ids(without_context)


def test_stemming_and_case(ix):
    _conv(ix, "c", [("Alice", "I PAINTED a sunrise over the lake."), ("Bob", "Nice!")])
    hits = recall(ix, "paintings of sunrises", limit=1)
    assert _ids(hits) == ["c:0"]
    assert hits[0].snippet == "I [PAINTED] a [sunrise] over the lake."


def test_rare_words_outrank_common_ones(ix):
    _conv(ix, "c", [
        ("Alice", "The weather today is lunch weather, lunch plans about weather."),
        ("Bob", "My axolotl escaped from the tank yesterday."),
    ])
    hits = recall(ix, "weather axolotl lunch", limit=2)
    assert hits[0].message_id == "c:1"


def test_named_speaker_is_preferred(ix):
    _conv(ix, "c", [("Alice", "I adopted a greyhound."), ("Bob", "I adopted a greyhound.")])
    assert recall(ix, "Did Bob adopt a greyhound?", limit=1)[0].message_id == "c:1"
    assert recall(ix, "Did Alice adopt a greyhound?", limit=1)[0].message_id == "c:0"
    # a name is not a term: Bob's name said by Alice does not beat Bob's own words
    _conv(ix, "d", [("Alice", "Bob, Bob, Bob! Hello Bob."), ("Bob", "I climbed a glacier.")])
    assert recall(ix, "What did Bob climb?", limit=1)[0].message_id == "d:1"


def test_adjacent_words_form_a_phrase(ix):
    _conv(ix, "c", [
        ("Alice", "The group gave me support when I felt alone, a group of strangers offering support."),
        ("Bob", "Filler about the weather again and lunch plans too, nothing else."),
        ("Alice", "I joined a support group for new parents, and the group helps."),
    ])
    hits = recall(ix, "support group", limit=2, ranking=Ranking(context=0.0))
    assert _ids(hits) == ["c:2", "c:0"]


def test_one_hit_per_message(ix):
    ix.catch_up([MessageAppended(seq=ix.seq + i + 1, ts="2026-03-01T10:00:00.000Z", session_key="dup", message_id="m",
                                 role="user", content="the quokka smiled") for i in range(3)])
    hits = recall(ix, "quokka")
    assert [(h.session_key, h.message_id) for h in hits] == [("dup", "m")]


def test_chinese_and_japanese_without_spaces(ix):
    _conv(ix, "zh", [("", "我们决定把数据库迁移方案推迟到下周。"), ("", "好的，我会提醒大家。"),
                     ("", "我家的猫今天很开心。")])
    _conv(ix, "ja", [("", "CLAUDE.mdを最新の状態にアップデートしてください"), ("", "了解しました。")])
    assert recall(ix, "数据库迁移", limit=1)[0].message_id == "zh:0"
    assert recall(ix, "数据库迁移方案是什么？", limit=1)[0].message_id == "zh:0"  # a question without spaces
    assert recall(ix, "猫", limit=1)[0].message_id == "zh:2"  # one character
    hit = recall(ix, "最新の状態", limit=1)[0]
    assert hit.message_id == "ja:0" and "[最新の状態]" in hit.snippet.replace("][", "")
    assert recall(ix, "アップデート", limit=1)[0].message_id == "ja:0"
    assert recall(ix, "claude md", limit=1)[0].message_id == "ja:0"  # latin words inside a CJK text


def test_snippet_centres_on_the_matches():
    text = "word " * 100 + "the needle is here " + "word " * 100
    start = text.index("needle")
    s = snippet(text, [(start, start + 6, "needl")])
    assert "[needle]" in s and s.startswith("…") and s.endswith("…") and len(s) < 260
    assert snippet("short text", []) == "short text"



def test_a_turn_that_borrows_its_words_from_a_neighbour_stays_below_that_neighbour():
    """rank.cap_context: the evidence is the turn whose own text holds the words. A neighbour scoring through
    the context field stays at most context_cap times the turn it borrowed from, unless both are short."""
    from dataclasses import dataclass, field

    from projections.recall import rank

    @dataclass
    class D:
        id: int
        pos: int
        nchars: int
        role: str = "user"
        kind: int = 0
        sid: int = 1
        mid: str = ""
        time: str = ""
        tf: dict = field(default_factory=dict)

    long_pool = {1: D(1, 0, 900), 2: D(2, 1, 400, role="assistant"), 3: D(3, 2, 300)}
    scores = {1: 10.0, 2: 6.0, 3: 12.0}  # turn 3 outscores turn 1 only through turn 1's words
    owns = {1: 9.0, 2: 1.0, 3: 2.0}
    capped = rank.cap_context(long_pool, scores, owns, Ranking())
    assert capped[1] == 10.0 and capped[3] == pytest.approx(8.0)
    assert rank.cap_context(long_pool, scores, owns, Ranking(context_cap=1.0)) == scores
    short_pool = {1: D(1, 0, 120), 2: D(2, 1, 40, role="assistant"), 3: D(3, 2, 60)}  # chat lines need context
    assert rank.cap_context(short_pool, scores, owns, Ranking()) == scores
    far = {1: D(1, 0, 900), 2: D(2, 1, 400, role="assistant"), 3: D(3, 5, 300)}  # outside the window: no cap
    assert rank.cap_context(far, scores, owns, Ranking())[3] == 12.0


def _stub_docs():
    from dataclasses import dataclass, field

    @dataclass
    class D:
        id: int
        pos: int
        text: str
        role: str = "user"
        speaker: str | None = None
        kind: int = 0
        sid: int = 1
        mid: str = ""
        time: str = ""
        nchars: int = 0
        tf: dict = field(default_factory=dict)

    return D


def test_what_a_question_asks_for_is_a_closed_class_of_interrogatives():
    from projections.recall import rank

    assert rank.asked_for("How long have Jolene and her partner been together?") == "how long"
    assert rank.asked_for("Where did Bob go, and when?") == "where"
    assert rank.asked_for("What kinds of pets does Joanna like?") == "what kind"
    assert rank.asked_for("What did Nate say about the game?") == ""  # bare "what" says little


def test_a_reply_to_a_question_that_asks_what_the_query_asks_is_preferred():
    """rank.adjust: "How long has Nate had his turtles?" wants the reply to "How long have you had them?"."""
    from projections.recall import rank

    D = _stub_docs()
    pool = {1: D(1, 0, "Awww! How long have you had them?", speaker="Joanna"),
            2: D(2, 1, "I've had them for 3 years now and they bring me joy!", role="assistant", speaker="Nate"),
            3: D(3, 2, "Where do you keep them?", speaker="Joanna"),
            4: D(4, 3, "In a big tank with my turtles in the living room.", role="assistant", speaker="Nate")}
    scores = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    out = rank.adjust(pool, scores, Ranking(), cues=[], current=False, echo=False, wanted="how long")
    assert out[2] > out[4] == 1.0 and out[1] == out[3] == 1.0  # the reply gains, the question itself does not
    same_speaker = {1: pool[1], 2: D(2, 1, pool[2].text, speaker="Joanna")}  # no one else answers
    assert rank.adjust(same_speaker, {1: 1.0, 2: 1.0}, Ranking(), cues=[], current=False, wanted="how long")[2] == 1.0
    assert rank.adjust(pool, scores, Ranking(same_ask=0.0), cues=[], current=False, echo=False,
                       wanted="how long") == scores


def test_a_reply_reads_the_question_before_it_at_a_higher_context_weight(ix):
    """Ranking.answer: the turn just before a reply that asks another speaker a question is the reply's best context."""
    _conv(ix, "c", [("Bob", "Did you ride the funicular up to the castle?"),
                    ("Alice", "Loved it, the view over the river was unreal.")])
    _conv(ix, "d", [("Bob", "I rode the funicular up to the castle today."),
                    ("Alice", "Loved it, the view over the river was unreal.")])
    hits = {h.message_id: h.score for h in recall(ix, "funicular castle", limit=10)}
    assert hits["c:1"] > 1.2 * hits["d:1"]  # same reply: after a question it gains, after a statement not
    plain = {h.message_id: h.score for h in recall(ix, "funicular castle", limit=10, ranking=Ranking(answer=1.0))}
    assert plain["c:1"] == pytest.approx(plain["d:1"], rel=0.05)
