"""A team's thing in Chinese (processors/extract/offline.py ``_ZH_TRIGGER``, change.py ``_ZH_TOOL_NOW``): a first
statement of what a team's or project's thing uses or is called (团队沟通用X, 项目用的是 X, 我们的仓库叫 X, 缓存用的是
X) is kept, and 改用/换成 a tool named in Chinese replaces the one tool fact. A friend, an addition (也) or a question
changes nothing. The wordings are this file's own."""

from __future__ import annotations

import pytest

from processors.extract import change, offline
from processors.extract.model import Entry, ExistingFact


def _entry(text: str, day: int = 1) -> Entry:
    return Entry(ref=f"s#{day}", seq=day, session_key="s", message_id=str(day), speaker="user", role="user",
                 time=f"2025-03-{day:02d}T10:00:00Z", text=text)


@pytest.mark.parametrize("said,value", [("团队开会用腾讯会议。", "腾讯会议"), ("项目用的是 Go 1.22。", "Go 1.22"),
                                        ("我们的仓库叫 lantern-core。", "lantern-core"), ("队列用的是 RabbitMQ。", "RabbitMQ")])
def test_a_teams_thing_first_stated_is_kept(said, value) -> None:
    adds = [o.text for o in offline.extract([_entry(said)], []) if o.op == "add"]
    assert len(adds) == 1 and value in adds[0], adds
    assert not adds[0].startswith("用户说团队"), adds  # a team's fact is the team's, not a report of the user's words


@pytest.mark.parametrize("said", ["团队开会用什么软件？", "我朋友的团队开会用腾讯会议吗？"])
def test_a_question_is_no_first_statement(said) -> None:
    assert not [o for o in offline.extract([_entry(said)], []) if o.op == "add"]


def test_a_tool_named_in_chinese_replaces_the_one_tool_fact() -> None:
    fact = "团队沟通用企业微信。"
    assert change.explain("我们现在改用飞书了。", [fact]) == (0, "tool")
    assert change.tool_swap("我们现在改用飞书了。", fact) == "团队沟通用飞书。"
    assert change.target("我们也改用飞书了。", [fact]) is None
    assert change.target("我朋友的公司现在改用飞书了。", [fact]) is None
    known = [ExistingFact(fact_id="f1", text=fact, subject="project", scope="global")]
    ups = [o for o in offline.extract([_entry("我们现在改用飞书了。", 2)], known) if o.op == "update"]
    assert [o.fact_id for o in ups] == ["f1"] and "飞书" in ups[0].text
