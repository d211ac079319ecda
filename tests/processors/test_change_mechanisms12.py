"""Round 12 mechanisms of the change path (processors/extract: change.py, offline.py, validity.py), as properties over
generated names: a restated change that lost its value falls back on the old fact's frame with the value swapped; a
return ends the one temporary fact; a forget request names only what comes before its reason and may drop one "and"
conjunct; the past told as the past changes nothing; "X is now Y" and "renamed my github account (to) Y" rename."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import change, offline, rename, validity
from processors.extract.model import Entry, ExistingFact, FactOp
from processors.extract.text import STOPWORDS


def _no_word(w: str) -> bool:
    return w.casefold() not in STOPWORDS and not change.families(w)


_NAME = st.builds(lambda a, b: a + b, st.sampled_from("BCDFGKLMNPRSTVZ"),
                  st.text(alphabet="aeiouklmnrstz", min_size=3, max_size=8)).filter(_no_word)
_PAIR = st.lists(_NAME, min_size=2, max_size=2, unique_by=str.casefold)


def _ops(facts: list[str], said: str) -> list[FactOp]:
    known = [ExistingFact(fact_id=f"f{i}", text=t, subject="user", scope="global") for i, t in enumerate(facts)]
    e = Entry(ref="s#1", seq=1, session_key="s", message_id="m1", speaker="user", role="user",
              time="2025-03-10T10:00:00Z", text=said)
    return offline.extract([e], known)


def _updates(ops: list[FactOp]) -> list[tuple[str, str]]:
    return [(o.fact_id, o.text) for o in ops if o.op == "update"]


# --- the old fact's frame with its value swapped ------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(_PAIR)
def test_a_reason_naming_the_old_value_leaves_the_old_frame_with_the_new_value(pair) -> None:
    old, new = pair
    said = f"{old} got too pricey so we're on {new} now, self-hosted"
    assert change.value_swap(said, f"Login goes through {old}.") == (old, new, f"Login goes through {new}.")
    assert _updates(_ops([f"Login goes through {old}."], said)) == [("f0", f"Login goes through {new}.")]


@settings(max_examples=40, deadline=None)
@given(_PAIR)
def test_coordinated_places_of_one_verb_keep_what_the_fact_is_about(pair) -> None:
    old, new = pair  # "moved CI off A and onto B": the restated clause "onto B" alone says nothing of CI
    assert _updates(_ops([f"CI runs on {old}."], f"We moved CI off {old} and onto {new}.")) == [("f0", f"CI runs on {new}.")]


def test_no_swap_when_the_value_is_not_one_name_or_the_new_one_holds_the_old() -> None:
    assert change.value_swap("I go by Jennifer Ortiz these days.", "The user's name's Jennifer Walsh.") is None
    # a sentence's first word is capitalised whatever it is: "Team" is no new value
    assert change.value_swap("Team reshuffle last sprint, so I'm a frontend dev at Pebblestack now.",
                             "The user is the only backend dev at Pebblestack.") is None
    # the value in a subordinate clause of the fact is not what the fact states
    assert change.value_swap("Got the MacBook back, so I'm on macOS again.",
                             "The user is on the user's old ThinkPad because the user's MacBook is in for repair.") is None
    assert change.value_swap("ok you convinced me, spaces from now on", "The user likes tabs for indentation.") \
        == ("tabs", "spaces", "The user likes spaces for indentation.")
    assert change.value_swap("We moved from npm to pnpm.", "The team's package manager is npm.") is None


def test_a_chinese_update_may_add_only_a_latin_name() -> None:
    assert change.adds_value("用户说数据库用的是 TiDB。", "用户说数据库用的是 MongoDB。")
    assert not change.adds_value("用户说数据库用的是 MongoDB。", "用户说数据库用的是 MongoDB。")
    # lower-case words and numbers beside the same Chinese add nothing (a daemon test's "(said in gamma at 50)")
    assert not change.adds_value("不要在晚上十点以后给用户发提醒 (said in gamma at 50)。", "不要在晚上十点以后给用户发提醒 (said in beta at 20)。")


# --- a return ends the temporary fact -----------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(_PAIR)
def test_a_return_replaces_the_one_temporary_fact(pair) -> None:
    away, home = pair
    fact = f"The user is staying at the user's brother's in {away} until Friday 7 March 2025."
    ups = _updates(_ops([fact, "The user likes tea."], f"back home in {home} now, the visit went great"))
    assert ups == [("f0", f"The user is back home in {home}.")]
    assert _updates(_ops([f"The user is working from the user's parents' place in {away} in March 2025."],
                         f"I'm back in {home} since sunday"))[0][0] == "f0"


@settings(max_examples=30, deadline=None)
@given(_PAIR)
def test_another_persons_return_or_two_temporary_facts_change_nothing(pair) -> None:
    away, home = pair
    fact = f"The user is staying in {away} until Friday 14 March 2025."
    assert not _updates(_ops([fact], f"my sister is back home in {home} now"))
    two = _ops([fact, "In the week of 10 March 2025 the user is on call."], f"back home in {home} now")
    assert not [o for o in two if "temporary fact ended" in o.reason]  # (the frame match may still pick the stay)


def test_a_present_state_of_a_month_ends_with_it() -> None:
    assert validity.ends_on("The user is working from the user's parents' place in Porto in March 2025.") == date(2025, 3, 31)
    assert validity.ends_on("The user moved to Lisbon in March 2025.") is None  # an event, no state
    assert validity.ends_on("The user is staying at the Hilton (as of 1 March 2025).") is None


# --- forget requests ----------------------------------------------------------------------------------------------

def test_a_forget_request_names_what_comes_before_its_reason() -> None:
    assert offline._forget_target("that I have kids, I'd rather that wasn't stored") == "that I have kids"
    assert offline._forget_target("the kids thing, I'd rather keep it out") == "kids"
    assert offline._forget_target("my age? keeping the city is fine") == "my age"
    ups = _updates(_ops(["The user is a vet and the user has three kids."], "forget that I have kids, I'd rather that wasn't stored"))
    assert ups == [("f0", "The user is a vet.")]
    assert _updates(_ops(["The user is 41 and the user lives in Cardiff."], "hmm could you forget my age?")) \
        == [("f0", "The user lives in Cardiff.")]


@settings(max_examples=30, deadline=None)
@given(_PAIR)
def test_a_forget_request_drops_one_and_conjunct(pair) -> None:
    cat, bird = pair
    fact = f"The user has a cat called {cat} and a parrot called {bird}."
    assert _updates(_ops([fact], "forget the part about the parrot, she lives with my sister now")) \
        == [("f0", f"The user has a cat called {cat}.")]
    assert _updates(_ops([f"The user has two kids and drive a {cat}."], "don't remember the kids thing, I'd rather keep it out")) \
        == [("f0", f"The user drives a {cat}.")]


# --- the past told as the past ------------------------------------------------------------------------------------

def test_the_past_told_as_the_past_changes_nothing() -> None:
    assert change.told_as_past("Back in 2019 it was still on Ruby 2.6, what a pain that was.")
    assert not _updates(_ops(["The API runs on Ruby 3.3."], "Back in 2019 it was still on Ruby 2.6, what a pain that was."))
    assert not change.told_as_past("I used to live in Ljubljana, but these days I'm in Maribor.")
    assert _updates(_ops(["The user lives in Ljubljana."], "I used to live in Ljubljana, but these days I'm in Maribor."))


# --- renames ------------------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(_PAIR)
def test_an_old_name_is_now_a_new_one(pair) -> None:
    old, new = pair
    facts = ["The user likes tea.", f"The app the user is building is called {old} (as of 1 March 2025)."]
    assert rename.target(f"{old} is now {new} \U0001F680 new logo and everything", facts) \
        == (1, f"The app the user is building is called {new}.")
    assert rename.target(f"{old} is now live", facts) is None  # no name's shape: no rename
    assert rename.target(f"{new} is now {old}", facts) is None  # the new name is the known one


@settings(max_examples=40, deadline=None)
@given(_PAIR)
def test_an_account_renamed_by_a_word_of_its_own(pair) -> None:
    old, new = pair
    fact = f"The user's github handle is @{old.casefold()}."
    for said in (f"renamed my github account to @{new.casefold()}, the old one redirects",
                 f"I renamed my github account, it's @{new.casefold()} now"):
        assert rename.target(said, [fact]) == (0, f"The user's github handle is @{new.casefold()}.")
    assert rename.target(f"renamed my github account to @{new.casefold()}",
                         [fact, f"The user's github org is called {old}."]) is None  # two facts of github: no guess
