"""The text helpers of fact extraction: third person, relative times, injected text, sentences, words."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.signals import language_of
from processors.extract.text import ends_mid_word, own_text, sentences, skip_reason
from processors.extract.timeref import resolve
from processors.extract.voice import third_person, zh_third_person

T = "2023-05-08T13:56:00.000Z"  # a Monday


@pytest.mark.parametrize(("said", "name", "expected"), [
    ("I love baking sourdough.", "Mia", "Mia loves baking sourdough."),
    ("I'm fond of chess.", "Mia", "Mia is fond of chess."),
    ("I've known them for 4 years.", "Mia", "Mia has known them for 4 years."),
    ("I'd love to visit Rome.", "Mia", "Mia would love to visit Rome."),
    ("I'd been there before.", "Mia", "Mia had been there before."),
    ("I'll start next week.", "Mia", "Mia will start next week."),
    ("I really try to go running.", "Mia", "Mia really tries to go running."),
    ("I don't eat meat.", "Mia", "Mia doesn't eat meat."),
    ("I went home and I watched TV.", "Mia", "Mia went home and Mia watched TV."),
    ("My brother and I drove to Porto.", "Mia", "Mia's brother and Mia drove to Porto."),
    ("My name is Dana and I work as a nurse.", "the user", "The user's name is Dana and the user works as a nurse."),
    ("I practice and swim every day.", "Mia", "Mia practices and swims every day."),
    ("I prefer pytest over unittest, and always use ruff for linting.", "the user",
     "The user prefers pytest over unittest, and always uses ruff for linting."),
    ("I like tea, and my wife likes coffee.", "Mia", "Mia likes tea, and Mia's wife likes coffee."),
    ("I like tea and always coffee.", "Mia", "Mia likes tea and always coffee."),
    ("I love pizza and pasta.", "Mia", "Mia loves pizza and pasta."),
    ("I taught myself to code.", "Mia", "Mia taught themself to code."),
    ("I retook the driving exam.", "Mia", "Mia retook the driving exam."),
    ("Boy, was I tired.", "Mia", "Boy, was Mia tired."),
    ("We bought a kayak called Nemo.", "Mia", "Mia says they bought a kayak called Nemo."),
    ("We use ruff in our repo.", "the user", "The user says they use ruff in their repo."),
])
def test_third_person(said, name, expected):
    assert third_person(said, name) == expected


def test_third_person_for_a_team_and_refusals():
    team = third_person("We use ruff in our repo.", "the user", team=True)
    assert team == "The team uses ruff in the project's repo."
    assert third_person("I love your painting.", "Mia") is None  # about the other person
    assert third_person("Thank you so much.", "Mia") is None


def test_chinese_third_person():
    assert zh_third_person("我习惯早上写代码", "用户") == "用户习惯早上写代码"
    assert zh_third_person("我的猫叫小白", "小林") == "小林的猫叫小白"
    assert zh_third_person("我们用 pnpm", "用户") == "团队用 pnpm"


@pytest.mark.parametrize(("text", "expected"), [
    ("I went there yesterday.", "I went there on 7 May 2023."),
    ("Yesterday I went there.", "On 7 May 2023 I went there."),
    ("Yesterday was amazing.", "7 May 2023 was amazing."),
    ("I ran a race last Saturday.", "I ran a race on Saturday 6 May 2023."),
    ("I went to a reading last Fri.", "I went to a reading on Friday 5 May 2023."),
    ("I've been busy since last week.", "I've been busy since the week before 8 May 2023."),
    ("I read a lot in the last week.", "I read a lot in the week before 8 May 2023."),
    ("I moved last month.", "I moved in April 2023."),
    ("I moved last year.", "I moved in 2022."),
    ("I fly out next month.", "I fly out in June 2023."),
    ("I bought the boat two years ago.", "I bought the boat around 2021."),
    ("I called her two days ago.", "I called her on 6 May 2023."),
    ("I got back last weekend.", "I got back on the weekend before 8 May 2023."),
    ("We go camping next week.", "We go camping in the week after 8 May 2023."),
    ("I hiked last summer.", "I hiked in summer 2022."),
    ("I'll see it tomorrow.", "I'll see it on 9 May 2023."),
    ("我昨天去了北京", "我2023年5月7日去了北京"),
    ("我上个月搬家了", "我2023年4月搬家了"),
])
def test_relative_times(text, expected):
    assert resolve(text, T) == (expected, True)


def test_text_without_relative_times_or_without_a_time_is_unchanged():
    assert resolve("I love the summer of 2020.", T) == ("I love the summer of 2020.", False)
    assert resolve("I went there yesterday.", "") == ("I went there yesterday.", False)
    assert resolve("I went there yesterday.", "not a time") == ("I went there yesterday.", False)


def test_months_wrap_around_the_year():
    assert resolve("I moved last month.", "2023-01-15T00:00:00Z")[0] == "I moved in December 2022."
    assert resolve("I move next month.", "2023-12-15T00:00:00Z")[0] == "I move in January 2024."


def test_own_text_removes_injected_blocks_but_keeps_command_arguments():
    text = ("<command-message>x</command-message>\n<command-name>/x</command-name>\n"
            "<command-args>use pnpm</command-args>"
            "\n<system-reminder>secret</system-reminder>\nhello\n```\ncode here\n```\n> quoted reply\n"
            "<environment_context><cwd>/tmp</cwd></environment_context>\n\x1b[1mbold\x1b[22m")
    assert [ln for ln in own_text(text).split("\n") if ln.strip()] == ["use pnpm", "hello", "bold"]
    assert own_text("<system-reminder>never closed, all of this is injected") == ""
    assert own_text("## User Profile\n- likes tea\n- lives in Leeds\n\nreal text") == "real text"
    assert own_text("The user likes tea.\nreal text", {"the user likes tea"}) == "real text"


def test_skip_reasons():
    def e(**kw) -> Entry:
        base = {"ref": "s#1", "seq": 1, "session_key": "s", "message_id": "1", "speaker": "user", "role": "user",
                "time": T, "text": "I like tea."}
        return Entry(**{**base, **kw})

    assert skip_reason(e()) is None
    assert skip_reason(e(role="note")) is None
    assert skip_reason(e(role="assistant", speaker="Bob", meta={"speaker": "Bob"})) is None
    assert skip_reason(e(role="assistant")) == "assistant text is generated"
    assert skip_reason(e(role="assistant", meta={"speaker": "Claude"})) == "assistant text is generated"
    assert skip_reason(e(role="tool")) == "role tool"
    assert skip_reason(e(meta={"isMeta": True})) == "isMeta message"
    assert skip_reason(e(session_key="claude-code:x/agent-a1")) == "subagent prompt (written by the main agent)"
    assert skip_reason(e(text="<local-command-stdout>ok</local-command-stdout>")) == "injected block"
    assert skip_reason(e(text="[Scheduled Task] Timer finished.")) == "harness text"


def test_sentences():
    assert sentences("I use Python 3.11. Dr. Smith agrees! Really? Yes.\nNew line") == [
        "I use Python 3.11.", "Dr. Smith agrees!", "Really?", "Yes.", "New line"]
    assert sentences("我喜欢茶。你呢？好的") == ["我喜欢茶。", "你呢？", "好的"]
    assert sentences('It\'s called "Finding Home." We loved it.') == ['It\'s called "Finding Home."', "We loved it."]


def test_ends_mid_word():
    assert ends_mid_word("Alice went to the gro", ["I went to the grocery store"])
    assert ends_mid_word("Alice went to the grocery…", ["I went to the grocery store"])
    assert not ends_mid_word("Alice went to the grocery store.", ["I went to the grocery store"])
    assert not ends_mid_word("Alice loves it.", ["I love it"])  # a conjugated word is whole
    assert not ends_mid_word("Alice went there on 7 May 2023.", ["I went there yesterday"])
    assert not ends_mid_word("Alice went there in May.", ["I went there"], ["May"])
    assert not ends_mid_word("用户喜欢喝茶", ["我喜欢喝茶"])


def test_language_of():
    assert language_of("@CLAUDE.md を最新の状態にアップデートしてください") == "Japanese"
    assert language_of("你好，请帮我看看") == "Chinese"
    assert language_of("please fix the failing test") == "English"
    assert language_of("ok") is None


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=300), st.sampled_from(["Mia", "the user"]))
def test_third_person_never_raises_and_leaves_no_first_person(text, name):
    out = third_person(text, name)
    if out is not None:
        import re

        rest = out.replace(name, "").replace(name.capitalize(), "").replace(name + "'s", "")
        assert not re.search(r"\b(?:I|me|my|mine|myself|we|us|our|ours)\b", rest, re.IGNORECASE)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=300), st.text(max_size=30))
def test_resolve_never_raises(text, when):
    resolve(text, when)
    resolve(text, T)


def test_extraction_time_is_linear_in_the_size_of_a_message():
    """Pathological messages (no full stop, thousands of tags or pronouns) stay fast: no quadratic regex."""
    def entry(text: str) -> Entry:
        return Entry(ref="s#1", seq=1, session_key="s", message_id="1", speaker="user", role="user", time=T, text=text)

    for text in ("I " * 100_000 + "love it", "<a-b>" * 50_000, "we love it last week you my " * 20_000,
                 "我喜欢，" * 50_000, "I love tea. " * 20_000,
                 "I love green tea every morning. " * 20_000, "<memory>" + "x " * 100_000):
        start = time.perf_counter()
        extract([entry(text)], [])
        assert time.perf_counter() - start < 10, text[:20]


@pytest.mark.parametrize(("said", "written"), [
    ("I;B", "The user;B"),  # Hypothesis found "The user;Bs": a word nobody said
    ("I B", "The user B"),  # a capital letter or an acronym is no verb to agree
    ("I; run later", "The user; run later"),  # after a clause break the word is not the subject's verb
    ("I, too, like tea", "The user, too, likes tea"),  # a comma keeps the subject
    ("I (often) run", "The user (often) runs"),
])
def test_third_person_agrees_only_the_subjects_own_verb(said, written):
    assert third_person(said, "The user") == written


def test_capitalized_never_changes_a_letter_that_has_no_capital_of_its_own():
    """ "ß".upper() is "SS": a note "ß" became the fact "SS." (Hypothesis found it in the extractor's property test)."""
    from processors.extract.text import capitalized

    assert capitalized("ß ist kein Anfang") == "ß ist kein Anfang"
    assert capitalized("ǆemal") == "ǅemal" or capitalized("ǆemal") == "Ǆemal"
    assert capitalized("the user") == "The user" and capitalized("") == ""
