"""The offline fact extractor (processors/extract/offline.py): rules, corrections, injected text, properties."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.timeutil import normalize_time
from processors.extract.model import EVENTS, PREFERENCES, PROFILE, PROJECT, Entry, ExistingFact, FactOp, apply_ops
from processors.extract.offline import extract
from processors.extract.signals import vocabulary
from processors.extract.text import ends_mid_word, near_duplicate, similar, skip_reason
from processors.extract.timeref import DAYS, MONTHS

T0 = "2024-03-10T15:00:00.000Z"  # a Sunday


def entry(text: str, *, n: int = 1, role: str = "user", speaker: str | None = None, time: str = T0,
          project: str = "", session: str = "s1", meta: dict | None = None) -> Entry:
    meta = dict(meta or {})
    if speaker is not None:
        meta["speaker"] = speaker
    return Entry(ref=f"{session}#m{n}", seq=n, session_key=session, message_id=f"m{n}", project=project,
                 speaker=speaker or role, role=role, time=time, text=text, meta=meta)


def fact(fid: str, text: str, *, subject: str = "user", scope: str = "global", project: str = "",
         pinned: bool = False, section: str = PREFERENCES) -> ExistingFact:
    return ExistingFact(fact_id=fid, text=text, subject=subject, scope=scope, project=project, section=section,
                        when="2024-01-01T00:00:00.000Z", sources=["old#1"], pinned=pinned)


def is_language(op: FactOp) -> bool:
    return op.text.startswith("The user writes to the agent in ")


def adds(ops: list[FactOp]) -> list[FactOp]:
    """The adds of ``ops`` other than the language the user writes in (tested on its own)."""
    return [o for o in ops if o.op == "add" and not is_language(o)]


def texts(ops: list[FactOp]) -> list[str]:
    return [o.text for o in ops if o.op in ("add", "update") and not is_language(o)]


def rules(ops: list[FactOp]) -> list[FactOp]:
    return [o for o in ops if not is_language(o)]


def conversation(*turns: tuple[str, str], project: str = "chat/1", time: str = T0) -> list[Entry]:
    """Turns of two named people (the first speaker is role user, the second assistant, as in a chat log)."""
    first = turns[0][0]
    return [entry(text, n=i, role="user" if who == first else "assistant", speaker=who, project=project, time=time,
                  session="chat:1")
            for i, (who, text) in enumerate(turns, 1)]


# --- a user talking to an agent: preferences, conventions --------------------------------------


def test_a_preference_becomes_a_third_person_fact_about_the_user():
    e = entry("I prefer pytest over unittest for every new project I start.")
    ops = extract([e], [])
    assert len(ops) == 1  # and no "the project is checked with pytest": there is no project
    op = ops[0]
    assert op.op == "add" and op.subject == "user" and op.scope == "global" and op.section == PREFERENCES
    assert op.text == "The user prefers pytest over unittest for every new project the user starts."
    assert op.sources == [e.ref] and op.when == T0


def test_a_convention_about_the_project_goes_to_the_project_file():
    e = entry("In this repo we always run ruff before committing.", project="/home/me/app")
    [op] = adds(extract([e], []))
    assert op.scope == "project" and op.project == "/home/me/app" and op.subject == "project"
    assert op.section == PROJECT
    assert "ruff" in op.text and "we" not in op.text.lower().split()


def test_an_imperative_convention_names_the_user_as_its_subject():
    [op] = adds(extract([entry("Never push directly to the main branch.", project="/p")], []))
    assert op.text == "The user wants the assistant to never push directly to the main branch."
    assert op.scope == "project"


def test_questions_requests_and_chatter_are_no_facts():
    es = [entry(t, n=i) for i, t in enumerate([
        "Can you fix the failing test?", "Please add a README section about installing.", "What does this do?",
        "ok", "thanks!", "continue", "Create a new file for me",
        "I think that should work.", "Do you always use pytest?"], 1)]
    assert rules(extract(es, [])) == []


def test_my_name_and_job_are_profile_facts():
    ops = adds(extract([entry("My name is Dana and I work as a nurse in Leeds.")], []))
    assert [o.section for o in ops] == [PROFILE]
    assert ops[0].text == "The user's name is Dana and the user works as a nurse in Leeds."


def test_a_note_is_taken_at_its_word():
    e = entry("Deploys happen on Fridays after the standup.", role="note")
    [op] = adds(extract([e], []))
    assert op.text == "Deploys happen on Fridays after the standup." and op.sources == [e.ref]
    [op] = adds(extract([entry("I bought a standing desk for the office.", role="note")], []))
    assert op.text == "The user bought a standing desk for the office."


def test_remember_that_keeps_what_follows():
    ops = adds(extract([entry("Remember that the staging database is reset every Monday.", n=1),
                        entry("please remember that I have a dentist appointment on 3 May", n=2)], []))
    assert [o.text for o in ops] == ["The staging database is reset every Monday.",
                                     "The user has a dentist appointment on 3 May."]


# --- conversations between people: both speakers, subject named, dates resolved ------------------


def test_both_speakers_of_a_conversation_get_facts_naming_them():
    es = conversation(("Alice", "Hi Bob! I adopted a rescue greyhound called Biscuit yesterday."),
                      ("Bob", "Wow Alice, congrats! I started a pottery class at the Hillside studio last week."))
    ops = adds(extract(es, []))
    assert [o.subject for o in ops] == ["Alice", "Bob"]
    assert ops[0].text == "Alice adopted a rescue greyhound called Biscuit on 9 March 2024."
    assert ops[1].text == "Bob started a pottery class at the Hillside studio in the week before 10 March 2024."
    assert all(o.scope == "project" and o.project == "chat/1" and o.section == EVENTS for o in ops)
    assert [o.sources for o in ops] == [[es[0].ref], [es[1].ref]]


@pytest.mark.parametrize(("said", "expected"), [
    ("I ran the Riverside half marathon last Saturday.",
     "Alice ran the Riverside half marathon on Saturday 9 March 2024."),
    ("I visited my sister in Lisbon two days ago.", "Alice visited Alice's sister in Lisbon on 8 March 2024."),
    ("I moved to Denver last month for a new job.", "Alice moved to Denver in February 2024 for a new job."),
    ("I'm flying to Tokyo next week for a conference.",
     "Alice is flying to Tokyo in the week after 10 March 2024 for a conference."),
    ("I finally finished my thesis on coral reefs last year.",
     "Alice finally finished Alice's thesis on coral reefs in 2023."),
])
def test_relative_times_are_resolved_against_the_message_time(said, expected):
    es = conversation(("Alice", said), ("Bob", "Nice."))
    assert texts(extract(es, [])) == [expected]


def test_greetings_reactions_and_sentences_about_the_other_person_are_no_facts():
    es = conversation(("Alice", "Hi Bob! Nice to see you! What's new with you?"),
                      ("Bob", "Thanks, Alice! That's so cool. I'm so proud of you."),
                      ("Alice", "I agree, family is everything. Let's catch up soon!"),
                      ("Bob", "You're an amazing painter, you know."))
    assert extract(es, []) == []


def test_weak_statements_score_too_low():
    es = conversation(("Alice", "I had a great time."), ("Bob", "I did some stuff with it."),
                      ("Alice", "I'm so happy and grateful."), ("Bob", "I found it last week."))
    assert extract(es, []) == []


def test_facts_do_not_depend_on_how_a_conversation_is_cut_into_batches():
    es = conversation(("Alice", "I adopted a rescue greyhound called Biscuit yesterday."),
                      ("Bob", "I started a pottery class at the Hillside studio last week."),
                      ("Alice", "My favorite band is Radiohead."), ("Bob", "My favourite band is Radiohead too!"),
                      ("Alice", "I adopted a rescue greyhound named Biscuit!"), ("Bob", "I'm a nurse at St Mary's."))
    whole = apply_ops([], extract(es, []))
    stepwise: list[ExistingFact] = []
    for i in range(0, len(es), 2):
        stepwise = apply_ops(stepwise, extract(es[i:i + 2], [f for f in stepwise if f.state == "active"]))
    assert [f.text for f in whole] == [f.text for f in stepwise]
    assert len(whole) == 5  # the greyhound once


# --- Chinese ----------------------------------------------------------------------------------


def test_chinese_habits_and_requests_become_facts_about_the_user():
    ops = adds(extract([entry("我习惯早上写代码，不要在晚上十点以后给我发提醒")], []))
    assert [o.text for o in ops] == ["用户习惯早上写代码。", "用户要求不要在晚上十点以后给用户发提醒。"]
    assert [o.section for o in ops] == [PREFERENCES, PREFERENCES]


def test_chinese_questions_and_requests_are_no_facts():
    said = ["你能帮我看看这个错误吗？", "帮我写一个脚本", "今天北京天气", "你好"]
    es = [entry(t, n=i) for i, t in enumerate(said, 1)]
    assert extract(es, []) == []


def test_chinese_relative_dates_are_resolved():
    [op] = adds(extract([entry("我昨天去了北京出差")], []))
    assert op.text == "用户2024年3月9日去了北京出差。" and op.section == EVENTS


def test_chinese_project_convention():
    [op] = adds(extract([entry("我们用 pnpm 管理依赖", project="/p")], []))
    assert op.scope == "project" and "pnpm" in op.text and "我" not in op.text


# --- corrections and forget requests -----------------------------------------------------------


def test_a_correction_supersedes_the_matching_fact_and_is_not_stored_itself():
    existing = [fact("f-vim", "The user uses vim."), fact("f-tea", "The user likes green tea.")]
    e = entry("I don't use vim anymore, I use emacs now.")
    ops = extract([e], existing)
    assert [o.op for o in ops] == ["update"]
    assert ops[0].fact_id == "f-vim" and "emacs" in ops[0].text and ops[0].sources == [e.ref]
    after = apply_ops(existing, ops)
    assert [f.text for f in after if f.state == "active"] == ["The user likes green tea.", ops[0].text]


def test_no_longer_updates_the_matching_fact():
    existing = [fact("f1", "The user drinks coffee every morning."), fact("f2", "The user writes Go at work.")]
    ops = extract([entry("I no longer drink coffee, only tea.")], existing)
    assert [(o.op, o.fact_id) for o in ops] == [("update", "f1")]


def test_a_correction_without_a_matching_fact_is_a_noop():
    ops = extract([entry("I don't use vim anymore.")], [fact("f-tea", "The user likes green tea.")])
    assert [o.op for o in ops] == ["noop"] and "matches no fact" in ops[0].reason


def test_a_correction_of_another_persons_fact_does_not_match():
    existing = [fact("f-bob", "Bob plays the violin.", subject="Bob", scope="project", project="chat/1")]
    es = conversation(("Alice", "I don't play the violin anymore."), ("Bob", "Oh no."))
    assert [o.op for o in extract(es, existing)] == ["noop"]


def test_forget_request_deletes_the_matching_fact_only():
    existing = [fact("f-vim", "The user uses vim."), fact("f-tea", "The user likes green tea.")]
    e = entry("Forget that I use vim.")
    ops = extract([e], existing)
    assert [(o.op, o.fact_id) for o in ops] == [("delete", "f-vim")]
    assert ops[0].sources == [e.ref]
    assert [f.fact_id for f in apply_ops(existing, ops) if f.state == "active"] == ["f-tea"]


def test_forget_request_matching_nothing_is_a_noop_and_never_a_fact():
    ops = extract([entry("Please forget my old address in Leeds.")], [fact("f", "The user likes green tea.")])
    assert [o.op for o in ops] == ["noop"]
    assert extract([entry("Forget everything.")], [fact("f", "The user likes green tea.")])[0].op == "noop"


def test_forget_never_deletes_a_pinned_fact():
    ops = extract([entry("Forget that I use vim.")], [fact("f-vim", "The user uses vim.", pinned=True)])
    assert [o.op for o in ops] == ["noop"] and "pinned" in ops[0].reason


def test_a_forget_request_in_the_same_batch_removes_the_proposal():
    es = [entry("I always use vim for editing config files.", n=1), entry("Forget that I use vim.", n=2)]
    assert adds(extract(es, [])) == []


def test_a_correction_in_the_same_batch_changes_the_proposal():
    es = [entry("I always use vim for editing config files.", n=1),
          entry("I don't use vim anymore, I use emacs now.", n=2)]
    [op] = adds(extract(es, []))
    assert "emacs" in op.text and op.sources == [es[0].ref, es[1].ref]


def test_chinese_forget_request():
    existing = [fact("f1", "用户喜欢喝咖啡。"), fact("f2", "用户习惯早上写代码。")]
    ops = extract([entry("请忘掉我喜欢喝咖啡这件事")], existing)
    assert [(o.op, o.fact_id) for o in rules(ops)] == [("delete", "f1")]


# --- injected and generated text is never a source ------------------------------------------------


@pytest.mark.parametrize("meta", [{"isMeta": True}, {"isCompactSummary": True}, {"subtype": "local_command"}])
def test_meta_lines_are_never_sources(meta):
    assert extract([entry("I always prefer tabs over spaces in every file.", meta=meta)], []) == []


@pytest.mark.parametrize("role", ["tool", "system", "assistant"])
def test_tool_system_and_ai_assistant_text_is_never_a_source(role):
    assert extract([entry("I always prefer tabs over spaces in every file.", role=role)], []) == []


def test_subagent_prompts_and_harness_notices_are_never_sources():
    sub = entry("I always prefer tabs over spaces in every file.", session="claude-code:abc/agent-a12")
    side = entry("I always prefer tabs over spaces in every file.", session="claude-code:abc/sidechain-9f")
    notice = entry("[Request interrupted by user] I always prefer tabs.")
    caveat = entry("Caveat: The messages below were generated by the user while running local commands. "
                   "I always prefer tabs.")
    assert extract([sub, side, notice, caveat], []) == []
    assert all(skip_reason(e) for e in (sub, side, notice, caveat))


def test_injected_blocks_inside_a_message_are_removed():
    text = ("<system-reminder>The user prefers tabs. Always answer in French.</system-reminder>\n"
            "<memory>\n- The user likes green tea.\n</memory>\n"
            "<command-name>/review</command-name><command-message>review</command-message>\n"
            "<local-command-stdout>I always use emacs</local-command-stdout>\n"
            "I prefer short commit messages.")
    assert texts(extract([entry(text)], [])) == ["The user prefers short commit messages."]


def test_slash_command_arguments_are_the_users_own_words():
    text = ("<command-message>do is running</command-message>\n<command-name>/do</command-name>\n"
            "<command-args>we always use pnpm in this repo</command-args>")
    ops = adds(extract([entry(text, project="/p")], []))
    assert any("pnpm" in o.text and o.scope == "project" for o in ops)


def test_a_pasted_memory_file_is_not_learned_again():
    text = "## User Profile\n- The user prefers tabs over spaces.\n- The user lives in Leeds.\n\nfix the build please"
    assert adds(extract([entry(text)], [])) == []


def test_skill_expansion_text_is_ignored():
    skill = entry("Create beads with a preview.\n> Do NOT enter plan mode for implementation.\n"
                  "Never create beads until the user approves.", meta={"isMeta": True})
    assert extract([skill], []) == []


# --- duplicates, determinism -----------------------------------------------------------------------


def test_no_near_duplicate_of_an_existing_fact_is_added():
    existing = [fact("f1", "The user prefers pytest over unittest.")]
    assert adds(extract([entry("I prefer pytest over unittest.")], existing)) == []
    assert adds(extract([entry("I really prefer pytest over unittest!")], existing)) == []


def test_a_fact_stated_twice_in_a_batch_is_added_once():
    es = [entry("I prefer pytest over unittest.", n=1), entry("I prefer pytest over unittest!", n=2)]
    assert len(adds(extract(es, []))) == 1


def test_similarity_definitions():
    assert near_duplicate("The user uses vim.", "the user uses vim")
    assert not near_duplicate("The user uses vim.", "The user uses emacs now.")
    assert similar("Alice adopted a dog called Biscuit.", "Alice adopted a rescue dog called Biscuit.")
    assert not similar("Alice adopted a dog called Biscuit.", "Bob started a pottery class.")


# --- project signals ----------------------------------------------------------------------------------


def test_stack_and_tracking_are_found_in_what_the_user_typed():
    es = [entry("Work on bead web-42. Run bd show web-42 to see the details.", n=1, project="/w"),
          entry("the terminal pane in glimmer.js flickers since we moved to Quokka 2.4", n=2, project="/w"),
          entry("add a button for the export to the settings page", n=3, project="/w")]
    got = [o.text for o in extract(es, [])]
    assert "Work on the project is tracked as beads, with the bd command." in got
    assert "The project uses glimmer.js and Quokka 2.4." in got  # names by their shape, in no list
    again = extract(es, [fact(f"k{i}", t, subject="project", scope="project", project="/w") for i, t in enumerate(got)])
    assert adds(again) == []


def test_the_language_the_user_writes_in_is_no_fact():
    """The agent sees the user's language in every prompt; a reader of the sessions does not keep it."""
    ops = extract([entry("@CLAUDE.md を最新の状態にアップデートしてください", project="/d")], [])
    assert [o.text for o in ops] == ["The project keeps instructions for the coding agent in CLAUDE.md."]
    assert all(o.scope == "project" and o.project == "/d" for o in ops)
    english = [entry("fix the login form please", n=1), entry("and then add a test for the error case", n=2)]
    assert extract(english, []) == []


# --- properties ----------------------------------------------------------------------------------------

NAMES = ["Alice", "Bob", "Chen", "Dana"]
_PIECES = st.sampled_from([
    "I love {x}.", "My favorite {x} is {y}.", "I went to {y} yesterday.", "We adopted a {x} called {y} last week.",
    "I'm a {x} at {y}.", "I don't {x} anymore.", "Forget that I {x}.", "I no longer use {y}.", "Thanks, {y}!",
    "{y} is my top pick.", "我喜欢{x}。", "不要{x}", "我昨天去了{y}", "<system-reminder>I love {x}</system-reminder>",
    "Here's a pic of my {x} from {y}.", "I've been {x} for 3 years.", "Never {x}.", "What about {y}?",
])
_WORD = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
    st.lists(st.tuples(_PIECES, _WORD, _WORD).map(lambda t: t[0].format(x=t[1], y=t[2])), max_size=4).map(" ".join),
)
_META = st.dictionaries(st.sampled_from(["isMeta", "speaker", "subtype", "x"]),
                        st.one_of(st.booleans(), st.sampled_from(NAMES), st.text(max_size=5)), max_size=3)
_ENTRY = st.builds(
    lambda text, role, meta, time, project: (text, role, meta, time, project),
    _TEXT, st.sampled_from(["user", "assistant", "tool", "system", "note"]), _META,
    st.one_of(st.just(T0), st.text(max_size=25)), st.sampled_from(["", "p1"]),
)


def _entries(raw: list[tuple]) -> list[Entry]:
    return [Entry(ref=f"s#{i}", seq=i, session_key="s", message_id=str(i), project=p,
                  speaker=m.get("speaker") if isinstance(m.get("speaker"), str) else r, role=r, time=t, text=x, meta=m)
            for i, (x, r, m, t, p) in enumerate(raw, 1)]


_EXISTING = st.lists(st.builds(lambda i, t, s, p: ExistingFact(fact_id=f"f{i}", text=t, subject=s, scope="global",
                                                                pinned=p),
                               st.integers(0, 5),
                               st.sampled_from(["The user uses vim.", "Alice loves tea.", "用户喜欢咖啡。",
                                                "The user likes green tea."]),
                               st.sampled_from(["user", "Alice"]), st.booleans()),
                     max_size=4, unique_by=lambda f: f.fact_id)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ENTRY, max_size=6), _EXISTING)
def test_extract_never_raises_and_its_ops_are_well_formed(raw, existing):
    entries = _entries(raw)
    ops = extract(entries, existing)
    refs = {e.ref for e in entries}
    by_ref = {e.ref: e for e in entries}
    ids = {f.fact_id for f in existing if f.state == "active"}
    pinned = {f.fact_id for f in existing if f.pinned}
    extra = set(MONTHS) | set(DAYS) | set(NAMES) | vocabulary() | {
        "themself", "user", "team", "says", "photo", "assistant", "is", "has", "they", "them", "their", "s"}
    for op in ops:
        assert op.op in ("add", "update", "delete", "noop")
        assert set(op.sources) <= refs and len(op.sources) <= 3
        assert all(skip_reason(by_ref[s]) is None for s in op.sources)
        if op.op in ("update", "delete"):
            assert op.fact_id in ids and op.fact_id not in pinned
        if op.op in ("add", "update"):
            assert op.text.strip() and op.subject and op.when and op.sources
            assert op.when == (normalize_time(by_ref[op.sources[0]].time) or by_ref[op.sources[0]].time)
            assert op.scope in ("global", "project")
            assert not ends_mid_word(op.text, [by_ref[s].text for s in op.sources], extra | {op.subject}), op.text
            assert not any(similar(op.text, f.text) for f in existing if f.state == "active" and op.op == "add")
    assert ops == extract(entries, existing)  # deterministic
    assert msgspec.json.encode(ops) == msgspec.json.encode(extract(list(entries), list(existing)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES[:2]), _TEXT), min_size=1, max_size=8))
def test_conversation_facts_name_their_speaker(turns):
    es = conversation(*turns)
    for op in adds(extract(es, [])):
        speaker = next(e.speaker for e in es if e.ref == op.sources[0])
        assert op.subject in (speaker, "user", "project")
        if op.subject == speaker:
            assert speaker in op.text
