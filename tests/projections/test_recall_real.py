"""Chinese and Japanese queries find their messages in real transcripts (ingested with the CLI).

The transcripts are read in place from ../shared/data/real (see tests/conftest.py):
claude-code-viewer/5c0375b4-... is a mostly Japanese Claude Code session, nanobot-sessions
are Chinese nanobot chats. They are ingested with ``evlog ingest`` into a temporary
workspace, the recall index is built from the workspace's log, and substrings cut from the
messages themselves must find those messages.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import pytest

import eventlog
from projections.recall import RecallIndex, recall
from projections.recall.text import CJK_RUN
from tests.conftest import real_data


def _evlog(*args: str) -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "evlog")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-c", "from eventlog.cli import main; main()"]
    done = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def real_index(tmp_path_factory):
    ja = real_data("claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    zh = real_data("nanobot-sessions")
    home = str(tmp_path_factory.mktemp("real") / "home")
    _evlog("--home", home, "init")
    _evlog("--home", home, "ingest", ja, zh)
    ix = RecallIndex(os.path.join(home, "recall-test.sqlite"))
    ws = eventlog.open_workspace(home)
    try:
        ix.catch_up(ws.log.read(1))
        messages = [ev for ev in ws.log.read(1) if ev.type == "message.appended"]
    finally:
        close = getattr(ws, "close", None)
        if close:
            close()
    yield ix, messages
    ix.close()


def _cjk_messages(messages, script: re.Pattern[str]):
    return [m for m in messages if any(len(r) >= 4 and script.search(r) for r in CJK_RUN.findall(m.content))]


_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def test_known_japanese_phrase(real_index):
    ix, _ = real_index
    hits = recall(ix, "最新の状態にアップデート", limit=5)
    assert hits and "最新の状態" in hits[0].text and "アップデート" in hits[0].text
    assert "[最新の状態にアップデート]" in hits[0].snippet.replace("][", "")


@pytest.mark.parametrize("script,name,least", [(_KANA, "japanese", 3), (_HAN, "chinese", 10)])
def test_substrings_find_their_message(real_index, script, name, least):
    ix, messages = real_index
    pool = _cjk_messages(messages, script)
    if name == "chinese":
        pool = [m for m in pool if not _KANA.search(m.content)]
    assert len(pool) >= least, f"expected real {name} messages"
    rng = random.Random(1234)
    checked = 0
    for m in rng.sample(pool, min(25, len(pool))):
        runs = [r for r in CJK_RUN.findall(m.content) if len(r) >= 2 and script.search(r)]
        for _ in range(8 if len(pool) < 10 else 3):
            run = rng.choice(runs)
            size = rng.randint(2, min(6, len(run)))
            at = rng.randrange(0, len(run) - size + 1)
            phrase = run[at : at + size]
            holders = {(x.session_key, x.message_id) for x in messages if phrase in x.content}
            hits = recall(ix, phrase, session=m.session_key, limit=len(holders) + 20)
            found = {(h.session_key, h.message_id): h for h in hits}
            assert (m.session_key, m.message_id) in found, (name, phrase, m.message_id)
            assert phrase in found[(m.session_key, m.message_id)].text
            checked += 1
    assert checked >= 24


def test_single_characters_find_messages(real_index):
    ix, messages = real_index
    for ch in ("猫", "天", "状"):
        holders = {(m.session_key, m.message_id) for m in messages if ch in m.content}
        hits = recall(ix, ch, limit=200)
        assert holders, ch
        got = {(h.session_key, h.message_id) for h in hits}
        assert got & holders
        assert ch in hits[0].text
