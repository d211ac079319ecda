"""``evlog web --gateway``: sign-in, isolation between users, CSRF, cookies, stateless processes.

Pages are requested through Starlette's test client against ``gateway_app`` over a real
MariaDB (``EVLOG_TEST_MYSQL_URL``); every test works under fresh user e-mails.
"""

from __future__ import annotations

import html
import re
import urllib.parse
import uuid

import markupsafe
import pytest
from starlette.testclient import TestClient

from eventlog.app.gateway import auth, read_model, web_events
from eventlog.app.gateway.pool import Pool
from eventlog.app.gateway.read_model import ReadModel
from eventlog.app.gateway.users import resolve_user
from eventlog.app.web import security
from eventlog.app.web.app import anchor, gateway_app, key_token
from eventlog.events import MessageAppended, SessionCreated
from tests.app.web.test_web_local import active_markup
from tests.mysql_helpers import MYSQL_URL, fresh_email, query, requires_mysql

pytestmark = [pytest.mark.mysql, requires_mysql]

PASSWORD = "correct horse battery"
BASE = "http://gw.test"
HOSTILE_KEY = "<script>alert('k')</script>"
HOSTILE = "<img src=x onerror=alert('x')><script>alert(1)</script>"


@pytest.fixture(scope="module")
def pool():
    p = Pool(MYSQL_URL, size=8)
    p.migrate()
    yield p
    p.close()


def app_of(pool, **kw):
    kw.setdefault("policy", auth.LoginPolicy(per_email=5, per_client=10_000, window=900))
    return gateway_app(pool, **kw)


@pytest.fixture
def app(pool):
    return app_of(pool)


def make_user(pool, label: str, sessions: dict[str, list[str]] | None = None, project: str = "/home/dev/p") -> str:
    email = fresh_email(label)
    with pool.connection() as conn:
        auth.add_user(conn, email, PASSWORD)
    if sessions:
        seed(pool, email, [ev for key, texts in sessions.items() for ev in
                           [SessionCreated(session_key=key, title=f"title of {key}", project=project),
                            *[MessageAppended(session_key=key, role="user", content=t, message_id=f"{key}-m{i}")
                              for i, t in enumerate(texts)]]], project)
    return email


def seed(pool, email: str, events: list, project: str = "") -> None:
    """Store events in the account's log (as its web view's: ``web_events``), as a device's push would."""
    with pool.connection() as conn:
        conn.transaction(lambda cur: web_events.append(cur, resolve_user(cur, email), [(e, project) for e in events]),
                         doing="seeding")


def history(pool, email: str, key: str) -> list:
    """The session's messages as the gateway's read model shows them."""
    with pool.connection() as conn:
        uid = conn.transaction(lambda cur: resolve_user(cur, email).id, doing="test")
    return ReadModel(pool).read(uid, lambda cur, u: read_model.messages(cur, u, key)[0])


def login_csrf(c: TestClient) -> str:
    page = c.get("/login")
    assert page.status_code == 200
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def sign_in(c: TestClient, email: str, password: str = PASSWORD, *, next_url: str = "/sessions"):
    token = login_csrf(c)
    return c.post("/login", data={"csrf": token, "email": email, "password": password, "next": next_url})


def client(app, **kw) -> TestClient:
    kw.setdefault("base_url", BASE)
    return TestClient(app, follow_redirects=False, **kw)


def signed_in(app, email: str, **kw) -> TestClient:
    c = client(app, **kw)
    r = sign_in(c, email)
    assert r.status_code == 303, r.text
    return c


def page_csrf(c: TestClient, path: str = "/sessions") -> str:
    return re.search(r'name="csrf" value="([^"]+)"', c.get(path).text).group(1)


# --------------------------------------------------------------------------- signing in


def test_pages_need_a_sign_in_and_come_back_after_it(app, pool):
    email = make_user(pool, "alice", {"s1": ["hello"]})
    c = client(app)
    r = c.get("/s/" + key_token("s1") + "?page=1")
    assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
    back = urllib.parse.unquote(r.headers["location"].split("next=", 1)[1])
    r = sign_in(c, email, next_url=back)
    assert r.status_code == 303 and r.headers["location"] == back
    assert "hello" in c.get(back).text


def test_the_session_cookie_is_httponly_strict_and_secure_over_https(app, pool):
    email = make_user(pool, "cookie")
    r = sign_in(client(app), email)
    cookie = [v for k, v in r.headers.multi_items() if k == "set-cookie" and v.startswith(security.SESSION_COOKIE)][0]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie and "Secure" not in cookie
    r = sign_in(client(app, base_url="https://gw.test"), email)
    cookie = [v for k, v in r.headers.multi_items() if k == "set-cookie" and v.startswith("__Host-")][0]
    assert cookie.startswith(security.SECURE_SESSION_COOKIE + "=") and "Secure" in cookie and "HttpOnly" in cookie
    assert "strict-transport-security" in r.headers


def test_a_wrong_password_and_an_unknown_user_fail_alike(app, pool):
    email = make_user(pool, "enum")
    wrong = sign_in(client(app), email, "not the password")
    unknown = sign_in(client(app), fresh_email("nobody"), "not the password")
    nopass = fresh_email("nopass")
    seed(pool, nopass, [])  # a user made by a device's push: no password
    no_password = sign_in(client(app), nopass, "anything at all")
    bodies = []
    for r, who in ((wrong, email), (unknown, None), (no_password, nopass)):
        assert r.status_code == 401
        text = re.sub(r'value="[^"]*"', "", r.text)
        bodies.append(text.replace(html.escape(who or ""), "EMAIL") if who else re.sub(r"nobody-\w+@example\.test",
                                                                                         "EMAIL", text))
    assert "wrong e-mail or password" in bodies[0]
    assert bodies[0] == bodies[1] == bodies[2]


def test_failed_logins_are_rate_limited_per_email_whether_the_user_exists_or_not(app, pool):
    email = make_user(pool, "limited")
    for _ in range(5):
        assert sign_in(client(app), email, "guess").status_code == 401
    r = sign_in(client(app), email)  # the right password, but too late
    assert r.status_code == 429 and "too many failed logins" in r.text and "retry-after" in r.headers
    ghost = fresh_email("ghost")
    codes = [sign_in(client(app), ghost, "guess").status_code for _ in range(6)]
    assert codes == [401] * 5 + [429]
    other = make_user(pool, "unaffected")
    assert sign_in(client(app), other).status_code == 303


def test_failed_logins_are_rate_limited_per_client_address(pool):
    app = app_of(pool, policy=auth.LoginPolicy(per_email=100, per_client=3, window=900))
    addr = ("client-" + uuid.uuid4().hex, 1234)  # an address no other test (or earlier run) used
    victim = make_user(pool, "victim")
    for i in range(3):
        assert sign_in(client(app, client=addr), fresh_email(f"spray{i}"), "guess").status_code == 401
    assert sign_in(client(app, client=addr), victim).status_code == 429
    assert sign_in(client(app, client=("client-" + uuid.uuid4().hex, 1)), victim).status_code == 303


def test_the_login_form_needs_its_csrf_cookie_and_field(app, pool):
    email = make_user(pool, "logincsrf")
    c = client(app)
    r = c.post("/login", data={"email": email, "password": PASSWORD})
    assert r.status_code == 403
    token = login_csrf(c)
    r = c.post("/login", data={"csrf": token + "x", "email": email, "password": PASSWORD})
    assert r.status_code == 403
    r = c.post("/login", data={"csrf": token, "email": email, "password": PASSWORD},
               headers={"Origin": "https://evil.example"})
    assert r.status_code == 403


def test_sign_out_revokes_the_session_everywhere(app, pool):
    email = make_user(pool, "bye")
    c = signed_in(app, email)
    cookie = c.cookies.get(security.SESSION_COOKIE)
    assert c.post("/logout", data={"csrf": "wrong"}).status_code == 403
    r = c.post("/logout", data={"csrf": page_csrf(c)})
    assert r.status_code == 303 and r.headers["location"] == "/login"
    replay = client(app)
    replay.cookies.set(security.SESSION_COOKIE, cookie)
    assert replay.get("/sessions").status_code == 303


def test_a_new_password_signs_the_user_out_of_every_web_session(app, pool):
    email = make_user(pool, "passwd")
    c = signed_in(app, email)
    assert c.get("/sessions").status_code == 200
    with pool.connection() as conn:
        auth.set_user_password(conn, email, "another good password")
    assert c.get("/sessions").status_code == 303


def test_a_local_mode_cookie_or_a_sync_token_never_opens_the_gateway(app, pool):
    email = make_user(pool, "stolen", {"s": ["secret text"]})
    with pool.connection() as conn:
        _, sync_token = auth.login(conn, email, PASSWORD, kind="sync")
    local_token = security.new_secret()
    for name, value in ((security.LOCAL_COOKIE, local_token), (security.SESSION_COOKIE, local_token),
                        (security.SESSION_COOKIE, sync_token), (security.SECURE_SESSION_COOKIE, sync_token)):
        c = client(app)
        c.cookies.set(name, value)
        r = c.get("/sessions")
        assert r.status_code == 303 and "secret text" not in r.text, name


def test_a_web_session_token_is_no_sync_token(app, pool):
    email = make_user(pool, "webtok")
    c = signed_in(app, email)
    cookie = c.cookies.get(security.SESSION_COOKIE)
    r = client(app).get("/api/sync/v1/me", headers={"Authorization": f"Bearer {cookie}"})
    assert r.status_code == 401


def test_the_database_keeps_only_hashes_of_tokens(app, pool):
    email = make_user(pool, "hashes")
    c = signed_in(app, email)
    cookie = c.cookies.get(security.SESSION_COOKIE)
    rows = query("SELECT t.token_hash FROM gateway_tokens t JOIN gateway_users u ON u.id = t.user_id "
                 "WHERE u.email = %s", (email,))
    assert len(rows) == 1 and cookie.encode() not in rows[0][0] and rows[0][0] == auth.token_hash(cookie)
    stored = query("SELECT password_hash FROM gateway_users WHERE email = %s", (email,))[0][0]
    assert stored.startswith("scrypt$n=16384,r=8,p=1$") and PASSWORD not in stored


# --------------------------------------------------------------------------- isolation


@pytest.fixture
def two_users(app, pool):
    shared = "shared-key"
    a = make_user(pool, "owner", {shared: ["A's private words"], "only-a": ["A alone"]}, project="/secret/a-project")
    b = make_user(pool, "other", {shared: ["B's own words"]})
    return a, b, shared


def test_user_b_gets_404_for_every_page_of_user_a_and_a_list_without_them(app, two_users):
    a, b, shared = two_users
    cb = signed_in(app, b)
    listing = cb.get("/sessions").text
    assert "only-a" not in listing and "A&#39;s private" not in listing and "A's private" not in listing
    for path in (f"/s/{key_token('only-a')}", f"/s/{key_token('only-a')}?page=1",
                 f"/s/{key_token('only-a')}/m/{key_token('only-a-m0')}",
                 f"/s/{key_token(shared)}/m/{key_token(shared + '-m0')}-guess",
                 f"/s/{key_token('guessed-key-' + a)}"):
        r = cb.get(path)
        assert r.status_code == 404 and "A alone" not in r.text, path
    own = cb.get(f"/s/{key_token(shared)}").text
    assert "B's own words" in html.unescape(own) and "private" not in own  # a message is Markdown now (' is not escaped)
    for path in ("/sessions", "/plots", "/sessions?project=%2Fsecret%2Fa-project"):
        assert "a-project" not in cb.get(path).text.replace("%2Fsecret%2Fa-project", ""), path
    found = cb.get("/sessions", params={"q": "private"}).text
    assert "A&#39;s private words" not in found and "No message matches" in found
    mine = cb.get("/sessions", params={"q": "own words"}).text
    assert "B&#39;s own words" in mine and 'class="hit"' in mine


def test_user_b_cannot_add_a_message_to_user_a_s_session(app, two_users, pool):
    a, b, shared = two_users
    cb = signed_in(app, b)
    token = page_csrf(cb)
    r = cb.post(f"/s/{key_token('only-a')}/messages", data={"csrf": token, "content": "sneaky"})
    assert r.status_code == 404
    assert [m.content for m in history(pool, a, "only-a")] == ["A alone"]
    r = cb.post(f"/s/{key_token(shared)}/messages", data={"csrf": token, "content": "mine"})
    assert r.status_code == 303
    assert [m.content for m in history(pool, a, shared)] == ["A's private words"]
    assert [m.content for m in history(pool, b, shared)] == ["B's own words", "mine"]


# --------------------------------------------------------------------------- adding messages, CSRF


def test_adding_a_message_needs_the_session_csrf_token_and_the_same_origin(app, pool):
    email = make_user(pool, "writer", {"s": ["first"]})
    other = signed_in(app, make_user(pool, "csrfother"))
    c = signed_in(app, email)
    url = f"/s/{key_token('s')}/messages"
    assert c.post(url, data={"content": "no token"}).status_code == 403
    assert c.post(url, data={"content": "other's token", "csrf": page_csrf(other)}).status_code == 403
    token = page_csrf(c, f"/s/{key_token('s')}")
    assert c.post(url, data={"content": "cross", "csrf": token}, headers={"Origin": "https://evil.example"}
                  ).status_code == 403
    assert c.post(url, data={"content": "ref", "csrf": token}, headers={"Referer": "https://evil.example/x"}
                  ).status_code == 403
    assert c.post(url, content=b'{"content": "json"}', headers={"Content-Type": "application/json"}
                  ).status_code == 400
    r = c.post(url, data={"content": "from the browser", "csrf": token}, headers={"Origin": BASE})
    assert r.status_code == 303
    got = history(pool, email, "s")
    assert [m.content for m in got] == ["first", "from the browser"] and got[1].role == "user"
    assert r.headers["location"] == f"/s/{key_token('s')}?page=1#{anchor(got[1].id)}"
    assert "from the browser" in c.get(r.headers["location"].split("#")[0]).text
    jump = c.get(f"/s/{key_token('s')}/m/{key_token(got[1].id)}")
    assert jump.status_code == 303 and jump.headers["location"] == r.headers["location"]
    plots = c.get("/plots").text
    assert re.search(r"<title>\d{4}-\d\d-\d\d · /home/dev/p: 2 messages</title>", plots)


def test_an_empty_or_oversized_message_is_refused(app, pool):
    email = make_user(pool, "sizes", {"s": ["first"]})
    c = signed_in(app, email)
    url = f"/s/{key_token('s')}/messages"
    token = page_csrf(c)
    assert c.post(url, data={"content": "   ", "csrf": token}).status_code == 400
    assert c.post(url, data={"content": "x" * 100_001, "csrf": token}).status_code == 400


# --------------------------------------------------------------------------- hostile content





def test_hostile_keys_titles_and_messages_render_as_text(app, pool):
    email = fresh_email("xss")
    with pool.connection() as conn:
        auth.add_user(conn, email, PASSWORD)
    seed(pool, email, [SessionCreated(session_key=HOSTILE_KEY, title=HOSTILE, project=HOSTILE),
                       MessageAppended(session_key=HOSTILE_KEY, role="user", content=HOSTILE, message_id=HOSTILE)],
         HOSTILE)
    c = signed_in(app, email)
    for path in ("/sessions", f"/s/{key_token(HOSTILE_KEY)}", "/plots", "/sessions?q=" + urllib.parse.quote("<img")):
        assert active_markup(c.get(path).text) == [], path
    body = c.get(f"/s/{key_token(HOSTILE_KEY)}").text
    assert str(markupsafe.escape(HOSTILE)) in body  # shown, as text


# --------------------------------------------------------------------------- stateless processes


def test_any_process_serves_any_session(pool):
    """Sessions live in the database: a cookie from one process works on another, a logout ends it on both."""
    one, two = app_of(pool), app_of(pool)
    email = make_user(pool, "roaming", {"s": ["hello"]})
    c1 = signed_in(one, email)
    cookie = c1.cookies.get(security.SESSION_COOKIE)
    c2 = client(two)
    c2.cookies.set(security.SESSION_COOKIE, cookie)
    assert "hello" in c2.get(f"/s/{key_token('s')}").text
    token = page_csrf(c2)
    assert c2.post(f"/s/{key_token('s')}/messages", data={"csrf": token, "content": "via two"}).status_code == 303
    assert "via two" in c1.get(f"/s/{key_token('s')}").text
    assert c1.post("/logout", data={"csrf": token}).status_code == 303
    assert c2.get("/sessions").status_code == 303


# --------------------------------------------------------------------------- memory


def test_the_memory_page_shows_the_account_s_facts_and_a_teammate_s_with_its_author(app, pool):
    from eventlog.app.gateway.event_store import MySQLEventStore
    from eventlog.events import MemoryAppended, MemoryForgotten

    owner, mate = make_user(pool, "memowner"), make_user(pool, "memmate")
    seed(pool, owner, [MemoryAppended(fact_id="f-own", scope="user", section="Preferences", text="Likes tea", by="user"),
                       MemoryAppended(fact_id="f-gone", scope="user", section="Preferences", text="Likes coffee",
                                      by="user"),
                       MemoryForgotten(fact_id="f-gone", by="user")])
    store = MySQLEventStore(pool)
    store.share(owner, "/srv/shop", mate)
    seed(pool, mate, [MemoryAppended(fact_id="f-mate", scope="project", project="/srv/shop",
                                     section="Project Context", text="CI runs on <b>Fridays</b>", by="dream")],
         "/srv/shop")
    page = signed_in(app, owner).get("/memory")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "Likes tea" in text and "Likes coffee" not in text  # forgotten: not in MEMORY.md
    assert "CI runs on <b>Fridays</b>" in text and f"by {mate}" in text and f"by {owner}" not in text
    assert active_markup(page.text) == []
    assert text.index("Likes tea") < text.index("/srv/shop")  # the global file first, as on a device


def test_messages_added_at_once_by_two_gateway_processes_are_all_kept(pool):
    import threading

    from eventlog.app.gateway.pool import Pool
    from eventlog.app.web.sources import GatewaySource

    email = make_user(pool, "racer", {"s": ["first"]})
    with pool.connection() as conn:
        user = conn.transaction(lambda cur: resolve_user(cur, email, create=False), doing="test")
    sources = [GatewaySource(Pool(MYSQL_URL)) for _ in range(2)]  # two processes: two pools
    errors: list[BaseException] = []

    def add(source, name: str) -> None:  # noqa: ANN001
        try:
            for i in range(12):
                source.add_message(user, "s", f"{name} {i}")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(s, n)) for s, n in zip(sources, ("one", "two"), strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sources:
        s.close()
    assert errors == []
    got = [m.content for m in history(pool, email, "s")]
    assert len(got) == 25 and sorted(got[1:]) == sorted(f"{n} {i}" for n in ("one", "two") for i in range(12))
