"""The command line at scale: ``append_file_1m``, ``cli_growth``, ``ingest_1m``, ``sessions_5000``, ``tail_follow_latency``.

Every command runs as a user runs it: the ``evlog`` console script of this venv in a
subprocess, timed from outside (wall time) with its peak RSS (``bench.run_measured``).
The generated inputs (NDJSON of chat-sized ``message.appended`` events, folders of
catbuddy session files) are written once per run and size and shared by the benchmarks
that read them. What each benchmark measures, its baseline and what is debatable are in
tools/bench.py's module docstring.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import msgspec
from bench import (
    DAY,
    ENCODER,
    MIB,
    START,
    Check,
    Context,
    EventFactory,
    Result,
    benchmark,
    best_of,
    build_workspace,
    chat_length,
    command_trial,
    evlog_script,
    iso_ms,
    progress,
    run_measured,
    tree_bytes,
)

from eventlog.app.workspace import init_workspace
from eventlog.events import Event, MessageAppended, SessionCreated
from eventlog.log import Log

PER_SESSION = 500  # messages per session (and per catbuddy file) in the generated inputs
GROWTH_DAYS = 30


def growth_sizes(ctx: Context) -> tuple[int, ...]:
    """10k and 100k under --quick; 1M by default; 10M too under --slow (the slow benchmark set)."""
    if ctx.quick:
        return (10_000, 100_000)
    return (10_000, 100_000, 1_000_000, 10_000_000) if ctx.slow else (10_000, 100_000, 1_000_000)


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


def _messages(n: int, label: str) -> Any:
    """(session key, message) pairs: ``n`` chat-sized messages in sessions of ``PER_SESSION``, over 30 days."""
    rng = random.Random(f"20261130:{label}")
    factory = EventFactory(rng, sessions=1)
    step = (GROWTH_DAYS * DAY - 120) / n
    for i in range(n):
        s = i // PER_SESSION
        key = f"cli:growth-{s:05d}"
        yield i, key, factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(START + 60 + i * step))


def ndjson_file(ctx: Context, n: int) -> dict[str, Any]:
    """An NDJSON input of ``n`` messages (and a ``session.created`` before each session's first), once per run."""

    def build() -> dict[str, Any]:
        path = os.path.join(ctx.scratch(f"ndjson-{size_label(n)}"), "events.ndjson")
        t0 = time.perf_counter()
        encode = ENCODER.encode
        with open(path, "wb", buffering=1 << 20) as f:
            for i, key, ev in _messages(n, f"ndjson:{n}"):
                if i % PER_SESSION == 0:
                    f.write(encode(SessionCreated(session_key=key, title=f"growth {i // PER_SESSION}",
                                                  created_at=ev.timestamp)) + b"\n")
                f.write(encode(ev) + b"\n")
        size = os.path.getsize(path)
        progress(f"ndjson {size_label(n)}: {n} messages, {size / MIB:.0f} MiB in {time.perf_counter() - t0:.1f} s")
        return {"path": path, "messages": n, "events": n + -(-n // PER_SESSION), "bytes": size}

    return ctx.shared(f"ndjson:{n}", build)


def catbuddy_dir(ctx: Context, n: int) -> dict[str, Any]:
    """A folder of catbuddy session files (``PER_SESSION`` messages each) holding ``n`` messages."""

    def build() -> dict[str, Any]:
        root = os.path.join(ctx.scratch(f"catbuddy-{size_label(n)}"), "sessions")
        os.makedirs(root)
        t0 = time.perf_counter()
        encode = msgspec.json.encode
        f = None
        for i, key, ev in _messages(n, f"catbuddy:{n}"):
            if i % PER_SESSION == 0:
                if f is not None:
                    f.close()
                f = open(os.path.join(root, f"growth-{i // PER_SESSION:05d}.jsonl"), "wb", buffering=1 << 20)  # noqa: SIM115
                f.write(encode({"key": key, "title": f"growth {i // PER_SESSION}", "preview": "",
                                "created_at": ev.timestamp, "updated_at": ev.timestamp, "last_consolidated": 0,
                                "metadata": {"channel": "cli"}}) + b"\n")
            f.write(encode({"id": ev.message_id, "sessionKey": key, "role": ev.role, "content": ev.content,  # type: ignore[union-attr]
                            "timestamp": ev.timestamp}) + b"\n")
        if f is not None:
            f.close()
        size = tree_bytes(root)
        progress(f"catbuddy {size_label(n)}: {n} messages in {-(-n // PER_SESSION)} files, {size / MIB:.0f} MiB "
                 f"in {time.perf_counter() - t0:.1f} s")
        return {"path": root, "messages": n, "files": -(-n // PER_SESSION), "bytes": size}

    return ctx.shared(f"catbuddy:{n}", build)


def evlog(home: str, *args: str) -> list[str]:
    return [evlog_script(), "--home", home, *args]


# --------------------------------------------------------------------------- append_file_1m

_SQLITE_CHILD = r"""
import sqlite3, sys, time
path, db = sys.argv[1:3]
conn = sqlite3.connect(db)
conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
with open(path, encoding="utf-8") as f, conn:  # one transaction, committed at the end of the block
    conn.executemany("INSERT INTO events (body) VALUES (?)", ((line.rstrip("\n"),) for line in f))
n = conn.execute("SELECT count(*) FROM events").fetchone()[0]
conn.close()
print(n)
"""


def appended_homes(ctx: Context) -> dict[int, dict[str, Any]]:
    """Workspaces ``append_file_1m`` made with ``evlog append`` (one per size), kept for ``cli_growth``."""
    return ctx.shared("appended_homes", dict)


def append_once(ctx: Context, n: int, home: str) -> Any:
    """``evlog init`` (untimed) then ``evlog append FILE`` (measured) into a new workspace at ``home``."""
    data = ndjson_file(ctx, n)
    init_workspace(home)
    return run_measured(evlog(home, "append", data["path"]))


@benchmark("append_file_1m", "'evlog append FILE' of 10k/100k/1M events vs SQLite executemany of the lines (time, peak RSS)")
def bench_append_file(ctx: Context) -> Result:
    sizes = growth_sizes(ctx)
    rows = []
    keep = appended_homes(ctx)
    for n in sizes:
        data = ndjson_file(ctx, n)
        best: dict[str, Any] = {}
        progress(f"append_file_1m: {size_label(n)}, best of {ctx.repeats}")
        for r in range(ctx.repeats):
            for name in (("ours", "sqlite") if r % 2 == 0 else ("sqlite", "ours")):
                scratch = ctx.scratch(f"append_file-{name}")
                if name == "ours":
                    home = os.path.join(scratch, "home")
                    m = append_once(ctx, n, home)
                else:
                    m = run_measured([sys.executable, "-c", _SQLITE_CHILD, data["path"], os.path.join(scratch, "e.db")])
                progress(f"  round {r + 1}/{ctx.repeats} {name}: {m.seconds:.2f} s, {m.peak_mib:.0f} MiB")
                if name not in best or m.seconds < best[name].seconds:
                    best[name] = m
                if name == "ours" and n not in keep:
                    keep[n] = {"home": home, "append": m}  # the first workspace stays for cli_growth
                else:
                    shutil.rmtree(scratch, ignore_errors=True)
        ours, sql = best["ours"], best["sqlite"]
        rows.append({"events": data["events"], "input_mib": round(data["bytes"] / MIB, 1),
                     "evlog_s": round(ours.seconds, 3), "sqlite_s": round(sql.seconds, 3),
                     "ratio": round(ours.seconds / sql.seconds, 3),
                     "evlog_us_per_event": round(ours.seconds / data["events"] * 1e6, 2),
                     "sqlite_us_per_event": round(sql.seconds / data["events"] * 1e6, 2),
                     "evlog_peak_mib": round(ours.peak_mib, 1), "sqlite_peak_mib": round(sql.peak_mib, 1)})
    top = rows[-1]
    details = {"sizes": [size_label(n) for n in sizes], "largest": size_label(sizes[-1]),
               "peak_rss_mib": top["evlog_peak_mib"], "sqlite_peak_rss_mib": top["sqlite_peak_mib"],
               "us_per_event_ours": top["evlog_us_per_event"], "us_per_event_sqlite": top["sqlite_us_per_event"],
               "durability": "evlog: workspace default (fsync per batch of 10,000); SQLite: default journal, "
                             "synchronous=FULL, one transaction"}
    return Result("append_file_1m", top["evlog_s"], top["sqlite_s"], "s", top["events"],
                  "python: sqlite3 executemany of the raw lines into (id INTEGER PRIMARY KEY, body TEXT), one transaction",
                  target=1.0, target_op="<=", checks=[Check("peak_rss_mib", "<=", 64, " MiB", "rss")], details=details,
                  tables={"growth: time and peak RSS by input size": rows})


# --------------------------------------------------------------------------- cli_growth

RECALL_QUERY = "what did we decide about the config file error"


def growth_commands(home: str) -> list[tuple[str, list[str]]]:
    """The commands of the growth table, in the order they run on the appended workspace."""
    return [  # recall first: 'evlog replay' rebuilds the recall index too
        ("evlog recall (builds the index)", evlog(home, "recall", RECALL_QUERY)),
        ("evlog recall (index built)", evlog(home, "recall", RECALL_QUERY)),
        ("evlog run snapshot", evlog(home, "run", "snapshot", "--json")),
        ("evlog run digest", evlog(home, "run", "digest", "--json")),
        ("evlog replay", evlog(home, "replay")),
        ("evlog replay --check", evlog(home, "replay", "--check")),
        ("evlog verify", evlog(home, "verify")),
        ("evlog stats", evlog(home, "stats")),
    ]


@benchmark("cli_growth", "time and peak RSS of append, ingest, run, replay, verify, stats, recall at 10k/100k/1M events")
def bench_cli_growth(ctx: Context) -> Result:
    sizes = growth_sizes(ctx)
    keep = appended_homes(ctx)
    floor = min((run_measured([evlog_script(), "--help"]) for _ in range(3)), key=lambda m: m.seconds)
    measured: dict[str, dict[int, Any]] = {"evlog --help": {n: floor for n in sizes}}
    events_at: dict[int, int] = {}
    for n in sizes:
        progress(f"cli_growth: {size_label(n)} messages")
        if n not in keep:  # append_file_1m did not run: make the workspace here
            scratch = ctx.scratch(f"growth-{size_label(n)}")
            keep[n] = {"home": os.path.join(scratch, "home"),
                       "append": append_once(ctx, n, os.path.join(scratch, "home"))}
        home = keep[n]["home"]
        events_at[n] = ndjson_file(ctx, n)["events"]
        measured.setdefault("evlog append FILE", {})[n] = keep[n]["append"]
        data = catbuddy_dir(ctx, n)
        ingest_scratch = ctx.scratch(f"growth-ingest-{size_label(n)}")
        ingest_home = os.path.join(ingest_scratch, "home")
        init_workspace(ingest_home)
        m = run_measured(evlog(ingest_home, "ingest", data["path"]))
        shutil.rmtree(ingest_scratch, ignore_errors=True)
        measured.setdefault("evlog ingest DIR (catbuddy)", {})[n] = m
        progress(f"  evlog ingest: {m.seconds:.2f} s, {m.peak_mib:.0f} MiB")
        for label, argv in growth_commands(home):
            m = run_measured(argv)
            measured.setdefault(label, {})[n] = m
            progress(f"  {label}: {m.seconds:.2f} s, {m.peak_mib:.0f} MiB")
        keep[n]["grown_mib"] = round(tree_bytes(home) / MIB, 1)
        shutil.rmtree(os.path.dirname(home), ignore_errors=True)  # every later benchmark makes its own
    small, big = (sizes[-2], sizes[-1]) if len(sizes) > 1 else (sizes[0], sizes[0])
    times, rss, flags = [], [], []
    for label, by_size in measured.items():
        row: dict[str, Any] = {"command": label}
        for n in sizes:
            row[f"s@{size_label(n)}"] = round(by_size[n].seconds, 3)
        row[f"us/msg@{size_label(big)}"] = round(by_size[big].seconds / big * 1e6, 2)
        growth = by_size[big].seconds / by_size[small].seconds
        # time beyond start-up (evlog --help) per message, largest size over the one before: ~1 when linear
        work = [max(by_size[k].seconds - floor.seconds, 1e-6) / k for k in (small, big)]
        row[f"x time {size_label(small)}->{size_label(big)}"] = round(growth, 2)
        row["per-msg growth"] = round(work[1] / work[0], 2) if label != "evlog --help" else None
        superlinear = label != "evlog --help" and work[1] / work[0] > 1.3 and by_size[big].seconds > 1.0
        row["superlinear"] = "YES" if superlinear else ""
        if superlinear:
            flags.append(label)
        times.append(row)
        rss.append({"command": label, **{f"MiB@{size_label(n)}": round(by_size[n].peak_mib, 1) for n in sizes},
                    f"x rss {size_label(small)}->{size_label(big)}": round(by_size[big].peak_mib / by_size[small].peak_mib, 2)})
    bounded = {"evlog replay": "peak_rss_replay_mib", "evlog replay --check": "peak_rss_replay_check_mib",
               "evlog run snapshot": "peak_rss_snapshot_mib"}
    details: dict[str, Any] = {"sizes_messages": [size_label(n) for n in sizes],
                               "events_at_largest": events_at[big],
                               "help_floor_s": round(floor.seconds, 3), "help_floor_mib": round(floor.peak_mib, 1)}
    for label, key in bounded.items():
        details[key] = round(measured[label][big].peak_mib, 1)
    details.update({f"peak_rss_{k}_mib": round(measured[label][big].peak_mib, 1) for k, label in (
        ("append", "evlog append FILE"), ("ingest", "evlog ingest DIR (catbuddy)"), ("digest", "evlog run digest"),
        ("verify", "evlog verify"), ("stats", "evlog stats"), ("recall_build", "evlog recall (builds the index)"))})
    details["superlinear"] = flags
    details["workspace_mib_at_largest"] = keep[big].get("grown_mib")
    worst = max(details[k] for k in bounded.values())
    return Result("cli_growth", worst, floor.peak_mib, "MiB", big,
                  "peak RSS of 'evlog --help' (the import floor); ours: the largest of replay, replay --check, "
                  "run snapshot at the largest size",
                  target=128, target_of="ours", target_op="<=", details=details,
                  tables={"growth: wall seconds (one run each) by messages in the workspace": times,
                          "growth: peak RSS (MiB) by messages in the workspace": rss})


# --------------------------------------------------------------------------- ingest_1m

INGEST_PER_FILE = 200  # messages per catbuddy file of ingest_1m: 1M messages in 5,000 files
_JSON_LOADS_CHILD = r"""
import json, os, sys
n = 0
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), encoding="utf-8") as f:
        for line in f:
            json.loads(line)
            n += 1
print(n)
"""


def catbuddy_files(ctx: Context, n: int, per_file: int) -> dict[str, Any]:
    """A folder of catbuddy files of ``per_file`` messages each holding ``n`` messages (once per run)."""

    def build() -> dict[str, Any]:
        root = os.path.join(ctx.scratch(f"catbuddy-{size_label(n)}-{per_file}"), "sessions")
        os.makedirs(root)
        encode = msgspec.json.encode
        rng = random.Random(f"20261202:ingest:{n}")
        factory = EventFactory(rng, sessions=1)
        step = (GROWTH_DAYS * DAY - 120) / n
        f = None
        for i in range(n):
            if i % per_file == 0:
                if f is not None:
                    f.close()
                key = f"cli:ingest-{i // per_file:05d}"
                ts = iso_ms(START + 60 + i * step)
                f = open(os.path.join(root, f"ingest-{i // per_file:05d}.jsonl"), "wb", buffering=1 << 20)  # noqa: SIM115
                f.write(encode({"key": key, "title": f"ingest {i // per_file}", "preview": "", "created_at": ts,
                                "updated_at": ts, "last_consolidated": 0, "metadata": {"channel": "cli"}}) + b"\n")
            ev = factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(START + 60 + i * step))
            f.write(encode({"id": ev.message_id, "sessionKey": key, "role": ev.role, "content": ev.content,  # type: ignore[union-attr]
                            "timestamp": ev.timestamp}) + b"\n")
        if f is not None:
            f.close()
        return {"path": root, "messages": n, "files": -(-n // per_file), "bytes": tree_bytes(root)}

    return ctx.shared(f"catbuddy-files:{n}:{per_file}", build)


def children_cpu() -> float:
    """CPU seconds (user + system) of every child this process has waited for (and theirs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@benchmark("ingest_1m", "'evlog ingest DIR' of 1M messages in 5,000 catbuddy files vs a json.loads loop over the lines "
                        "(CPU seconds, peak RSS)")
def bench_ingest_1m(ctx: Context) -> Result:
    n = ctx.size(1_000_000, 100_000)
    data = catbuddy_files(ctx, n, INGEST_PER_FILE)
    progress(f"ingest_1m: {n} messages in {data['files']} files, best of {ctx.repeats}")
    cpu: dict[str, list[float]] = {"ours": [], "json_loads": []}
    peak: dict[str, float] = {}
    for r in range(ctx.repeats):
        for name in (("ours", "json_loads") if r % 2 == 0 else ("json_loads", "ours")):
            scratch = ctx.scratch(f"ingest_1m-{name}")
            if name == "ours":
                home = os.path.join(scratch, "home")
                init_workspace(home)
                argv = evlog(home, "ingest", data["path"])
            else:
                argv = [sys.executable, "-c", _JSON_LOADS_CHILD, data["path"]]
            before = children_cpu()
            m = run_measured(argv)
            cpu[name].append(children_cpu() - before)
            peak[name] = max(peak.get(name, 0.0), m.peak_mib)
            progress(f"  round {r + 1}/{ctx.repeats} {name}: {cpu[name][-1]:.2f} s CPU, {m.seconds:.2f} s wall, "
                     f"{m.peak_mib:.0f} MiB")
            shutil.rmtree(scratch, ignore_errors=True)
    ours, base = statistics.median(cpu["ours"]), statistics.median(cpu["json_loads"])
    details = {"messages": n, "files": data["files"], "input_mib": round(data["bytes"] / MIB, 1),
               "peak_rss_mib": round(peak["ours"], 1), "json_loads_peak_rss_mib": round(peak["json_loads"], 1),
               "cpu_s_rounds_ours": [round(x, 2) for x in cpu["ours"]],
               "cpu_s_rounds_json_loads": [round(x, 2) for x in cpu["json_loads"]],
               "loadavg_1m_at_end": round(os.getloadavg()[0], 2)}
    return Result("ingest_1m", round(ours, 3), round(base, 3), "CPU s", n,
                  "python: json.loads of every line of every file (a subprocess), CPU seconds, median of rounds",
                  target=3.0, target_op="<=", checks=[Check("peak_rss_mib", "<=", 128, " MiB", "rss")], details=details)


# --------------------------------------------------------------------------- sessions_5000

@benchmark("sessions_5000", "'evlog sessions' on a workspace of 5,000 sessions vs 'evlog --help'")
def bench_sessions_5000(ctx: Context) -> Result:
    sessions, per = 5_000, ctx.size(20, 4)
    scratch = ctx.scratch("sessions_5000")
    home = os.path.join(scratch, "home")
    rng = ctx.rng("sessions_5000")
    factory = EventFactory(rng, sessions=1)

    def batches() -> Any:
        batch: list[Event] = []
        for i in range(sessions):
            key = f"cli:s{i:05d}"
            t = START + rng.uniform(0, 30 * DAY)
            batch.append(SessionCreated(session_key=key, title=f"session {i}", created_at=iso_ms(t)))
            for _ in range(per):
                t += rng.uniform(1, 600)
                batch.append(factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(t)))
            if len(batch) >= 5_000:
                yield batch
                batch = []
        if batch:
            yield batch

    seconds = build_workspace(home, batches(), via_workspace=False)
    progress(f"sessions_5000: built {sessions} sessions x {per} messages in {seconds:.1f} s")
    proc = subprocess.run(evlog(home, "sessions", "--json"), capture_output=True, check=True)
    listed = len(proc.stdout.splitlines())
    if listed != sessions:
        raise RuntimeError(f"'evlog sessions --json' listed {listed} sessions, expected {sessions}")
    best = best_of(ctx, {"baseline": command_trial([evlog_script(), "--help"]),
                         "ours": command_trial(evlog(home, "sessions")),
                         "ours_json": command_trial(evlog(home, "sessions", "--json"))}, rounds=max(5, ctx.repeats))
    rss = run_measured(evlog(home, "sessions"))
    details = {"sessions": sessions, "messages_per_session": per, "log_mib": round(tree_bytes(os.path.join(home, "log")) / MIB, 1),
               "ours_json_ms": round(best["ours_json"] * 1000, 1), "peak_rss_mib": round(rss.peak_mib, 1),
               "ours_minus_help_ms": round((best["ours"] - best["baseline"]) * 1000, 1)}
    shutil.rmtree(scratch, ignore_errors=True)
    return Result("sessions_5000", best["ours"] * 1000, best["baseline"] * 1000, "ms", sessions, "evlog --help",
                  target=1.5, target_op="<=", details=details)


# --------------------------------------------------------------------------- tail_follow_latency


class LineClock:
    """Reads a subprocess' stdout in a thread; the arrival time of each message id seen on it."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.arrived: dict[str, float] = {}
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            t = time.perf_counter()
            try:
                mid = json.loads(line).get("message_id")
            except ValueError:
                continue
            if mid:
                with self.cond:
                    self.arrived[mid] = t
                    self.cond.notify_all()

    def wait_for(self, mid: str, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: mid in self.arrived, timeout)


def follow_latencies(ctx: Context, label: str, argv: list[str], append: Any, events: list[MessageAppended],
                     gaps: list[float]) -> tuple[list[float], int]:
    """Start ``argv``, wait until it shows a probe line, then append ``events`` ``gaps`` apart.

    Returns the delays (seconds) from each append's return to its line on the follower's
    stdout, and how many never arrived (within 5 s of the last append).
    """
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    clock = LineClock(proc)
    sent: dict[str, float] = {}
    try:
        probe_rng = random.Random(label)
        for attempt in range(100):  # the follower is up once it shows a probe appended after it started
            probe = MessageAppended(session_key="cli:probe", message_id=f"probe-{attempt}-{probe_rng.getrandbits(32)}",
                                    role="user", content="probe", timestamp=iso_ms(START))
            append(probe)
            if clock.wait_for(probe.message_id, 0.2):
                break
        else:
            raise RuntimeError(f"{label}: the follower showed nothing in 20 s: {proc.stderr.read()[-1000:]}")  # type: ignore[union-attr]
        for ev, gap in zip(events, gaps, strict=True):
            time.sleep(gap)
            append(ev)
            sent[ev.message_id] = time.perf_counter()
        clock.wait_for(events[-1].message_id, 5.0)
        time.sleep(0.2)
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    delays = [clock.arrived[m] - t for m, t in sent.items() if m in clock.arrived]
    return delays, len(sent) - len(delays)


def pct(xs: list[float], p: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(p * (len(ys) - 1)))] if ys else float("nan")


@benchmark("tail_follow_latency", "delay from an append to its line on 'evlog tail -f --json' vs 'tail -F' on a plain file")
def bench_tail_follow(ctx: Context) -> Result:
    n = ctx.size(300, 100)
    rng = ctx.rng("tail_follow_latency")
    factory = EventFactory(rng, sessions=1)
    events = [factory.event(chat_length(rng), timestamp=iso_ms(START + i)) for i in range(n)]
    gaps = [rng.uniform(0, 0.05) for _ in range(n)]
    scratch = ctx.scratch("tail_follow")
    home = os.path.join(scratch, "home")
    build_workspace(home, [[SessionCreated(session_key=factory.sessions[0], title="follow")]], via_workspace=False)
    results: dict[str, tuple[list[float], int]] = {}
    progress(f"tail_follow_latency: {n} appends 0-50 ms apart, evlog tail -f and tail -F")
    log = Log.open(os.path.join(home, "log"), writable=True)  # the workspace's default durability (fsync)
    try:
        last = log.last_seq
        results["ours"] = follow_latencies(ctx, "evlog tail -f", evlog(home, "tail", "-f", "--json", "--after", str(last)),
                                           log.append, events, gaps)
    finally:
        log.close()
    plain = os.path.join(scratch, "plain.jsonl")
    fd = os.open(plain, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        encode = ENCODER.encode
        results["baseline"] = follow_latencies(ctx, "tail -F", ["tail", "-F", "-n", "0", plain],
                                               lambda ev: os.write(fd, encode(ev) + b"\n"), events, gaps)
    finally:
        os.close(fd)
    shutil.rmtree(scratch, ignore_errors=True)
    ours, lost = results["ours"]
    base, base_lost = results["baseline"]
    if lost:
        raise RuntimeError(f"evlog tail -f never showed {lost} of {n} appended events")
    def ms(xs: list[float], p: float) -> float:
        return round(pct(xs, p) * 1000, 2)

    details = {"appends": n, "gap_ms": "uniform 0-50", "p95_ms": ms(ours, 0.95), "max_ms": ms(ours, 1.0),
               "mean_ms": round(statistics.fmean(ours) * 1000, 2), "tail_F_p95_ms": ms(base, 0.95),
               "tail_F_lost": base_lost, "poll_interval_ms": 10}
    return Result("tail_follow_latency", ms(ours, 0.5), ms(base, 0.5), "ms", n,
                  "GNU tail -F -n 0 on a plain JSONL file written with os.write the same way (median)",
                  target=20, target_of="ours", target_op="<=", details=details)
