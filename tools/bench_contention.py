"""``lock_wait_shared``: how long an append waits for the log's lock while other processes write.

Three writers share one workspace (durability ``fsync``, the default):

* a daemon-like process running ``processors.run(ws, "snapshot")`` then ``"digest"`` in a
  loop (10 ms apart), as ``evlog daemon`` does on its schedules, only far more often;
* an agent process adding messages one at a time with ``LocalSessionStore.add_message``
  (0-10 ms apart);
* this process, appending single ``message.appended`` events with ``Log.append`` (0-10 ms
  apart) and recording, for each, how long it waited for the lock.

Every writer records each of its turns as (duration, wait): the wall time of the append
call and the seconds its turn waited for the lock (``LogWriter.lock_waits`` gets an entry
when a turn had to wait, ``free_turns`` counts the turns that found it free). A turn's
*hold* is duration - wait: what the writer did while holding the lock (catching up with
the others' appends, framing, the write, the fdatasync). See tools/bench.py's module
docstring for the target and what is debatable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

from bench import (
    START,
    Context,
    EventFactory,
    Result,
    benchmark,
    build_workspace,
    chat_length,
    iso_ms,
    progress,
)

from eventlog.events import SessionCreated
from eventlog.log import Log

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Wraps a Log's append and append_batch (instance attributes: the library is not touched) to
# record (duration, wait) per call; each call is one turn in these processes.
_RECORDER = r"""
import time

def record_turns(log, turns):
    w = log.writer
    def wrap(fn):
        def timed(*a, **k):
            free = w.free_turns
            waits = len(w.lock_waits)
            last = w.lock_waits[-1] if w.lock_waits else None
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                dt = time.perf_counter() - t0
                if w.free_turns > free:
                    wait = 0.0
                elif w.lock_waits and (len(w.lock_waits) != waits or w.lock_waits[-1] is not last):
                    wait = w.lock_waits[-1]
                else:
                    wait = 0.0  # a nested call inside a turn already held
                turns.append((dt, wait))
        return timed
    log.append = wrap(log.append)
    log.append_batch = wrap(log.append_batch)
"""

_CHILD = _RECORDER + r"""
import json, os, random, sys
import processors
from eventlog.app.workspace import Workspace
from eventlog.app.session_store import LocalSessionStore

role, home, ready, stop, out = sys.argv[1:6]
turns, runs = [], []
rng = random.Random(role)
words = "the a to of and in is it that for you this with on be function return error file test value".split()
if role == "daemon":
    ws = Workspace.open(home, writable=True)
    record_turns(ws.log, turns)
    open(ready, "w").close()
    while not os.path.exists(stop):
        for name in ("snapshot", "digest"):
            t0 = time.perf_counter()
            processors.run(ws, name)
            runs.append((name, time.perf_counter() - t0))
            time.sleep(0.01)
    ws.close()
else:
    store = LocalSessionStore.open(home)
    record_turns(store.ws.log, turns)
    key = "agent:bench"
    store.get_or_create(key, title="the agent")
    open(ready, "w").close()
    i = 0
    while not os.path.exists(stop):
        i += 1
        n = max(1, min(4000, int(rng.lognormvariate(4.0, 1.0))))
        text = " ".join(rng.choice(words) for _ in range(n))
        t0 = time.perf_counter()
        store.add_message(key, ("user", "assistant")[i % 2], text)
        runs.append(("add_message", time.perf_counter() - t0))
        time.sleep(rng.uniform(0, 0.01))
    store.close()
with open(out, "w") as f:
    json.dump({"turns": turns, "runs": runs}, f)
"""


def pct(xs: list[float], p: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(p * (len(ys) - 1)))] if ys else float("nan")


def summary(turns: list[tuple[float, float]]) -> dict[str, float]:
    """p50/p99/max of wait and hold (ms) of a writer's turns."""
    waits = [w for _d, w in turns]
    holds = [d - w for d, w in turns]
    return {"turns": len(turns),
            "waited_share": round(sum(1 for w in waits if w > 0) / len(waits), 3) if waits else 0.0,
            "wait_p50_ms": round(pct(waits, 0.5) * 1000, 3), "wait_p99_ms": round(pct(waits, 0.99) * 1000, 3),
            "wait_max_ms": round(max(waits, default=0) * 1000, 3),
            "hold_p50_ms": round(pct(holds, 0.5) * 1000, 3), "hold_p99_ms": round(pct(holds, 0.99) * 1000, 3),
            "hold_max_ms": round(max(holds, default=0) * 1000, 3)}


@benchmark("lock_wait_shared", "lock wait p50/p99 of an append while a daemon (snapshot, digest) and an agent write too")
def bench_lock_wait_shared(ctx: Context) -> Result:
    n = ctx.size(2_000, 300)
    scratch = ctx.scratch("lock_wait_shared")
    home = os.path.join(scratch, "home")
    factory = EventFactory(ctx.rng("lock_wait_shared"), sessions=20)
    rng = ctx.rng("lock_wait_shared:gaps")
    step = 30.0

    def history() -> Any:  # some history for the processors to have read already (snapshot state, diary)
        yield [SessionCreated(session_key=k, title="history", created_at=iso_ms(START)) for k in factory.sessions]
        for lo in range(0, 5_000, 1_000):
            yield [factory.event(chat_length(rng), timestamp=iso_ms(START + (lo + i) * step)) for i in range(1_000)]

    build_workspace(home, history(), via_workspace=False)  # durability back to the default, fsync
    ready = {r: os.path.join(scratch, f"{r}.ready") for r in ("daemon", "agent")}
    outs = {r: os.path.join(scratch, f"{r}.json") for r in ("daemon", "agent")}
    stop = os.path.join(scratch, "stop")
    procs = {r: subprocess.Popen([sys.executable, "-c", _CHILD, r, home, ready[r], stop, outs[r]], cwd=REPO,
                                 stderr=subprocess.PIPE, text=True) for r in ("daemon", "agent")}
    turns: list[tuple[float, float]] = []
    namespace: dict[str, Any] = {}
    exec(_RECORDER, namespace)  # noqa: S102 - the same recorder as the children's
    try:
        deadline = time.monotonic() + 60
        while not all(os.path.exists(p) for p in ready.values()):
            for r, p in procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"the {r} process exited early: {p.stderr.read()[-2000:]}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                raise RuntimeError("the daemon and agent processes did not start within 60 s")
            time.sleep(0.01)
        progress(f"lock_wait_shared: {n} appends from this process while a daemon and an agent write")
        log = Log.open(os.path.join(home, "log"), writable=True, durability="fsync")
        try:
            namespace["record_turns"](log, turns)
            key = factory.sessions[0]
            t = START + 40 * 86_400
            for _ in range(n):
                t += 1
                log.append(factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(t)))
                time.sleep(rng.uniform(0, 0.01))
        finally:
            log.close()
    finally:
        open(stop, "w").close()
        for r, p in procs.items():
            try:
                _, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            if p.returncode != 0:
                raise RuntimeError(f"the {r} process failed: {err[-2000:]}")
    children = {}
    for r in ("daemon", "agent"):
        with open(outs[r]) as f:
            children[r] = json.load(f)
    ours = summary(turns)
    daemon = summary([tuple(t) for t in children["daemon"]["turns"]])  # type: ignore[misc]
    agent = summary([tuple(t) for t in children["agent"]["turns"]])  # type: ignore[misc]
    all_turns = turns + [tuple(t) for r in children.values() for t in r["turns"]]  # type: ignore[misc]
    every = summary(all_turns)  # type: ignore[arg-type]
    runs = children["daemon"]["runs"]
    adds = [sec for _n, sec in children["agent"]["runs"]]
    details = {
        "appends": n,
        "wait_p50_ms": ours["wait_p50_ms"],
        "wait_p99_ms": ours["wait_p99_ms"],
        "wait_max_ms": ours["wait_max_ms"],
        "waited_share": ours["waited_share"],
        "append_p50_ms": ours["hold_p50_ms"],
        "append_p99_ms": ours["hold_p99_ms"],
        "any_writer_hold_p50_ms": every["hold_p50_ms"],
        "any_writer_hold_p99_ms": every["hold_p99_ms"],
        "any_writer_hold_max_ms": every["hold_max_ms"],
        **{f"agent_{k}": v for k, v in agent.items()},
        **{f"daemon_{k}": v for k, v in daemon.items()},
        "agent_add_message_p50_ms": round(pct(adds, 0.5) * 1000, 2),
        "agent_add_message_p99_ms": round(pct(adds, 0.99) * 1000, 2),
        "daemon_runs": len(runs),
        "daemon_run_p50_ms": round(pct([s for _n, s in runs], 0.5) * 1000, 1),
        "daemon_run_max_ms": round(max((s for _n, s in runs), default=0) * 1000, 1),
    }
    shutil.rmtree(scratch, ignore_errors=True)
    return Result("lock_wait_shared", ours["wait_p99_ms"], every["hold_p99_ms"], "ms", n,
                  "p99 duration of one append (lock held: catch-up + write + fdatasync), any of the 3 writers",
                  target=1.0, target_op="<=", details=details)



# A writer appending as fast as it can (durability none) for a few seconds, with leases or
# with plain turns (lease_seconds=0); it prints how many events it wrote.
_BUSY = r"""
import sys, time
from eventlog.events import MessageAppended
from eventlog.log import Log
log = Log.open(sys.argv[1], writable=True, durability="none", lock_timeout=30, lease_seconds=float(sys.argv[3]))
n = 0
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    log.append(MessageAppended(session_key="busy", message_id=str(n), role="user", content="x" * 200))
    n += 1
log.close()
print(n)
"""


def _waits_next_to_a_busy_writer(log_dir: str, lease: float, appends: int) -> tuple[list[float], int]:
    """This process's lock waits (s) for ``appends`` appends 20 ms apart next to a busy writer."""
    Log.open(log_dir, writable=True, create=True).close()
    env = {**os.environ, "PYTHONPATH": REPO}
    busy = subprocess.Popen([sys.executable, "-c", _BUSY, log_dir, str(appends * 0.02 + 1.5), str(lease)],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(0.5)  # the busy writer is running
        me = Log.open(log_dir, writable=True, durability="none", lock_timeout=10, lease_seconds=0)
        for i in range(appends):
            me.append(SessionCreated(session_key=f"me{i}", created_at=iso_ms(START)))
            time.sleep(0.02)
        waits = me.writer.lock_waits + [0.0] * me.writer.free_turns
        me.close()
        out, _ = busy.communicate(timeout=60)
    finally:
        busy.kill()
    return waits, int(out or 0)


@benchmark("lease_wait", "lock wait of an occasional writer next to one appending flat out: leases vs plain turns")
def bench_lease_wait(ctx: Context) -> Result:
    appends = ctx.size(200, 60)
    waits: dict[str, list[float]] = {"lease": [], "plain": []}
    written: dict[str, int] = {"lease": 0, "plain": 0}
    for r in range(ctx.repeats):
        for name, lease in (("lease", 0.001), ("plain", 0.0)):
            scratch = ctx.scratch(f"lease_wait_{name}_{r}")
            got, n = _waits_next_to_a_busy_writer(os.path.join(scratch, "log"), lease, appends)
            waits[name] += got
            written[name] += n
            shutil.rmtree(scratch, ignore_errors=True)
    progress(f"lease_wait: {len(waits['lease'])} appends each way")
    details = {f"{name}_{k}": v for name in waits for k, v in {
        "wait_p50_ms": round(pct(waits[name], 0.5) * 1000, 3), "wait_p99_ms": round(pct(waits[name], 0.99) * 1000, 3),
        "wait_max_ms": round(max(waits[name], default=0) * 1000, 3), "busy_events": written[name]}.items()}
    return Result("lease_wait", pct(waits["lease"], 0.99) * 1000, pct(waits["plain"], 0.99) * 1000, "ms",
                  len(waits["lease"]), "p99 lock wait next to the same busy writer taking plain turns (lease_seconds=0)",
                  target=1.0, target_op="<=", details=details)
