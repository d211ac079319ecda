#!/usr/bin/env python3
"""The ``mysql_push_100k`` benchmark: ``evlog sync push`` of 100k messages vs one INSERT per message.

Run from the repository root against a MariaDB/MySQL database you may write to::

    .venv/bin/python tools/bench_mysql.py --dsn mysql://root@127.0.0.1:3306/evlog_bench
    .venv/bin/python tools/bench_mysql.py --quick --json     # 20k messages, one JSON line

The DSN comes from ``--dsn``, else ``$EVLOG_BENCH_MYSQL_URL``, else ``$EVLOG_TEST_MYSQL_URL``.
Every round writes under fresh gateway users, deleted (with their rows) after the round, so
runs never see each other's rows and the tables do not grow from run to run. Use a database
of its own: a table much larger than the server's buffer pool measures the disk instead.

ours (target: >= 10 x the baseline, and >= 5,000 messages/s)
    Wall time of ``eventlog.app.gateway.sync.push`` of a workspace holding 100k ``message.appended``
    events (plus their ``session.created``) in 100 sessions: reading and folding the whole
    log, building rows, hashing contents, batched ``INSERT ... ON DUPLICATE KEY UPDATE``
    transactions (2,000 rows each) with their triggers, and a ``sync.pushed`` event per
    batch (``durability="none"`` for the workspace: the local fsync is not what is measured).
baseline
    The same message rows, already built (outside the timed region, which favours it),
    sent as one INSERT (the same guarded upsert statement) and one COMMIT per message: what a
    naive sync loop does. Measured on ``--baseline-n`` messages (10k by default; its rate
    does not depend on the count) because at a few thousand commits per second the full
    100k would take half a minute per round.

Contents are seeded chat-like text (log-normal lengths, median ~300 characters, code,
CJK and emoji). ``details`` also reports the rate of the batched SQL alone (the same
upserts with prepared rows, no log) to show where the time of ``ours`` goes.

To merge into tools/bench.py: ``@benchmark("mysql_push_100k", ...)`` over a function that
returns ``Result(**mysql_push_100k(ctx.scratch("mysql"), quick=ctx.quick, repeats=ctx.repeats,
dsn=...))``; the dict's keys are ``Result``'s fields.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import sys
import tempfile
import time
import uuid
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from eventlog.app.workspace import Workspace, init_workspace  # noqa: E402
from eventlog.events import MessageAppended, SessionCreated  # noqa: E402

SEED = 20261130
START_MS = 1_795_000_000_000
_WORDS = ("the a to of and in is it that for you this with on be not are as can we have function return error "
          "file log event session memory test please value list config path import class request response").split()
_CODE = ['def f(x):\n    return {"ok": x}\n', "SELECT id FROM \"t\" WHERE p LIKE 'C:\\\\tmp\\\\%';\n", "$ pytest -q\n"]
_EXTRA = ["😀", "🚀", "→", "é", "长", "文", "字"]


def chat_text(rng: random.Random) -> str:
    """A message of log-normal length (median ~300 chars, tail to 32k): prose, code, CJK, emoji."""
    n = min(32_000, max(5, int(rng.lognormvariate(math.log(300), 1.1))))
    parts: list[str] = []
    size = 0
    while size < n:
        r = rng.random()
        piece = rng.choice(_CODE) if r < 0.1 else (rng.choice(_EXTRA) * rng.randint(1, 8) if r < 0.2 else
                                                   " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 20))) + ". ")
        parts.append(piece)
        size += len(piece)
    return "".join(parts)[:n]


def build_workspace(home: str, n: int, sessions: int = 100) -> int:
    """A workspace with ``n`` messages spread over ``sessions`` sessions; returns the content bytes."""
    init_workspace(home, durability="none")
    rng = random.Random(f"{SEED}:mysql_push")
    total = 0
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key=f"bench:{i:03d}", title=f"session {i}") for i in range(sessions)])
        for start in range(0, n, 1000):
            batch = []
            for i in range(start, min(n, start + 1000)):
                text = chat_text(rng)
                total += len(text.encode())
                batch.append(MessageAppended(session_key=f"bench:{i % sessions:03d}", message_id=f"m{i:07d}",
                                             role="user" if i % 2 else "assistant", content=text,
                                             timestamp=f"2026-11-{1 + i % 28:02d}T10:00:00Z"))
            ws.append(batch)
    return total


def _fresh(label: str) -> str:
    return f"bench-{label}-{uuid.uuid4().hex[:10]}@example.test"


def drop_user(dsn: str, email: str) -> None:
    """Delete a benchmark user and (by cascade) its rows, so runs do not grow the tables."""
    from eventlog.app.gateway.connection import DSN, Connection

    conn = Connection(DSN.parse(dsn))
    try:
        conn.transaction(lambda cur: cur.execute("DELETE FROM gateway_users WHERE email = %s", (email,)))
    finally:
        conn.close()


class Scratch:
    """A database of the benchmark's own next to the given one, created fresh for every trial.

    Deleting the previous trial's 100k rows would leave InnoDB purging in the background
    during the next trial; a new database has nothing to purge. Without the privilege to
    create databases, trials share the given one under fresh users (deleted afterwards).
    """

    def __init__(self, dsn: str) -> None:
        from eventlog.app.gateway.connection import DSN

        self.base = DSN.parse(dsn)
        self.name = f"{self.base.database}_bench_scratch"
        self.url = dsn.rsplit("/", 1)[0] + "/" + self.name
        self.own = self._admin(f"DROP DATABASE IF EXISTS `{self.name}`")

    def _admin(self, sql: str) -> bool:
        import pymysql

        d = self.base
        try:
            conn = pymysql.connect(host=d.host, port=d.port, user=d.user, password=d.password, database=d.database,
                                   autocommit=True)
        except pymysql.MySQLError:
            return False
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
            return True
        except pymysql.MySQLError:
            return False
        finally:
            conn.close()

    def fresh(self) -> str:
        """The DSN of an empty, migrated database for one trial."""
        from eventlog.app.gateway.connection import DSN, Connection
        from eventlog.app.gateway.schema import migrate

        if not self.own:
            return self.base_url()
        self._admin(f"DROP DATABASE IF EXISTS `{self.name}`")
        self.own = self._admin(f"CREATE DATABASE `{self.name}` CHARACTER SET utf8mb4")
        url = self.url if self.own else self.base_url()
        conn = Connection(DSN.parse(url))
        try:
            migrate(conn)
        finally:
            conn.close()
        return url

    def base_url(self) -> str:
        d = self.base
        return f"mysql://{d.user}:{d.password}@{d.host}:{d.port}/{d.database}" if d.password else \
            f"mysql://{d.user}@{d.host}:{d.port}/{d.database}"

    def close(self) -> None:
        if self.own:
            self._admin(f"DROP DATABASE IF EXISTS `{self.name}`")


def time_push(home: str, dsn: str) -> tuple[float, Any]:
    """Seconds of one full push of the workspace to a fresh gateway user."""
    from eventlog.app.gateway.sync import push

    user = _fresh("ours")
    try:
        with Workspace.open(home, writable=True) as ws:
            ws.projections  # noqa: B018 - load the projections outside the timed region
            gc.collect()
            t0 = time.perf_counter()
            report = push(ws, dsn, user)
            return time.perf_counter() - t0, report
    finally:
        drop_user(dsn, user)


def message_rows(home: str, limit: int | None = None) -> list[Any]:
    """The gateway rows a push would send for the workspace's messages (built once, not timed)."""
    from eventlog.app.gateway.rows import MessageRow

    rows = []
    with Workspace.open(home) as ws:
        for ev in ws.log.read():
            if isinstance(ev, MessageAppended):
                row = MessageRow(key=ev.session_key, message_id=ev.message_id, role=ev.role, content=ev.content,
                                 timestamp=ev.timestamp, extra=dict(ev.extra))
                row.version = (START_MS + len(rows), "bench", row.rev())
                rows.append(row)
                if limit is not None and len(rows) >= limit:
                    break
    return rows


def _gateway_user(dsn: str, label: str, keys: list[str]) -> Any:
    """A store for a fresh user whose sessions exist (the messages' foreign key needs them)."""
    from eventlog.app.gateway import rows as R
    from eventlog.app.gateway.store import MySQLSessionStore

    store = MySQLSessionStore(dsn, _fresh(label))

    def sessions(cur: Any) -> None:
        regs = [R.SessionRow(key=k, deleted=False, version=(START_MS, "bench", "r"), active_ms=START_MS) for k in keys]
        R.next_change_seq(cur, store.user_id)
        R.upsert_sessions(cur, store.user_id, regs)

    store.conn.transaction(sessions)
    return store


def time_one_insert_per_message(dsn: str, rows: list[Any]) -> float:
    """Seconds to send ``rows`` as one upsert and one COMMIT each (the baseline)."""
    from eventlog.app.gateway import rows as R

    store = _gateway_user(dsn, "baseline", sorted({r.key for r in rows}))
    try:
        conn = store.conn.raw()
        params = [R.message_params(store.user_id, r, 1) for r in rows]  # a fixed counter value: no trigger work
        gc.collect()
        t0 = time.perf_counter()
        with conn.cursor() as cur:
            for p in params:
                cur.execute(R.UPSERT_MESSAGE, p)
                conn.commit()
        return time.perf_counter() - t0
    finally:
        store.close()
        drop_user(dsn, store.user.email)


def time_batched_sql(dsn: str, rows: list[Any], batch: int = 2000) -> float:
    """Seconds to send ``rows`` with the push's batched upserts alone (no log): context for ``ours``."""
    from eventlog.app.gateway import rows as R

    store = _gateway_user(dsn, "sql", sorted({r.key for r in rows}))
    try:
        gc.collect()
        t0 = time.perf_counter()
        for i in range(0, len(rows), batch):
            part = rows[i:i + batch]
            store.conn.transaction(lambda cur, part=part: (R.next_change_seq(cur, store.user_id),
                                                           R.upsert_messages(cur, store.user_id, part)))
        return time.perf_counter() - t0
    finally:
        store.close()
        drop_user(dsn, store.user.email)


def mysql_push_100k(root: str, *, dsn: str, quick: bool = False, repeats: int = 1, n: int | None = None,
                    baseline_n: int | None = None, progress: Any = None) -> dict[str, Any]:
    """Run the benchmark in scratch directory ``root``; the result as ``tools/bench.py``'s ``Result`` fields."""
    say = progress or (lambda msg: print(f"[bench] {msg}", file=sys.stderr, flush=True))
    n = n or (20_000 if quick else 100_000)
    baseline_n = min(n, baseline_n or (3_000 if quick else 10_000))
    home = os.path.join(root, "ws")
    say(f"mysql_push: building a workspace of {n} messages")
    content_bytes = build_workspace(home, n)
    say("mysql_push: building rows for the baselines")
    rows = message_rows(home)
    best = {"ours": math.inf, "baseline": math.inf, "batched_sql": math.inf}
    scratch = Scratch(dsn)
    try:
        for r in range(repeats):
            trials = [("ours", lambda db: time_push(home, db)[0]),
                      ("baseline", lambda db: time_one_insert_per_message(db, rows[:baseline_n])),
                      ("batched_sql", lambda db: time_batched_sql(db, rows))]
            k = r % len(trials)
            for name, trial in trials[k:] + trials[:k]:  # interleaved, rotating the order each round
                secs = trial(scratch.fresh())
                best[name] = min(best[name], secs)
                count = baseline_n if name == "baseline" else n
                say(f"  round {r + 1}/{repeats} {name} ({count} messages): {secs:.2f} s = {count / secs:,.0f} msg/s")
    finally:
        scratch.close()
    ours, baseline = n / best["ours"], baseline_n / best["baseline"]
    ratio = ours / baseline
    return {
        "name": "mysql_push_100k",
        "ours": ours,
        "baseline": baseline,
        "units": "messages/s",
        "n": n,
        "baseline_name": "one INSERT + COMMIT per message",
        "target": 10.0,
        "target_of": "ratio",
        "details": {
            "ratio": round(ratio, 2),
            "absolute_target_msgs_per_s": 5000,
            "absolute_target_met": ours >= 5000,
            "ratio_target_met": ratio >= 10,
            "seconds_ours": round(best["ours"], 3),
            "baseline_messages": baseline_n,
            "seconds_baseline": round(best["baseline"], 3),
            "batched_sql_msgs_per_s": round(n / best["batched_sql"], 1),
            "scratch_database": scratch.own,
            "content_mib": round(content_bytes / 2**20, 1),
            "loadavg_1m": os.getloadavg()[0],
        },
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dsn", default=os.environ.get("EVLOG_BENCH_MYSQL_URL") or os.environ.get("EVLOG_TEST_MYSQL_URL"),
                   help="the gateway database (default: $EVLOG_BENCH_MYSQL_URL, else $EVLOG_TEST_MYSQL_URL)")
    p.add_argument("--quick", action="store_true", help="20k messages (baseline on 3k): a smoke run")
    p.add_argument("--n", type=int, default=None, help="messages to push (default 100000)")
    p.add_argument("--baseline-n", type=int, default=None, help="messages for the baseline (default 10000)")
    p.add_argument("--repeat", type=int, default=1, help="rounds; each figure keeps its best")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = p.parse_args(argv)
    if not args.dsn:
        p.error("no database: pass --dsn or set EVLOG_BENCH_MYSQL_URL")
    with tempfile.TemporaryDirectory(prefix="evlog-bench-mysql-") as root:
        res = mysql_push_100k(root, dsn=args.dsn, quick=args.quick, repeats=args.repeat, n=args.n,
                              baseline_n=args.baseline_n)
    d = res["details"]
    if args.json:
        print(json.dumps(res))
    else:
        print(f"{res['name']}: ours {res['ours']:,.0f} {res['units']}, baseline {res['baseline']:,.0f} "
              f"({res['baseline_name']}), ratio {d['ratio']}x (target >= 10x: {'ok' if d['ratio_target_met'] else 'MISSED'}; "
              f">= 5,000 msg/s: {'ok' if d['absolute_target_met'] else 'MISSED'}); batched SQL alone "
              f"{d['batched_sql_msgs_per_s']:,.0f} msg/s")
    return 1 if args.check and not (d["ratio_target_met"] and d["absolute_target_met"]) else 0


if __name__ == "__main__":
    sys.exit(main())
