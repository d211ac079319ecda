#!/usr/bin/env python3
"""What the sync screen costs per message row, against rendering the same row as SQL.

Run from the repository root: ``.venv/bin/python tools/bench_sync_screen.py [--json]``.
Seeded chat-like messages (20k in 100 sessions, a third with an ``extra``), no database:
``screen.gateway_message_problem`` (what every push path runs per message) against
``rows.message_values(...).encode()`` (what a direct push renders per message). Best of 7.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from eventlog.app.gateway import rows as R
from eventlog.app.gateway import screen as S

WORDS = "the quick brown fox jumps over a lazy dog 数据 🙂 def f(x): return x".split()


def messages(n: int = 20_000, seed: int = 7) -> list[Any]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        content = " ".join(rng.choice(WORDS) for _ in range(int(rng.lognormvariate(4, 1)) + 1))
        extra = {"model": "m", "usage": {"in": i, "out": 3}} if i % 3 else {}
        out.append((f"s{i % 100}", f"m{i}", "user", content, "2026-01-01T00:00:00.000Z", None, extra,
                    (1_700_000_000_000 + i, "evlog:abc", R.content_hash(content))))
    return out


def best_us_per_row(fn: Callable[[], None], rows: int, repeats: int = 7) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best / rows * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    msgs = messages()

    def screen() -> None:
        for f in msgs:
            S.gateway_message_problem(*f)

    def render() -> None:
        for f in msgs:
            R.message_values(1, *f).encode()

    got = {"screen_us_per_row": round(best_us_per_row(screen, len(msgs)), 2),
           "render_us_per_row": round(best_us_per_row(render, len(msgs)), 2), "rows": len(msgs)}
    print(json.dumps(got) if args.json else "\n".join(f"{k}: {v}" for k, v in got.items()))


if __name__ == "__main__":
    main()
