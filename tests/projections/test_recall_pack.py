"""Packing: within a token budget the evidence survives the cut; the CLI's --group, --now and --budget."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.cli import cli
from eventlog.errors import ConfigError
from projections.recall import Hit
from projections.recall.pack import CHARS_PER_TOKEN, OVERHEAD_TOKENS, pack

FILLER = "We talked about many unrelated things that afternoon, the weather and the trains. "


def _hit(i: int, text: str) -> Hit:
    return Hit(score=10.0 - i, kind="message", seq=i + 1, session_key=f"s{i}", message_id=str(i), role="user",
               text=text, snippet=text[:50])


def _tokens(hits: list[Hit]) -> int:
    return sum(OVERHEAD_TOKENS + -(-len(h.text) // CHARS_PER_TOKEN) for h in hits)


def test_the_evidence_in_the_middle_of_long_turns_survives_a_small_budget():
    hits = [_hit(i, FILLER * 20 + f"My locker code at the gym is {1000 + i}. " + FILLER * 20) for i in range(5)]
    packed = pack(hits, 500, "What is my locker code at the gym?")
    assert len(packed) == 5  # every turn, trimmed, rather than the first one whole
    for i, h in enumerate(packed):
        assert f"locker code at the gym is {1000 + i}" in h.text
        assert h.text.startswith("…") and h.text.endswith("…")
        assert (h.session_key, h.score) == (hits[i].session_key, hits[i].score)
    assert _tokens(packed) <= 500 + 5  # the cut at word boundaries may keep a few characters more


def test_a_large_budget_keeps_whole_turns_and_a_tiny_one_keeps_what_fits():
    hits = [_hit(i, f"Short turn {i} about the locker.") for i in range(3)]
    assert pack(hits, 10_000, "locker") == hits
    assert pack(hits, 1, "locker") == []
    with pytest.raises(ConfigError):
        pack(hits, 0, "locker")


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 3000), min_size=1, max_size=12), budget=st.integers(20, 3000))
def test_packing_never_reorders_and_keeps_within_the_budget(lengths, budget):
    hits = [_hit(i, ("word " * (n // 5)) + "needle " + "word " * (n // 5)) for i, n in enumerate(lengths)]
    packed = pack(hits, budget, "needle")
    assert [h.seq for h in packed] == [h.seq for h in hits[: len(packed)]]
    assert _tokens(packed) <= budget + 2 * len(packed)
    assert all("needle" in h.text for h in packed)


def test_cli_group_session_now_and_budget(tmp_path, cli_runner):
    def _evlog(home, *args):
        r = cli_runner.invoke(cli, ["--home", str(home), *args])
        return SimpleNamespace(returncode=r.exit_code, stdout=r.stdout, stderr=r.stderr)

    src = tmp_path / "src"
    src.mkdir()
    for key, day in (("early", "2026-03-01"), ("late", "2026-03-14")):
        lines = [{"key": key, "title": "", "created_at": f"{day}T10:00:00Z"},
                 {"id": "0", "role": "user", "content": "I went to the dentist for a cleaning.",
                  "timestamp": f"{day}T10:00:01Z"},
                 {"id": "1", "role": "assistant", "content": "A dentist cleaning, good.",
                  "timestamp": f"{day}T10:00:02Z"}]
        (src / f"{key}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    home = tmp_path / "home"
    assert _evlog(home, "init").returncode == 0
    assert _evlog(home, "ingest", str(src)).returncode == 0
    p = _evlog(home, "recall", "dentist two weeks ago", "--now", "2026-03-15T12:00:00Z", "--group", "session", "--json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert [(r["kind"], r["session_key"], r["matched"]) for r in rows] == [("session", "early", 2), ("session", "late", 2)]
    assert [h["role"] for h in rows[0]["hits"]] == ["user", "assistant"]
    p = _evlog(home, "recall", "dentist", "--budget", "40", "--json")
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 1
    p = _evlog(home, "recall", "dentist", "--budget", "40", "--group", "session")
    assert p.returncode == 2 and "--group session and --budget cannot be used together" in p.stderr
    p = _evlog(home, "recall", "dentist", "--now", "soonish")
    assert p.returncode != 0 and "--now 'soonish' is not a time" in p.stderr
