#!/usr/bin/env python3
"""Write tests/golden/segments/<version>/: a small log holding one event of every type.

Run it when a release changes the event catalogue, under a NEW version directory, and
commit the result: tests/projections/test_golden.py checks that every committed version still
decodes, verifies and replays (CONVENTIONS 5: old logs must keep reading).

    .venv/bin/python tools/make_golden_log.py v3
"""

from __future__ import annotations

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from eventlog import erasure  # noqa: E402
from eventlog import events as E  # noqa: E402
from eventlog.log import Log  # noqa: E402

SAMPLES = [
    E.SessionCreated(session_key="cli:golden", title="Golden", metadata={"channel": "cli"}, created_at="2026-11-01T09:00:00Z", project="/projects/golden"),
    E.MessageAppended(session_key="cli:golden", message_id="m1", role="user", content="I prefer tabs. 我习惯早上写代码 😀", timestamp="2026-11-01T09:00:01Z", dedup="golden:m1",
                      redacted=["openai-key"]),
    E.MessageAppended(session_key="cli:golden", message_id="m2", role="assistant", content="", timestamp="2026-11-01T09:00:02Z",
                      tool_calls=[{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}], extra={"model": "x"}),
    E.MessageUpdated(session_key="cli:golden", message_id="m2", content="Done.", extra={"version": "2"}),
    E.SessionUpdated(session_key="cli:golden", title="Golden session", preview="tabs", metadata={"pinned": True}),
    E.SessionConsolidated(session_key="cli:golden", up_to_count=1, up_to_message_id="m1", run_id="c1", model="offline-rules-v1"),
    E.ConsolidationFailed(session_key="cli:golden", reason="model timed out", run_id="c0"),
    E.HistoryAppended(text="I prefer tabs.", source="remember", project="/projects/golden"),
    E.CursorAdvanced(processor="dream", run_id="dream-9", from_cursor=0, to_cursor=8, cursors=[8]),
    E.DreamStarted(run_id="dream-9", llm="offline", model="offline-rules-v1", prompt_hash="xxh3_128:" + "0" * 32, input_cursors=[8], project="/projects/golden", token_budget=20000),
    E.DreamCompleted(run_id="dream-9", outcome="valid", attempts=1, model="offline-rules-v1", prompt_hash="xxh3_128:" + "0" * 32,
                     raw_output="## User Profile\n- I prefer tabs\n\n## Project Context\n(nothing new)\n", input_tokens=50, output_tokens=12, fact_ids=["fact-1"]),
    E.MemoryAppended(fact_id="fact-1", scope="user", section="User Profile", text="I prefer tabs", run_id="dream-9", sources=[8], dedup="fact:user::i prefer tabs"),
    E.MemoryAppended(fact_id="fact-2", scope="project", section="Project Context", text="The project uses pytest.", project="/projects/golden",
                     run_id="dream-9", subject="project", when="2026-11-01T09:00:01.000Z", source_refs=["cli:golden#m1"], source_seqs=[2],
                     by="dream", dedup="fact:fact-2"),
    E.MemoryAppended(fact_id="fact-3", scope="user", section="Preferences", text="The user prefers spaces now.", subject="user", by="user", pinned=True),
    E.MemorySuperseded(fact_id="fact-1", by_fact_id="fact-3", reason="corrected", by="user"),
    E.MemoryEdited(fact_id="fact-3", text="The user prefers spaces.", by="hand-edit"),
    E.MemoryPinned(fact_id="fact-3", pinned=False),
    E.MemoryArchived(fact_id="fact-2", reason="over the budget"),
    E.MemoryForgotten(fact_id="fact-3", by="user", reason="not true"),
    E.MemoryRestored(fact_id="fact-3", by="user"),
    E.DreamFailed(run_id="dream-14", reason="model call failed: timeout", error_kind="timeout"),
    E.DiaryAppended(date="2026-11-01", line="09:00:01 [cli:golden] user: I prefer tabs.", session_key="cli:golden", message_id="m1", source_seq=2, dedup="xxh3_128:" + "1" * 32),
    E.DiaryAppended(date="2026-11-01", line="09:00:02 [cli:golden] assistant: Done.", session_key="cli:golden", message_id="m2", source_seq=3,
                    role="assistant", key_version=2, dedup="xxh3_128:" + "3" * 32),
    E.DiaryLines(date="2026-11-01", lines=["09:00:01 [cli:golden] user: I prefer tabs.", "09:00:02 [cli:golden] assistant: Done."],
                 session_keys=["cli:golden", "cli:golden"], message_ids=["m1", "m2"], source_seqs=[2, 3], roles=["user", "assistant"],
                 dedup_keys=["xxh3_128:" + "4" * 32, "xxh3_128:" + "5" * 32]),
    E.DiaryTrimmed(date="2026-11-01", dropped_lines=0, dropped_bytes=0, start_before=0, start_after=0, budget=200000),
    E.DiaryDigested(date="2026-11-01", start=0, end=44, entry_id="stm-2026-11-01-0"),
    E.StmAdded(entry_id="stm-2026-11-01-0", text="09:00:01 [cli:golden] user: I prefer tabs.", date="2026-11-01", start=0, end=44, session_keys=["cli:golden"]),
    E.StmAdded(entry_id="stm-2026-11-01-14", text="09:00:02 [cli:golden] assistant: Done.", date="2026-11-01", start=14, end=14,
               session_keys=["cli:golden"], message_seqs=[3], dedup="digest:stm-2026-11-01-14"),
    E.MemoryRecalled(entry_ids=["stm-2026-11-01-0"], query="tabs"),
    E.LtmPromoted(entry_id="stm-2026-11-01-0", reason="recalled 1 time(s)"),
    E.StmDropped(entry_id="stm-none", reason="unused for more than 7 days"),
    E.OffsetCommitted(processor="snapshot", record_seq=2, segment="00000000000000000001.jsonl", position=0, fingerprint="xxh3-64:" + "0" * 16),
    E.OffsetReset(processor="digest", reason="golden", policy="by-offset", date="2026-11-01"),
    E.SessionDeleted(session_key="cli:gone"),
    E.LogRecovered(segment="00000000000000000001.jsonl", offset=100, bytes_truncated=7, reason="torn record (golden)"),
    E.SyncPushed(target="127.0.0.1:3306/evlog", user="golden@example.test", record_seq=1, epoch="1@1796000000000", change_seq=3, sessions=1, messages=0),
    E.SyncPulled(target="127.0.0.1:3306/evlog", user="golden@example.test", change_seq=4, count=0, epoch="1@1796000000000",
                 sessions=[["cli:golden", 1796000000500, "web", "xxh3_128:" + "2" * 32, False, 0, "", ""]]),
    E.DeviceClaimed(device="dev-golden", from_seq=1, home="1:2"),
    E.ReplicationPushed(store="https://gw.example.test", account="golden@example.test", device="dev-golden", upto_seq=3,
                        stored=3),
    E.ReplicationPulled(store="https://gw.example.test", account="golden@example.test", cursor=7, count=1,
                        max_hlc=117_600_000_000_000_000),
    E.MemoryAppended(fact_id="fact-remote", scope="user", section="Preferences", text="Prefers tea (from another device)",
                     dedup="rep:dev-other:12",
                     replica=E.Replica(device="dev-other", seq=12, hlc=117_600_000_000_000_000, ts="2026-11-01T09:00:00.000Z",
                                       author="golden@example.test", refs={"source_seqs": [("dev-other", 3)]})),
]


def main(version: str) -> None:
    out = os.path.join(os.path.dirname(HERE), "tests", "golden", "segments", version)
    shutil.rmtree(out, ignore_errors=True)
    log = Log.open(out, writable=True, create=True, clock=lambda: 1_795_000_000.0)
    log.append_batch(SAMPLES[:3])
    for ev in SAMPLES[3:]:
        log.append(ev)
    secret = log.append(E.MessageAppended(session_key="cli:golden", message_id="m9", role="user", content="erase me",
                                          dedup="golden:m9"))
    erasure.commit(log, [secret], erasure_id="golden-erasure", kind="text",
                   refs=[erasure.ref_hash("cli:golden", "m9")])  # a real erasure: log.erased + log.erasure
    erasure.finish(log)
    log.close()
    for name in os.listdir(out):
        if not name.endswith(".jsonl"):
            os.unlink(os.path.join(out, name))  # only segments are golden; the rest is derived
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "v1")
