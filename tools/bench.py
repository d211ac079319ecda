#!/usr/bin/env python3
"""evlog benchmarks: every figure next to a baseline measured in the same run.

Run from the repository root::

    .venv/bin/python tools/bench.py                # all benchmarks, a readable table
    .venv/bin/python tools/bench.py --quick        # smaller sizes, a smoke run (< 60 s)
    .venv/bin/python tools/bench.py --json         # one JSON object per benchmark and line
    .venv/bin/python tools/bench.py --only replay_verify --only help_time
    .venv/bin/python tools/bench.py --list         # names and one-line descriptions

Only results go to stdout; progress goes to stderr. ``--check`` makes the exit status 1
when a target is missed. All data comes from a seeded generator and lives in a temporary
directory (``--tmpdir`` picks where: fsync figures depend on that file system) that is
removed at the end.

How to read a figure
--------------------
A shared machine is noisy, so no number is reported alone: each benchmark times evlog
("ours") and a baseline doing the same work on the same data in the same run. The two
are interleaved (baseline, ours, ours, baseline, ...) and each keeps its best of
``--repeat`` (default 3) rounds. ``ratio`` is ours / baseline: for throughputs (events/s)
higher is better; for RSS and wall time it is a multiple of the baseline and lower is
better. A few targets are absolute (RSS in MiB = 2**20 bytes, start-up in ms); their
baselines are context, not the bar. Each result's details hold the sizes used, the
per-event times and the 1-minute load average when it started: on a busy machine (other
test runs share these 2 cores and this disk) treat a miss by a few percent as noise and
rerun.

The benchmarks
--------------
``append_nofsync`` (target: ratio >= 0.6)
    Events per second of ``Log.append`` with ``durability="none"``, one event per call,
    against a bare loop ``os.write(fd, ENCODER.encode(event) + b"\\n")`` on an
    ``O_APPEND`` file: the least any JSONL writer must do. The gap is evlog's own cost
    per append: stamping seq and ts, the xxh3 checksum, the lock and bookkeeping.
    The events are ``message.appended`` with chat-like contents: lengths drawn from a
    log-normal (median ~300 chars; ~10% under 70, ~10% over 1,300, a tail to 32k,
    roughly the shape of the Claude Code transcripts in ../shared/data/real), text
    mixing English prose, code (quotes, backslashes, newlines: JSON escaping), CJK and
    emoji. The sizes actually used are in the result's details. The baseline's lines
    are shorter (no seq, ts or checksum member); that is part of what evlog adds. Close
    is outside the timed region on both sides (evlog's close fsyncs, a bare close does not).
``append_nofsync_small``  (informational, no target)
    The same with ~250-byte lines, where per-call overhead dominates.
``append_fsync`` (target: ratio >= 1.0)
    ``durability="fsync"`` (fdatasync before append returns) against SQLite in WAL
    mode with ``synchronous=FULL``, one transaction per event: an autocommit INSERT of
    ``(seq INTEGER PRIMARY KEY, body BLOB)`` holding the same JSON (encoded inside the
    loop, as evlog does). Both promise that an acknowledged event survives an OS crash.
    Closing is inside the timed region on both sides (SQLite checkpoints its WAL then).
    5,000 events (2,000 with ``--quick``): SQLite checkpoints about every 1,000 commits
    and then *overwrites* its WAL file, and an fdatasync that changes no file size is
    cheaper than one on a growing file (as every log append is). So SQLite's first
    ~1,000 commits are its slowest and a short run flatters evlog; these sizes include
    several checkpoint cycles, closer to a long-running log.
``append_group`` (target: ratio >= 3.0)
    ``durability="group"`` (write now, background fdatasync every 10 ms) against SQLite
    WAL ``synchronous=NORMAL`` with one transaction per event: both survive a process
    crash and may lose the last moments on an OS crash (evlog: up to 10 ms; SQLite:
    commits since the last checkpoint, so SQLite promises less here, which favours the
    baseline). ``log.close()`` / ``conn.close()`` are timed so the final sync counts.
``replay_verify`` (target: ratio >= 0.7)
    Events per second of ``Log.open(dir).read()``, which checks every line's xxh3
    checksum, framing and dense seq, against reading the same segment files whole and
    decoding line by line (``for line in data.splitlines(): DECODER.decode(line)``),
    which checks nothing. The log is written one ``append`` at a time (as most events
    arrive). Debatable: evlog decodes a chunk with one ``decode_lines`` call, which is
    faster than per-line ``decode``, so the ratio can exceed 1 although evlog does more.
    The details therefore also report a stricter baseline,
    ``DECODER.decode_lines(data)`` per segment (the fastest unverified decode we know).
``replay_rss_1m`` (target: peak RSS <= 150 MB)
    Peak RSS (``ru_maxrss``) of a fresh subprocess that imports eventlog and iterates
    ``read()`` over 1M events (200k with ``--quick``) without keeping them. Baseline:
    the same subprocess' peak RSS right after the import, so ours - baseline is what
    reading costs. The log is written with ``append_batch`` in chunks of 1000 (fast to
    build; every line then carries the batch ``more`` member).
``help_time`` (target: <= 150 ms)
    Wall time of ``evlog --help`` (the console script next to this interpreter) as a
    subprocess, best of 5. Baseline: ``python -c pass`` with the same interpreter, the
    floor any Python CLI pays.

Adding a benchmark
------------------
Write ``def bench_x(ctx: Context) -> Result`` and decorate it with
``@benchmark("x", "one-line description")``. Time with ``best_of`` (interleaved best-of
rounds) and build the record with ``throughput_result`` or ``Result`` directly.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from eventlog.codec import DECODER, ENCODER, stamp_and_frame
from eventlog.events import MessageAppended
from eventlog.log import Log
from eventlog.segments import segment_bases, segment_name

SEED = 20261130
TIMESTAMP = "2026-11-30T00:00:00Z"
MIB = 1024 * 1024

# --------------------------------------------------------------------------- results


@dataclass
class Result:
    """What every benchmark returns: our figure, the baseline's, and the target."""

    name: str
    ours: float
    baseline: float
    units: str
    n: int
    baseline_name: str
    target: float | None = None  # None: informational
    target_of: str = "ratio"  # "ratio" or "ours": which number the target bounds
    target_op: str = ">="  # ">=" or "<="
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else math.nan

    @property
    def passed(self) -> bool | None:
        if self.target is None:
            return None
        value = self.ratio if self.target_of == "ratio" else self.ours
        return value >= self.target if self.target_op == ">=" else value <= self.target

    @property
    def target_text(self) -> str:
        if self.target is None:
            return "-"
        unit = "x" if self.target_of == "ratio" else f" {self.units}"
        return f"{self.target_op} {self.target:g}{unit}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ours": round(self.ours, 3),
            "baseline": round(self.baseline, 3),
            "ratio": round(self.ratio, 4),
            "target": self.target,
            "target_of": self.target_of,
            "target_op": self.target_op,
            "pass": self.passed,
            "units": self.units,
            "n": self.n,
            "baseline_name": self.baseline_name,
            "details": self.details,
        }


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    run: Callable[[Context], Result]


BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(name: str, description: str) -> Callable[[Callable[[Context], Result]], Callable[[Context], Result]]:
    """Register ``fn(ctx) -> Result`` under ``name`` (run in registration order)."""

    def register(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        if name in BENCHMARKS:
            raise ValueError(f"benchmark {name!r} registered twice")
        BENCHMARKS[name] = Benchmark(name, description, fn)
        return fn

    return register


def progress(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


@dataclass
class Context:
    """What a benchmark gets: a scratch area, the size mode, seeded randomness."""

    root: str
    quick: bool = False
    repeats: int = 3
    _dirs: int = field(default=0, init=False)

    def size(self, default: int, quick: int) -> int:
        return quick if self.quick else default

    def rng(self, purpose: str) -> random.Random:
        """A generator seeded by ``purpose``: same data every run, independent streams."""
        return random.Random(f"{SEED}:{purpose}")

    def scratch(self, label: str) -> str:
        """A fresh empty directory under the temp root."""
        self._dirs += 1
        path = os.path.join(self.root, f"{self._dirs:04d}-{label}")
        os.makedirs(path)
        return path


# --------------------------------------------------------------------------- timing

Trial = Callable[[str], float]  # gets a fresh scratch dir, returns seconds of its timed region


def best_of(ctx: Context, trials: dict[str, Trial], rounds: int | None = None) -> dict[str, float]:
    """Run every trial ``rounds`` times, interleaved, rotating the order each round.

    Each call gets its own scratch directory (removed right after). Returns the best
    (smallest) seconds per trial name.
    """
    rounds = rounds or ctx.repeats
    names = list(trials)
    best = dict.fromkeys(names, math.inf)
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            scratch = ctx.scratch(name)
            try:
                seconds = trials[name](scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            best[name] = min(best[name], seconds)
            progress(f"  round {r + 1}/{rounds} {name}: {seconds * 1000:.1f} ms")
    return best


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn()`` takes (after a gc pass, so earlier garbage is not billed to it)."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def throughput_result(name: str, n: int, best: dict[str, float], *, baseline_name: str,
                      target: float | None, details: dict[str, Any]) -> Result:
    """A Result in events/s from best seconds of trials named 'ours' and 'baseline'."""
    per_event = {f"us_per_event_{k}": round(s / n * 1e6, 3) for k, s in best.items()}
    extra = {f"events_per_s_{k}": round(n / s, 1) for k, s in best.items() if k not in ("ours", "baseline")}
    return Result(name, n / best["ours"], n / best["baseline"], "events/s", n, baseline_name,
                  target=target, details={**details, **per_event, **extra})


# --------------------------------------------------------------------------- data

_WORDS = (
    "the a to of and in is it that for you this with on be not are as can I we have was "
    "but if what do will my so function return error file log event session memory test "
    "please could would should value list dict string config path import class async "
    "await request response server client token model user assistant message fix bug "
    "build run check update because then also just here there which when where why how"
).split()
_CODE = [
    'def handle(event):\n    if event.type == "message.appended":\n        return {"ok": True}\n',
    'const re = /\\d+\\.\\d+/g;\nconsole.log(`value: ${x}`);\n',
    'SELECT id, name FROM "users" WHERE path LIKE \'C:\\\\tmp\\\\%\';\n',
    '$ pytest -q tests/test_log.py\n\tFAILED test_recover - AssertionError\n',
    '{"key": "value", "nested": {"list": [1, 2, 3]}}\n',
]
_SYMBOLS = "→ ● ○ ↳ é ü ß ñ « » — … ✓ ✗ 😀 🐈 🚀 🎉 👍 🔥 💡 ∑ ≤ ≥ ±".split()
_KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"


def _prose(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 60))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(_SYMBOLS))
    return " ".join(words).capitalize() + rng.choice(".?!") + ("\n\n" if rng.random() < 0.3 else " ")


def _cjk(rng: random.Random) -> str:
    chars = [chr(rng.randint(0x4E00, 0x9FA5)) if rng.random() < 0.7 else rng.choice(_KANA) for _ in range(rng.randint(10, 80))]
    return "".join(chars) + rng.choice("。？！") + rng.choice(("", "", " 🐈", "\n"))


def make_corpus(rng: random.Random, chars: int = 400_000) -> str:
    """A long mixed text to cut message contents from: prose, code, CJK, symbols."""
    parts, total = [], 0
    while total < chars:
        kind = rng.random()
        piece = _prose(rng) if kind < 0.72 else rng.choice(_CODE) if kind < 0.87 else _cjk(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


def chat_length(rng: random.Random) -> int:
    """A chat message length in characters: log-normal, median ~300, clipped to [1, 32000]."""
    return max(1, min(32_000, int(rng.lognormvariate(math.log(300), 1.15))))


class EventFactory:
    """Seeded ``message.appended`` events with chat-like contents."""

    def __init__(self, rng: random.Random, sessions: int = 24) -> None:
        self.rng = rng
        self.corpus = make_corpus(rng)
        self.sessions = [f"cli:{rng.getrandbits(48):012x}" for _ in range(sessions)]
        self.count = 0

    def event(self, length: int) -> MessageAppended:
        rng = self.rng
        start = rng.randrange(len(self.corpus) - length)
        self.count += 1
        return MessageAppended(
            session_key=rng.choice(self.sessions),
            message_id=f"msg-{rng.getrandbits(64):016x}",
            role="user" if self.count % 2 else "assistant",
            content=self.corpus[start : start + length],
            timestamp=TIMESTAMP,
        )

    def chat(self, n: int) -> list[MessageAppended]:
        """``n`` events with the realistic length mix."""
        return [self.event(chat_length(self.rng)) for _ in range(n)]

    def sized(self, n: int, line_bytes: int) -> list[MessageAppended]:
        """``n`` events whose log lines are about ``line_bytes`` long."""
        probe = self.event(1)
        overhead = len(stamp_and_frame(probe, 1_000_000, TIMESTAMP.encode())) - 1
        length = max(1, line_bytes - overhead)
        out = []
        while len(out) < n:  # cut where the slice has as many chars as bytes (ASCII)
            ev = self.event(length)
            if ev.content.isascii():
                out.append(ev)
        return out

    def chunks(self, n: int, chunk: int) -> Iterator[list[MessageAppended]]:
        """``n`` realistic events in lists of at most ``chunk`` (never all in memory)."""
        while n > 0:
            k = min(chunk, n)
            yield self.chat(k)
            n -= k


def describe_events(events: list[MessageAppended]) -> dict[str, Any]:
    """Sizes of the events as evlog writes them (bytes per line) and how much is non-ASCII."""
    ts = TIMESTAMP.encode()
    sizes = sorted(len(stamp_and_frame(ev, 100_000 + i, ts)) for i, ev in enumerate(events))
    content_bytes = sum(len(ev.content.encode()) for ev in events)
    non_ascii = sum(len(ev.content.encode()) - len(ev.content) for ev in events)  # extra UTF-8 bytes
    q = lambda p: sizes[min(len(sizes) - 1, int(p * len(sizes)))]  # noqa: E731
    return {
        "line_bytes_mean": round(statistics.fmean(sizes), 1),
        "line_bytes_p10": q(0.10),
        "line_bytes_p50": q(0.50),
        "line_bytes_p90": q(0.90),
        "line_bytes_p99": q(0.99),
        "line_bytes_max": sizes[-1],
        "content_extra_utf8_bytes_share": round(non_ascii / content_bytes, 3) if content_bytes else 0.0,
    }


# --------------------------------------------------------------------------- writers

Writer = Callable[[str], tuple[Callable[[list], None], Callable[[], None]]]
"""Opens a store in a scratch dir; returns (write_all(events), close)."""


def evlog_writer(durability: str) -> Writer:
    def open_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
        log = Log.open(os.path.join(scratch, "log"), writable=True, create=True, durability=durability)  # type: ignore[arg-type]

        def write_all(events: list) -> None:
            append = log.append
            for ev in events:
                append(ev)

        return write_all, log.close

    return open_writer


def raw_jsonl_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
    fd = os.open(os.path.join(scratch, "raw.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write_all(events: list) -> None:
        write, encode = os.write, ENCODER.encode
        for ev in events:
            write(fd, encode(ev) + b"\n")

    return write_all, lambda: os.close(fd)


def sqlite_writer(synchronous: str) -> Writer:
    def open_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
        conn = sqlite3.connect(os.path.join(scratch, "events.db"), isolation_level=None)  # autocommit
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body BLOB NOT NULL)")

        def write_all(events: list) -> None:
            execute, encode = conn.execute, ENCODER.encode
            for seq, ev in enumerate(events, 1):
                execute("INSERT INTO events (seq, body) VALUES (?, ?)", (seq, encode(ev)))

        return write_all, conn.close

    return open_writer


def append_trial(writer: Writer, events: list, *, close_timed: bool) -> Trial:
    """Time ``write_all(events)`` (and ``close()`` when ``close_timed``) on a fresh store."""

    def trial(scratch: str) -> float:
        write_all, close = writer(scratch)

        def run() -> None:
            write_all(events)
            if close_timed:
                close()

        try:
            return timed(run)
        finally:
            if not close_timed:
                close()

    return trial


def compare_appends(ctx: Context, name: str, events: list, *, ours: Writer, baseline: Writer,
                    baseline_name: str, close_timed: bool, target: float | None) -> Result:
    progress(f"{name}: {len(events)} events, best of {ctx.repeats}")
    best = best_of(ctx, {
        "baseline": append_trial(baseline, events, close_timed=close_timed),
        "ours": append_trial(ours, events, close_timed=close_timed),
    })
    details = {**describe_events(events), "close_timed": close_timed}
    return throughput_result(name, len(events), best, baseline_name=baseline_name, target=target, details=details)


# --------------------------------------------------------------------------- append benchmarks


@benchmark("append_nofsync", "Log.append (durability=none), chat-sized events, vs encode + os.write")
def bench_append_nofsync(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_nofsync")).chat(ctx.size(100_000, 20_000))
    return compare_appends(ctx, "append_nofsync", events, ours=evlog_writer("none"), baseline=raw_jsonl_writer,
                           baseline_name="msgspec encode + os.write, O_APPEND", close_timed=False, target=0.6)


@benchmark("append_nofsync_small", "Log.append (durability=none), ~250-byte events, vs encode + os.write")
def bench_append_nofsync_small(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_nofsync_small")).sized(ctx.size(100_000, 20_000), 250)
    return compare_appends(ctx, "append_nofsync_small", events, ours=evlog_writer("none"), baseline=raw_jsonl_writer,
                           baseline_name="msgspec encode + os.write, O_APPEND", close_timed=False, target=None)


@benchmark("append_fsync", "Log.append (durability=fsync) vs SQLite WAL synchronous=FULL, 1 txn/event")
def bench_append_fsync(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_fsync")).chat(ctx.size(5_000, 2_000))
    return compare_appends(ctx, "append_fsync", events, ours=evlog_writer("fsync"), baseline=sqlite_writer("FULL"),
                           baseline_name="SQLite WAL synchronous=FULL, autocommit INSERT", close_timed=True, target=1.0)


@benchmark("append_group", "Log.append (durability=group, 10 ms) vs SQLite WAL synchronous=NORMAL, 1 txn/event")
def bench_append_group(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_group")).chat(ctx.size(20_000, 5_000))
    return compare_appends(ctx, "append_group", events, ours=evlog_writer("group"), baseline=sqlite_writer("NORMAL"),
                           baseline_name="SQLite WAL synchronous=NORMAL, autocommit INSERT", close_timed=True, target=3.0)


# --------------------------------------------------------------------------- replay benchmarks


def build_log(ctx: Context, label: str, n: int, *, batch: int) -> tuple[str, int]:
    """Write ``n`` realistic events (durability=none) to a new log; ``batch`` > 1 uses append_batch.

    Returns the log directory and its size in bytes.
    """
    path = os.path.join(ctx.scratch(label), "log")
    factory = EventFactory(ctx.rng(label))
    t0 = time.perf_counter()
    with Log.open(path, writable=True, create=True, durability="none") as log:
        for events in factory.chunks(n, 1000):
            if batch > 1:
                for i in range(0, len(events), batch):
                    log.append_batch(events[i : i + batch])
            else:
                for ev in events:
                    log.append(ev)
    size = sum(os.path.getsize(os.path.join(path, segment_name(b))) for b in segment_bases(path))
    progress(f"{label}: wrote {n} events, {size / MIB:.0f} MiB in {time.perf_counter() - t0:.1f} s")
    return path, size


def segment_files(log_dir: str) -> list[str]:
    return [os.path.join(log_dir, segment_name(b)) for b in segment_bases(log_dir)]


def read_trial(fn: Callable[[], int], n: int) -> Trial:
    """Time ``fn()``, which must return how many events it read (checked against ``n``)."""

    def trial(_scratch: str) -> float:
        got: list[int] = []
        seconds = timed(lambda: got.append(fn()))
        if got[0] != n:
            raise RuntimeError(f"read {got[0]} events, expected {n}")
        return seconds

    return trial


def evlog_read_all(log_dir: str) -> int:
    count = 0
    for _ev in Log.open(log_dir).read():
        count += 1
    return count


def raw_decode_lines(log_dir: str) -> int:
    count = 0
    decode = DECODER.decode
    for path in segment_files(log_dir):
        with open(path, "rb") as f:
            data = f.read()
        for line in data.splitlines():
            decode(line)
            count += 1
    return count


def raw_decode_chunked(log_dir: str) -> int:
    count = 0
    for path in segment_files(log_dir):
        with open(path, "rb") as f:
            count += len(DECODER.decode_lines(f.read()))
    return count


@benchmark("replay_verify", "Log.open().read() (verifying) vs read segments + DECODER.decode per line")
def bench_replay_verify(ctx: Context) -> Result:
    n = ctx.size(300_000, 100_000)
    log_dir, size = build_log(ctx, "replay_verify", n, batch=1)
    try:
        progress(f"replay_verify: {n} events, best of {ctx.repeats}")
        best = best_of(ctx, {
            "baseline": read_trial(lambda: raw_decode_lines(log_dir), n),
            "ours": read_trial(lambda: evlog_read_all(log_dir), n),
            "strict_baseline_decode_lines": read_trial(lambda: raw_decode_chunked(log_dir), n),
        })
    finally:
        shutil.rmtree(os.path.dirname(log_dir), ignore_errors=True)
    details = {
        "written_with": "append, one event per call",
        "log_mib": round(size / MIB, 1),
        "ratio_vs_strict_baseline": round(best["strict_baseline_decode_lines"] / best["ours"], 4),
    }
    return throughput_result("replay_verify", n, best, baseline_name="read segments, DECODER.decode per line (no checks)",
                             target=0.7, details=details)


_RSS_CHILD = """
import json, resource, sys, time
from eventlog.log import Log
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
count = 0
for _ev in Log.open(sys.argv[1]).read():
    count += 1
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:  # Linux: the address space's own high-water mark, a cross-check of ru_maxrss
    with open("/proc/self/status") as f:
        hwm = int(f.read().split("VmHWM:")[1].split()[0])
except (OSError, IndexError, ValueError):
    hwm = None
print(json.dumps({"base_kib": base, "peak_kib": peak, "vmhwm_kib": hwm, "events": count, "seconds": seconds}))
"""


def clean_rss_argv(argv: list[str]) -> list[str]:
    """Run ``argv`` through ``sh``, which forks for it, so its ru_maxrss starts clean.

    On Linux a process's ``ru_maxrss`` carries over across exec the peak of the address
    space it replaced. Python's subprocess uses vfork, so a child exec'd straight from
    this (large) process would report *our* peak. ``sh -c '"$@"; exit $?'`` has to fork
    a fresh small address space before exec'ing ``argv`` (it is not the last command).
    """
    return ["sh", "-c", '"$@"; exit $?', "sh", *argv]


@benchmark("replay_rss_1m", "peak RSS of a subprocess replaying 1M events with read()")
def bench_replay_rss(ctx: Context) -> Result:
    n = ctx.size(1_000_000, 200_000)
    log_dir, size = build_log(ctx, "replay_rss", n, batch=1000)
    try:
        progress(f"replay_rss_1m: replaying {n} events in a subprocess")
        proc = subprocess.run(clean_rss_argv([sys.executable, "-c", _RSS_CHILD, log_dir]),
                              capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(os.path.dirname(log_dir), ignore_errors=True)
    out = json.loads(proc.stdout)
    if out["events"] != n:
        raise RuntimeError(f"the subprocess read {out['events']} events, expected {n}")
    details = {
        "events_replayed": n,
        "quick_mode_smaller_than_1m": ctx.quick,
        "log_mib": round(size / MIB, 1),
        "reading_added_mib": round((out["peak_kib"] - out["base_kib"]) / 1024, 1),
        "replay_seconds": round(out["seconds"], 2),
        "vmhwm_mib": round(out["vmhwm_kib"] / 1024, 1) if out["vmhwm_kib"] else None,
    }
    return Result("replay_rss_1m", out["peak_kib"] / 1024, out["base_kib"] / 1024, "MiB", n,
                  "same subprocess right after 'import eventlog.log'", target=150, target_of="ours",
                  target_op="<=", details=details)


# --------------------------------------------------------------------------- start-up


def command_trial(argv: list[str]) -> Trial:
    def trial(_scratch: str) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t0

    return trial


@benchmark("help_time", "wall time of 'evlog --help' vs 'python -c pass'")
def bench_help_time(ctx: Context) -> Result:
    evlog = os.path.join(os.path.dirname(sys.executable), "evlog")
    if not os.access(evlog, os.X_OK):
        raise RuntimeError(f"no evlog console script at {evlog}; install the package into this interpreter's venv")
    progress("help_time: best of 5")
    best = best_of(ctx, {"baseline": command_trial([sys.executable, "-c", "pass"]),
                         "ours": command_trial([evlog, "--help"])}, rounds=5)
    return Result("help_time", best["ours"] * 1000, best["baseline"] * 1000, "ms", 5,
                  f"{os.path.basename(sys.executable)} -c pass", target=150, target_of="ours", target_op="<=",
                  details={"command": f"{evlog} --help"})


# --------------------------------------------------------------------------- output


def human(value: float, units: str) -> str:
    if units == "events/s":
        return f"{value / 1000:,.1f}k ev/s"
    return f"{value:,.1f} {units}"


def render_table(results: list[Result]) -> str:
    rows = [("benchmark", "ours", "baseline", "ratio", "target", "pass", "n")]
    for r in results:
        verdict = {True: "PASS", False: "MISS", None: "info"}[r.passed]
        rows.append((r.name, human(r.ours, r.units), human(r.baseline, r.units), f"{r.ratio:.2f}x",
                     r.target_text, verdict, f"{r.n:,}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append("")
    for r in results:
        lines.append(f"{r.name}: baseline = {r.baseline_name}")
        lines.append("    " + ", ".join(f"{k}={v}" for k, v in r.details.items()))
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="one JSON object per benchmark and line")
    p.add_argument("--only", action="append", metavar="NAME", choices=list(BENCHMARKS),
                   help="run only this benchmark (repeatable): " + ", ".join(BENCHMARKS))
    p.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run (< 60 s)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="interleaved rounds per benchmark, best kept (3)")
    p.add_argument("--tmpdir", metavar="DIR", help="where the scratch directory goes (default: the system temp dir)")
    p.add_argument("--check", action="store_true", help="exit 1 when any target is missed")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for b in BENCHMARKS.values():
            print(f"{b.name:22} {b.description}")
        return 0
    selected = [BENCHMARKS[name] for name in BENCHMARKS if not args.only or name in args.only]
    results: list[Result] = []
    t0 = time.perf_counter()
    progress(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, python {sys.version.split()[0]}, "
             f"sqlite {sqlite3.sqlite_version}")
    with tempfile.TemporaryDirectory(prefix="evlog-bench-", dir=args.tmpdir) as root:
        ctx = Context(root, quick=args.quick, repeats=args.repeat)
        for b in selected:
            started, load = time.perf_counter(), os.getloadavg()[0]
            result = b.run(ctx)
            result.details["loadavg_1m_at_start"] = round(load, 2)  # a busy machine skews figures
            progress(f"{b.name}: done in {time.perf_counter() - started:.1f} s")
            results.append(result)
            if args.json:
                print(json.dumps(result.to_json()), flush=True)
    progress(f"all done in {time.perf_counter() - t0:.1f} s" + (" (--quick)" if args.quick else ""))
    if not args.json:
        print(render_table(results))
    return 1 if args.check and any(r.passed is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
