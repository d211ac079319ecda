"""A user's first statement of a slot becomes a fact, so a later correction has a fact to supersede (round 12).

The shapes (``processors.extract.keep``): the speaker's own activity in the present simple ("I teach X at a school
in Y", "we pin node 18 in .nvmrc"), a project's thing done by a tool ("The Go code is linted with vexlint", "Quillfmt
formats the backend code", "The package is published on PyPI as zorbel", "The repo is acme/billing"), the speaker's
own handle ("My GitLab handle is @tinmoth"), and in Chinese one's own diet or habit (我不喝咖啡) and where a service
runs (服务部署在腾讯云上). Every name is made up or generated: a new tool, city or handle must work the same.
"""

from __future__ import annotations

import random

import pytest

from processors.extract import keep, offline
from processors.extract.model import Entry
from tests.memory_pipeline import Case, failures_of, holds

_RNG = random.Random(1212)
_SYLLABLES = ["ka", "lo", "mir", "ven", "tu", "zor", "bel", "qui", "dra", "nex", "pol", "fen", "rsk", "ul", "tam"]


def _word(rng: random.Random, parts: int = 3) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts))


NAMES = [_word(_RNG) for _ in range(25)]  # generated, lower case: a tool, a package, a handle


def _facts(text: str) -> list[str]:
    e = Entry(ref="s#m1", seq=1, session_key="s", message_id="m1", project="/srv/acme", speaker="user", role="user",
              time="2025-03-01T10:00:00Z", text=text)
    return [o.text for o in offline.extract([e], []) if o.op == "add"]


@pytest.mark.parametrize("name", NAMES)
def test_first_statements_of_generated_names_become_facts(name: str) -> None:
    city, tool = name.capitalize(), name
    said = {
        f"I teach geography at a middle school in {city}.": city,
        f"I coach {name}ball at the {city} sports club.": city,
        f"The Go code is linted with {tool}.": tool,
        f"The frontend code is formatted with {tool}.": tool,
        f"{tool.capitalize()} formats the backend code.": tool,
        f"The package is published on PyPI as {tool}.": tool,
        f"The repo is acme/{tool}-api.": f"{tool}-api",
        f"My GitLab handle is @{tool}.": tool,
        f"we pin {tool} 3.1 in .tool-versions": f"{tool} 3.1",
    }
    for text, value in said.items():
        facts = _facts(text)
        assert any(holds(f, value) for f in facts), (text, facts)


@pytest.mark.parametrize("text", [
    "服务部署在腾讯云上。", "我不喝咖啡。", "我每天晚上十点睡觉。", "我开的是一辆本田。",
])
def test_chinese_first_statements_become_facts(text: str) -> None:
    assert _facts(text), text


@pytest.mark.parametrize("text", [
    "I think the build is fine.",  # a thought about the work at hand
    "I ran the tests yesterday.",  # a past one-off
    "I fixed it this morning.",
    "I go by my handle",  # its value cut off: no content of its own
    "I need a faster laptop.",  # a wish
    "I run it every night.",  # points at the chat
    "My brother teaches chemistry in Oslo.",  # someone else
    "I told my boss about the outage.",
    "I read the log file to find the error.",  # a thing of the work at hand (and "read" may be the past)
    "I restart the server when the tests hang.",  # the definite server of the chat
])
def test_what_is_no_standing_fact_of_ones_own_keeps_no_clause(text: str) -> None:
    assert keep.slot_clause(text) is None, text


def test_lower_case_tool_needs_the_clauses_end_and_no_word_of_manner() -> None:
    assert keep.tool_statement("The Go code is linted with vexlint")
    assert not keep.tool_statement("The release is tested by hand")
    assert not keep.tool_statement("The code is formatted with care")
    assert not keep.tool_statement("The code is linted with a script that my manager wrote")


CASES = [
    Case("k12_teach_subject", ("I teach geography at a middle school in Brevik.",
                               "I teach history at a middle school in Brevik now."), active="history", gone="geography"),
    Case("k12_linter_lower", ("The Go code is linted with vexlint.",
                              "We replaced vexlint with golint-pro for the Go code."), active="golint-pro", gone="vexlint"),
    Case("k12_handle", ("My GitLab handle is @tinmoth.", "My GitLab handle is @brassmoth now."),
         active="brassmoth", gone="tinmoth"),
    Case("k12_pin", ("we pin ruby 3.1 in .ruby-version", "we pin ruby 3.3 in .ruby-version now"),
         active="ruby 3.3", gone="ruby 3.1"),
    Case("k12_zh_drink", ("我不喝咖啡。", "我现在开始喝咖啡了。"), active="开始喝咖啡", gone="不喝咖啡"),
    Case("k12_zh_cloud", ("服务部署在腾讯云上。", "服务已经从腾讯云迁到华为云了。"), active="华为云", gone="腾讯云"),
]


def test_corrections_of_first_statements_through_the_pipeline(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    assert failures_of(CASES, tmp_path) == []
