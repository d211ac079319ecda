#!/usr/bin/env python3
"""Benchmarks of the web end (issue 12): page server time, gateway throughput, push through the HTTP API.

Run from the repository root::

    .venv/bin/python tools/bench_web.py                      # a table
    .venv/bin/python tools/bench_web.py --json               # one JSON object per line (tools/bench.py reads it)
    .venv/bin/python tools/bench_web.py --quick              # smaller, for a smoke run
    EVLOG_BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/evlog_bench .venv/bin/python tools/bench_web.py

The gateway figures need a MariaDB/MySQL database you may write to (``--dsn``, else
``$EVLOG_BENCH_MYSQL_URL``, else ``$EVLOG_TEST_MYSQL_URL``); without one they are reported
as not measured. Benchmarks:

web_sessions_page_5k (target: p50 <= 50 ms)
    Server time of ``GET /sessions`` in local mode over a workspace of 5,000 sessions: the
    request through the real ASGI app in-process (routing, access token check, the
    session list, Jinja rendering of the first page of 50, security headers), no network.
    p50 of ``--requests`` requests after warm-up; baseline: ``GET /healthz`` through the
    same app (the fixed cost of a request).
web_transcript_2k (target: p50 <= 100 ms)
    Server time of ``GET /s/<key>?per=2000``: one page holding all 2,000 messages of a
    session (chat-like text, a tenth with tool calls, folded), read from the session file
    and rendered. ``details`` also gives the default page (the newest 100).
gateway_page_loads_50 (target: >= 200 page loads/s)
    50 concurrent clients (keep-alive HTTP/1.1, each signed in as its own user with 200
    sessions) loading the sessions page and a 100-message transcript page in turn against
    ``evlog web --gateway`` processes (``--processes``, default 2: the server is stateless
    and this machine has 2 cores) on one database, for ``--seconds``. Baseline: the same
    clients loading ``/healthz`` (the HTTP stack alone). The clients are one asyncio process
    speaking raw HTTP, so most of the CPU goes to the servers.
http_push_100k (target: >= 5,000 messages/s)
    ``evlog sync push --gateway`` of a workspace of 100k messages (log-normal lengths, median
    ~300 characters) through the HTTP sync API to a fresh user; baseline: direct ``--dsn``
    push of the same workspace (``tools/bench_mysql.py``'s measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from eventlog.app.workspace import Workspace, init_workspace  # noqa: E402
from eventlog.events import MessageAppended, SessionCreated  # noqa: E402

SEED = 20261130
PROJECTS = [f"/home/dev/project-{i:02d}" for i in range(12)]


def progress(msg: str) -> None:
    print(f"[bench-web] {msg}", file=sys.stderr, flush=True)


def text(rng: random.Random, n: int) -> str:
    words = "the a to of and in is it that for you this with on be function return error file test value".split()
    out = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


# --------------------------------------------------------------------------- workspaces


def sessions_workspace(home: str, n: int) -> None:
    """``n`` sessions over a year, 3 messages each, in 12 projects."""
    init_workspace(home, durability="none")
    rng = random.Random(f"{SEED}:sessions")
    with Workspace.open(home, writable=True) as ws:
        batch: list[Any] = []
        for i in range(n):
            key = f"cli:session-{i:05d}"
            day = 1 + i * 364 // n
            ts = f"2026-{1 + (day // 31) % 12:02d}-{1 + day % 28:02d}T{10 + i % 10:02d}:00:00Z"
            batch.append(SessionCreated(session_key=key, title=f"Session {i}: {text(rng, 40)}",
                                        project=PROJECTS[i % len(PROJECTS)], created_at=ts))
            for j in range(3):
                batch.append(MessageAppended(session_key=key, message_id=f"{i}-{j}", role=("user", "assistant")[j % 2],
                                             content=text(rng, rng.randint(20, 400)), timestamp=ts))
            if len(batch) >= 4000:
                ws.append(batch)
                batch = []
        if batch:
            ws.append(batch)


def transcript_workspace(home: str, n: int) -> str:
    """One session of ``n`` messages (a tenth assistant tool calls, their tool results long)."""
    init_workspace(home, durability="none")
    rng = random.Random(f"{SEED}:transcript")
    key = "cli:long"
    with Workspace.open(home, writable=True) as ws:
        events: list[Any] = [SessionCreated(session_key=key, title="A long session", project=PROJECTS[0])]
        for j in range(n):
            ts = f"2026-11-20T{9 + j // 3600 % 12:02d}:{j // 60 % 60:02d}:{j % 60:02d}Z"
            if j % 10 == 3:
                events.append(MessageAppended(session_key=key, message_id=f"m{j}", role="assistant",
                                              content=text(rng, 80), timestamp=ts,
                                              tool_calls=[{"id": f"c{j}", "type": "function", "function": {
                                                  "name": "exec", "arguments": json.dumps({"cmd": text(rng, 60)})}}]))
            elif j % 10 == 4:
                events.append(MessageAppended(session_key=key, message_id=f"m{j}", role="tool",
                                              content=text(rng, 2000), timestamp=ts))
            else:
                n_chars = min(8000, max(10, int(rng.lognormvariate(5.7, 1.0))))
                events.append(MessageAppended(session_key=key, message_id=f"m{j}", role=("user", "assistant")[j % 2],
                                              content=text(rng, n_chars), timestamp=ts))
        ws.append(events)
    return key


# --------------------------------------------------------------------------- in-process requests


async def _call(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, int]:
    raw_path, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": raw_path, "raw_path": raw_path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765)}
    status = 0
    size = 0

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            size += len(message.get("body", b""))

    await app(scope, receive, send)
    return status, size


def server_times(app: Any, path: str, token: str, n: int, warmup: int = 5) -> tuple[list[float], int]:
    """Seconds each of ``n`` sequential requests took through the ASGI app (after warm-up), and the body size."""
    from eventlog.app.web.security import LOCAL_COOKIE

    headers = [(b"host", b"127.0.0.1:8765"), (b"cookie", f"{LOCAL_COOKIE}={token}".encode())]

    async def run() -> tuple[list[float], int]:
        times = []
        size = 0
        for i in range(warmup + n):
            t0 = time.perf_counter()
            status, size = await _call(app, path, headers)
            dt = time.perf_counter() - t0
            if status != 200:
                raise RuntimeError(f"{path}: HTTP {status}")
            if i >= warmup:
                times.append(dt)
        return times, size

    return asyncio.run(run())


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def bench_sessions_page(scratch: str, *, sessions: int, requests: int) -> dict:
    from eventlog.app.web.app import local_app

    home = os.path.join(scratch, "sessions")
    progress(f"web_sessions_page: building {sessions} sessions")
    sessions_workspace(home, sessions)
    token = "bench-token"
    app = local_app(home, 8765, token=token)
    try:
        times, size = server_times(app, "/sessions", token, requests)
        base, _ = server_times(app, "/healthz", token, requests)
        filtered, _ = server_times(app, "/sessions?project=" + PROJECTS[3].replace("/", "%2F"), token, requests // 2)
        searched, _ = server_times(app, "/sessions?q=function", token, requests // 2)
    finally:
        app.state.web.source.close()
    p50 = statistics.median(times) * 1000
    return {"name": "web_sessions_page_5k", "ours": round(p50, 2), "baseline": round(statistics.median(base) * 1000, 3),
            "units": "ms p50", "n": sessions, "baseline_name": "GET /healthz through the same app", "target": 50.0,
            "target_of": "ours", "target_op": "<=",
            "details": {"p90_ms": round(pct(times, 0.9) * 1000, 2), "requests": requests, "page_bytes": size,
                        "project_filter_p50_ms": round(statistics.median(filtered) * 1000, 2),
                        "search_p50_ms": round(statistics.median(searched) * 1000, 2)}}


def bench_transcript(scratch: str, *, messages: int, requests: int) -> dict:
    from eventlog.app.web.app import key_token, local_app

    home = os.path.join(scratch, "transcript")
    progress(f"web_transcript: building a {messages}-message session")
    key = transcript_workspace(home, messages)
    token = "bench-token"
    app = local_app(home, 8765, token=token)
    try:
        whole, size = server_times(app, f"/s/{key_token(key)}?per=2000", token, requests)
        page, page_size = server_times(app, f"/s/{key_token(key)}", token, requests)
        base, _ = server_times(app, "/healthz", token, requests)
    finally:
        app.state.web.source.close()
    p50 = statistics.median(whole) * 1000
    return {"name": "web_transcript_2k", "ours": round(p50, 2), "baseline": round(statistics.median(base) * 1000, 3),
            "units": "ms p50", "n": messages, "baseline_name": "GET /healthz through the same app", "target": 100.0,
            "target_of": "ours", "target_op": "<=",
            "details": {"p90_ms": round(pct(whole, 0.9) * 1000, 2), "page_bytes": size,
                        "default_page_100_p50_ms": round(statistics.median(page) * 1000, 2),
                        "default_page_bytes": page_size, "requests": requests}}


# --------------------------------------------------------------------------- the gateway under load


def _dsn(arg: str | None) -> str:
    return arg or os.environ.get("EVLOG_BENCH_MYSQL_URL") or os.environ.get("EVLOG_TEST_MYSQL_URL") or ""


def _spawn_gateways(dsn: str, n: int, home: str) -> list[tuple[subprocess.Popen, str]]:
    evlog = os.path.join(os.path.dirname(sys.executable), "evlog")
    out = []
    for _ in range(n):
        proc = subprocess.Popen([evlog, "--home", home, "web", "--gateway", "--port", "0", "--json",
                                 "--pool-size", "16"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "EVLOG_MYSQL_DSN": dsn})
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("a gateway process did not start: " + proc.communicate()[1])
        out.append((proc, json.loads(line)["url"]))
    return out


def _stop(procs: list[tuple[subprocess.Popen, str]]) -> None:
    for p, _ in procs:
        p.terminate()
        p.communicate(timeout=20)


async def _client(host: str, port: int, paths: list[str], cookie: str, stop_at: float, counts: list[int],
                  latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    i = 0
    try:
        while time.perf_counter() < stop_at:
            path = paths[i % len(paths)]
            i += 1
            req = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\n"
                   "Connection: keep-alive\r\n\r\n").encode()
            t0 = time.perf_counter()
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            m = re.search(rb"(?i)content-length: *(\d+)", head)
            if m is None:
                raise RuntimeError("no content-length")
            await reader.readexactly(int(m.group(1)))
            if status != 200:
                raise RuntimeError(f"{path}: HTTP {status}")
            latencies.append(time.perf_counter() - t0)
            counts[0] += 1
    finally:
        writer.close()


def _load(urls: list[str], clients: list[tuple[str, list[str]]], seconds: float) -> tuple[float, list[float]]:
    counts = [0]
    latencies: list[float] = []

    async def run() -> None:
        stop_at = time.perf_counter() + seconds
        tasks = []
        for i, (cookie, paths) in enumerate(clients):
            u = urls[i % len(urls)].rstrip("/").split("//", 1)[1]
            host, port = u.rsplit(":", 1)
            tasks.append(_client(host, int(port), paths, cookie, stop_at, counts, latencies))
        await asyncio.gather(*tasks)

    t0 = time.perf_counter()
    asyncio.run(run())
    return counts[0] / (time.perf_counter() - t0), latencies


def bench_gateway_load(scratch: str, dsn: str, *, clients: int, seconds: float, processes: int) -> dict:
    from eventlog.app.gateway import (
        auth,
        web_events,  # the web view reads the events (read_model), so they are seeded
    )
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.web.app import key_token
    from eventlog.app.web.security import SESSION_COOKIE
    from eventlog.events import MessageAppended, SessionCreated

    progress(f"gateway_page_loads: {clients} users with 200 sessions each")
    rng = random.Random(f"{SEED}:gateway")
    run_id = uuid.uuid4().hex[:8]
    emails = [f"bench-web-{run_id}-{i}@example.test" for i in range(clients)]
    conn = Connection(DSN.parse(dsn))
    procs: list[tuple[subprocess.Popen, str]] = []
    try:
        from eventlog.app.gateway.schema import migrate

        migrate(conn)
        cookies = []
        for email in emails:
            auth.add_user(conn, email, "bench password")
            user = auth.login(conn, email, "bench password", kind="sync")[0]
            long = [(SessionCreated(session_key="cli:long", title="A long session", project=PROJECTS[0]), PROJECTS[0]),
                    *[(MessageAppended(session_key="cli:long", role=("user", "assistant")[j % 2], content=text(rng, 200),
                                       message_id=f"m{j}"), PROJECTS[0]) for j in range(100)],
                    *[(SessionCreated(session_key=f"cli:s{s}", title=f"Session {s}",
                                      project=PROJECTS[s % len(PROJECTS)]), PROJECTS[s % len(PROJECTS)])
                      for s in range(199)]]
            conn.transaction(lambda cur, u=user, evs=long: web_events.append(cur, u, evs), doing="seeding events")
            _, token = auth.login(conn, email, "bench password", kind="web", ttl=3600)
            cookies.append(f"{SESSION_COOKIE}={token}")
        procs = _spawn_gateways(dsn, processes, scratch)
        urls = [u for _, u in procs]
        pages = ["/sessions", f"/s/{key_token('cli:long')}"]
        progress(f"gateway_page_loads: {clients} clients for {seconds:g} s against {processes} process(es)")
        _load(urls, [(c, pages) for c in cookies], 2.0)  # warm-up
        rate, lat = _load(urls, [(c, pages) for c in cookies], seconds)
        base, _ = _load(urls, [(c, ["/healthz"]) for c in cookies], min(seconds, 5.0))
    finally:
        if procs:
            _stop(procs)
        for email in emails:
            conn.transaction(lambda cur, e=email: cur.execute("DELETE FROM gateway_users WHERE email = %s", (e,)))
        conn.close()
    return {"name": "gateway_page_loads_50", "ours": round(rate, 1), "baseline": round(base, 1),
            "units": "page loads/s", "n": clients, "baseline_name": "GET /healthz by the same clients",
            "target": 200.0, "target_of": "ours", "target_op": ">=",
            "details": {"processes": processes, "seconds": seconds, "p50_ms": round(statistics.median(lat) * 1000, 1),
                        "p90_ms": round(pct(lat, 0.9) * 1000, 1), "pages": pages}}


def bench_http_push(scratch: str, dsn: str, *, messages: int) -> dict:
    from tools_bench_mysql import build_workspace, drop_user  # type: ignore[import-not-found]

    from eventlog.app.gateway import auth, sync
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.http_client import HttpRemote, login

    home = os.path.join(scratch, "push")
    progress(f"http_push: building {messages} messages")
    content = build_workspace(home, messages)
    email_http, email_direct = f"bench-http-{uuid.uuid4().hex[:8]}@example.test", \
        f"bench-direct-{uuid.uuid4().hex[:8]}@example.test"
    conn = Connection(DSN.parse(dsn))
    procs: list[tuple[subprocess.Popen, str]] = []
    try:
        auth.add_user(conn, email_http, "bench password")
        procs = _spawn_gateways(dsn, 1, scratch)
        url = procs[0][1]
        login(home, url, email_http, "bench password")
        with Workspace.open(home, writable=True) as ws:
            ws.projections  # noqa: B018 - loaded outside the timed region, as tools/bench_mysql.py does
            remote = HttpRemote.open(home, url)
            try:
                t0 = time.perf_counter()
                report = sync.push(ws, remote=remote)
                http_s = time.perf_counter() - t0
            finally:
                remote.close()
        shutil.copytree(home, home + "-direct")
        with Workspace.open(home + "-direct", writable=True) as ws:
            ws.projections  # noqa: B018
            t0 = time.perf_counter()
            direct = sync.push(ws, dsn, email_direct, everything=True, allow_other_user=True)
            direct_s = time.perf_counter() - t0
    finally:
        if procs:
            _stop(procs)
        drop_user(dsn, email_http)
        drop_user(dsn, email_direct)
        conn.close()
    rate = report.messages / http_s
    return {"name": "http_push_100k", "ours": round(rate, 1), "baseline": round(direct.messages / direct_s, 1),
            "units": "messages/s", "n": messages, "baseline_name": "direct --dsn push of the same workspace",
            "target": 5000.0, "target_of": "ours", "target_op": ">=",
            "details": {"seconds": round(http_s, 2), "seconds_direct": round(direct_s, 2), "batches": report.batches,
                        "content_mib": round(content / 2**20, 1), "ratio_to_direct": round(rate / (direct.messages /
                                                                                                  direct_s), 2)}}


# --------------------------------------------------------------------------- main


def passed(r: dict) -> bool | None:
    """Whether a result meets its target (as tools/bench.py's Result.passed decides for target_of "ours")."""
    if r.get("target") is None or r["ours"] != r["ours"]:
        return None
    return r["ours"] >= r["target"] if r.get("target_op", ">=") == ">=" else r["ours"] <= r["target"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per benchmark per line")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, a smoke run")
    ap.add_argument("--dsn", default=None, help="the database for the gateway benchmarks")
    ap.add_argument("--only", action="append", default=None, help="run only these benchmarks (by name prefix)")
    ap.add_argument("--seconds", type=float, default=None, help="seconds of load for gateway_page_loads")
    ap.add_argument("--processes", type=int, default=2, help="gateway processes for gateway_page_loads")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import importlib

    sys.modules.setdefault("tools_bench_mysql", importlib.import_module("bench_mysql"))
    dsn = _dsn(args.dsn)
    q = args.quick
    scratch = tempfile.mkdtemp(prefix="evlog-bench-web-")
    results = []

    def wanted(name: str) -> bool:
        return not args.only or any(name.startswith(o) for o in args.only)

    try:
        if wanted("web_sessions_page"):
            results.append(bench_sessions_page(scratch, sessions=1000 if q else 5000, requests=30 if q else 200))
        if wanted("web_transcript"):
            results.append(bench_transcript(scratch, messages=2000, requests=10 if q else 60))
        for name, fn in (("gateway_page_loads", lambda: bench_gateway_load(
                scratch, dsn, clients=10 if q else 50, seconds=args.seconds or (3.0 if q else 15.0),
                processes=args.processes)),
                         ("http_push", lambda: bench_http_push(scratch, dsn, messages=10_000 if q else 100_000))):
            if not wanted(name):
                continue
            if not dsn:
                results.append({"name": name, "ours": math.nan, "baseline": math.nan, "units": "", "n": 0,
                                "baseline_name": "", "target": None,
                                "details": {"skipped": "no database: --dsn or $EVLOG_BENCH_MYSQL_URL"}})
                continue
            results.append(fn())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for r in results:
        r.setdefault("details", {})["loadavg_1m"] = round(os.getloadavg()[0], 2)
        if args.json:
            print(json.dumps(r), flush=True)  # the fields of tools/bench.py's Result: Result(**line) rebuilds it
        else:
            ok = {True: "met", False: "MISSED", None: "-"}[passed(r)]
            print(f"{r['name']:<24} {r['ours']!s:>10} {r['units']:<14} baseline {r['baseline']!s:>10}  "
                  f"target {r.get('target_op', '')} {r.get('target') or '-'!s:<8} {ok}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
