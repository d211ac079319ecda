#!/usr/bin/env python3
"""Sync by events through the gateway: push and pull figures on one node, and a Galera chaos run.

Run from the repository root (the gateway processes are ``evlog web --gateway`` of this tree)::

    .venv/bin/python tools/bench_sync_events.py --dsn mysql://root@127.0.0.1:3306/evlog_bench --json
    .venv/bin/python tools/bench_sync_events.py --galera /tmp/galera --json    # cluster from tools/galera.sh

**single** (``--dsn``; one gateway process in front of one database):

push_events_per_s
    One device pushes ``--n`` envelopes (chat-like bodies, ~300 bytes) in batches of
    ``--batch`` over HTTP (``HttpEventStore``), wall time. Compared, in the same run, with
    today's row sync (``tools/bench_mysql.time_push``: ``evlog sync push`` of a workspace of
    ``--row-n`` messages, direct to the database).
pull_p95_ms
    Latency of a device's pull of what another device just pushed (100 envelopes at a time),
    p50/p95 over 100 such pulls.
catch_up_events_per_s
    A device offline while ``--n`` envelopes were pushed pulls them all (pages of 5,000), the
    envelopes only (``HttpEventStore.pull``).
device_catch_up_events_per_s
    The same, into a new device's log (``sync.pull``: decode, the writer's door, the atomic
    append), wall time; with the CPU seconds of the device (this process) and of the gateway.
empty_pull_round_trips
    HTTP requests of a pull that brings nothing (target: 1), and its latency.

**galera** (``--galera DIR``; the cluster is started with ``tools/galera.sh start DIR`` if it is
not running): three gateway processes, one per node; ``--accounts`` x ``--devices`` simulated
devices (threads), each pushing ``--events`` envelopes of its own origin and pulling between
pushes, going to the next gateway when one fails. When a third of the envelopes are stored, node 2
is killed (``kill -9``) together with gateway 3, and node 2 restarts at two thirds. At the end
every device pulls until it holds its account's whole set. Reported: envelopes lost (pushed, not
in the database), duplicated (rows or deliveries twice), devices converged, the row counts of the
three nodes, failovers.

``--json`` prints one JSON object on stdout; progress goes to stderr. The machine these figures
come from may be shared: see ``loadavg_1m``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from eventlog.app.gateway import auth  # noqa: E402
from eventlog.app.gateway.connection import DSN, Connection  # noqa: E402
from eventlog.app.gateway.http_client import Client  # noqa: E402
from eventlog.app.gateway.http_events import HttpEventStore  # noqa: E402
from eventlog.app.gateway.pool import Pool  # noqa: E402
from eventlog.errors import BackendError, EvlogError  # noqa: E402
from eventlog.events import ReplicationPulled  # noqa: E402
from eventlog.log import Log  # noqa: E402
from eventlog.replication import sync  # noqa: E402
from eventlog.replication.envelope import Replicated  # noqa: E402

PASSWORD = "bench sync events 42"
GALERA = REPO / "tools" / "galera.sh"
PULL_BATCH = 100  # envelopes another device pushed before each timed pull
WORDS = ("the", "gateway", "event", "log", "device", "sync", "fact", "memory", "agent", "cluster", "node", "pull",
         "push", "cursor", "position", "origin", "clock", "project", "share", "note", "café", "日本語", "🙂")


def say(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def body(rng: random.Random, origin: str, seq: int) -> bytes:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_780_000_000 + seq)) + ".000Z"
    return msgspec.json.encode({"type": "message.appended", "seq": seq, "ts": ts,
                                "session_key": f"{origin}-s{seq // 100}", "message_id": f"m{seq}", "role": "user",
                                "content": text})


def envelopes(rng: random.Random, origin: str, first: int, n: int) -> list[Replicated]:
    return [Replicated(origin=origin, origin_seq=s, hlc=((1_780_000_000_000 + s) << 16), type="message.appended",
                       body=msgspec.Raw(body(rng, origin, s))) for s in range(first, first + n)]


def token_for(dsn: str, email: str, *, new: bool = True) -> str:
    """A sync token for user ``email`` (a new user unless ``new`` is false)."""
    conn = Connection(DSN.parse(dsn))
    try:
        if new:
            auth.add_user(conn, email, PASSWORD)
        return auth.login(conn, email, PASSWORD, kind="sync",
                          policy=auth.LoginPolicy(per_email=10_000, per_client=1_000_000))[1]
    finally:
        conn.close()


RUN = os.urandom(4).hex()  # this run's device names end with it: a device belongs to the first account that pushed it


def fresh(label: str) -> str:
    return f"bench-{label}-{os.urandom(5).hex()}@example.test"


class Gateway:
    """One ``evlog web --gateway DSN`` process of this tree on a loopback port."""

    def __init__(self, dsn: str, pool_size: int = 8) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "EVLOG_HOME": tempfile.mkdtemp(prefix="evlog-bench-gw-")}
        self.proc = subprocess.Popen([sys.executable, "-c", "from eventlog.cli import main; main()", "web", "--gateway", dsn, "--port", "0",
                                      "--pool-size", str(pool_size), "--json"], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise BackendError(f"the gateway process for {DSN.parse(dsn).target} did not start")
        self.url = json.loads(line)["url"].rstrip("/")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self._close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()

    def _close(self) -> None:
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class CountingClient(Client):
    """An HTTP client that counts its requests."""

    requests = 0

    def request(self, *a: Any, **kw: Any) -> Any:
        self.requests += 1
        return super().request(*a, **kw)


class CountingStore(HttpEventStore):
    """An ``HttpEventStore`` whose HTTP requests are counted (``requests``)."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(url, token)
        self.client.close()
        self.counter = CountingClient(url, token=token)
        self.client = self.counter

    @property
    def requests(self) -> int:
        return self.counter.requests


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# --------------------------------------------------------------------------- one node


def drain(store: HttpEventStore, account: str, after: int, limit: int) -> tuple[int, int]:
    n = 0
    while True:
        page = store.pull(account, after, limit)
        n, after = n + len(page.events), page.cursor
        if not page.more:
            return n, after


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def device_catch_up(store: HttpEventStore, account: str, after: int, gateway_pid: int) -> dict[str, Any]:
    """``sync.pull`` of what the account holds above ``after`` into a new device's log (pages of 5,000):
    wall seconds, this process's CPU seconds (the device) and the gateway process's."""
    with tempfile.TemporaryDirectory(prefix="evlog-bench-device-") as root:
        log = Log.open(os.path.join(root, "log"), writable=True, create=True, durability="group")
        try:
            sync.ensure_device(log)
            log.append(ReplicationPulled(store="bench", account=account, cursor=after))  # offline since ``after``
            gw0, cpu0, t0 = cpu_seconds(gateway_pid), time.process_time(), time.perf_counter()
            report = sync.pull(log, store, account, store_name="bench", limit=5000)
            secs = time.perf_counter() - t0
            return {"events": report.received, "seconds": secs, "device_cpu_s": round(time.process_time() - cpu0, 2),
                    "gateway_cpu_s": round(cpu_seconds(gateway_pid) - gw0, 2)}
        finally:
            log.close()


def row_sync_rate(dsn: str, n: int) -> float:
    """Messages/s of today's row sync (``tools/bench_mysql``: ``evlog sync push`` of ``n`` messages)."""
    spec = importlib.util.spec_from_file_location("bench_mysql", REPO / "tools" / "bench_mysql.py")
    assert spec is not None and spec.loader is not None
    bm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bm)
    with tempfile.TemporaryDirectory(prefix="evlog-bench-rows-") as root:
        home = os.path.join(root, "ws")
        bm.build_workspace(home, n)
        secs, _ = bm.time_push(home, dsn)
    return n / secs


def single_node(dsn: str, *, n: int, batch: int, row_n: int) -> dict[str, Any]:
    rng = random.Random(22)
    gw = Gateway(dsn)
    try:
        a = fresh("a")
        writer, reader = CountingStore(gw.url, token_for(dsn, a)), CountingStore(gw.url, token_for(dsn, a, new=False))
        _, offline_cursor = drain(reader, a, 0, 5000)
        say(f"single: pushing {n} envelopes in batches of {batch}")
        sent = [envelopes(rng, f"dev1-{RUN}", i, min(batch, n - i + 1)) for i in range(1, n + 1, batch)]
        t0 = time.perf_counter()
        for chunk in sent:
            writer.push(a, chunk)
        push_s = time.perf_counter() - t0
        say(f"single: catching up {n} envelopes")
        t0 = time.perf_counter()
        got, cursor = drain(reader, a, offline_cursor, 5000)
        catch_s = time.perf_counter() - t0
        assert got == n, f"caught up {got} of {n}"
        say(f"single: a device catching up {n} events into its log")
        device = device_catch_up(reader, a, offline_cursor, gw.proc.pid)
        assert device["events"] == n, f"the device appended {device['events']} of {n}"
        lat: list[float] = []
        for i in range(1, 101):
            writer.push(a, envelopes(rng, f"dev2-{RUN}", (i - 1) * PULL_BATCH + 1, PULL_BATCH))
            t0 = time.perf_counter()
            page = reader.pull(a, cursor, 5000)
            lat.append((time.perf_counter() - t0) * 1000)
            cursor = page.cursor
            assert len(page.events) == PULL_BATCH
        before = reader.requests
        t0 = time.perf_counter()
        empty = reader.pull(a, cursor)
        empty_ms = (time.perf_counter() - t0) * 1000
        assert empty.events == [] and not empty.more
        empty_trips = reader.requests - before
        writer.close()
        reader.close()
    finally:
        gw.stop()
    say(f"single: row sync of {row_n} messages, same run")
    rows = row_sync_rate(dsn, row_n)
    return {"push_events_per_s": round(n / push_s), "row_sync_msgs_per_s": round(rows),
            "push_vs_row_sync": round(n / push_s / rows, 2), "catch_up_events_per_s": round(n / catch_s),
            "catch_up_target_met": n / catch_s >= 20_000,
            "device_catch_up_events_per_s": round(n / device["seconds"]),
            "device_catch_up_cpu_s": device["device_cpu_s"], "device_catch_up_gateway_cpu_s": device["gateway_cpu_s"],
            "device_catch_up_events_per_device_cpu_s": round(n / device["device_cpu_s"]),
            "device_catch_up_target_met": n / device["seconds"] >= 20_000, "pull_p50_ms": round(statistics.median(lat), 1),
            "pull_p95_ms": round(pct(lat, 0.95), 1), "pull_p95_target_met": pct(lat, 0.95) <= 100,
            "empty_pull_round_trips": empty_trips, "empty_pull_ms": round(empty_ms, 1), "n": n, "batch": batch,
            "row_n": row_n}


# --------------------------------------------------------------------------- the Galera chaos run


class Device(threading.Thread):
    """A simulated device: pushes its own envelopes, pulls its account's, fails over between gateways."""

    def __init__(self, name: str, account: str, token: str, urls: list[str], total: int, batch: int,
                 on_push: Callable[[int], None], all_pushed: threading.Event, expected: set[tuple[str, int]],
                 deadline: float) -> None:
        super().__init__(name=name, daemon=True)
        self.account, self.token, self.urls, self.total, self.batch = account, token, urls, total, batch
        self.on_push, self.all_pushed, self.expected, self.deadline = on_push, all_pushed, expected, deadline
        self.g = hash(name) % len(urls)
        self.stores: dict[int, HttpEventStore] = {}
        self.received: dict[tuple[str, int], int] = {}
        self.cursor = 0
        self.failovers = 0
        self.pushed_done = threading.Event()
        self.error: str | None = None
        self.rng = random.Random(name)

    def call(self, fn: Callable[[HttpEventStore], Any]) -> Any:
        while time.monotonic() < self.deadline:
            try:
                if self.g not in self.stores:
                    self.stores[self.g] = HttpEventStore(self.urls[self.g], self.token)
                return fn(self.stores[self.g])
            except (EvlogError, OSError):
                dead = self.stores.pop(self.g, None)
                if dead is not None:
                    dead.close()
                self.failovers += 1
                self.g = (self.g + 1) % len(self.urls)
                time.sleep(0.05)
        raise TimeoutError(f"{self.name}: no gateway answered before the deadline")

    def pull(self) -> bool:
        page = self.call(lambda s: s.pull(self.account, self.cursor, 2000))
        for ev in page.events:
            self.received[ev.key] = self.received.get(ev.key, 0) + 1
        self.cursor = page.cursor
        return bool(page.more)

    def run(self) -> None:
        try:
            seq = 1
            while seq <= self.total:
                chunk = envelopes(self.rng, self.name, seq, min(self.batch, self.total - seq + 1))
                self.call(lambda s, c=chunk: s.push(self.account, c))
                seq += len(chunk)
                self.on_push(len(chunk))
                while self.pull():
                    pass
            self.pushed_done.set()
            self.all_pushed.wait(max(0.0, self.deadline - time.monotonic()))
            while set(self.received) != self.expected and time.monotonic() < self.deadline:
                if not self.pull():
                    time.sleep(0.2)
        except BaseException as e:  # noqa: BLE001 - reported in the result
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.pushed_done.set()
            for s in self.stores.values():
                s.close()


def ensure_cluster(directory: str) -> list[str]:
    status = subprocess.run([str(GALERA), "status", directory], capture_output=True, text=True).stdout
    if status.count("Synced") < 3:
        say(f"galera: starting the cluster in {directory}")
        subprocess.run([str(GALERA), "start", directory], check=True, stdout=subprocess.DEVNULL)
    return [subprocess.run([str(GALERA), "dsn", directory, str(i)], capture_output=True, text=True,
                           check=True).stdout.strip() for i in (1, 2, 3)]


def node_counts(dsns: list[str], emails: list[str]) -> list[Any]:
    """Per node: (rows, distinct (user, origin, seq)) of the run's accounts, or None if down."""
    import pymysql

    out: list[Any] = []
    marks = ", ".join(["%s"] * len(emails))
    for dsn in dsns:
        d = DSN.parse(dsn)
        try:
            conn = pymysql.connect(host=d.host, port=d.port, user=d.user, database=d.database, connect_timeout=5)
        except pymysql.MySQLError:
            out.append(None)
            continue
        with contextlib.closing(conn), conn.cursor() as cur:
            cur.execute("SET SESSION wsrep_sync_wait = 1")
            cur.execute("SELECT COUNT(*), COUNT(DISTINCT e.user_id, e.origin, e.origin_seq), COUNT(DISTINCT position) "
                        f"FROM gateway_events e JOIN gateway_users u ON u.id = e.user_id WHERE u.email IN ({marks})",
                        emails)
            out.append(list(cur.fetchone()))
    return out


@contextlib.contextmanager
def gateways(dsns: list[str]) -> Iterator[list[Gateway]]:
    gws: list[Gateway] = []
    try:
        for dsn in dsns:
            gws.append(Gateway(dsn))
        yield gws
    finally:
        for gw in gws:
            gw.stop()


def chaos(directory: str, gws: list[Gateway], total: int, stored: Callable[[], int], deadline: float) -> list[str]:
    """Kill node 2 and gateway 3 at a third of the envelopes, restart node 2 at two thirds; what was done."""
    done: list[str] = []
    while stored() < total // 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    subprocess.run([str(GALERA), "kill", directory, "2"], check=True, stdout=subprocess.DEVNULL)
    gws[2].kill()
    done.append(f"kill -9 node 2 and gateway 3 at {stored()} of {total}")
    say(f"galera: {done[-1]}")
    while stored() < 2 * total // 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    subprocess.run([str(GALERA), "start-node", directory, "2"], check=True, stdout=subprocess.DEVNULL)
    done.append(f"node 2 back at {stored()} of {total}")
    say(f"galera: {done[-1]}")
    return done


def galera_run(directory: str, *, accounts: int, devices: int, events: int, batch: int,
               timeout: float = 900.0) -> dict[str, Any]:
    dsns = ensure_cluster(directory)
    pool = Pool(dsns[0])
    try:
        pool.migrate()
    finally:
        pool.close()
    emails = [fresh(f"g{i}") for i in range(accounts)]
    tokens = [token_for(dsns[0], e) for e in emails]
    total = accounts * devices * events
    count, lock = [0], threading.Lock()

    def on_push(k: int) -> None:
        with lock:
            count[0] += k

    deadline = time.monotonic() + timeout
    all_pushed = threading.Event()
    with gateways(dsns) as gws:
        urls = [gw.url for gw in gws]
        devs = []
        for a, (email, token) in enumerate(zip(emails, tokens, strict=True)):
            names = [f"a{a}d{d}-{RUN}" for d in range(devices)]
            expected = {(n, s) for n in names for s in range(1, events + 1)}
            devs += [Device(n, email, token, urls, events, batch, on_push, all_pushed, expected, deadline) for n in names]
        say(f"galera: {len(devs)} devices x {events} envelopes through 3 gateways")
        t0 = time.perf_counter()
        for d in devs:
            d.start()
        actions = chaos(directory, gws, total, lambda: count[0], deadline)
        for d in devs:
            d.pushed_done.wait(max(0.0, deadline - time.monotonic()))
        all_pushed.set()
        for d in devs:
            d.join(max(0.0, deadline - time.monotonic()))
        secs = time.perf_counter() - t0
    counts = node_counts(dsns, emails)
    live = [c for c in counts if c is not None]
    return {"devices": len(devs), "events_per_device": events, "envelopes": total, "seconds": round(secs, 1),
            "envelopes_per_s": round(total / secs), "actions": actions,
            "lost": total - (live[0][1] if live else 0), "duplicated_rows": (live[0][0] - live[0][1]) if live else None,
            "duplicated_deliveries": sum(n - 1 for d in devs for n in d.received.values() if n > 1),
            "converged": sum(set(d.received) == d.expected for d in devs), "node_counts": counts,
            "nodes_agree": len({tuple(c) for c in live}) == 1 and len(live) == 3,
            "failovers": sum(d.failovers for d in devs), "errors": [d.error for d in devs if d.error]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dsn", default=os.environ.get("EVLOG_BENCH_MYSQL_URL") or os.environ.get("EVLOG_TEST_MYSQL_URL"),
                   help="the database of the one-node figures")
    p.add_argument("--n", type=int, default=100_000, help="envelopes pushed and caught up (default 100000)")
    p.add_argument("--batch", type=int, default=2000, help="envelopes per push request (default 2000)")
    p.add_argument("--row-n", type=int, default=20_000, help="messages of the row sync comparison (default 20000)")
    p.add_argument("--galera", metavar="DIR", help="run the chaos run on the tools/galera.sh cluster in DIR")
    p.add_argument("--accounts", type=int, default=4)
    p.add_argument("--devices", type=int, default=3, help="devices per account")
    p.add_argument("--events", type=int, default=2000, help="envelopes each device pushes")
    p.add_argument("--device-batch", type=int, default=100)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds the chaos run may take (default 900)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    out: dict[str, Any] = {"name": "sync_events"}
    if args.galera:
        out["galera"] = galera_run(args.galera, accounts=args.accounts, devices=args.devices, events=args.events,
                                   batch=args.device_batch, timeout=args.timeout)
    elif args.dsn:
        out["single"] = single_node(args.dsn, n=args.n, batch=args.batch, row_n=args.row_n)
    else:
        p.error("give --dsn (or $EVLOG_TEST_MYSQL_URL) or --galera DIR")
    out["loadavg_1m"] = os.getloadavg()[0]
    print(json.dumps(out) if args.json else json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
