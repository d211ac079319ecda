"""Benchmark of the device side of log replication (issue 22), through the in-memory event store.

    python tools/bench_replication.py [N]

Device A writes N messages (in batches of 1000) and pushes them; device B, offline for all of
them, pulls (catch-up rate); then a pull that brings nothing (its store calls and time). The
store is ``MemoryEventStore``: this measures the device (fold, envelopes, decode, the atomic
append), not a network or a database.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from eventlog.events import MessageAppended, SessionCreated
from eventlog.log import Log
from eventlog.replication import sync
from eventlog.replication.store import MemoryEventStore


class CountingStore(MemoryEventStore):
    """The in-memory store, counting the calls a device makes."""

    calls = 0

    def pull(self, account, after, limit=1000):
        self.calls += 1
        return super().pull(account, after, limit)

    def high_water(self, account, origin):
        self.calls += 1
        return super().high_water(account, origin)


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        a = Log.open(os.path.join(root, "a"), writable=True, create=True, durability="group")
        b = Log.open(os.path.join(root, "b"), writable=True, create=True, durability="group")
        a.append(SessionCreated(session_key="s"))
        for start in range(0, n, 1000):
            a.append_batch([MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=f"message {i}")
                            for i in range(start, min(n, start + 1000))])
        store = CountingStore()
        t, c = time.perf_counter(), time.process_time()
        pushed = sync.push(a, store, "me", store_name="mem")
        push_s, push_cpu = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        pulled = sync.pull(b, store, "me", store_name="mem")
        pull_s, pull_cpu = time.perf_counter() - t, time.process_time() - c
        store.calls = 0
        t = time.perf_counter()
        again = sync.pull(b, store, "me", store_name="mem")
        noop_s = time.perf_counter() - t
        ckpt = os.path.join(root, "fold.msgpack")
        sync.pull(b, store, "me", store_name="mem", checkpoint=ckpt)
        store.calls = 0
        t = time.perf_counter()
        sync.pull(b, store, "me", store_name="mem", checkpoint=ckpt)
        kept_s = time.perf_counter() - t
        print(f"push {pushed.stored} events: {push_s:.2f} s ({pushed.stored / push_s:,.0f} events/s), "
              f"{push_cpu:.2f} CPU s ({pushed.stored / push_cpu:,.0f} events per CPU s)")
        print(f"pull (catch-up) {pulled.received} events: {pull_s:.2f} s ({pulled.received / pull_s:,.0f} events/s), "
              f"{pull_cpu:.2f} CPU s ({pulled.received / pull_cpu:,.0f} events per CPU s)")
        print(f"pull that brings nothing: {again.received} events, {noop_s * 1000:.1f} ms "
              f"(folding the log), {kept_s * 1000:.1f} ms from a kept fold ({store.calls} call)")
        a.close()
        b.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
