"""``append_vs_v01`` and ``ingest_vs_v01``: the same workload on evlog v0.1 and on this tree, in the same run.

v0.1 is commit ``cd11064`` of this repository, unpacked with ``git archive`` into the run's
scratch directory (removed with it at the end). Every trial is a fresh subprocess of the
same interpreter whose ``PYTHONPATH`` points at one tree or the other (``PYTHONPATH`` comes
before the editable install's finder, so ``import eventlog`` picks that tree); the child
times its own work and prints it as JSON. See the module docstring of ``tools/bench.py``
for what is measured and why it is fair.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from typing import Any

import real_data  # tools/real_data.py
from bench import (
    ENCODER,
    TIMESTAMP,
    Check,
    Context,
    EventFactory,
    Result,
    Trial,
    benchmark,
    best_of,
    describe_events,
    progress,
    stamp_and_frame,
)

from eventlog.codec import DECODER
from eventlog.validate import plain_message, validate_event

V01_COMMIT = "cd11064"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One child script for both trees: it adapts to the v0.1 layout (eventlog.workspace) or ours
# (eventlog.app.workspace), times its own work and prints one JSON object.
_CHILD = r"""
import gc, json, os, sys, time
# The venv's editable install of this repository adds a finder that would resolve any module
# v0.1 lacks (eventlog.app, ...) from this tree: drop it, so PYTHONPATH alone decides.
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
import msgspec
import eventlog

mode = sys.argv[1]
tree = os.path.dirname(os.path.dirname(os.path.abspath(eventlog.__file__)))
if os.path.isdir(os.path.join(tree, "eventlog", "app")):
    from eventlog.app.workspace import Workspace, init_workspace
else:  # v0.1
    from eventlog.workspace import Workspace, init_workspace

if mode == "append":
    from eventlog.events import MessageAppended
    from eventlog.log import Log
    events_file, log_dir, how = sys.argv[2:5]
    with open(events_file, "rb") as f:
        events = [MessageAppended(**{k: v for k, v in msgspec.json.decode(line).items() if k != "type"})
                  for line in f]
    log = Log.open(log_dir, writable=True, create=True, durability="none")
    gc.collect()
    t0 = time.perf_counter()
    if how == "per":                   # one lock turn per append (ours: the multi-writer default)
        append = log.append
        for ev in events:
            append(ev)
    elif how == "turn":                # ours: every append inside one turn (the exclusive bulk mode)
        append = log.append
        with log.turn():
            for ev in events:
                append(ev)
    else:
        raise SystemExit(f"unknown append mode {how}")
    seconds = time.perf_counter() - t0
    log.close()
    print(json.dumps({"tree": tree, "seconds": seconds, "events": len(events)}))
elif mode == "ingest":
    from eventlog.ingest import ingest_paths
    home, paths = sys.argv[2], sys.argv[3:]
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    gc.collect()
    t0 = time.perf_counter()
    try:
        report = ingest_paths(ws.log, paths)
    finally:
        ws.close()  # writes the projection files (sessions, ...): part of an ingest
    seconds = time.perf_counter() - t0
    print(json.dumps({"tree": tree, "seconds": seconds, "files": len(report.files),
                      "failed": len(report.failed), "messages": report.messages, "sessions": report.sessions,
                      "events": report.events}))
elif mode == "init":
    init_workspace(sys.argv[2])
elif mode == "cli":
    from eventlog.cli import main
    sys.argv = ["evlog", *sys.argv[2:]]
    main()
else:
    raise SystemExit(f"unknown mode {mode}")
"""


def v01_tree(ctx: Context) -> str:
    """v0.1's files (``git archive cd11064``) in the scratch root, once per run."""

    def unpack() -> str:
        dest = ctx.scratch("evlog-v0.1")
        progress(f"v0.1: git archive {V01_COMMIT} into {dest}")
        subprocess.run(f"git -C '{REPO}' archive --format=tar {V01_COMMIT} | tar -x -C '{dest}'", shell=True,
                       check=True)
        if not os.path.isfile(os.path.join(dest, "eventlog", "log.py")):
            raise RuntimeError(f"git archive {V01_COMMIT} did not give an eventlog package")
        return dest

    return ctx.shared("v01_tree", unpack)


def child(tree: str, *args: str) -> dict[str, Any]:
    """Run ``_CHILD`` with ``PYTHONPATH=tree``; its JSON answer (it must say which tree it ran)."""
    env = {**os.environ, "PYTHONPATH": tree}
    env.pop("EVLOG_HOME", None)
    # cwd=tree: "python -c" puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], env=env, capture_output=True, text=True, cwd=tree,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {args[0]} in {tree} failed: {proc.stderr.strip()[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def expect_tree(out: dict[str, Any], tree: str) -> dict[str, Any]:
    if os.path.realpath(out.get("tree", "")) != os.path.realpath(tree):
        raise RuntimeError(f"the child imported eventlog from {out.get('tree')} instead of {tree}")
    return out


def append_child_trial(tree: str, events_file: str, how: str, n: int) -> Trial:
    def trial(scratch: str) -> float:
        out = expect_tree(child(tree, "append", events_file, os.path.join(scratch, "log"), how), tree)
        if out["events"] != n:
            raise RuntimeError(f"the child appended {out['events']} events, expected {n}")
        return out["seconds"]

    return trial


def per_event_seconds(fn: Any, items: list, rounds: int) -> float:
    """Best-of-``rounds`` seconds per item of ``for x in items: fn(x)``."""
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, time.perf_counter() - t0)
    return best / len(items)


@benchmark("append_vs_v01", "Log.append (none) in a turn and per append vs evlog v0.1's append, same run (subprocesses)")
def bench_append_vs_v01(ctx: Context) -> Result:
    tree = v01_tree(ctx)
    n = ctx.size(100_000, 20_000)
    events = EventFactory(ctx.rng("append_nofsync")).chat(n)  # append_nofsync's events
    data = ctx.scratch("append_vs_v01")
    events_file = os.path.join(data, "events.ndjson")
    with open(events_file, "wb") as f:
        f.writelines(ENCODER.encode(ev) + b"\n" for ev in events)
    progress(f"append_vs_v01: {n} events, best of {ctx.repeats}, each trial a subprocess")
    best = best_of(ctx, {
        "baseline": append_child_trial(tree, events_file, "per", n),  # v0.1: one writer holds the lock for its life
        "ours": append_child_trial(REPO, events_file, "turn", n),
        "ours_per_append": append_child_trial(REPO, events_file, "per", n),
    }, rounds=max(5, ctx.repeats))  # rounds interleave the trees; more of them, less of this machine's drift
    # validation's own cost per event, in this process: validate_event, and the writer's type
    # check (decoding the framed line back into its type) on lines framed outside the clock
    ts = TIMESTAMP.encode()
    lines = [stamp_and_frame(ev, 1_000_000 + i, ts) for i, ev in enumerate(events)]
    validate_s = per_event_seconds(validate_event, events, ctx.repeats)
    decode_s = per_event_seconds(DECODER.decode, lines, ctx.repeats)
    # what the writer pays instead for a message whose fields hold their declared types
    plain_s = per_event_seconds(plain_message, events, ctx.repeats)
    plain_share = sum(map(plain_message, events)) / len(events)
    us = {k: v / n * 1e6 for k, v in best.items()}
    details = {
        **describe_events(events),
        "v01_commit": V01_COMMIT,
        "us_per_event_v01": round(us["baseline"], 3),
        "us_per_event_ours_turn": round(us["ours"], 3),
        "us_per_event_ours_per_append": round(us["ours_per_append"], 3),
        "ratio_per_append": round(best["baseline"] / best["ours_per_append"], 4),
        "validate_event_us": round(validate_s * 1e6, 3),
        "type_check_decode_us": round(decode_s * 1e6, 3),
        "type_check_plain_message_us": round(plain_s * 1e6, 3),
        "events_skipping_the_decode": round(plain_share, 3),
        "validation_us_per_event": round((plain_s + (1 - plain_share) * (validate_s + decode_s)) * 1e6, 3),
        "validation_share_of_ours_turn": round((plain_s + (1 - plain_share) * (validate_s + decode_s)) * 1e6
                                               / us["ours"], 3),
    }
    return Result("append_vs_v01", n / best["ours"], n / best["baseline"], "events/s", n,
                  f"evlog v0.1 ({V01_COMMIT}) Log.append, durability none, same events, subprocess",
                  target=0.9, checks=[Check("ratio_per_append", ">=", 0.9, "x", "per-append")], details=details)


@benchmark("ingest_vs_v01", "ingest_paths of the real transcripts in ../shared/data/real vs evlog v0.1, same run")
def bench_ingest_vs_v01(ctx: Context) -> Result:
    real = real_data.find() or os.path.normpath(os.path.join(REPO, "..", "shared", "data", "real"))
    if not os.path.isdir(real):
        progress(f"ingest_vs_v01: skipped: no real transcripts at {real} (set EVLOG_REAL_DATA)")
        return None  # type: ignore[return-value]
    tree = v01_tree(ctx)
    files = [os.path.join(d, f) for d, _, fs in os.walk(real) for f in fs if f.endswith(".jsonl")]
    size = sum(os.path.getsize(p) for p in files)
    outs: dict[str, list[dict[str, Any]]] = {}

    def ingest(tree_path: str, name: str) -> Trial:
        def trial(scratch: str) -> float:
            out = expect_tree(child(tree_path, "ingest", os.path.join(scratch, "home"), real), tree_path)
            outs.setdefault(name, []).append(out)
            return out["seconds"]

        return trial

    def cli(tree_path: str) -> Trial:
        def trial(scratch: str) -> float:
            home = os.path.join(scratch, "home")
            child(tree_path, "init", home)
            env = {**os.environ, "PYTHONPATH": tree_path}
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", _CHILD, "cli", "--home", home, "ingest", real],
                                  env=env, capture_output=True, text=True, cwd=tree_path, check=False)
            seconds = time.perf_counter() - t0
            if proc.returncode not in (0, 1):  # 1: some file failed (reported in the details of the other trials)
                raise RuntimeError(f"evlog ingest ({tree_path}) exited {proc.returncode}: {proc.stderr[-1500:]}")
            return seconds

        return trial

    progress(f"ingest_vs_v01: {len(files)} files, {size / 2**20:.1f} MiB from {real}, best of {ctx.repeats}")
    best = best_of(ctx, {
        "baseline": ingest(tree, "v01"),
        "ours": ingest(REPO, "ours"),
        "cli_v01": cli(tree),
        "cli_ours": cli(REPO),
    }, rounds=max(9, ctx.repeats))  # a round takes about two seconds: more rounds, less of this machine's drift
    v01, ours = outs["v01"][-1], outs["ours"][-1]
    details = {
        "real_data": real,
        "files": len(files),
        "input_mib": round(size / 2**20, 2),
        "messages_ours": ours["messages"],
        "messages_v01": v01["messages"],
        "events_ours": ours["events"],
        "events_v01": v01["events"],
        "failed_files_ours": ours["failed"],
        "failed_files_v01": v01["failed"],
        "seconds_ours": round(best["ours"], 3),
        "seconds_v01": round(best["baseline"], 3),
        "us_per_message_ours": round(best["ours"] / max(1, ours["messages"]) * 1e6, 1),
        "us_per_message_v01": round(best["baseline"] / max(1, v01["messages"]) * 1e6, 1),
        "cli_seconds_ours": round(best["cli_ours"], 3),
        "cli_seconds_v01": round(best["cli_v01"], 3),
        "cli_ratio": round(best["cli_v01"] / best["cli_ours"], 3),
        "v01_commit": V01_COMMIT,
    }
    # throughput in input MiB/s: both read the same files (ours may keep more messages of them)
    mib = size / 2**20
    return Result("ingest_vs_v01", mib / best["ours"], mib / best["baseline"], "MiB/s", len(files),
                  f"evlog v0.1 ({V01_COMMIT}) ingest_paths + workspace close, same files, subprocess",
                  target=0.9, details=details)
