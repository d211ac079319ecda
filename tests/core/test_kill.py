"""A real crash test: a writer subprocess is SIGKILLed at random moments, many times.

After each kill the log is reopened for write (recovery) and read: every event the
child acknowledged (printed after append returned) is there exactly once, nothing that
was never written is, batches are whole, and verify is clean. A process crash must lose
nothing under any durability policy (every append reaches the OS before it returns).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from eventlog.events import MessageAppended
from eventlog.log import Log

pytestmark = pytest.mark.slow  # SIGKILL matrices: real writer processes killed over and over

CHILD = r"""
import random, sys
from eventlog.log import Log
from eventlog.events import MessageAppended
log_dir, start, seed, durability = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
log = Log.open(log_dir, writable=True, create=True, durability=durability, segment_bytes=4096)
sys.stdout.write("ready\n")
sys.stdout.flush()
rng = random.Random(seed)
i = start
while True:
    k = rng.choice([1, 1, 1, 2, 5, 9])
    evs = [MessageAppended(session_key="kill", message_id=str(i + j), role="user",
                           content="x" * rng.randrange(0, 700), dedup=f"id-{i + j}",
                           extra={"batch": [i, k]}) for j in range(k)]
    if k == 1:
        log.append(evs[0])
    else:
        log.append_batch(evs)
    sys.stdout.write(f"{i} {k}\n")
    sys.stdout.flush()
    i += k
"""


def message_ids(log_dir: str) -> list[int]:
    """Ids of the messages in the log; asserts every batch present is complete."""
    msgs = [e for e in Log.open(log_dir).read() if isinstance(e, MessageAppended)]
    batches: dict[tuple[int, int], list[int]] = {}
    for e in msgs:
        first, k = e.extra["batch"]
        batches.setdefault((first, k), []).append(int(e.message_id))
    for (first, k), members in batches.items():
        assert members == list(range(first, first + k)), f"batch {first}+{k} is not whole: {members}"
    return [int(e.message_id) for e in msgs]


@pytest.mark.parametrize("durability", ["fsync", "group", "none"])
def test_sigkilled_writer_loses_and_duplicates_nothing(tmp_path, durability):
    log_dir = str(tmp_path / "log")
    rng = random.Random(20261130)
    acked_through = -1
    kills = int(os.environ.get("EVLOG_KILL_ROUNDS", "12"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    for round_ in range(kills):
        ids = message_ids(log_dir) if os.path.isdir(log_dir) else []
        start = len(ids)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, log_dir, str(start), str(rng.randrange(1 << 30)), durability],
            stdout=subprocess.PIPE, env=env,
        )
        # kill a writer, not a process still importing (on a loaded machine that takes seconds)
        assert child.stdout is not None and child.stdout.readline() == b"ready\n", f"round {round_}: child did not start"
        deadline = time.monotonic() + rng.uniform(0.3, 1.2)
        while time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        assert child.returncode == -signal.SIGKILL, f"round {round_}: child died on its own"
        for line in out.decode().splitlines():
            first, k = map(int, line.split())  # "ready" was read above
            acked_through = max(acked_through, first + k - 1)
        with Log.open(log_dir, writable=True) as log:  # recovery
            problems = [p for p in log.verify() if p.damaged]
        assert problems == [], f"round {round_}: verify after recovery: {problems}"
        ids = message_ids(log_dir)
        assert ids == list(range(len(ids))), f"round {round_}: ids are not a gapless, duplicate-free prefix"
        assert len(ids) > acked_through, f"round {round_}: acknowledged id {acked_through} is missing (have {len(ids)})"
    assert acked_through > kills, "the child barely wrote anything; the test proves nothing"
