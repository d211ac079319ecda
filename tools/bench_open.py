"""Opening a big workspace that is already caught up: ``open_caught_up`` (issue 25: "10M events: open and catch up <= 2 s").

The workspace is built as a user's grows: ``evlog append FILE`` of chat-sized
``message.appended`` events in sessions of ``PER_SESSION`` messages, each carrying the
dedup key an ingest gives it (``ingest:<session>:msg:<id>``), so the log's dedup index
holds a key per message as a real ingested workspace's does. Then ``evlog recall``
builds the recall index. Both are untimed (their time, CPU and peak RSS are in the
details); ``append`` leaves every projection caught up (its close writes the files and
the checkpoint, which the timed child checks). Then each row runs in a fresh process,
nothing new in the log, interleaved with the baselines (the order rotating each round),
wall and CPU (``RUSAGE_CHILDREN``) medians and the peak RSS (GNU time):

* ``import eventlog`` (``python -c``): the floor of any command;
* reading the checkpoint files raw (``state/projections.ckpt``, ``log/dedup.idx`` and
  the segments' ``.idx`` files, bytes only): the floor of anything that loads them;
* ``Workspace.open(home)`` + ``catch_up()`` + ``close()``, read-only and as the writer;
* ``evlog status``, ``evlog recall QUERY`` (index built) and a SessionStart hook
  (``evlog hook claude-code``), which do only that and read a little;
* ``evlog stats``, which counts every event by type (one full read of the log): run
  once after the rounds, shown for its growth, not a target.

After the rows, ``evlog replay`` of the workspace (its wall, CPU and peak RSS in the
details: issue 25's "``replay`` of 10M <= 60 s"). The figure is the writer's open +
catch-up, wall seconds, median; the target is 2 s at 10M (``--slow``; 1M by default,
100k with ``--quick``). On a loaded machine wall time is several times the CPU time:
read ``cpu_s`` beside it. Subprocesses may write bytecode caches (an installed evlog
has them; ``PYTHONDONTWRITEBYTECODE`` is dropped from their environment, as
tools/bench_agents.py does). ``python tools/bench_open.py HOME [ROUNDS]`` times the rows
on an existing workspace (the recall row only if its index is built).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import sys
import time
from typing import Any

import msgspec
from bench import (
    DAY,
    ENCODER,
    MIB,
    START,
    Context,
    EventFactory,
    Result,
    benchmark,
    chat_length,
    iso_ms,
    progress,
    run_measured,
    tree_bytes,
)
from bench_cli import PER_SESSION, RECALL_QUERY, children_cpu, evlog, size_label

from eventlog.app.workspace import init_workspace
from eventlog.events import SessionCreated

GROWTH_DAYS = 365  # a year of a heavy user's sessions

#: Subprocesses may write bytecode caches (an installed evlog has them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

_OPEN_CHILD = r"""
import sys
from eventlog.app.workspace import Workspace
ws = Workspace.open(sys.argv[1], writable=sys.argv[2] == "writer")
try:
    views = ws.catch_up()
    proj = ws.projections
    assert ws.log.last_seq == proj.seq == proj.written_seq, "the checkpoint on disk is not caught up with the log"
finally:
    ws.close()
"""

_RAW_CHILD = r"""
import os, sys
home = sys.argv[1]
n = 0
for path in [os.path.join(home, "state", "projections.ckpt"), os.path.join(home, "log", "dedup.idx")] + [
        os.path.join(home, "log", f) for f in os.listdir(os.path.join(home, "log")) if f.endswith(".idx")]:
    with open(path, "rb") as f:
        n += len(f.read())
print(n)
"""


def keyed_ndjson(ctx: Context, n: int) -> dict[str, Any]:
    """An NDJSON input of ``n`` messages (a ``session.created`` before each session's first), every message with a dedup key."""
    path = os.path.join(ctx.scratch(f"open-ndjson-{size_label(n)}"), "events.ndjson")
    rng = random.Random(f"20261204:open:{n}")
    factory = EventFactory(rng, sessions=1)
    step = (GROWTH_DAYS * DAY - 120) / n
    encode = ENCODER.encode
    t0 = time.perf_counter()
    with open(path, "wb", buffering=1 << 20) as f:
        for i in range(n):
            key = f"cli:open-{i // PER_SESSION:06d}"
            ev = factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(START + 60 + i * step))
            if i % PER_SESSION == 0:
                f.write(encode(SessionCreated(session_key=key, title=f"session {i // PER_SESSION}",
                                              created_at=ev.timestamp, dedup=f"ingest:{key}:created")) + b"\n")
            f.write(encode(msgspec.structs.replace(ev, dedup=f"ingest:{key}:msg:{ev.message_id}")) + b"\n")
    size = os.path.getsize(path)
    progress(f"open_caught_up: NDJSON of {size_label(n)} messages, {size / MIB:.0f} MiB in {time.perf_counter() - t0:.1f} s")
    return {"path": path, "messages": n, "events": n + -(-n // PER_SESSION), "bytes": size}


def open_workspace_home(ctx: Context, n: int) -> tuple[str, dict[str, Any]]:
    """The workspace of ``n`` keyed messages (projections caught up by the append), its recall index built."""
    data = keyed_ndjson(ctx, n)
    home = os.path.join(ctx.scratch(f"open-{size_label(n)}"), "home")
    init_workspace(home)
    built: dict[str, Any] = {}
    for label, argv in (("append", evlog(home, "append", data["path"])),
                        ("recall_build", evlog(home, "recall", RECALL_QUERY))):
        built.update(measured_build_step(label, argv))
        if label == "append":
            shutil.rmtree(os.path.dirname(data["path"]), ignore_errors=True)
    built["events"] = data["events"]
    built["log_mib"] = round(tree_bytes(os.path.join(home, "log")) / MIB, 1)
    built["workspace_mib"] = round(tree_bytes(home) / MIB, 1)
    for name, rel in (("checkpoint_mib", os.path.join("state", "projections.ckpt")),
                      ("dedup_idx_mib", os.path.join("log", "dedup.idx"))):
        built[name] = round(os.path.getsize(os.path.join(home, rel)) / MIB, 2)
    return home, built


def measured_build_step(label: str, argv: list[str]) -> dict[str, float]:
    """Run one untimed step of the build (or the replay after the rows), its wall, CPU and peak RSS."""
    before = children_cpu()
    m = run_measured(argv, env=ENV)
    out = {f"{label}_s": round(m.seconds, 2), f"{label}_cpu_s": round(children_cpu() - before, 2),
           f"{label}_peak_mib": round(m.peak_mib, 1)}
    progress(f"  {label}: {m.seconds:.1f} s, {out[f'{label}_cpu_s']:.1f} s CPU, {m.peak_mib:.0f} MiB")
    return out


def session_start_payload(home: str) -> bytes:
    cwd = os.path.dirname(home)
    return json.dumps({"session_id": "open-bench", "hook_event_name": "SessionStart", "source": "startup",
                       "cwd": cwd, "transcript_path": os.path.join(cwd, "none.jsonl")}).encode()


def open_rows(home: str, *, recall: bool = True) -> dict[str, list[str]]:
    """The commands timed in rounds, baselines first (argv; the hook's stdin is written next to the workspace).

    ``recall``: the recall index is built (without it ``evlog recall`` would build it)."""
    py = sys.executable
    rows = {
        "python -c 'import eventlog'": [py, "-c", "import eventlog"],
        "read the checkpoint files raw": [py, "-c", _RAW_CHILD, home],
        "Workspace.open + catch_up (read-only)": [py, "-c", _OPEN_CHILD, home, "reader"],
        "Workspace.open + catch_up (writer)": [py, "-c", _OPEN_CHILD, home, "writer"],
        "evlog status": evlog(home, "status"),
        "evlog recall (index built)": evlog(home, "recall", RECALL_QUERY),
        "SessionStart hook": evlog(home, "hook", "claude-code"),
    }
    if not recall:
        del rows["evlog recall (index built)"]
    return rows


#: Run once after the rounds: a full read of the log (minutes at 10M), shown for its growth.
ONCE = {"evlog stats (reads the whole log, once)": ("stats",)}


def time_rows(ctx: Context, home: str, rounds: int, *, recall: bool = True) -> list[dict[str, Any]]:
    rows = open_rows(home, recall=recall)
    stdin = os.path.join(os.path.dirname(home), "session-start.json")
    with open(stdin, "wb") as f:
        f.write(session_start_payload(home))
    for argv in rows.values():  # warm-up, not counted: page cache, bytecode caches
        run_measured(argv, env=ENV, stdin_path=stdin)
    walls: dict[str, list[float]] = {k: [] for k in rows}
    cpus: dict[str, list[float]] = {k: [] for k in rows}
    peaks: dict[str, float] = {}
    names = list(rows)

    def run(name: str, argv: list[str]) -> None:
        before = children_cpu()
        m = run_measured(argv, env=ENV, stdin_path=stdin)
        cpus.setdefault(name, []).append(children_cpu() - before)
        walls.setdefault(name, []).append(m.seconds)
        peaks[name] = max(peaks.get(name, 0.0), m.peak_mib)

    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            run(name, rows[name])
        progress(f"  round {r + 1}/{rounds}: " + ", ".join(f"{n.split(' (')[0]} {walls[n][-1]:.2f}s" for n in names))
    for name, args in ONCE.items():
        run(name, evlog(home, *args))
        progress(f"  {name}: {walls[name][-1]:.2f} s")
    return [{"command": name, "wall_s": round(statistics.median(walls[name]), 3),
             "cpu_s": round(statistics.median(cpus[name]), 3), "peak_mib": round(peaks[name], 1),
             "wall_min_s": round(min(walls[name]), 3), "runs": len(walls[name])} for name in walls]


def bench_open_caught_up(ctx: Context) -> Result:
    n = 100_000 if ctx.quick else 10_000_000 if ctx.slow else 1_000_000
    progress(f"open_caught_up: building a workspace of {size_label(n)} messages")
    load_before = os.getloadavg()[0]
    home, built = open_workspace_home(ctx, n)
    rows = time_rows(ctx, home, max(5, ctx.repeats))
    built.update(measured_build_step("replay", evlog(home, "replay")))  # issue 25: 'replay' of 10M <= 60 s
    shutil.rmtree(os.path.dirname(home), ignore_errors=True)
    by = {row["command"]: row for row in rows}
    ours, floor = by["Workspace.open + catch_up (writer)"], by["python -c 'import eventlog'"]
    details: dict[str, Any] = {"messages": n, **built, "load_1m_at_start": round(load_before, 2),
                               "load_1m_at_end": round(os.getloadavg()[0], 2),
                               "writer_cpu_s": ours["cpu_s"], "writer_peak_mib": ours["peak_mib"]}
    for row in rows:
        details[f"wall_s:{row['command']}"] = row["wall_s"]
    return Result("open_caught_up", ours["wall_s"], floor["wall_s"], "s", built["events"],
                  "python -c 'import eventlog' (fresh process, median)", target=2.0, target_of="ours", target_op="<=",
                  details=details, tables={f"open and catch up, caught up, {size_label(n)} messages (median of rounds)": rows})


if __name__ != "__main__":  # run as a script, bench.py has imported (and registered) this module already
    benchmark("open_caught_up", "open + catch up a caught-up workspace of 1M events (10M under --slow): Workspace, "
                                "status, recall, hook, vs import eventlog")(bench_open_caught_up)


def _main() -> None:
    """Time the rows on an existing workspace: ``python tools/bench_open.py HOME [ROUNDS]`` (prints JSON lines)."""
    home = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    ctx = Context(root=os.path.dirname(home))
    print(f"# load {os.getloadavg()[0]:.2f}", flush=True)
    recall = os.path.exists(os.path.join(home, "state", "recall.sqlite"))
    for row in time_rows(ctx, home, rounds, recall=recall):
        print(json.dumps(row), flush=True)
    print(f"# load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    _main()
