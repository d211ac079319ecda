"""A real headless browser (Debian's chromium and chromedriver, driven by Selenium) on both modes of ``evlog web``.

Local mode: the token, the sessions, a search, a transcript with folded tool calls, a
MEMORY.md line clicked through its why to the source message. Gateway mode: signing in
(wrongly, then rightly), a transcript, adding a message, and the device receiving it with
``evlog sync pull``. Hostile content must not run in either. Screenshots of every step go
to the test's tmp dir (and to ``$EVLOG_SCREENSHOTS`` when set, to look at them); every page is shot at
1280x800 and 390x844, and at 390 the page must not be wider than the screen. The sessions list and
the processors page refresh themselves when another process appends.

``.ci/run`` installs chromium; without it these tests fail in CI (``CI=true``) and skip
elsewhere, saying why.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import pytest

from eventlog.app.web.app import anchor, key_token
from eventlog.app.web.server import Running, local
from tests.app.web.test_web_local import HOSTILE_KEY, HOSTILE_TEXT, build_workspace

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _need_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        why = f"browser tests need Debian's chromium and chromium-driver ({', '.join(missing)} missing; " \
              "apt-get install chromium chromium-driver, as .ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="evlog-chromium-")
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--window-size=1280,900", f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class Shots:
    """Numbered screenshots in the tmp dir (and $EVLOG_SCREENSHOTS)."""

    def __init__(self, driver, where) -> None:
        self.driver, self.where, self.n = driver, where, 0
        self.extra = os.environ.get("EVLOG_SCREENSHOTS")

    def __call__(self, name: str) -> str:
        self.n += 1
        path = os.path.join(self.where, f"{self.n:02d}-{name}.png")
        assert self.driver.save_screenshot(path)
        assert os.path.getsize(path) > 5000  # a real picture, not an empty one
        if self.extra:
            os.makedirs(self.extra, exist_ok=True)
            shutil.copy(path, self.extra)
        return path


def no_alert(driver) -> None:
    """Fail if a script of the page opened an alert (hostile content ran)."""
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    raise AssertionError(f"a page script ran: alert({text!r})")


def navigate(driver, action, css: str, timeout: float = 10):
    """Do ``action()`` (a click or Enter that loads a page), wait for the new page and an element in it."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    action()

    def old_page_gone(_driver) -> bool:  # noqa: ANN001
        # ec.staleness_of, but Chromium may also answer "Node with given id does not belong to
        # the document" for the old page's node while the new one loads: that is gone too.
        try:
            old.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise
        return False

    WebDriverWait(driver, timeout).until(old_page_gone)
    return wait_for(driver, css, timeout)


def wait_for(driver, css: str, timeout: float = 10):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


# --------------------------------------------------------------------------- local mode


def test_local_mode_in_a_real_browser(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    home = str(tmp_path / "ws")
    build_workspace(home)
    shot = Shots(browser, str(tmp_path))
    app, sock, url = local(home)
    with Running(app, sock, url):
        base = url.split("/?")[0]
        browser.delete_all_cookies()
        browser.get(base + "/sessions")
        assert "access token" in browser.find_element(By.TAG_NAME, "h1").text
        assert "Session number" not in browser.page_source
        shot("local-without-token")

        browser.get(url)
        assert browser.current_url == base + "/" or browser.current_url.startswith(base + "/sessions")
        wait_for(browser, "table.sessions")
        assert "token=" not in browser.current_url
        titles = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "td.title > a")]
        assert titles[0] == "Preferences" and "A long debugging session" in titles
        shot("local-sessions")

        box = browser.find_element(By.ID, "search")
        navigate(browser, lambda: box.send_keys("debugging", Keys.ENTER), "p.note")
        assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "td.title > a")] == ["A long debugging session"]
        shot("local-search-titles")
        from projections.recall.workspace import update

        update(home).close()  # a recall index, as the daemon builds it: now the box searches every message
        box = browser.find_element(By.ID, "search")
        box.clear()
        navigate(browser, lambda: box.send_keys("tabs over spaces", Keys.ENTER), "section.results")
        hits = browser.find_elements(By.CSS_SELECTOR, "a.hit")
        assert hits and "I prefer tabs over spaces, always." in [h.text for h in hits]
        shot("local-search-recall")

        browser.get(base + "/sessions")
        navigate(browser, browser.find_element(By.LINK_TEXT, "A long debugging session").click, "ol.transcript")
        calls = browser.find_elements(By.CSS_SELECTOR, "details.call")
        assert calls and not calls[0].get_attribute("open")
        body = calls[0].find_element(By.CSS_SELECTOR, "pre")
        assert not body.is_displayed()  # folded
        calls[0].find_element(By.TAG_NAME, "summary").click()
        assert body.is_displayed() and "pytest -x tests/" in body.text
        assert browser.find_element(By.CSS_SELECTOR, ".pager .where").text == "Page 3 of 3"
        shot("local-transcript")

        navigate(browser, browser.find_element(By.LINK_TEXT, "Memory").click, ".facts-list a")
        facts = {a.text.split("\n")[0]: a for a in browser.find_elements(By.CSS_SELECTOR, ".facts-list a")}
        shot("local-memory")
        navigate(browser, facts["I prefer tabs over spaces"].click, "h1.fact")
        assert browser.find_element(By.CSS_SELECTOR, "h1.fact").text == "I prefer tabs over spaces"
        assert "claude-test" in browser.page_source and "310 in · 25 out" in browser.find_element(By.TAG_NAME,
                                                                                                 "main").text
        shot("local-why")
        target = navigate(browser, browser.find_element(By.CSS_SELECTOR, "a.source-message").click,
                          f"#{anchor('pref-1')}")
        assert browser.current_url.endswith(f"#{anchor('pref-1')}")
        assert "I prefer tabs over spaces, always." in target.text
        assert browser.execute_script("return document.querySelector(':target') === arguments[0]", target)
        shot("local-source-message")

        navigate(browser, browser.find_element(By.LINK_TEXT, "Dream").click, "table.runs")
        assert "evlog run dream --retry-failed" in browser.find_element(By.CSS_SELECTOR, ".callout").text
        shot("local-dream")
        navigate(browser, browser.find_element(By.LINK_TEXT, "Processors").click, "table.processors")
        shot("local-processors")
        navigate(browser, browser.find_element(By.LINK_TEXT, "Plots").click, "svg.chart")
        assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart")) == 4
        shot("local-plots")

        browser.get(f"{base}/s/{key_token(HOSTILE_KEY)}")
        wait_for(browser, "ol.transcript")
        time.sleep(0.3)
        no_alert(browser)
        assert HOSTILE_TEXT in browser.find_element(By.CSS_SELECTOR, ".msg .text").text
        assert browser.execute_script("return document.querySelectorAll('main script, main img').length") == 0
        shot("local-hostile-content-as-text")
        browser.get(f"{base}/sessions")
        no_alert(browser)


# --------------------------------------------------------------------------- gateway mode


def test_gateway_mode_in_a_real_browser_and_a_message_reaching_the_desktop(browser, tmp_path):
    from tests.mysql_helpers import MYSQL_URL, fresh_email, requires_mysql

    if not MYSQL_URL:
        pytest.skip(requires_mysql.kwargs["reason"])
    from selenium.webdriver.common.by import By

    from eventlog.app.event_stores import open_store
    from eventlog.app.gateway import auth
    from eventlog.app.gateway.connection import DSN, Connection
    from eventlog.app.gateway.http_client import login
    from eventlog.app.web.server import gateway
    from eventlog.replication import sync
    from tests.app.gateway.test_sync import device

    email = fresh_email("browser")
    conn = Connection(DSN.parse(MYSQL_URL))
    try:
        auth.add_user(conn, email, "browser password")
    finally:
        conn.close()
    shot = Shots(browser, str(tmp_path))
    app, sock, url = gateway(MYSQL_URL, port=0)
    with Running(app, sock, url) as server, device(str(tmp_path / "desktop")) as desk:
        desk.store.get_or_create("cli:planning", title="Planning the release", project="/home/me/evlog")
        desk.store.add_message("cli:planning", "user", "What is left before the release?", message_id="p1")
        desk.store.add_message("cli:planning", "assistant", "The changelog and the web tests.", message_id="p2",
                               tool_calls=[{"id": "c1", "type": "function",
                                            "function": {"name": "read", "arguments": '{"path": "CHANGELOG.md"}'}}])
        desk.store.get_or_create(HOSTILE_KEY, title="<img src=x onerror=alert('gw')>")
        desk.store.add_message(HOSTILE_KEY, "user", HOSTILE_TEXT, message_id="h1")
        from eventlog.events import MemoryAppended

        desk.ws.append([MemoryAppended(fact_id="f-release", scope="project", project="/home/me/evlog",
                                       section="Project Context", text="Releases go out on Fridays", by="dream")])
        login(desk.home, server.url, email, "browser password")

        def events(direction):  # noqa: ANN001, ANN202 - 'evlog sync push/pull' (the event sync) through the HTTP API
            opened = open_store(desk.home, gateway=server.url, dsn=None, user=None)
            try:
                run = sync.push if direction == "push" else sync.pull
                return run(desk.ws.log, opened.store, opened.account, store_name=opened.store_name)
            finally:
                opened.close()

        events("push")

        base = server.url.rstrip("/")
        browser.delete_all_cookies()
        browser.get(base + "/sessions")
        wait_for(browser, "form input[name=email]")
        assert "/login" in browser.current_url
        shot("gateway-login")
        browser.find_element(By.NAME, "email").send_keys(email)
        browser.find_element(By.NAME, "password").send_keys("wrong password")
        alert = navigate(browser, browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click,
                         ".callout.error")
        assert alert.text == "wrong e-mail or password"
        shot("gateway-login-failed")
        browser.find_element(By.NAME, "password").send_keys("browser password")
        navigate(browser, browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click, "table.sessions")
        assert email in browser.find_element(By.CSS_SELECTOR, ".who").text
        assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script sees the session
        shot("gateway-sessions")

        navigate(browser, browser.find_element(By.LINK_TEXT, "Memory").click, "section.memfile")
        assert "Releases go out on Fridays" in browser.find_element(By.CSS_SELECTOR, "section.memfile").text
        shot("gateway-memory")
        navigate(browser, browser.find_element(By.LINK_TEXT, "Sessions").click, "table.sessions")

        navigate(browser, browser.find_element(By.LINK_TEXT, "Planning the release").click, "form.compose")
        shot("gateway-transcript")
        browser.find_element(By.ID, "content").send_keys("Typed in the browser: ship it <b>friday</b>")
        navigate(browser, browser.find_element(By.CSS_SELECTOR, "form.compose button[type=submit]").click,
                 "ol.transcript")
        last = browser.find_elements(By.CSS_SELECTOR, ".msg .text")[-1]
        assert last.text == "Typed in the browser: ship it <b>friday</b>"
        shot("gateway-message-added")

        assert events("pull").received == 1
        got = desk.store.history("cli:planning")
        assert [m.content for m in got][-1] == "Typed in the browser: ship it <b>friday</b>" and got[-1].role == "user"

        browser.get(f"{base}/s/{key_token(HOSTILE_KEY)}")
        wait_for(browser, "ol.transcript")
        time.sleep(0.3)
        no_alert(browser)
        assert HOSTILE_TEXT in browser.find_element(By.CSS_SELECTOR, ".msg .text").text
        shot("gateway-hostile-content-as-text")

        set_viewport(browser, PHONE)  # the signed-in bar (e-mail, sign out) on a phone
        try:
            for name, path in (("sessions", "/sessions"), ("transcript", f"/s/{key_token('cli:planning')}")):
                browser.get(base + path)
                wait_for(browser, "main h1")
                widths = browser.execute_script("return [document.scrollingElement.scrollWidth, window.innerWidth]")
                assert widths == [PHONE[0], PHONE[0]], (name, widths)
                shot(f"gateway-{name}-390x844")
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

        navigate(browser, browser.find_element(By.CSS_SELECTOR, ".who button").click, "form input[name=email]")
        browser.get(base + "/sessions")
        assert "/login" in browser.current_url
        shot("gateway-signed-out")


# --------------------------------------------------------------------------- sizes, phone layout, live refresh

DESKTOP, PHONE = (1280, 800), (390, 844)


def set_viewport(driver, size: tuple[int, int]) -> None:
    """The page's viewport at exactly ``size`` (a phone: mobile, so the viewport meta tag applies)."""
    w, h = size
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})


def test_every_page_at_desktop_and_phone_size_with_no_sideways_scroll(browser, tmp_path):
    from tests.app.web.test_web_render import MD_KEY, add_rich_session

    home = str(tmp_path / "ws")
    build_workspace(home)
    add_rich_session(home)
    shot = Shots(browser, str(tmp_path))
    app, sock, url = local(home)
    pages = {"sessions": "/sessions", "search": "/sessions?q=checkout", "markdown": f"/s/{key_token(MD_KEY)}",
             "transcript": f"/s/{key_token('cli:long-transcript')}", "hostile": f"/s/{key_token(HOSTILE_KEY)}",
             "memory": "/memory", "past": "/memory/past", "why": f"/memory/why/{key_token('fact-tabs')}",
             "dream": "/dream", "processors": "/processors", "plots": "/plots"}
    try:
        with Running(app, sock, url):
            base = url.split("/?")[0]
            browser.get(url)
            wait_for(browser, "table.sessions")
            for size in (DESKTOP, PHONE):
                set_viewport(browser, size)
                for name, path in pages.items():
                    browser.get(base + path)
                    wait_for(browser, "main h1")
                    no_alert(browser)
                    widths = browser.execute_script(
                        "return [document.scrollingElement.scrollWidth, window.innerWidth]")
                    assert widths[1] == size[0], widths
                    assert widths[0] <= widths[1], (name, size, widths)  # nothing wider than the screen
                    shot(f"{name}-{size[0]}x{size[1]}")
                browser.get(base + "/memory")
                why = wait_for(browser, ".facts-list a .why")
                assert why.is_displayed() and float(why.value_of_css_property("opacity")) == 1  # no hover needed
                assert why.size["height"] >= 18  # big enough to tap
                browser.get(base + pages["markdown"])
                wait_for(browser, ".prose h2")
                assert browser.find_element(By_css(), ".prose h2").text == "Process"
                assert "## Process" not in browser.find_element(By_css(), "main").text
                folded = browser.find_elements(By_css(), "details.harness")
                assert len(folded) == 2 and not any(d.get_attribute("open") for d in folded)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def By_css():  # noqa: N802 - reads as selenium's By.CSS_SELECTOR
    from selenium.webdriver.common.by import By

    return By.CSS_SELECTOR


def test_the_sessions_list_and_processors_refresh_themselves(browser, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    from eventlog.app.workspace import Workspace
    from eventlog.events import MessageAppended, SessionCreated

    home = str(tmp_path / "ws")
    build_workspace(home)
    shot = Shots(browser, str(tmp_path))
    app, sock, url = local(home)
    with Running(app, sock, url):
        base = url.split("/?")[0]
        browser.get(url)
        wait_for(browser, "table.sessions")
        browser.execute_script("window.__same_page = true")  # gone if the page were reloaded
        time.sleep(1)  # the first poll has seen the log's position
        ws = Workspace.open(home, writable=True)
        try:
            ws.append([SessionCreated(session_key="cli:arrived", title="A session that just arrived",
                                      created_at="2026-11-30T10:00:00Z"),
                       MessageAppended(session_key="cli:arrived", message_id="a-1", role="user", content="hello",
                                       timestamp="2026-11-30T10:00:01Z")])
        finally:
            ws.close()
        WebDriverWait(browser, 15).until(
            lambda d: "A session that just arrived" in d.find_element(By_css(), "#live-sessions").text)
        assert browser.execute_script("return window.__same_page === true")  # refreshed in place
        assert browser.find_element(By_css(), "#live-count").text == "16"  # the count follows
        shot("live-sessions")

        browser.get(base + "/processors")
        cell = wait_for(browser, "#live-processors")
        before = cell.text
        import processors

        ws = Workspace.open(home, writable=True)
        try:
            processors.run(ws, "snapshot")
        finally:
            ws.close()
        WebDriverWait(browser, 15).until(lambda d: d.find_element(By_css(), "#live-processors").text != before)
        shot("live-processors")
