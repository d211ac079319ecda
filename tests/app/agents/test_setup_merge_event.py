"""``_merge_event``: one event's hook groups after merging evlog's handler (split out of merge_hooks, issue 20)."""

from __future__ import annotations

from eventlog.app.agents.setup import _merge_event


def _ours(h):
    return isinstance(h, dict) and h.get("command") == "evlog hook"


def test_the_first_evlog_handler_is_kept_and_a_later_one_goes_with_the_group_it_leaves_empty():
    other = {"type": "command", "command": "other"}
    groups = [{"hooks": [{"type": "command", "command": "evlog hook", "timeout": 5}, other]},
              {"hooks": []},
              {"matcher": "x", "hooks": [{"type": "command", "command": "evlog hook"}]}]
    said: list[str] = []
    out = _merge_event(groups, "Stop", True, "evlog hook", _ours, {"Stop": 30}, said)
    assert out == [groups[0], {"hooks": []}]
    assert said == ["remove a second evlog hook on Stop"]


def test_an_unwanted_handler_is_removed_and_a_missing_wanted_one_added():
    said: list[str] = []
    gone = _merge_event([{"hooks": [{"type": "command", "command": "evlog hook"}]}], "Stop", False, "evlog hook",
                        _ours, {"Stop": 30}, said)
    assert gone == [] and said == ["remove the evlog hook on Stop"]
    said = []
    added = _merge_event(["not a group"], "Stop", True, "evlog hook", _ours, {"Stop": 30}, said)
    assert added == ["not a group", {"hooks": [{"type": "command", "command": "evlog hook", "timeout": 30}]}]
    assert said == ["add the evlog hook on Stop"]


def test_an_updated_handler_keeps_its_own_timeout_and_is_said():
    said: list[str] = []
    out = _merge_event([{"hooks": [{"command": "evlog hook", "timeout": 7}]}], "Stop", True, "evlog hook", _ours,
                       {"Stop": 30}, said)
    assert out == [{"hooks": [{"command": "evlog hook", "timeout": 7, "type": "command"}]}]
    assert said == ["update the evlog hook on Stop"]
