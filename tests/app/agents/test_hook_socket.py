"""Context hooks through the warm daemon (``eventlog.app.agents.hook_socket``, ``eventlog.entry``).

The contract: with a daemon up, ``SessionStart`` and ``UserPromptSubmit`` print exactly what
the in-process hook prints, without importing click or evlog's layers; capture events and
everything the daemon will not serve run in-process as before; nobody but the user reaches
the socket; a dead, busy or odd daemon only ever means "run it in-process".
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from eventlog.app import memory
from eventlog.app.agents import hook_socket, hooks
from eventlog.app.agents.hook_socket import HookServer, ask_daemon, socket_path
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.entry import HookPlan, hook_plan
from tests.conftest import REPO, real_data

ENTRY = [sys.executable, "-c", "from eventlog.entry import main; main()"]


@pytest.fixture
def home():
    """A workspace in a short folder (a Unix socket path must stay under ~100 bytes)."""
    d = tempfile.mkdtemp(prefix="evh-", dir="/tmp")
    init_workspace(os.path.join(d, "ws"))
    yield os.path.join(d, "ws")
    shutil.rmtree(d, ignore_errors=True)


def payload(event: str, cwd: str, **fields: object) -> bytes:
    return json.dumps({"session_id": "s1", "transcript_path": "/nonexistent/t.jsonl", "cwd": cwd,
                       "hook_event_name": event, **fields}).encode()


class FakeResult:
    def __init__(self, stdout: str, notes: list[str]) -> None:
        self.stdout, self.notes = stdout, notes


def echo_handler(raw: bytes, **kw: object) -> FakeResult:
    return FakeResult("out:" + json.loads(raw)["hook_event_name"], [f"budget={kw['budget']}"])


# --- the command line the fast path takes ------------------------------------------------------------


@pytest.mark.parametrize(("argv", "env", "want"), [
    (["hook", "claude-code"], {"EVLOG_HOME": "/h"}, HookPlan("/h", "claude-code")),
    (["--home", "/x", "hook", "codex", "--budget", "900"], {}, HookPlan("/x", "codex", budget=900)),
    (["--home=/x", "--lock-timeout", "3", "hook", "claude-code", "--timeout=5", "--max-bytes", "2048"], {},
     HookPlan("/x", "claude-code", max_bytes=2048, timeout=5.0, lock_timeout=3.0)),
    (["hook", "claude-code"], {"EVLOG_HOME": "/h", "EVLOG_LOCK_TIMEOUT": "0.5"},
     HookPlan("/h", "claude-code", lock_timeout=0.5)),
])
def test_hook_command_lines_are_planned_with_the_clis_defaults(argv, env, want) -> None:  # noqa: ANN001
    assert hook_plan(argv, env) == want


@pytest.mark.parametrize("argv", [
    ["hook"], ["recall", "x"], ["hook", "gemini"], ["hook", "claude-code", "--help"],
    ["hook", "claude-code", "--budget", "10"], ["hook", "claude-code", "--budget", "lots"],
    ["--traceback", "hook", "claude-code"], ["--home"], ["hook", "claude-code", "extra"],
])
def test_anything_else_goes_to_the_cli(argv) -> None:  # noqa: ANN001
    assert hook_plan(argv, {"EVLOG_HOME": "/h"}) is None


@pytest.mark.parametrize(("argv", "env"), [
    (["--lock-timeout", "soon", "hook", "claude-code"], {}),
    (["hook", "claude-code"], {"EVLOG_LOCK_TIMEOUT": "soon"}),
])
def test_a_lock_timeout_the_cli_refuses_goes_to_the_cli(argv, env) -> None:  # noqa: ANN001
    assert hook_plan(argv, {"EVLOG_HOME": "/h", **env}) is None


def test_a_home_that_is_a_file_goes_to_the_cli(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "f").write_text("")
    assert hook_plan(["--home", str(tmp_path / "f"), "hook", "claude-code"], {}) is None
    assert hook_plan(["--home", str(tmp_path / "new"), "hook", "claude-code"], {}) is not None


def test_headless_sessions_never_take_the_fast_path() -> None:
    assert hook_plan(["hook", "claude-code"], {"EVLOG_HEADLESS": "1"}) is None


def test_the_context_events_are_the_hooks_own() -> None:
    assert hook_socket.CONTEXT_EVENTS == hooks.CONTEXT_EVENTS
    assert hook_socket.MAX_PAYLOAD_BYTES == hooks.MAX_PAYLOAD_BYTES


# --- the server and the client --------------------------------------------------------------------------


def test_a_context_hook_is_answered_by_the_handler(home) -> None:  # noqa: ANN001
    with HookServer(home, handlers={"claude-code": echo_handler}) as server:
        got = ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=900, max_bytes=4096)
    assert got == ("out:SessionStart", ["budget=900"]) and server.served == 1
    assert not os.path.exists(socket_path(home))  # closed: the socket is gone


@pytest.mark.parametrize("raw", [payload("Stop", "/tmp"), payload("SessionEnd", "/tmp"), b"{", b"[1]", b""])
def test_capture_events_and_odd_payloads_are_not_served(home, raw) -> None:  # noqa: ANN001
    calls = []
    with HookServer(home, handlers={"claude-code": lambda *a, **k: calls.append(a)}):
        assert ask_daemon(home, "claude-code", raw, budget=None, max_bytes=4096) is None
    assert calls == []


def test_no_daemon_means_none(home) -> None:  # noqa: ANN001
    assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096) is None


def test_a_socket_left_by_a_killed_daemon_is_replaced(home) -> None:  # noqa: ANN001
    os.makedirs(os.path.dirname(socket_path(home)), mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(socket_path(home))
    dead.close()  # the file stays, nobody listens
    assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096) is None
    with HookServer(home, handlers={"claude-code": echo_handler}):
        assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096)


def test_a_second_server_on_a_live_socket_does_not_start(home) -> None:  # noqa: ANN001
    with HookServer(home, handlers={"claude-code": echo_handler}):
        assert "already serves" in HookServer(home, handlers={}).start()
        assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096)


def test_only_the_user_reaches_the_socket(home) -> None:  # noqa: ANN001
    with HookServer(home, handlers={"claude-code": echo_handler}):
        path = socket_path(home)
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_run_folder_that_is_a_symlink_is_refused(home, tmp_path) -> None:  # noqa: ANN001
    os.symlink(str(tmp_path), os.path.join(home, "run"))
    why = HookServer(home, handlers={}).start()
    assert "not a folder of this user" in why and os.listdir(tmp_path) == []


def test_a_path_too_long_for_a_socket_is_not_served(tmp_path) -> None:  # noqa: ANN001
    deep = os.path.join(str(tmp_path), "d" * 90, "ws")
    init_workspace(deep)
    assert "longer than" in HookServer(deep, handlers={}).start()
    assert ask_daemon(deep, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096) is None


def test_a_malformed_request_gets_a_fallback_and_the_server_goes_on(home) -> None:  # noqa: ANN001
    with HookServer(home, handlers={"claude-code": echo_handler}):
        for junk in (b"not json\n", b'{"v": 1, "harness": "claude-code", "bytes": -1, "max_bytes": 4096}\n',
                     b'{"v": 1, "harness": "x", "bytes": 0, "max_bytes": 4096}\n', b"\n" * 3, b""):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(socket_path(home))
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                assert "fallback" in json.loads(s.recv(4096))
        assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096)


def test_a_busy_server_says_fallback_at_once(home) -> None:  # noqa: ANN001
    gate = threading.Event()

    def slow(raw: bytes, **kw: object) -> FakeResult:
        gate.wait(10)
        return FakeResult("late", [])

    with HookServer(home, handlers={"claude-code": slow}):
        waiting = [threading.Thread(target=ask_daemon, args=(home, "claude-code", payload("SessionStart", "/tmp")),
                                    kwargs={"budget": None, "max_bytes": 4096, "timeout": 10})
                   for _ in range(hook_socket.MAX_CONCURRENT)]
        for t in waiting:
            t.start()
        time.sleep(0.5)
        started = time.monotonic()
        assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096) is None
        assert time.monotonic() - started < 1.0
        gate.set()
        for t in waiting:
            t.join()


def test_a_daemon_that_does_not_answer_in_time_means_none(home) -> None:  # noqa: ANN001
    gate = threading.Event()
    with HookServer(home, handlers={"claude-code": lambda raw, **kw: gate.wait(5) and FakeResult("", [])}):
        started = time.monotonic()
        assert ask_daemon(home, "claude-code", payload("SessionStart", "/tmp"), budget=None, max_bytes=4096,
                          timeout=0.3) is None
        assert time.monotonic() - started < 2.0
        gate.set()


# --- the real handlers: the same answer as in-process ---------------------------------------------------------


def _with_memory(home: str, project: str) -> None:
    from eventlog.app import recall

    with Workspace.open(home, writable=True) as ws:
        memory.add(ws, "Tests run with pytest -x", section="Project Context", project=project)
        memory.add(ws, "The staging database is called orca", section="Project Context", project=project)
        memory.add(ws, "Prefers short answers", section="Preferences")
        recall.rebuild(ws)


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit"])
def test_the_daemon_answers_exactly_what_the_hook_process_would(home, tmp_path, event) -> None:  # noqa: ANN001
    project = str(tmp_path / "proj")
    os.makedirs(project)
    _with_memory(home, project)
    raw = payload(event, project, prompt="what is the staging database called?")
    local = hooks.handle_claude_code(raw, home=home, budget=8000)
    with HookServer(home):
        got = ask_daemon(home, "claude-code", raw, budget=8000, max_bytes=8 * 1024 * 1024)
    assert got == (local.stdout, local.notes) and "orca" in local.stdout


# --- end to end: the console script and a running daemon ---------------------------------------------------------


def _entry(home: str, raw: bytes, *args: str, harness: str = "claude-code") -> subprocess.CompletedProcess:
    probe = ("import sys, atexit\n"
             "atexit.register(lambda: sys.stderr.write('CLICK=%s\\n' % ('click' in sys.modules)))\n"
             "from eventlog.entry import main\n"
             f"sys.argv = ['evlog', '--home', {home!r}, 'hook', {harness!r}, *{list(args)!r}]\n"
             "main()\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    return subprocess.run([sys.executable, "-c", probe], input=raw, capture_output=True, timeout=60, env=env)


def _start_daemon(home: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": REPO}
    proc = subprocess.Popen([*ENTRY, "--home", home, "daemon", "--llm", "offline"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not os.path.exists(socket_path(home)):
        assert proc.poll() is None, "the daemon exited"
        assert time.monotonic() < deadline, "the daemon never listened"
        time.sleep(0.1)
    return proc


def test_with_a_daemon_the_hook_prints_the_same_without_importing_the_cli(home, tmp_path) -> None:  # noqa: ANN001
    project = str(tmp_path / "proj")
    os.makedirs(project)
    _with_memory(home, project)
    raw = payload("SessionStart", project)
    cold = _entry(home, raw)
    assert cold.returncode == 0 and "CLICK=False" in cold.stderr.decode()  # no daemon: in-process, no CLI either
    daemon = _start_daemon(home)
    try:
        warm = _entry(home, raw)
        capture = _entry(home, payload("Stop", project))
    finally:
        daemon.terminate()
        daemon.wait(30)
    assert warm.returncode == 0 and "CLICK=False" in warm.stderr.decode()
    assert warm.stdout == cold.stdout and b"Tests run with pytest -x" in warm.stdout
    assert capture.returncode == 0 and "CLICK=False" in capture.stderr.decode()  # in the hook's process, no CLI
    assert not os.path.exists(socket_path(home))  # a daemon stopped by SIGTERM removes its socket


def _cli(home: str, raw: bytes, harness: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    return subprocess.run([sys.executable, "-c", "from eventlog.cli import main; main()", "--home", home, "hook",
                           harness], input=raw, capture_output=True, timeout=60, env=env)


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
@pytest.mark.parametrize(("event", "cwd"), [("SessionStart", "proj"), ("UserPromptSubmit", "proj"),
                                            ("SessionStart", "excluded"), ("UserPromptSubmit", "")])
def test_without_a_daemon_the_hook_prints_what_the_cli_prints_without_importing_it(home, tmp_path, harness, event,
                                                                                  cwd) -> None:  # noqa: ANN001
    from eventlog.app.capture import exclude

    project = str(tmp_path / "proj")
    os.makedirs(project)
    _with_memory(home, project)
    exclude(home, str(tmp_path / "excluded"))
    raw = payload(event, str(tmp_path / cwd) if cwd else 7, prompt="what is the staging database called?")
    fast, slow = _entry(home, raw, harness=harness), _cli(home, raw, harness)
    assert fast.returncode == slow.returncode == 0
    assert fast.stdout == slow.stdout and fast.stderr.decode() == slow.stderr.decode() + "CLICK=False\n"
    assert fast.stdout or fast.stderr.count(b"\n") > 1  # something was printed: memory, or the reason for none


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
@pytest.mark.parametrize("event", ["Stop", "PreCompact", "SessionEnd"])
def test_a_capture_hook_stores_what_the_cli_stores_without_importing_it(tmp_path, harness, event) -> None:  # noqa: ANN001
    from eventlog.app.workspace import Workspace

    transcript = tmp_path / "t.jsonl"
    with open(real_data("claude-spotter", "short.jsonl"), "rb") as f:
        transcript.write_bytes(f.read())
    raw = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "cwd": str(tmp_path),
                      "hook_event_name": event}).encode()
    got = {}
    for way, run in (("entry", _entry), ("cli", _cli)):
        ws_home = str(tmp_path / way)
        init_workspace(ws_home)
        done = run(ws_home, raw, harness=harness)
        ws = Workspace.open(ws_home)
        try:
            stored = [(e.type, getattr(e, "session_key", None), getattr(e, "content", None)) for e in ws.log.read()]
        finally:
            ws.close()
        got[way] = (done.returncode, done.stdout, done.stderr.decode().replace("CLICK=False\n", ""), stored)
        if way == "entry":
            assert "CLICK=False" in done.stderr.decode()
    assert got["entry"] == got["cli"]
    assert harness == "codex" or sum(1 for t, _, _ in got["entry"][3] if t == "message.appended") > 3


def test_an_error_inside_the_in_process_hook_is_a_note_and_exit_0(home, tmp_path) -> None:  # noqa: ANN001
    os.makedirs(os.path.join(home, "memory"), exist_ok=True)
    with open(os.path.join(home, "capture.json"), "w") as f:
        f.write("[")  # unreadable capture state: the hook says so, the agent goes on
    got = _entry(home, payload("SessionStart", str(tmp_path)))
    assert got.returncode == 0 and b"capture.json" in got.stderr and got.stdout == b""
    assert got.stderr.decode() == _cli(home, payload("SessionStart", str(tmp_path)), "claude-code").stderr.decode() \
        + "CLICK=False\n"


def test_option_errors_are_still_the_clis(home) -> None:  # noqa: ANN001
    bad = _entry(home, payload("SessionStart", "/tmp"), "--budget", "10")
    assert bad.returncode == 2 and b"--budget" in bad.stderr


def test_a_hook_whose_input_never_ends_gives_up_at_its_timeout(home) -> None:  # noqa: ANN001
    """The fast path reads stdin before the CLI's watchdog exists: it has its own."""
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    started = time.monotonic()
    with subprocess.Popen([*ENTRY, "--home", home, "hook", "claude-code", "--timeout", "1"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        proc.stdin.write(b'{"hook_event_name": "SessionStart"')  # and never closed
        proc.stdin.flush()
        code = proc.wait(timeout=30)
        err = proc.stderr.read()
    assert code == 0 and b"gave up after 1s" in err and time.monotonic() - started < 20
