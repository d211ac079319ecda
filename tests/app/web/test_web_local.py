"""``evlog web`` in local mode: the pages over a workspace, read-only, behind the access token.

``build_workspace`` (also used by the other web tests) makes a workspace with sessions of
three projects over several days, a long transcript with tool calls, hostile content, Dream
runs (valid and failed, with facts citing their source messages) and processor positions.
Requests go through Starlette's test client to the real app (``local_app``), with the Host
header a local server on ``PORT`` expects.
"""

from __future__ import annotations

import html
import os
import re
import threading
import time

import markupsafe
import pytest
from starlette.testclient import TestClient

import processors
from eventlog.app.web import security
from eventlog.app.web.app import anchor, key_from_token, key_token, local_app
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import (
    CursorAdvanced,
    DreamCompleted,
    DreamFailed,
    DreamStarted,
    HistoryAppended,
    MemoryAppended,
    MessageAppended,
    SessionCreated,
)

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "test-token-" + "x" * 32
PROJECTS = ["/home/dana/shop", "/home/dana/evlog", "/srv/<b>weird</b> & co"]
HOSTILE_KEY = "<script>alert('key')</script>/../x"
HOSTILE_TITLE = "<img src=x onerror=alert('title')>"
HOSTILE_TEXT = "</pre><script>alert('content')</script><b onmouseover=alert(1)>hover</b> & \"quotes\""
LONG_KEY = "cli:long-transcript"
LONG_MESSAGES = 250


PROMPT_HASH = "xxh3_128:" + "5" * 32


def record_dream_runs(ws: Workspace) -> None:
    """Two Dream runs as Dream records them: one learned two facts from cli:prefs, one failed.

    Written as events (what Dream appends) rather than by running Dream, whose rules are not
    what these tests are about: the pages show what the log says.
    """
    [h] = ws.append([HistoryAppended(text="user: I prefer tabs over spaces, always. assistant: Understood, tabs it is.",
                                     source="consolidator", session_key="cli:prefs", project=PROJECTS[1],
                                     message_ids=["pref-1", "pref-2"])])
    ws.append([CursorAdvanced(processor="dream", run_id="dream-web-1", from_cursor=h - 1, to_cursor=h, cursors=[h]),
               DreamStarted(run_id="dream-web-1", llm="anthropic", model="claude-test", prompt_hash=PROMPT_HASH,
                            input_cursors=[h], token_budget=20000)])
    ws.append([DreamCompleted(run_id="dream-web-1", outcome="valid", attempts=1, model="claude-test",
                              prompt_hash=PROMPT_HASH, raw_output="## User Profile\n- I prefer tabs over spaces\n",
                              input_tokens=310, output_tokens=25, fact_ids=["fact-tabs", "fact-review"]),
               MemoryAppended(fact_id="fact-tabs", scope="user", section="User Profile",
                              text="I prefer tabs over spaces", run_id="dream-web-1", sources=[h]),
               MemoryAppended(fact_id="fact-review", scope="project", project=PROJECTS[1], section="Project Context",
                              text="this project reviews every change", run_id="dream-web-1", sources=[h])])
    [h2] = ws.append([HistoryAppended(text="this note will fail", source="remember")])
    ws.append([CursorAdvanced(processor="dream", run_id="dream-web-2", from_cursor=h2 - 1, to_cursor=h2, cursors=[h2]),
               DreamStarted(run_id="dream-web-2", llm="anthropic", model="claude-test",
                            prompt_hash="xxh3_128:" + "6" * 32, input_cursors=[h2])])
    ws.append([DreamFailed(run_id="dream-web-2", reason="model call failed: simulated overload", attempts=1,
                           model="claude-test", error_kind="overloaded")])


def _ts(day: int, minute: int) -> str:
    return f"2026-11-{day:02d}T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"


def build_workspace(home: str, *, sessions: int = 12) -> dict:
    """The shared fixture data (see the module docstring); returns names the tests look for."""
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        events: list = []
        for i in range(sessions):
            key = f"cli:session-{i:02d}"
            events.append(SessionCreated(session_key=key, title=f"Session number {i}", project=PROJECTS[i % 2],
                                         created_at=_ts(1 + i, 0)))
            for j in range(3):
                events.append(MessageAppended(session_key=key, message_id=f"s{i}-m{j}", role=("user", "assistant")[j % 2],
                                              content=f"message {j} of session {i} about topic-{i % 4}",
                                              timestamp=_ts(1 + i, j)))
        events.append(SessionCreated(session_key=LONG_KEY, title="A long debugging session", project=PROJECTS[0],
                                     created_at=_ts(20, 0)))
        for j in range(LONG_MESSAGES):
            if j % 10 == 3:
                events.append(MessageAppended(
                    session_key=LONG_KEY, message_id=f"long-{j}", role="assistant", content="Let me run the tests.",
                    timestamp=_ts(20, j % 600),
                    tool_calls=[{"id": f"call-{j}", "type": "function",
                                 "function": {"name": "exec", "arguments": '{"cmd": "pytest -x tests/"}'}}]))
            elif j % 10 == 4:
                events.append(MessageAppended(session_key=LONG_KEY, message_id=f"long-{j}", role="tool",
                                              content="\n".join(f"tests/test_{k}.py ... ok" for k in range(40)),
                                              timestamp=_ts(20, j % 600)))
            else:
                events.append(MessageAppended(session_key=LONG_KEY, message_id=f"long-{j}",
                                              role=("user", "assistant")[j % 2], content=f"step {j}: looking at it",
                                              timestamp=_ts(20, j % 600)))
        events.append(SessionCreated(session_key=HOSTILE_KEY, title=HOSTILE_TITLE, project=PROJECTS[2],
                                     metadata={"<script>": "alert(4)"}, created_at=_ts(21, 0)))
        events.append(MessageAppended(session_key=HOSTILE_KEY, message_id="<b>id</b>", role="user",
                                      content=HOSTILE_TEXT, timestamp=_ts(21, 1)))
        events.append(SessionCreated(session_key="cli:prefs", title="Preferences", project=PROJECTS[1],
                                     created_at=_ts(22, 0)))
        events.append(MessageAppended(session_key="cli:prefs", message_id="pref-1", role="user",
                                      content="I prefer tabs over spaces, always.", timestamp=_ts(22, 1)))
        events.append(MessageAppended(session_key="cli:prefs", message_id="pref-2", role="assistant",
                                      content="Understood, tabs it is.", timestamp=_ts(22, 2)))
        ws.append(events)
        processors.run(ws, "snapshot")  # a processor position for the processors page
        record_dream_runs(ws)
    finally:
        ws.close()
    return {"fact": "I prefer tabs over spaces", "source_message": "pref-1"}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("web") / "ws")
    build_workspace(path)
    return path


@pytest.fixture
def client(home):
    app = local_app(home, PORT, token=TOKEN)
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        c.get(f"/?token={TOKEN}")
        yield c
    app.state.web.source.close()


def text_of(body: str) -> str:
    """Visible text of a page, roughly (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def active_markup(body: str) -> list[str]:
    """Elements and attributes of a page that could run code, other than the app's own script and images."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Scan(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            a = dict(attrs)
            if tag == "script" and a.get("src") != "/static/app.js":
                found.append(f"<script {a}>")
            if tag in ("img", "iframe", "object", "embed", "svg") and not str(a.get("src", "")).startswith("/static/") \
                    and not (tag == "svg" and "chart" in str(a.get("class", ""))):
                found.append(f"<{tag} {a}>")
            found.extend(f"{tag}[{k}]" for k in a if k.startswith("on") or (k in ("href", "src", "action")
                                                                             and "javascript:" in str(a[k]).lower()))

    Scan().feed(body)
    return found


# --------------------------------------------------------------------------- the access token


def test_without_the_token_every_page_is_refused_and_says_how_to_get_in(home):
    app = local_app(home, PORT, token=TOKEN)
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        for path in ("/sessions", "/memory", "/dream", "/processors", "/plots", f"/s/{key_token(LONG_KEY)}"):
            r = c.get(path)
            assert r.status_code == 403, path
            assert "evlog web" in text_of(r.text) and "Session number" not in r.text and home not in r.text
        assert c.get(f"/sessions?token={TOKEN[:-1]}y").status_code == 403
        c.cookies.set(security.LOCAL_COOKIE, "guess")
        assert c.get("/sessions").status_code == 403
    app.state.web.source.close()


def test_the_token_sets_a_strict_httponly_cookie_and_is_dropped_from_the_url(home):
    app = local_app(home, PORT, token=TOKEN)
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        r = c.get(f"/sessions?project=x&token={TOKEN}")
        assert r.status_code == 303 and r.headers["location"] == "/sessions?project=x"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{security.LOCAL_COOKIE}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        page = c.get("/sessions")
        assert page.status_code == 200 and TOKEN not in page.text
    app.state.web.source.close()


def test_requests_for_another_host_name_are_refused(client):
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 must not reach the app."""
    r = client.get("/sessions", headers={"Host": "evil.example:8765"})
    assert r.status_code == 421
    r = client.get("/sessions", headers={"Host": f"127.0.0.1:{PORT + 1}"})
    assert r.status_code == 421
    assert client.get("/sessions", headers={"Host": f"localhost:{PORT}"}).status_code == 200


def test_every_page_carries_the_security_headers(client):
    for path in ("/sessions", "/memory", "/plots", "/static/app.css"):
        r = client.get(path)
        assert r.status_code == 200
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "same-origin"
        assert r.headers["x-frame-options"] == "DENY"
    assert client.get("/sessions").headers["cache-control"] == "no-store"


# --------------------------------------------------------------------------- sessions and transcripts


def test_sessions_are_listed_newest_first_with_project_count_and_time(client):
    body = client.get("/sessions").text
    titles = re.findall(r'<td class="title">\s*<a href="/s/[^"]+">([^<]+)</a>', body)
    assert [html.unescape(t) for t in titles[:3]] == ["Preferences", HOSTILE_TITLE, "A long debugging session"]
    assert "Session number 11" in titles and len(titles) == 15
    assert f">{LONG_MESSAGES}<" in body  # the message count column
    assert '<time datetime="2026-11-22T09:02:00.000Z"' in body


def test_sessions_can_be_filtered_by_project_and_paged(client):
    body = client.get("/sessions", params={"project": PROJECTS[1]}).text
    titles = re.findall(r'<td class="title">\s*<a href="/s/[^"]+">([^<]+)</a>', body)
    assert titles and set(titles) == {"Preferences"} | {f"Session number {i}" for i in range(1, 12, 2)}
    page1 = client.get("/sessions", params={"per": 10}).text
    page2 = client.get("/sessions", params={"per": 10, "page": 2}).text
    t1 = re.findall(r'<td class="title">\s*<a href="(/s/[^"]+)"', page1)
    t2 = re.findall(r'<td class="title">\s*<a href="(/s/[^"]+)"', page2)
    assert len(t1) == 10 and len(t2) == 5 and not set(t1) & set(t2)
    assert "Page 2 of 2" in page2


def test_search_without_an_index_matches_titles_previews_and_keys(client):
    body = client.get("/sessions", params={"q": "DEBUGGING"}).text
    assert "no search index" in body and 'class="hit"' not in body
    titles = re.findall(r'<td class="title">\s*<a href="/s/([^"]+)">([^<]+)</a>', body)
    assert titles == [(key_token(LONG_KEY), "A long debugging session")]
    keys = re.findall(r'<td class="title">\s*<a href="/s/([^"]+)">', client.get("/sessions", params={"q": "prefs"}).text)
    assert keys == [key_token("cli:prefs")]


def test_search_uses_the_recall_index_when_the_workspace_has_one(home):
    from projections.recall.workspace import update

    update(home).close()  # what `evlog recall` / the daemon would do; the web app only reads it
    app = local_app(home, PORT, token=TOKEN)
    try:
        with TestClient(app, base_url=BASE, follow_redirects=False) as c:
            c.get(f"/?token={TOKEN}")
            body = c.get("/sessions", params={"q": "tabs over spaces"}).text
        assert "no search index" not in body
        links = re.findall(r'href="(/s/[^"]+/m/[^"]+)" class="hit"', body)
        targets = {(key_from_token(u.split("/")[2]), key_from_token(u.split("/")[4])) for u in links}
        assert ("cli:prefs", "pref-1") in targets
    finally:
        app.state.web.source.close()
        os.remove(os.path.join(home, "state", "recall.sqlite"))


def test_a_transcript_opens_on_its_newest_page_with_tool_calls_folded_and_times(client):
    r = client.get(f"/s/{key_token(LONG_KEY)}")
    assert r.status_code == 200
    body = r.text
    assert "Page 3 of 3" in body
    ids = re.findall(r'<span class="mid" title="message id">([^<]+)</span>', body)
    assert ids == [f"long-{j}" for j in range(200, 250)]
    assert body.count('<details class="fold call">') == 5  # tool calls are folded
    assert body.count('<details class="fold output">') == 5  # long tool output is folded too
    assert "<b>exec</b>" in body and "pytest -x tests/" in body
    assert '<time datetime="2026-11-20T' in body
    first = client.get(f"/s/{key_token(LONG_KEY)}", params={"page": 1}).text
    assert re.findall(r'<span class="mid" title="message id">([^<]+)</span>', first)[:2] == ["long-0", "long-1"]


def test_a_message_link_lands_on_its_page_and_anchor(client):
    r = client.get(f"/s/{key_token(LONG_KEY)}/m/{key_token('long-123')}")
    assert r.status_code == 303
    assert r.headers["location"] == f"/s/{key_token(LONG_KEY)}?page=2#{anchor('long-123')}"
    page = client.get(r.headers["location"].split("#")[0]).text
    assert f'id="{anchor("long-123")}"' in page


@pytest.mark.parametrize("path", ["/s/kbm90LWEta2V5", "/s/not-base64", "/s/k%25%25", "/s/kLi4vZXRj/m/kbm9uZQ",
                                  f"/s/{key_token(LONG_KEY)}/m/{key_token('no-such-id')}", "/memory/why/kbm9wZQ"])
def test_unknown_keys_ids_and_garbage_give_404(client, path):
    r = client.get(path)
    assert r.status_code == 404 and "Not found" in r.text


# --------------------------------------------------------------------------- memory, dream, processors, plots


def test_every_memory_line_opens_its_why_with_run_model_prompt_tokens_and_source_messages(client, home):
    body = client.get("/memory").text
    links = re.findall(r'<li class="state-active"><a href="(/memory/why/[^"]+)"><span class="text">([^<]+)</span>', body)
    assert links and any(t == "I prefer tabs over spaces" for _, t in links)
    url = next(u for u, t in links if t == "I prefer tabs over spaces")
    why = client.get(url).text
    words = text_of(why)
    ws = Workspace.open(home)
    try:
        run = next(r for r in ws.dream_runs.runs() if r.fact_ids)
    finally:
        ws.close()
    assert run.run_id in words and "claude-test" in words and run.prompt_hash in words
    assert "310 in · 25 out" in words
    src = re.findall(r'class="source-message" href="([^"]+)"', why)
    assert f"/s/{key_token('cli:prefs')}/m/{key_token('pref-1')}" in src
    landed = client.get(f"/s/{key_token('cli:prefs')}/m/{key_token('pref-1')}")
    assert landed.status_code == 303 and landed.headers["location"].endswith(f"#{anchor('pref-1')}")
    assert "Supersede chain" in why


def test_dream_runs_show_outcomes_tokens_and_how_to_retry_a_failed_one(client):
    body = client.get("/dream").text
    assert 'class="badge outcome-valid"' in body and 'class="badge outcome-failed"' in body
    assert "evlog run dream --retry-failed" in body and 'data-copy="evlog run dream --retry-failed"' in body
    assert "simulated overload" in body
    assert "310 / 25" in body


def test_processors_show_positions_and_lag(client, home):
    body = client.get("/processors").text
    rows = dict(re.findall(r"<td[^>]*><b>([a-z_]+)</b></td>\s*<td class=\"num\"[^>]*>([\d,]+)</td>", body))
    assert {"snapshot", "digest", "dream"} <= set(rows)
    ws = Workspace.open(home)
    try:
        assert f"seq {ws.log.last_seq:,} is the newest event" in body
    finally:
        ws.close()


def test_plots_draw_messages_per_project_tokens_and_memory_size_as_svg(client):
    body = client.get("/plots").text
    assert body.count("<svg class=\"chart\"") == 4
    assert "/home/dana/shop" in body and "&lt;b&gt;weird&lt;/b&gt; &amp; co" in body and "<b>weird</b>" not in body
    assert re.search(r"<title>2026-11-20 · /home/dana/shop: 250 messages</title>", body)
    assert re.search(r"<title>[\d-]+: 2 facts</title>", body)


def test_hostile_keys_titles_projects_and_messages_render_as_inert_text(client):
    assert active_markup('<p><img src=x onerror="alert(1)"></p><script>alert(2)</script>') != []  # the check bites
    hostile = f"/s/{key_token(HOSTILE_KEY)}"
    for path in ("/sessions", hostile, "/plots", "/sessions?q=%3Cimg", "/sessions?q=" + HOSTILE_TEXT[:20],
                 f"/sessions?project={PROJECTS[2]}", "/memory", "/dream"):
        r = client.get(path)
        assert r.status_code == 200 and active_markup(r.text) == [], path
    body = client.get(hostile).text
    # a message is Markdown now (render.markdown escapes " as &quot;, markupsafe as &#34;): shown whole, as text
    assert HOSTILE_TEXT in text_of(body) and markupsafe.escape(HOSTILE_TITLE) in body
    assert client.get(f"{hostile}/m/{key_token('<b>id</b>')}").status_code == 303


# --------------------------------------------------------------------------- read-only, while others write


def _tree(home: str) -> dict[str, tuple[int, int]]:
    out = {}
    for d, _dirs, files in os.walk(home):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            out[os.path.relpath(p, home)] = (st.st_size, st.st_mtime_ns)
    return out


def test_the_web_app_never_writes_the_workspace(client, home):
    before = _tree(home)
    for path in ("/sessions", "/sessions?q=tabs", f"/s/{key_token(LONG_KEY)}", "/memory", "/dream", "/processors",
                 "/plots"):
        assert client.get(path).status_code == 200
    assert _tree(home) == before


@pytest.mark.slow
def test_pages_keep_loading_while_another_process_appends(tmp_path):
    home = str(tmp_path / "busy")
    build_workspace(home, sessions=2)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        ws = Workspace.open(home, writable=True)
        try:
            i = 0
            while not stop.is_set():
                ws.append([MessageAppended(session_key="cli:live", message_id=f"live-{i}", role="user",
                                           content=f"live message {i}")])
                written.append(i)
                i += 1
                if i % 5 == 0:
                    ws.flush()  # projection files move under the reader, as the daemon's flusher does
        finally:
            ws.close()

    app = local_app(home, PORT, token=TOKEN)
    t = threading.Thread(target=writer)
    t.start()
    try:
        with TestClient(app, base_url=BASE, follow_redirects=False) as c:
            c.get(f"/?token={TOKEN}")
            deadline = time.monotonic() + 3
            loads = 0
            while time.monotonic() < deadline or len(written) < 20:
                for path in ("/sessions", f"/s/{key_token('cli:live')}", "/plots", "/processors"):
                    r = c.get(path)
                    assert r.status_code in (200, 404) if path.startswith("/s/") and not written else r.status_code == 200
                    loads += 1
            stop.set()
            t.join()
            final = c.get(f"/s/{key_token('cli:live')}", params={"per": 2000}).text
        ids = re.findall(r'title="message id">live-(\d+)<', final)
        assert len(ids) == len(written) and loads > 20
    finally:
        stop.set()
        t.join()
        app.state.web.source.close()


# --------------------------------------------------------------------------- the command


def test_evlog_web_prints_a_tokened_loopback_url_and_serves_it(tmp_path, cli_runner):
    import json
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    home = str(tmp_path / "cmd")
    build_workspace(home, sessions=1)
    evlog = os.path.join(os.path.dirname(sys.executable), "evlog")
    proc = subprocess.Popen([evlog, "--home", home, "web", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        url = json.loads(proc.stdout.readline())["url"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{40,}", url)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url.split("?")[0] + "sessions", timeout=10)
        assert refused.value.code == 403
        refused.value.close()
        import http.cookiejar

        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(url, timeout=10) as r:  # follows the redirect, with the cookie it set
            assert r.status == 200 and b"<title>" in r.read()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert url.split("token=")[1] not in err  # the token is printed once, on stdout, never logged
    from eventlog.cli import cli

    res = cli_runner.invoke(cli, ["--home", home, "web", "--host", "0.0.0.0"])
    assert res.exit_code == 2 and "gateway mode" in res.output


def test_local_mode_takes_no_writes(client):
    for path in ("/sessions", f"/s/{key_token(LONG_KEY)}/messages", "/login", "/logout"):
        assert client.post(path, data={"content": "x"}).status_code in (404, 405), path


def test_why_of_a_learned_fact_shows_its_exact_messages_and_its_supersede_chain(tmp_path):
    from eventlog.events import MemorySuperseded
    from processors.dream import run_dream
    from processors.llm import OfflineExtractor

    home = str(tmp_path / "ws")
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        [seq] = ws.append([MessageAppended(session_key="cli:vim", message_id="v1", role="user",
                                           content="I prefer vim as my editor.", timestamp="2026-11-20T10:00:00Z")])
        run_dream(ws, OfflineExtractor())
        [old] = ws.memory.all_facts("active")
        new = MemoryAppended(fact_id="fact-emacs", scope="user", section="Preferences", text="The user prefers emacs.",
                             by="user")
        ws.append([new, MemorySuperseded(fact_id=old.fact_id, by_fact_id="fact-emacs", by="user")])
    finally:
        ws.close()
    app = local_app(home, PORT, token=TOKEN)
    try:
        with TestClient(app, base_url=BASE, follow_redirects=False) as c:
            c.get(f"/?token={TOKEN}")
            body = c.get(f"/memory/why/{key_token(old.fact_id)}").text
            words = " ".join(text_of(body).split())
            assert "I prefer vim as my editor." in words and f"/s/{key_token('cli:vim')}/m/{key_token('v1')}" in body
            assert "About user" in words and "superseded" in words and "fact-emacs" in words
    finally:
        app.state.web.source.close()
