"""The user's single-valued slots (``change.own_slot``: home, occupation, surname): a first-person statement of change
in the slot replaces the one fact filling it, even when its value is no name ("I'm retired now"); another person, an
addition, a team's fact or two candidates change nothing. Also the adjunct person ("for my partner's job", which
leaves the statement the user's) and a slot word that is itself a marker ("retired") counting as a new value."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import change, frames, offline
from processors.extract.model import Entry, ExistingFact
from processors.extract.text import STOPWORDS


#: A generated name is no English function word or slot word ("Here", "Will", "Role"): those are language, which the
#: rules rightly read as such, not a tool's or a person's name.
def _no_word(w: str) -> bool:
    return w.casefold() not in STOPWORDS and not change.families(w)


_NAME = st.builds(lambda a, b: a + b, st.sampled_from("BCDFGHJKLMNPRSTVWZ"),
                  st.text(alphabet="aeioulmnrst", min_size=3, max_size=7)).filter(_no_word)
_OCCUPATIONS = ["The user works as a barista at {}.", "The user teaches chemistry at {} High.",
                "The user's job: SRE at {}."]
_NEW_OCCUPATION = ["As of this month I'm retired, no more lesson plans.", "I'm freelancing as a web designer now.",
                   "I quit the job yesterday, I'm unemployed now."]


@settings(max_examples=40, deadline=None)
@given(_NAME, st.sampled_from(_OCCUPATIONS), st.sampled_from(_NEW_OCCUPATION))
def test_an_occupation_stated_anew_replaces_the_one_occupation(name, old, new) -> None:
    fact = old.format(name)
    at, step = change.explain(new, [fact])
    assert at == 0 and step in ("own slot", "family")


@settings(max_examples=40, deadline=None)
@given(_NAME, st.sampled_from(_OCCUPATIONS), st.sampled_from(_NEW_OCCUPATION),
       st.sampled_from(["My brother", "My wife", "He"]))
def test_another_person_or_an_addition_never_replaces_the_users_occupation(name, old, new, who) -> None:
    fact = old.format(name)
    other = new.replace("I'm", f"{who} is").replace("I ", f"{who} ")
    assert change.target(other, [fact]) is None
    assert change.target(new.replace("I'm", "I'm also"), [fact]) is None


@given(_NAME, _NAME)
def test_two_occupations_or_a_teams_fact_are_no_single_candidate(a, b) -> None:
    s = "As of this month I'm retired."
    assert change.own_slot(s, [0, 1], [f"The user works as a barista at {a}.", f"The user works at {b} on weekends."]) is None
    assert change.own_slot(s, [0], [f"The team's job runner is {a}."]) is None


def test_working_somewhere_is_not_an_occupation_stated_anew_without_a_name() -> None:
    assert change.own_slot("I'm working at the library now", [0], ["The user works as a barista at Copperleaf."]) is None
    assert change.own_slot("I'm working at Acme now", [0], ["The user works as a barista at Copperleaf."]) == 0


@given(_NAME, _NAME)
def test_a_surname_is_not_the_name_one_is_called_by(old, new) -> None:
    if old.casefold() == new.casefold():
        return
    assert change.explain(f"I got married in May and my surname is {new} now.", [f"The user's last name is {old}."])[0] == 0
    assert "name" not in change.families(f"The user's last name is {old}.")
    assert change.target(f"just call me {new} now", [f"The user's last name is {old}."]) is None


def test_a_person_after_for_or_with_leaves_the_statement_the_users() -> None:
    s = "I relocated to Denver for my partner's job"
    assert not frames.other_people(s, "The user lives in Austin, Texas.")
    assert change.target(s, ["The user lives in Austin, Texas."]) == 0
    assert frames.other_people("my partner relocated to Denver", "The user lives in Austin, Texas.")


def test_chinese_occupation_words() -> None:
    assert change.target("我今年退休了，不用再上班了。", ["用户在银行当柜员。"]) == 0
    assert change.target("我换工作了，现在在蓝鲸数据。", ["用户在星河科技做后端开发。"]) == 0
    assert change.target("我朋友退休了。", ["用户在银行当柜员。"]) is None
    assert change.target("我也换工作了。", ["用户在银行当柜员。"]) is None


def test_a_marker_that_is_the_slots_value_adds_a_value() -> None:
    assert change.adds_value("As of March 2025 the user is retired.", "The user teaches chemistry at Ridgemont High.")
    assert not change.adds_value("The user teaches chemistry now.", "The user teaches chemistry at Ridgemont High.")


def _entry(text: str) -> Entry:
    return Entry(ref="s#2", seq=2, session_key="s", message_id="2", speaker="user", role="user",
                 time="2025-03-02T10:00:00Z", text=text)


def test_the_update_names_its_step_for_audit_why() -> None:
    old = ExistingFact(fact_id="f1", text="The user teaches chemistry at Ridgemont High.", subject="user", scope="global")
    ops = offline.extract([_entry("As of this month I'm retired, no more lesson plans.")], [old])
    updates = [o for o in ops if o.op == "update"]
    assert [o.fact_id for o in updates] == ["f1"]
    assert updates[0].reason.startswith("correction (own slot): ") and "retired" in updates[0].text
    assert not [o for o in offline.extract([_entry("My brother is retired now.")], [old]) if o.op == "update"]


@given(_NAME, _NAME, st.sampled_from(["From tomorrow", "Starting next week", "From monday"]))
def test_a_home_from_a_day_on_is_a_change(old, new, start) -> None:
    if old.casefold() == new.casefold():
        return
    s = f"{start} my home address is in {new}."
    assert change.marked(s) and "home" in change.families(s)
    assert change.target(s, [f"The user is living in {old} at the moment."]) == 0
    assert change.target(f"{start} my sister's home address is in {new}.", [f"The user is living in {old}."]) is None
    assert "home" not in change.families(f"{start} my email address is {new.casefold()}@example.com.")


def test_only_a_persons_thing_as_the_users_reason_is_an_adjunct() -> None:
    assert frames.other_subject("I played chess with my friends", "The user lives in Austin.")  # the friends are in it
    assert not frames.other_people("I moved to Denver with my partner", "The user lives in Austin.")  # a household
    assert not frames.other_people("I moved to Denver for my partner's job", "The user lives in Austin.")
    assert frames.other_people("my partner moved to Denver for my job", "The user lives in Austin.")


def test_employees_are_no_occupation_of_the_users() -> None:
    assert "occupation" not in change.families("the average number of employees")
    assert "occupation" in change.families("I'm self-employed now")


def test_a_household_named_with_a_home_leaves_it_the_users() -> None:
    old = "The user lives in Bristol with the user's partner."
    assert not frames.other_people("we live in a village just outside Bath now", old)
    assert frames.other_people("my sister lives in Bath now", old)
    assert frames.other_subject("I played chess with my friends", "The user lives in Austin.")
