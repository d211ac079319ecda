"""Login rate limits (issue 19, section 5): atomic, shared by every process, per source and account.

Each attempt takes its slot before its password is checked, so 25 concurrent guesses for
one e-mail get at most 10 password checks (the old count was read before scrypt and
written after, and let all 25 through); and the limit is per (source, account) and per
source, so a guesser who knows an e-mail cannot lock its owner out from another address.
Run against MariaDB (``auth.login``, threads and two processes) and the in-memory gateway
(``MemoryGateway.login``), with the same expectations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from eventlog.app.gateway import auth
from eventlog.app.gateway.login_limit import LoginPolicy
from eventlog.app.gateway.memory_store import MemoryGateway
from tests.conftest import REPO
from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql

PASSWORD = "correct horse battery"
POLICY = LoginPolicy(per_email=10, per_client=1000, window=900)

Login = Callable[..., object]  # login(email, password, client=..., policy=..., clock=...)


class Checks:
    """Counts password checks (``auth.verify_password`` calls: scrypt, real or dummy)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        self._lock = threading.Lock()
        real = auth.verify_password

        def counting(password: str, stored: str) -> bool:
            with self._lock:
                self.n += 1
            return real(password, stored)

        monkeypatch.setattr(auth, "verify_password", counting)


def mysql_login() -> Iterator[tuple[Login, Callable[[str], None]]]:
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.schema import migrate

    conns: list[Connection] = []
    local = threading.local()

    def conn() -> Connection:
        if not hasattr(local, "conn"):
            local.conn = Connection(DSN.parse(MYSQL_URL))
            conns.append(local.conn)
        return local.conn

    migrate(conn())

    def login(email: str, password: str, *, client: str, policy: LoginPolicy = POLICY, clock=None) -> object:
        kw = {"clock": clock} if clock else {}
        return auth.login(conn(), email, password, kind="web", client=client, policy=policy, **kw)[0]

    yield login, lambda email: auth.add_user(conn(), email, PASSWORD) and None
    for c in conns:
        c.close()


def memory_login() -> Iterator[tuple[Login, Callable[[str], None]]]:
    now = [1_800_000_000.0]
    gw = MemoryGateway(clock=lambda: now[0])

    def login(email: str, password: str, *, client: str, policy: LoginPolicy = POLICY, clock=None) -> object:
        gw.clock = clock or (lambda: now[0])
        return gw.login(email, password, client=client, policy=policy)

    yield login, lambda email: gw.set_password(email, PASSWORD) and None


@pytest.fixture(params=["memory", pytest.param("mysql", marks=[pytest.mark.mysql, requires_mysql])])
def backend(request):
    gen = memory_login() if request.param == "memory" else mysql_login()
    yield next(gen)
    next(gen, None)


def source() -> str:
    """A client address no other test (or earlier run against the same database) used."""
    return "src-" + uuid.uuid4().hex[:16]


def guess(login: Login, email: str, client: str, password: str = "wrong guess") -> str:
    try:
        login(email, password, client=client)
    except auth.TooManyAttempts:
        return "limited"
    except auth.LoginFailed:
        return "failed"
    return "ok"


def test_25_concurrent_guesses_for_one_email_get_at_most_10_password_checks(backend, monkeypatch):
    login, add = backend
    email = fresh_email("guessed")
    add(email)
    checks = Checks(monkeypatch)
    attacker = source()
    with ThreadPoolExecutor(25) as pool:
        got = list(pool.map(lambda _: guess(login, email, attacker), range(25)))
    assert checks.n <= 10, f"{checks.n} password checks for 25 concurrent guesses"
    assert got.count("failed") == checks.n and got.count("limited") == 25 - checks.n
    assert guess(login, email, attacker, PASSWORD) == "limited", "the guesser's address is limited, right or wrong"
    assert guess(login, email, source(), PASSWORD) == "ok", "the owner, from another address, still logs in"


def test_a_guesser_cannot_lock_the_owner_out_from_another_address(backend):
    login, add = backend
    email, guesser = fresh_email("lockout"), source()
    add(email)
    assert [guess(login, email, guesser) for _ in range(12)] == ["failed"] * 10 + ["limited"] * 2
    assert guess(login, email, source(), PASSWORD) == "ok"


def test_an_owner_logging_in_again_and_again_is_never_limited(backend):
    login, add = backend
    email, home = fresh_email("owner"), source()
    add(email)
    assert [guess(login, email, home, PASSWORD) for _ in range(15)] == ["ok"] * 15


def test_one_source_spraying_many_accounts_is_limited_and_others_are_not(backend):
    login, add = backend
    policy = LoginPolicy(per_email=10, per_client=3, window=900)
    sprayer, victim = source(), fresh_email("victim")
    add(victim)

    def attempt(email: str, client: str, password: str = "guess") -> str:
        return guess(lambda *a, **k: login(*a, **{**k, "policy": policy}), email, client, password)

    assert [attempt(fresh_email(f"spray{i}"), sprayer) for i in range(3)] == ["failed"] * 3
    assert attempt(victim, sprayer, PASSWORD) == "limited"
    assert attempt(victim, source(), PASSWORD) == "ok"


def test_the_window_expires_and_the_source_may_try_again(backend):
    login, add = backend
    email, guesser = fresh_email("window"), source()
    add(email)
    policy = LoginPolicy(per_email=2, per_client=1000, window=60)
    now = [1_900_000_000.0 + uuid.uuid4().int % 1000]

    def attempt(password: str) -> str:
        return guess(lambda *a, **k: login(*a, **{**k, "policy": policy, "clock": lambda: now[0]}),
                     email, guesser, password)

    assert [attempt("guess") for _ in range(3)] == ["failed", "failed", "limited"]
    now[0] += 59
    assert attempt(PASSWORD) == "limited"
    now[0] += 2
    assert attempt(PASSWORD) == "ok"


def test_the_limit_message_says_when_to_retry(backend):
    login, add = backend
    email, guesser = fresh_email("retry"), source()
    add(email)
    policy = LoginPolicy(per_email=1, per_client=1000, window=900)
    with pytest.raises(auth.LoginFailed):
        login(email, "guess", client=guesser, policy=policy)
    with pytest.raises(auth.TooManyAttempts) as e:
        login(email, "guess", client=guesser, policy=policy)
    assert 0 < e.value.retry_after <= 900 and "15 minute(s)" in str(e.value)


GUESSER = textwrap.dedent("""
    import json, sys, threading
    from concurrent.futures import ThreadPoolExecutor
    from eventlog.app.gateway import auth
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.login_limit import LoginPolicy

    url, email, client, go, ready = sys.argv[1:6]
    checks, lock, local = [0], threading.Lock(), threading.local()
    real = auth.verify_password
    def counting(p, s):
        with lock:
            checks[0] += 1
        return real(p, s)
    auth.verify_password = counting
    def one(_):
        if not hasattr(local, "c"):
            local.c = Connection(DSN.parse(url))
        try:
            auth.login(local.c, email, "wrong guess", kind="sync", client=client,
                       policy=LoginPolicy(per_email=10, per_client=1000))
        except auth.AuthError:
            pass
    open(ready, "w").close()
    import os, time
    while not os.path.exists(go):
        time.sleep(0.005)
    with ThreadPoolExecutor(13) as pool:
        list(pool.map(one, range(13)))
    print(json.dumps({"checks": checks[0]}))
""")


@pytest.mark.mysql
@requires_mysql
def test_two_gateway_processes_share_the_limit(tmp_path):
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.schema import migrate

    c = Connection(DSN.parse(MYSQL_URL))
    migrate(c)
    email, attacker = fresh_email("twoproc"), source()
    auth.add_user(c, email, PASSWORD)
    go = str(tmp_path / "go")
    env = {**os.environ, "PYTHONPATH": REPO}
    ready = [f"{go}.{i}.ready" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", GUESSER, MYSQL_URL, email, attacker, go, r], env=env,
                              stdout=subprocess.PIPE, text=True) for r in ready]
    try:
        import time

        deadline = time.monotonic() + 30
        while not all(os.path.exists(r) for r in ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        open(go, "w").close()  # both processes start guessing at once
        outs = [p.communicate(timeout=60)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    total = sum(json.loads(o)["checks"] for o in outs)
    assert all(p.returncode == 0 for p in procs)
    assert total <= 10, f"two processes made {total} password checks for 26 guesses"
    assert auth.login(c, email, PASSWORD, kind="web", client=source())[0].email == email
    c.close()


def test_callers_without_an_address_share_no_source_limit(backend):
    login, add = backend
    policy = LoginPolicy(per_email=10, per_client=2, window=900)
    emails = [fresh_email(f"noaddr{i}") for i in range(4)]
    for e in emails:
        add(e)
    attempt = lambda *a, **k: login(*a, **{**k, "policy": policy})  # noqa: E731
    assert [guess(attempt, e, "") for e in emails[:3]] == ["failed"] * 3
    assert guess(attempt, emails[3], "", PASSWORD) == "ok", "callers naming no address must not count as one source"
