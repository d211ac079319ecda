"""The chaos run: every evlog process at once on one workspace, with random ``kill -9``, then a count.

Usage::

    python tools/chaos.py --seconds 120 [--json] [--seed N] [--dsn mysql://...] [--no-erase] [--keep DIR]

For ``--seconds`` these run against one workspace (A), each restarted whenever it exits or
is killed, while a killer sends SIGKILL to a random one every 0.3-1.5 s:

* ``evlog daemon`` (every job on a short schedule, the offline model);
* ``evlog watch`` on a folder where this script keeps appending seed-format lines;
* three hook loops: ``evlog hook claude-code`` with ``Stop`` payloads for two Claude Code
  transcripts this script keeps appending to, and with ``SessionStart``;
* an MCP session: the MCP tools (``remember``, ``recall``, ``sessions``) in a loop in a subprocess;
* ``evlog web`` (local mode), polled by this script (a 5xx answer is a failure, except 503,
  its documented "busy, reload in a moment");
* ``evlog ingest`` of a folder of seed-format files, again and again;
* a session-store agent (``LocalSessionStore.add_message`` in a loop);
* with a gateway database (``--dsn``, else ``$EVLOG_TEST_MYSQL_URL``): ``evlog sync push`` and
  ``sync pull`` of A, and ``sync push`` of a second workspace (B, a device with its own messages);
* unless ``--no-erase``: ``evlog erase --text TOKEN --yes`` of a message the agent was
  acknowledged for, every few seconds (a killed erase is run again until it completes).

Every message carries a unique token (``[ct <writer>-<incarnation>-<n>]``). A token counts
as acknowledged when its writer said so (the agent and the MCP loop print it after the call
returned) or when its line is in a transcript file. At the end everything is killed, the
transcripts are caught up once (``watch --once``, one ``Stop`` hook each, ``ingest``), pending
erases completed, B pushed and A pulled; then every acknowledged token must be in A's log
exactly once (one ``message.appended``, or one ``remember`` note), no token more than once,
no erased token anywhere in A's files, and ``evlog verify`` and ``evlog replay --check``
clean. It prints the counts (one JSON object with ``--json``) and exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

TOKEN = re.compile(r"\[ct ([a-z]+)-(\d+)-(\d+)\]")
DAY = "2026-11-30"
SCHEDULE = {"snapshot": 0.5, "digest": 1.0, "autocompact": 2.0, "dream": 2.0, "archive": 3.0, "recall": 1.0}
NOTHING_TO_ERASE = "nothing to erase"
ACKING = ("agent", "mcp")  # the workers that print what they wrote (their acknowledgements)
BENIGN = ("is busy", "lock", "try again", "unavailable", "timed out", "timeout")  # exits that are contention, not bugs

AGENT = r"""
import sys
from eventlog.app.session_store import LocalSessionStore
home, inc = sys.argv[1], int(sys.argv[2])
with LocalSessionStore.open(home, lock_timeout=30) as store:
    i = 0
    while True:
        tok = f"[ct agent-{inc}-{i}]"
        store.add_message("chaos-agent", "user" if i % 2 == 0 else "assistant", f"agent turn {tok} done",
                          message_id=f"a{inc}-{i}")
        print(tok, flush=True)
        i += 1
"""

MCP = r"""
import sys, time
from eventlog.app.agents.mcp import Backend
from mcp.server.mcpserver.exceptions import ToolError
home, inc = sys.argv[1], int(sys.argv[2])
backend = Backend(home, lock_timeout=2.0)
i = 0
while True:
    tok = f"[ct mcp-{inc}-{i}]"
    try:
        backend.call(backend.remember, f"chaos note {tok} for later")
    except ToolError:
        time.sleep(0.1)
        continue
    print(tok, flush=True)
    i += 1
    try:
        if i % 3 == 0:
            backend.call(backend.recall, "chaos note")
        if i % 5 == 0:
            backend.call(backend.sessions)
    except ToolError:
        pass
    time.sleep(0.05)
"""


def evlog_argv() -> list[str]:
    """How to run the ``evlog`` command of this checkout."""
    exe = os.path.join(os.path.dirname(sys.executable), "evlog")
    return [exe] if os.path.exists(exe) else [sys.executable, "-c", "from eventlog.cli import main; main()"]


@dataclass
class Worker:
    """One process kind, restarted whenever it exits; ``acks`` are the tokens it printed."""

    name: str
    argv: Any  # (incarnation) -> argv
    stdin: Any = None  # (incarnation) -> bytes, for one-shot commands fed on stdin
    pause: float = 0.0  # seconds between a normal exit and the next start
    reads_stdout: bool = False
    proc: subprocess.Popen[bytes] | None = None
    incarnation: int = 0
    kills: int = 0
    exits: dict[str, int] = field(default_factory=dict)  # "0", "killed", "3 busy", ...
    problems: list[str] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    next_start: float = 0.0
    killed: bool = False
    err_path: str = ""


class Chaos:
    """Runs the workers, the appenders, the killer and the web poller; then counts (see the module docstring)."""

    def __init__(self, work: str, *, seconds: float, seed: int, dsn: str, erase: bool) -> None:
        self.work, self.seconds, self.rng, self.dsn, self.erase_on = work, seconds, random.Random(seed), dsn, erase
        self.a, self.b = os.path.join(work, "a"), os.path.join(work, "b")
        self.watch_dir, self.claude_dir = os.path.join(work, "watched"), os.path.join(work, "claude")
        self.ingest_dir, self.logs = os.path.join(work, "ingest"), os.path.join(work, "logs")
        self.project = os.path.join(work, "project")
        self.email = f"chaos-{uuid.uuid4().hex[:10]}@example.test"
        self.env = dict(os.environ, PYTHONPATH=REPO, EVLOG_LOCK_TIMEOUT="30")
        self.env.pop("EVLOG_HOME", None)
        self.written: dict[str, list[str]] = {"watch": [], "hook": [], "ingest": [], "device": []}
        self.erased: list[str] = []
        self.erase_pending: list[str] = []
        self.erase_killed: set[str] = set()
        self.erase_job: tuple[subprocess.Popen[bytes], str, str] | None = None
        self.next_erase = 0.0
        self.problems: list[str] = []
        self.web_codes: dict[str, int] = {}
        self.stop = threading.Event()
        self.workers: list[Worker] = []
        self.counter = 0

    # -- setup --------------------------------------------------------------------------------

    def setup(self) -> None:
        from eventlog.app.workspace import init_workspace

        for d in (self.watch_dir, self.claude_dir, self.ingest_dir, self.logs, self.project):
            os.makedirs(d, exist_ok=True)
        init_workspace(self.a, schedule=dict(SCHEDULE))
        for f in range(12):
            key = f"cli:ingest-{f}"
            lines: list[dict[str, Any]] = [{"key": key, "title": f"ingest {f}", "metadata": {}}]
            for i in range(10):
                tok = f"[ct ingest-0-{f * 10 + i}]"
                self.written["ingest"].append(tok)
                lines.append({"id": i + 1, "sessionKey": key, "role": "user" if i % 2 == 0 else "assistant",
                              "content": f"ingested {tok}", "timestamp": f"{DAY}T09:{i:02d}:00Z"})
            with open(os.path.join(self.ingest_dir, f"f{f}.jsonl"), "w", encoding="utf-8") as out:
                out.write("".join(json.dumps(x) + "\n" for x in lines))
        for f in range(3):
            with open(self.watch_file(f), "w", encoding="utf-8") as out:
                out.write(json.dumps({"key": f"cli:watch-{f}", "title": f"watched {f}", "metadata": {}}) + "\n")
        for f in range(2):
            open(self.claude_file(f), "w").close()
        if self.dsn:
            self.setup_device()

    def setup_device(self) -> None:
        from eventlog.app.session_store import LocalSessionStore
        from eventlog.app.workspace import init_workspace

        init_workspace(self.b)
        with LocalSessionStore.open(self.b) as store:
            for i in range(150):
                tok = f"[ct device-0-{i}]"
                store.add_message("device-b", "user" if i % 2 == 0 else "assistant", f"from device b {tok}",
                                  message_id=f"b{i}")
                self.written["device"].append(tok)

    def watch_file(self, f: int) -> str:
        return os.path.join(self.watch_dir, f"w{f}.jsonl")

    def claude_file(self, f: int) -> str:
        return os.path.join(self.claude_dir, f"chaos-session-{f}.jsonl")

    def define_workers(self) -> None:
        ev, a = evlog_argv(), self.a
        W = self.workers.append
        W(Worker("daemon", lambda _i: [*ev, "--home", a, "daemon", "--llm", "offline"]))
        W(Worker("watch", lambda _i: [*ev, "--home", a, "watch", self.watch_dir, "--debounce", "0.3",
                                      "--interval", "0.2"]))
        W(Worker("web", lambda _i: [*ev, "--home", a, "web", "--json"], reads_stdout=True))
        W(Worker("agent", lambda i: [sys.executable, "-c", AGENT, a, str(i)], reads_stdout=True))
        W(Worker("mcp", lambda i: [sys.executable, "-c", MCP, a, str(i)], reads_stdout=True))
        for f in range(2):
            W(Worker(f"hook-stop-{f}", lambda _i: [*ev, "--home", a, "hook", "claude-code"],
                     stdin=lambda _i, f=f: self.hook_payload("Stop", f), pause=0.2))
        W(Worker("hook-start", lambda _i: [*ev, "--home", a, "hook", "claude-code"],
                 stdin=lambda _i: self.hook_payload("SessionStart", 0), pause=0.3))
        W(Worker("ingest", lambda _i: [*ev, "--home", a, "ingest", self.ingest_dir], pause=1.0))
        if self.dsn:
            sync = ["--rows", "--dsn", self.dsn, "--user", self.email]
            W(Worker("sync-push", lambda _i: [*ev, "--home", a, "sync", "push", *sync], pause=0.5))
            W(Worker("sync-pull", lambda _i: [*ev, "--home", a, "sync", "pull", *sync], pause=0.5))
            W(Worker("device-push", lambda _i: [*ev, "--home", self.b, "sync", "push", *sync], pause=0.7))

    def hook_payload(self, event: str, f: int) -> bytes:
        return json.dumps({"hook_event_name": event, "session_id": f"chaos-session-{f}",
                           "transcript_path": self.claude_file(f), "cwd": self.project}).encode()

    # -- running ------------------------------------------------------------------------------

    def start(self, w: Worker) -> None:
        w.incarnation += 1
        w.killed = False
        w.err_path = os.path.join(self.logs, f"{w.name}-{w.incarnation}.err")
        err = open(w.err_path, "wb")  # noqa: SIM115 - the child owns it
        w.proc = subprocess.Popen(w.argv(w.incarnation), env=self.env, cwd=self.work, start_new_session=True,
                                  stdin=subprocess.PIPE if w.stdin else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if w.reads_stdout else subprocess.DEVNULL, stderr=err)
        err.close()
        if w.stdin and w.proc.stdin:
            try:
                w.proc.stdin.write(w.stdin(w.incarnation))
                w.proc.stdin.close()
            except BrokenPipeError:
                pass
        if w.reads_stdout:
            threading.Thread(target=self.read_stdout, args=(w, w.proc), daemon=True).start()

    @staticmethod
    def read_stdout(w: Worker, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if TOKEN.fullmatch(line):
                w.acks.append(line)
            elif line:
                w.lines.append(line)

    def reap(self, w: Worker, now: float) -> None:
        """Record how a finished process ended and schedule its restart."""
        assert w.proc is not None
        rc = w.proc.wait()
        if w.reads_stdout:
            time.sleep(0.05)  # let the reader take the last acknowledged lines
        w.proc = None
        if w.killed:
            w.exits["killed"] = w.exits.get("killed", 0) + 1
            w.problems += self.logged_failures(w.name, w.err_path)
            w.next_start = now + 0.1
            return
        kind = self.judge(w.name, rc, w.err_path)
        w.exits[kind] = w.exits.get(kind, 0) + 1
        if kind.startswith("PROBLEM"):
            w.problems.append(kind)
        elif kind == "0":
            w.problems += self.logged_failures(w.name, w.err_path)
        w.next_start = now + w.pause

    @staticmethod
    def judge(name: str, rc: int, err_path: str) -> str:
        """'0', 'busy' (contention) or 'PROBLEM ...' for an exit we did not cause."""
        with open(err_path, "rb") as f:
            err = f.read().decode("utf-8", "replace")
        if rc == 0 and "Traceback" not in err:
            return "0"
        if "Traceback" not in err and any(b in err.lower() for b in BENIGN):
            return "busy"
        tail = " | ".join(err.strip().splitlines()[-3:])[:300]
        return f"PROBLEM {name} exited {rc}: {tail}"

    @staticmethod
    def logged_failures(name: str, err_path: str) -> list[str]:
        """What a killed process had logged as failing (a traceback, a daemon job's ``failed:``), contention aside."""
        with open(err_path, "rb") as f:
            err = f.read().decode("utf-8", "replace")
        if "Traceback" in err:
            return [f"PROBLEM {name} logged a traceback: {' | '.join(err.strip().splitlines()[-3:])[:300]}"]
        return [f"PROBLEM {name} logged: {ln.strip()[:300]}" for ln in err.splitlines()
                if ": failed:" in ln and not any(b in ln.lower() for b in BENIGN)]

    def kill(self, w: Worker) -> None:
        if w.proc is not None and w.proc.poll() is None:
            w.killed = True
            w.kills += 1
            try:
                os.killpg(w.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def append_transcripts(self) -> None:
        """Add a few lines to one watched file and to one Claude Code transcript (their tokens are acknowledged)."""
        f = self.rng.randrange(3)
        with open(self.watch_file(f), "a", encoding="utf-8") as out:
            for _ in range(self.rng.randint(1, 3)):
                self.counter += 1
                tok = f"[ct watch-0-{self.counter}]"
                out.write(json.dumps({"id": f"w{self.counter}", "sessionKey": f"cli:watch-{f}", "role": "user",
                                      "content": f"watched line {tok}", "timestamp": f"{DAY}T10:00:00Z"}) + "\n")
                self.written["watch"].append(tok)
        c = self.rng.randrange(2)
        with open(self.claude_file(c), "a", encoding="utf-8") as out:
            self.counter += 1
            tok = f"[ct hook-0-{self.counter}]"
            out.write(json.dumps({"type": "user", "uuid": f"u{self.counter}", "parentUuid": None,
                                  "sessionId": f"chaos-session-{c}", "timestamp": f"{DAY}T11:00:00.000Z",
                                  "cwd": self.project, "message": {"role": "user", "content": f"hook line {tok}"}})
                      + "\n")
            self.written["hook"].append(tok)

    def poll_web(self) -> None:
        """GET a few pages of the current ``evlog web`` whenever it is up; count the answers."""
        from eventlog.app.web.app import key_token

        web = next(w for w in self.workers if w.name == "web")
        opener, base_seen = None, ""
        while not self.stop.wait(0.4):
            url = next((json.loads(x)["url"] for x in reversed(web.lines) if x.startswith("{")), "")
            if not url:
                continue
            if url != base_seen:
                opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
                base_seen = url
                if not self.fetch(opener, url, "/"):
                    base_seen = ""
                continue
            root = url.split("/?")[0]
            for page in ("/sessions", "/memory", "/processors", "/dream", f"/s/{key_token('chaos-agent')}",
                         f"/s/{key_token('cli:watch-0')}"):
                self.fetch(opener, root + page, page)

    def fetch(self, opener: Any, url: str, page: str) -> bool:
        try:
            with opener.open(url, timeout=10) as r:
                code = r.status
        except urllib.error.HTTPError as e:
            code = e.code
        except (OSError, ValueError):
            self.web_codes["unreachable"] = self.web_codes.get("unreachable", 0) + 1
            return False
        self.web_codes[str(code)] = self.web_codes.get(str(code), 0) + 1
        if code >= 500 and code != 503:  # 503: "the workspace is busy, reload" (files rewritten while read)
            self.problems.append(f"evlog web answered {code} on {page}")
        return code < 400

    def erase_step(self, now: float) -> None:
        """Start an erase of an acknowledged agent message every few seconds; record how it ended."""
        if self.erase_job is not None:
            proc, tok, err_path = self.erase_job
            if proc.poll() is None:
                return
            self.erase_job = None
            if proc.returncode == -signal.SIGKILL:
                self.erase_pending.append(tok)  # killed: the old or the new state; erase again
                self.erase_killed.add(tok)
                return
            self.erase_ended(tok, proc.returncode, err_path)
            return
        if now < self.next_erase:
            return
        agent = next(w for w in self.workers if w.name == "agent")
        done = set(self.erased) | set(self.erase_pending)
        choices = [t for t in agent.acks if t not in done]
        tok = self.erase_pending.pop(0) if self.erase_pending else (self.rng.choice(choices) if choices else "")
        if tok:
            self.erase_job = self.start_erase(tok)
        self.next_erase = now + self.rng.uniform(3.0, 6.0)

    def erase_ended(self, tok: str, rc: int, err_path: str) -> None:
        """Record an erase that ended by itself: done, to retry, or a problem."""
        kind = self.judge("erase", rc, err_path)
        if kind == "0" or (tok in self.erase_killed and NOTHING_TO_ERASE in kind):
            self.erased.append(tok)  # (a killed erase is finished by the next writer: nothing left for the retry)
        elif kind == "busy":
            self.erase_pending.append(tok)
        else:
            self.problems.append(kind)
            if rc == 2:
                self.erase_on = False  # no such command or option here: say so once, stop trying

    def start_erase(self, tok: str) -> tuple[subprocess.Popen[bytes], str, str]:
        err_path = os.path.join(self.logs, f"erase-{len(self.erased) + len(self.erase_pending)}-{time.time_ns()}.err")
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([*evlog_argv(), "--home", self.a, "erase", "--text", tok, "--yes", "--json"],
                                    env=self.env, cwd=self.work, start_new_session=True, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
        return proc, tok, err_path

    def run(self) -> None:
        self.define_workers()
        poller = threading.Thread(target=self.poll_web, daemon=True)
        poller.start()
        end = time.monotonic() + self.seconds
        next_kill = next_append = time.monotonic()
        while (now := time.monotonic()) < end:
            for w in self.workers:
                if w.proc is not None and w.proc.poll() is not None:
                    self.reap(w, now)
                if w.proc is None and now >= w.next_start:
                    self.start(w)
            if now >= next_append:
                self.append_transcripts()
                next_append = now + self.rng.uniform(0.2, 0.6)
            if now >= next_kill:
                self.kill_one()
                next_kill = now + self.rng.uniform(0.3, 1.5)
            if self.erase_on:
                self.erase_step(now)
            time.sleep(0.05)
        self.stop.set()
        for w in self.workers:
            self.kill(w)
            if w.proc is not None:
                self.reap(w, time.monotonic())
        if self.erase_job is not None:
            proc, tok, err_path = self.erase_job
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            if proc.wait() == -signal.SIGKILL:
                self.erase_pending.append(tok)
                self.erase_killed.add(tok)
            else:
                self.erase_ended(tok, proc.returncode, err_path)
            self.erase_job = None
        poller.join(timeout=15)

    def kill_one(self) -> None:
        # A worker of ACKING is spared until its first acknowledgement: on a loaded
        # machine the MCP server's start-up (the SDK's import) can outlast every gap between kills,
        # and a run that never let it write would test nothing of it. Every later kill is random.
        running = [w for w in self.workers if w.proc is not None and w.proc.poll() is None
                   and (w.acks or w.name not in ACKING)]
        if self.erase_job is not None and self.rng.random() < 0.15:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.erase_job[0].pid, signal.SIGKILL)
            return
        if running:
            self.kill(self.rng.choice(running))

    # -- the end ------------------------------------------------------------------------------

    def evlog(self, *args: str, stdin: bytes | None = None, home: str | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*evlog_argv(), "--home", home or self.a, *args], env=self.env, cwd=self.work,
                              input=stdin, capture_output=True, timeout=600, check=False)

    def catch_up(self) -> None:
        """Bring in what the killed writers had not yet: transcripts, erases, the device's messages."""
        steps = [("watch --once", ["watch", "--once", self.watch_dir], None),
                 *[(f"Stop hook {f}", ["hook", "claude-code"], self.hook_payload("Stop", f)) for f in range(2)],
                 ("ingest", ["ingest", self.ingest_dir], None)]
        for what, args, stdin in steps:
            self.must(what, self.evlog(*args, stdin=stdin))
        pending, self.erase_pending = self.erase_pending, []
        for tok in pending:
            res = self.evlog("erase", "--text", tok, "--yes", "--json")
            with open(os.path.join(self.logs, "final-erase.err"), "wb") as f:
                f.write(res.stderr)
            self.erase_ended(tok, res.returncode, os.path.join(self.logs, "final-erase.err"))
        if self.erase_pending:
            self.problems.append(f"erase did not complete for {self.erase_pending[:5]}")
        if self.dsn:
            sync = ["--rows", "--dsn", self.dsn, "--user", self.email]
            self.must("device push", self.evlog("sync", "push", *sync, home=self.b))
            self.must("sync push", self.evlog("sync", "push", *sync))
            self.must("sync pull", self.evlog("sync", "pull", *sync))

    def must(self, what: str, res: subprocess.CompletedProcess[bytes]) -> None:
        if res.returncode != 0:
            self.problems.append(f"{what} exited {res.returncode}: {res.stderr.decode('utf-8', 'replace')[-300:]}")

    def token_counts(self) -> dict[str, int]:
        """How many times each token is in A's log: in a message.appended or a remembered note."""
        from eventlog.events import HistoryAppended, MessageAppended
        from eventlog.log import Log
        from processors.dream import AGENT_NOTE_SOURCE, NOTE_SOURCE

        counts: dict[str, int] = {}
        for ev in Log.open(os.path.join(self.a, "log")).read():
            if isinstance(ev, MessageAppended):
                text = ev.content
            elif isinstance(ev, HistoryAppended) and ev.source in (NOTE_SOURCE, AGENT_NOTE_SOURCE):  # MCP notes are the agent's
                text = ev.text
            else:
                continue
            for m in TOKEN.finditer(text):
                counts[m.group(0)] = counts.get(m.group(0), 0) + 1
        return counts

    def erased_bytes_left(self) -> list[str]:
        """Files of A that still hold an erased token."""
        found = []
        wanted = [t.encode() for t in self.erased]
        for dirpath, _dirs, files in os.walk(self.a):
            for name in files:
                path = os.path.join(dirpath, name)
                if not os.path.isfile(path) or os.path.islink(path):
                    continue  # the daemon's hook socket: no bytes
                with open(path, "rb") as f:
                    data = f.read()
                found += [f"{os.path.relpath(path, self.a)}: {t.decode()}" for t in wanted if t in data]
        return found

    def report(self) -> dict[str, Any]:
        self.catch_up()
        counts = self.token_counts()
        acked = {w.name: list(w.acks) for w in self.workers if w.name in ("agent", "mcp")}
        acked.update({k: v for k, v in self.written.items() if v})
        erased = set(self.erased)
        expected = [t for toks in acked.values() for t in toks if t not in erased]
        lost = [t for t in expected if counts.get(t, 0) == 0]
        duplicated = sorted(t for t, n in counts.items() if n > 1)
        erased_left = sorted(t for t in erased if counts.get(t, 0))
        bytes_left = self.erased_bytes_left() if erased else []
        verify = self.evlog("verify")
        check = self.evlog("replay", "--check")
        worker_problems = [p for w in self.workers for p in w.problems]
        problems = self.problems + worker_problems
        if lost:
            problems.append(f"{len(lost)} acknowledged message(s) lost, e.g. {lost[:5]}")
        if duplicated:
            problems.append(f"{len(duplicated)} message(s) duplicated, e.g. {duplicated[:5]}")
        if erased_left or bytes_left:
            problems.append(f"erased text still there: {(erased_left + bytes_left)[:5]}")
        for name, res in (("evlog verify", verify), ("evlog replay --check", check)):
            if res.returncode != 0:
                problems.append(f"{name} exited {res.returncode}: {(res.stdout + res.stderr).decode()[-400:]}")
        return {"seconds": self.seconds, "workspace": self.a, "sync": bool(self.dsn), "erase": bool(self.erased),
                "acknowledged": {k: len(v) for k, v in acked.items()}, "expected": len(expected),
                "lost": len(lost), "duplicated": len(duplicated), "erased": len(erased),
                "erased_left": len(erased_left) + len(bytes_left),
                "kills": {w.name: w.kills for w in self.workers},
                "exits": {w.name: w.exits for w in self.workers}, "web": self.web_codes,
                "verify": verify.returncode == 0, "replay_check": check.returncode == 0, "problems": problems}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seconds", type=float, default=120.0, help="how long the chaos lasts (default 120)")
    p.add_argument("--seed", type=int, default=None, help="seed of the killer and the appenders (default: random)")
    p.add_argument("--dsn", default=os.environ.get("EVLOG_TEST_MYSQL_URL", ""),
                   help="gateway database for the sync workers (default $EVLOG_TEST_MYSQL_URL; none: no sync)")
    p.add_argument("--no-erase", action="store_true", help="leave 'evlog erase' out (it is in by default)")
    p.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder, removed)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = args.keep or tempfile.mkdtemp(prefix="evlog-chaos-")
    os.makedirs(work, exist_ok=True)
    try:
        chaos = Chaos(work, seconds=args.seconds, seed=seed, dsn=args.dsn, erase=not args.no_erase)
        chaos.setup()
        chaos.run()
        result = {"seed": seed, **chaos.report()}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
