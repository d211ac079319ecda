#!/usr/bin/env python3
"""CPU cost of the gateway's read models (``eventlog.app.gateway.read_model``): a full fold and a small catch-up.

Pushes ``--events`` message events (``--sessions`` sessions) into a fresh account of the gateway
database ``--dsn`` (or ``$EVLOG_TEST_MYSQL_URL``), then times, in CPU seconds of this process
(``time.process_time``: the fold's Python side; the server's share is not counted) and wall
seconds, the first read of the view (folds everything), a read after 100 more events, and a
read with nothing new. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msgspec  # noqa: E402

from eventlog.app.gateway.event_store import MySQLEventStore  # noqa: E402
from eventlog.app.gateway.read_model import ReadModel, sessions  # noqa: E402
from eventlog.app.gateway.users import resolve_user  # noqa: E402
from eventlog.events import MessageAppended, SessionCreated  # noqa: E402
from eventlog.replication.envelope import Replicated  # noqa: E402

_enc = msgspec.json.Encoder()


def envelopes(device: str, first: int, n: int, n_sessions: int) -> list[Replicated]:
    out = []
    for seq in range(first, first + n):
        key = f"s{seq % n_sessions}"
        ts = f"2026-01-01T00:{(seq // 60000) % 60:02d}:{(seq // 1000) % 60:02d}.{seq % 1000:03d}Z"
        ev = (SessionCreated(session_key=key, title=f"session {key}", seq=seq, ts=ts) if seq <= n_sessions else
              MessageAppended(session_key=key, message_id=f"m{seq}", role="user" if seq % 2 else "assistant",
                              content=f"message {seq} " + "words " * 20, seq=seq, ts=ts))
        out.append(Replicated(origin=device, origin_seq=seq, hlc=seq << 16, type=ev.type,
                              body=msgspec.Raw(_enc.encode(ev))))
    return out


def timed(fn):  # noqa: ANN001, ANN201
    c, w = time.process_time(), time.perf_counter()
    fn()
    return round(time.process_time() - c, 3), round(time.perf_counter() - w, 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=os.environ.get("EVLOG_TEST_MYSQL_URL", ""))
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--sessions", type=int, default=100)
    a = ap.parse_args()
    store = MySQLEventStore(a.dsn)
    account, device = f"bench-{uuid.uuid4().hex[:10]}@example.test", "dev-bench"
    for i in range(1, a.events + 1, 10_000):
        store.push(account, envelopes(device, i, min(10_000, a.events + 1 - i), a.sessions))
    with store.pool.connection() as conn:
        uid = conn.transaction(lambda cur: resolve_user(cur, account).id, doing="bench")
    view = ReadModel(store.pool)
    full = timed(lambda: view.read(uid, lambda cur, u: None))
    store.push(account, envelopes(device, a.events + 1, 100, a.sessions))
    small = timed(lambda: view.read(uid, lambda cur, u: None))
    idle = timed(lambda: view.read(uid, lambda cur, u: None))
    listed = view.read(uid, lambda cur, u: sessions(cur, u, limit=10**6)[1])
    print(json.dumps({"events": a.events, "sessions": listed, "full_cpu_s": full[0], "full_wall_s": full[1],
                      "full_cpu_us_per_event": round(full[0] / a.events * 1e6, 1),
                      "catch_up_100_cpu_s": small[0], "catch_up_100_wall_s": small[1],
                      "idle_cpu_s": idle[0], "idle_wall_s": idle[1], "load": os.getloadavg()[0]}))
    store.close()


if __name__ == "__main__":
    main()
