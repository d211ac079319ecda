"""Context hooks through a warm daemon: ``evlog hook`` asks the running daemon over a local socket.

A hook is a new process, and most of its time is Python's start-up plus importing
evlog's workspace, recall and agents code. When ``evlog daemon`` runs it serves the
**context** hooks of its workspace (``SessionStart`` and ``UserPromptSubmit``, which only
read) on a Unix socket, ``<home>/run/hooks.sock`` (``socket_path``). The hook process then
imports only this module and the standard library (``eventlog.entry``), sends the payload,
and prints the daemon's answer, which is exactly what the in-process handler
(``hooks.handle_claude_code`` / ``codex_hooks.handle_codex``) returns: the daemon runs that
same handler, with its imports and caches already warm.

**Nothing changes when no daemon runs, and nothing is ever lost.** Capture events (which
write) always run in the hook's own process. ``ask_daemon`` returns ``None`` on every
failure (no socket, nobody listening, refused, timed out, an answer it cannot read), and
the caller then runs the in-process path, as before this module existed. The daemon
answers ``{"fallback": reason}`` for anything it will not serve.

**Only the user reaches it.** The socket's folder is created 0700 (a symlink or another
owner's folder is refused, so no input chooses where the socket goes) and the socket is
0600; the server accepts a peer only when ``SO_PEERCRED`` names its own uid (where the
platform has it), and the client connects only to a socket its own uid owns. Requests are
bounded (header 4 KiB, payload ``MAX_PAYLOAD_BYTES``), each connection has a deadline, and
at most ``MAX_CONCURRENT`` are served at once (the rest get a fallback answer at once).

Wire format, one request per connection: a JSON header line ``{"v": 1, "harness":
"claude-code"|"codex", "budget": int|null, "max_bytes": int, "bytes": N}``, then N payload
bytes; the answer is one JSON line ``{"v": 1, "stdout": str, "notes": [str]}``.
"""

from __future__ import annotations

import json
import os
import stat
import threading

# ``socket`` and ``struct`` are imported where used: a hook process with no daemon to ask never loads
# them (nor ``typing``), since this module is on every context hook's path (``eventlog.entry``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from typing import Any

PROTOCOL = 1
SOCKET_NAME = os.path.join("run", "hooks.sock")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")  # the same as hooks.CONTEXT_EVENTS (a test keeps them equal)
HARNESSES = ("claude-code", "codex")
MAX_HEADER_BYTES = 4096
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # the same as hooks.MAX_PAYLOAD_BYTES
HOOK_LOCK_WAIT_S = 2.0  # the longest a hook waits for the workspace lock, whatever --lock-timeout says
MAX_CONCURRENT = 8
SERVE_TIMEOUT = 10.0  # seconds the daemon gives one connection
MAX_PATH_BYTES = 100  # sun_path is 104-108 bytes; longer paths get no socket (hooks stay in-process)


def socket_path(home: str) -> str:
    """Where the daemon of ``home`` listens."""
    return os.path.join(os.path.abspath(home), SOCKET_NAME)


def context_event(raw: bytes) -> str:
    """The payload's ``hook_event_name`` when it is a context event the daemon serves, else ``""``."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return ""
    name = data.get("hook_event_name") if isinstance(data, dict) else None
    return name if name in CONTEXT_EVENTS else ""


# --- the hook's side ---------------------------------------------------------------------------


def ask_daemon(home: str, harness: str, raw: bytes, *, budget: int | None, max_bytes: int,
               timeout: float = 3.0) -> tuple[str, list[str]] | None:
    """The daemon's answer (stdout, notes) to one context hook, or ``None``: run it in-process."""
    path = socket_path(home)
    if len(os.fsencode(path)) > MAX_PATH_BYTES or not _own_socket(path):
        return None
    import socket

    header = {"v": PROTOCOL, "harness": harness, "budget": budget, "max_bytes": max_bytes, "bytes": len(raw)}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(json.dumps(header).encode() + b"\n" + raw)
            s.shutdown(socket.SHUT_WR)
            answer = _read_all(s, 16 * 1024 * 1024)
    except OSError:
        return None
    return _parse_answer(answer)


def _own_socket(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid()


def _read_all(s: socket.socket, limit: int) -> bytes:
    chunks, size = [], 0
    while size <= limit:
        chunk = s.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _parse_answer(answer: bytes) -> tuple[str, list[str]] | None:
    try:
        value = json.loads(answer)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("v") != PROTOCOL or "fallback" in value:
        return None
    out, notes = value.get("stdout"), value.get("notes")
    if not isinstance(out, str) or not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        return None
    return out, notes


# --- the daemon's side -------------------------------------------------------------------------

if TYPE_CHECKING:
    Handler = Callable[..., Any]  # hooks.handle_claude_code's signature; returns a HookResult


def default_handlers() -> dict[str, Handler]:
    """The in-process handlers, imported once (this import is the warmth a hook process lacks)."""
    from eventlog.app.agents.codex_hooks import handle_codex
    from eventlog.app.agents.hooks import handle_claude_code

    return {"claude-code": handle_claude_code, "codex": handle_codex}


class HookServer:
    """Serve the context hooks of ``home`` on ``socket_path(home)`` from threads, until ``close``.

    ``start()`` returns the reason it did not start ("" when it serves): a path too long for a
    Unix socket, a platform without them, a folder it must not use, a live server already there.
    """

    def __init__(self, home: str, *, handlers: dict[str, Handler] | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.home = os.path.abspath(home)
        self.path = socket_path(home)
        self._handlers = handlers
        self._log = log or (lambda _line: None)
        self._sock: socket.socket | None = None
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT)
        self._thread: threading.Thread | None = None
        self.served = 0

    def start(self) -> str:
        why = self._prepare()
        if why:
            self._log(f"hooks: not served by the daemon ({why}); they run in their own process")
            return why
        if self._handlers is None:
            self._handlers = default_handlers()
        self._thread = threading.Thread(target=self._accept_loop, name="evlog-hooks", daemon=True)
        self._thread.start()
        self._log(f"hooks: serving SessionStart and UserPromptSubmit on {self.path}")
        return ""

    def _prepare(self) -> str:
        import socket

        if not hasattr(socket, "AF_UNIX"):
            return "this platform has no Unix sockets"
        if len(os.fsencode(self.path)) > MAX_PATH_BYTES:
            return f"the socket path would be longer than {MAX_PATH_BYTES} bytes"
        why = _private_dir(os.path.dirname(self.path))
        if why:
            return why
        if _own_socket(self.path):
            if _listening(self.path):
                return "another process already serves this workspace's hooks"
            os.unlink(self.path)  # a socket left by a daemon that was killed
        elif os.path.lexists(self.path):
            return f"{self.path} exists and is not this user's socket"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.path)
            os.chmod(self.path, 0o600)
            sock.listen(64)
        except OSError as e:
            sock.close()
            return f"cannot listen on {self.path}: {e.strerror or e}"
        sock.settimeout(0.5)
        self._sock = sock
        return ""

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        sock.close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def __enter__(self) -> HookServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while True:
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            if not self._slots.acquire(blocking=False):
                _answer(conn, {"v": PROTOCOL, "fallback": "busy"})
                continue
            threading.Thread(target=self._serve, args=(conn,), name="evlog-hook", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(SERVE_TIMEOUT)
            _answer(conn, self.answer(conn))
        except Exception as e:  # noqa: BLE001 - one bad connection never stops the server
            self._log(f"hooks: a request failed ({e.__class__.__name__}: {e}); the hook ran in-process")
        finally:
            self._slots.release()

    def answer(self, conn: socket.socket) -> dict[str, Any]:
        """The answer to the request on ``conn`` (a fallback for anything this server does not serve)."""
        if not _same_user(conn):
            return {"v": PROTOCOL, "fallback": "another user"}
        request = _read_request(conn)
        if isinstance(request, str):
            return {"v": PROTOCOL, "fallback": request}
        header, raw = request
        handler = (self._handlers or {}).get(header["harness"])
        if handler is None or not context_event(raw):
            return {"v": PROTOCOL, "fallback": "not a context hook"}
        result = handler(raw, home=self.home, budget=header["budget"], max_bytes=header["max_bytes"],
                         lock_timeout=HOOK_LOCK_WAIT_S)
        self.served += 1
        return {"v": PROTOCOL, "stdout": result.stdout, "notes": list(result.notes)}


def _private_dir(path: str) -> str:
    """Make ``path`` a 0700 folder of this user; the reason when it cannot be one."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        return f"cannot create {path}: {e.strerror or e}"
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return f"{path} is not a folder of this user"
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return ""


def _listening(path: str) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(path)
        except OSError:
            return False
    return True


def _same_user(conn: socket.socket) -> bool:
    import socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the 0700 folder is the guard where the platform cannot name the peer
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], bytes] | str:
    """(header, payload) of a well-formed request, else the reason it is not one."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(MAX_HEADER_BYTES)
        if not chunk:
            return "no request"
        data += chunk
        if len(data) > MAX_HEADER_BYTES + MAX_PAYLOAD_BYTES:
            return "too large"
    line, rest = data.split(b"\n", 1)
    if len(line) > MAX_HEADER_BYTES:
        return "header too large"
    try:
        header = json.loads(line)
    except ValueError:
        return "bad header"
    if not _good_header(header):
        return "bad header"
    raw = rest + _read_all(conn, MAX_PAYLOAD_BYTES) if len(rest) < header["bytes"] else rest
    if len(raw) != header["bytes"]:
        return "payload length differs from the header"
    return header, raw


def _good_header(h: object) -> bool:
    if not isinstance(h, dict) or h.get("v") != PROTOCOL or h.get("harness") not in HARNESSES:
        return False
    n, budget, max_bytes = h.get("bytes"), h.get("budget"), h.get("max_bytes")
    return (type(n) is int and 0 <= n <= MAX_PAYLOAD_BYTES
            and (budget is None or (type(budget) is int and budget >= 500))
            and type(max_bytes) is int and max_bytes >= 1024)


def _answer(conn: socket.socket, value: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(value).encode() + b"\n")
    except OSError:
        pass
    finally:
        conn.close()
