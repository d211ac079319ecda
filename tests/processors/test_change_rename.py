"""A rename (``processors/extract/rename.py``): "we renamed the repo to X", "renamed Pebble to X", 项目改名了，现在叫X
update the one fact naming that thing; another thing, two naming facts, a person's name, a plan or the same rename
read again change nothing. The wordings are this file's own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import offline, rename
from processors.extract.model import Entry, ExistingFact

_SLUG = st.builds(lambda a, b: f"{a}-{b}", st.text(alphabet="abcdefghklmnoprstuvw", min_size=3, max_size=8),
                  st.sampled_from(["api", "web", "core", "svc"]))
_PAIR = st.lists(_SLUG, min_size=2, max_size=2, unique=True)
_THINGS = ["repo", "package", "service", "app"]


@settings(max_examples=50, deadline=None)
@given(_PAIR, st.sampled_from(_THINGS))
def test_a_thing_renamed_by_its_noun_names_it_anew(pair, thing) -> None:
    old, new = pair
    fact = f"The project's {thing} is called {old}."
    assert rename.target(f"we renamed the {thing} to {new} last week", [fact]) == (0, f"The project's {thing} is called {new}.")
    assert rename.target(f"heads up: the {thing} was renamed to {new}", [fact]) == (0, f"The project's {thing} is called {new}.")


@settings(max_examples=50, deadline=None)
@given(_PAIR, st.sampled_from(_THINGS), st.sampled_from(_THINGS))
def test_another_thing_or_two_naming_facts_change_nothing(pair, thing, other) -> None:
    old, new = pair
    if thing == other:
        return
    assert rename.target(f"we renamed the {other} to {new}", [f"The project's {thing} is called {old}."]) is None
    two = [f"The project's {thing} is called {old}.", f"The project's second {thing} is called {old}x."]
    assert rename.target(f"we renamed the {thing} to {new}", two) is None
    assert rename.target(f"we renamed the {thing} to {old}", [f"The project's {thing} is called {old}."]) is None  # again


@given(_PAIR)
def test_a_thing_renamed_by_its_old_name(pair) -> None:
    old, new = pair
    facts = ["The user lives in Oslo.", f"The project's project is called {old.title()}."]
    assert rename.target(f"we renamed {old.title()} to {new.title()}, trademark issues", facts) == \
        (1, f"The project's project is called {new.title()}.")


def test_a_persons_name_is_no_rename_of_a_thing() -> None:
    assert rename.target("we renamed the dog to Rex", ["The user is called Sam."]) is None
    assert rename.target("I renamed my account to sam_dev", ["The user's name is Sam."]) is None


def test_chinese_renames() -> None:
    assert rename.target("项目改名了，现在叫银河计划", ["团队的项目叫星河。"]) == (0, "团队的项目叫银河计划。")
    assert rename.target("仓库已经改名为 sunray-web 了。", ["团队的仓库叫 moonbeam-web。"]) == (0, "团队的仓库叫 sunray-web。")
    assert rename.target("仓库已经改名为 sunray-web 了。", ["团队的项目叫星河。"]) is None


def _entry(text: str) -> Entry:
    return Entry(ref="s#2", seq=2, session_key="s", message_id="2", speaker="user", role="user",
                 time="2025-03-02T10:00:00Z", text=text)


def test_the_update_names_its_step_and_a_plan_renames_nothing() -> None:
    old = ExistingFact(fact_id="f1", text="The project's repo is called tidepool-api.", subject="project", scope="global")
    ops = [o for o in offline.extract([_entry("we renamed the repo to harbor-api last week")], [old]) if o.op == "update"]
    assert [(o.fact_id, o.text) for o in ops] == [("f1", "The project's repo is called harbor-api.")]
    assert ops[0].reason.startswith("correction (rename): ")
    for plan in ("we might rename the repo to harbor-api", "if we renamed the repo to harbor-api, would links break?"):
        assert not [o for o in offline.extract([_entry(plan)], [old]) if o.op == "update"], plan
