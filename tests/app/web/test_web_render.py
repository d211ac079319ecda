"""How ``evlog web`` shows what people and models wrote (issue 24 item 8).

Markdown is rendered (headings, emphasis, lists, code, tables) and never lets raw HTML,
``javascript:`` links or remote images through; slash-command wrappers, system reminders
and Codex's injected turns are folded; the search box finds facts of every state; the
forgotten/archived facts have a page; ``/live`` moves when the log does (what the
sessions list and the processors page poll).
"""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from eventlog.app.web import render
from eventlog.app.web.app import key_token, local_app
from eventlog.app.workspace import Workspace
from eventlog.events import MemoryAppended, MemoryArchived, MemoryForgotten, MessageAppended, SessionCreated
from tests.app.web.test_web_local import BASE, PORT, PROJECTS, TOKEN, active_markup, build_workspace, text_of

MD_KEY = "claude-code:markdown"
MARKDOWN = ("## Process\n\n1. **Analyze** the `failing` test\n2. Fix it\n\n| step | result |\n|---|---|\n| run | ok |\n\n"
            "```python\nprint('hi')\n```\n")
HOSTILE_MD = ("[click](javascript:alert(1)) ![x](https://evil.example/x.png) <img src=x onerror=alert(2)> "
              "<script>alert(3)</script> [ok](https://example.org/doc)")
SLASH = ("<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n"
         "<command-args>src/app.py</command-args>")
REMINDER = "<system-reminder>\nThe user opened src/app.py in the IDE.\n</system-reminder>\nWhy does **this** fail?"
CODEX_ENV = "<environment_context>\n  <cwd>/home/dana/shop</cwd>\n</environment_context>"


def add_rich_session(home: str) -> None:
    """A session with Markdown, harness wrappers and hostile Markdown; facts in every state."""
    ws = Workspace.open(home, writable=True)
    try:
        t = "2026-11-19T10:0{}:00Z"
        ws.append([SessionCreated(session_key=MD_KEY, title="Fix the failing checkout test", project=PROJECTS[0],
                                  created_at=t.format(0)),
                   MessageAppended(session_key=MD_KEY, message_id="md-0", role="user", content=SLASH,
                                   timestamp=t.format(1)),
                   MessageAppended(session_key=MD_KEY, message_id="md-1", role="user", content=REMINDER,
                                   timestamp=t.format(2)),
                   MessageAppended(session_key=MD_KEY, message_id="md-2", role="assistant", content=MARKDOWN,
                                   timestamp=t.format(3)),
                   MessageAppended(session_key=MD_KEY, message_id="md-3", role="user", content=CODEX_ENV,
                                   timestamp=t.format(4), extra={"isMeta": True, "harness": "environment_context"}),
                   MessageAppended(session_key=MD_KEY, message_id="md-4", role="assistant", content=HOSTILE_MD,
                                   timestamp=t.format(5)),
                   MemoryAppended(fact_id="fact-checkout-old", scope="project", project=PROJECTS[0],
                                  section="Project Context", text="The checkout uses Stripe Elements v2"),
                   MemoryAppended(fact_id="fact-checkout-arch", scope="project", project=PROJECTS[0],
                                  section="Project Context", text="The checkout page loads in 2 seconds"),
                   MemoryAppended(fact_id="fact-checkout-live", scope="project", project=PROJECTS[0],
                                  section="Project Context", text="The checkout tests run with pytest -k checkout")])
        ws.append([MemoryForgotten(fact_id="fact-checkout-old", by="user", reason="we moved to Checkout Sessions"),
                   MemoryArchived(fact_id="fact-checkout-arch", reason="over the budget")])
    finally:
        ws.close()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("web-render") / "ws")
    build_workspace(path)
    add_rich_session(path)
    return path


@pytest.fixture
def client(home):
    app = local_app(home, PORT, token=TOKEN)
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        c.get(f"/?token={TOKEN}")
        yield c
    app.state.web.source.close()


def test_markdown_renders_and_raw_html_never_passes():
    out = str(render.markdown(MARKDOWN))
    assert "<h2>Process</h2>" in out and "<strong>Analyze</strong>" in out and "<code>failing</code>" in out
    assert "<table>" in out and "<td>ok</td>" in out and '<code class="language-python">' in out
    bad = str(render.markdown(HOSTILE_MD))
    assert active_markup(bad) == [] and "<script" not in bad and "<img" not in bad and "javascript:" not in \
        re.sub(r"\[click\]\(javascript:alert\(1\)\)", "", bad)  # the link stays as text, never as an href
    assert 'href="javascript' not in bad and "&lt;script&gt;" in bad
    assert '<a href="https://example.org/doc" rel="nofollow noopener noreferrer">ok</a>' in bad
    assert '>[image: x]</a>' in bad and ' src="' not in bad  # an image is a link to it, nothing loads from elsewhere


def test_harness_wrappers_are_split_from_what_the_author_wrote():
    assert render.parts(SLASH) == [render.Part("command", "/review src/app.py", "command")]
    got = render.parts(REMINDER)
    assert [p.kind for p in got] == ["harness", "text"] and got[0].label == "system reminder"
    assert got[1].text == "Why does **this** fail?"
    assert render.parts("plain <b>bold</b> and <unclosed-tag> text") == [
        render.Part("text", "plain <b>bold</b> and <unclosed-tag> text")]


def test_a_transcript_shows_markdown_and_folds_the_harness(client):
    body = client.get(f"/s/{key_token(MD_KEY)}").text
    assert active_markup(body) == []
    assert "<h2>Process</h2>" in body and "<strong>Analyze</strong>" in body and "## Process" not in body
    assert '<p class="slash"><span class="label">command</span> <code>/review src/app.py</code></p>' in body
    assert "&lt;command-name&gt;" not in body and "<command-name>" not in body
    assert body.count('<details class="fold harness">') == 2  # the system reminder and Codex's environment turn
    assert '<span class="label">system reminder</span>' in body and '<span class="label">environment context</span>' in body
    assert "<strong>this</strong>" in body  # the user's own words after the reminder stay visible, as Markdown


def test_search_finds_facts_of_every_state_with_their_why(client):
    body = client.get("/sessions", params={"q": "checkout"}).text
    section = body.split('class="card results facts-results"')[1].split("</section>")[0]
    states = re.findall(r'<span class="badge state-(\w+)">', section)
    assert states == ["active", "archived", "forgotten"]  # active first
    assert f'href="/memory/why/{key_token("fact-checkout-old")}"' in section and "why?" in section
    assert "<mark>checkout</mark>" in section.lower()
    only = client.get("/sessions", params={"q": "checkout", "project": PROJECTS[1]}).text
    assert "facts-results" not in only  # the project filter holds for facts too


def test_forgotten_and_archived_facts_have_a_page(client):
    assert 'href="/memory/past"' in client.get("/memory").text
    body = client.get("/memory/past").text
    forgotten = body.split('id="forgotten"')[1].split("</section>")[0]
    archived = body.split('id="archived"')[1].split("</section>")[0]
    assert "The checkout uses Stripe Elements v2" in forgotten and "we moved to Checkout Sessions" in forgotten
    assert "evlog memory unforget FACT_ID" in forgotten
    assert "The checkout page loads in 2 seconds" in archived and "evlog memory pin FACT_ID" in archived
    assert "The checkout tests run" not in body


def test_live_moves_when_the_log_does_and_pages_mark_their_live_region(client, home):
    before = client.get("/live")
    assert before.status_code == 200 and before.headers["cache-control"] == "no-store"
    assert 'id="live-sessions" data-live' in client.get("/sessions").text
    assert 'id="live-processors" data-live' in client.get("/processors").text
    ws = Workspace.open(home, writable=True)
    try:
        ws.append([SessionCreated(session_key="cli:brand-new", title="A brand new session", project=PROJECTS[0])])
    finally:
        ws.close()
    after = client.get("/live").json()["v"]
    assert int(after) > int(before.json()["v"])
    assert "A brand new session" in text_of(client.get("/sessions").text)


def test_live_needs_the_token(home):
    app = local_app(home, PORT, token=TOKEN)
    with TestClient(app, base_url=BASE, follow_redirects=False) as c:
        r = c.get("/live")
        assert r.status_code == 403 and '"v"' not in r.text
    app.state.web.source.close()


def test_dates_have_one_format(client):
    body = client.get(f"/s/{key_token(MD_KEY)}").text
    shown = re.findall(r"<time [^>]*data-local>([^<]+)</time>", body)
    assert shown and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", html.unescape(t)) for t in shown)
    for path in ("/sessions", "/processors", "/dream"):  # lists too: no "3 d ago" next to a date
        listing = client.get(path).text
        cells = re.findall(r'<td class="time"[^>]*>(.*?)</td>', listing, re.DOTALL)
        assert cells, path
        for cell in cells:
            assert re.fullmatch(r"<time [^>]*data-local>\d{4}-\d\d-\d\d \d\d:\d\d</time>|—", cell.strip()), (path, cell)


def test_real_claude_code_transcripts_show_no_raw_harness_tags(tmp_path):
    """Real sessions (slash commands, system reminders): every wrapper is folded or shown as the command typed."""
    from eventlog.app.workspace import init_workspace
    from eventlog.ingest import ingest_paths
    from tests.conftest import real_data

    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        assert ingest_paths(ws.log, [real_data("claude-code-viewer")]).ok
        keys = list(ws.sessions.index)
    app = local_app(home, PORT, token=TOKEN)
    slash = folded = 0
    with TestClient(app, base_url=BASE) as c:
        c.get(f"/?token={TOKEN}")
        for key in keys:
            for page in range(1, 51):
                body = c.get(f"/s/{key_token(key)}", params={"page": page}).text
                assert active_markup(body) == [], key
                for m in re.finditer(r'<li class="msg role-(\w+)"(.*?)\n  </li>', body, re.DOTALL):
                    if m.group(1) == "tool":
                        continue  # tool output is shown as it was (folded when long)
                    outside = re.sub(r'<details class="fold[^"]*">.*?</details>', "", m.group(2), flags=re.DOTALL)
                    for tag in ("command-name", "command-message", "command-args", "system-reminder",
                                "local-command-stdout"):
                        assert f"&lt;{tag}&gt;" not in outside, (key, tag)
                slash += body.count('<p class="slash">')
                folded += body.count('<details class="fold harness">')
                where = re.search(r'<span class="where">Page ([\d,]+) of ([\d,]+)</span>', body)
                if not where or where.group(1) == where.group(2):
                    break
    app.state.web.source.close()
    assert slash >= 1 and folded >= 1  # the real data has both, and both were recognised
