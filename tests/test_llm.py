"""The LLM layer: prompts, the factory, Anthropic, offline rules, replay and the fake.

AnthropicLLM is exercised against a local Messages API server. No test reaches the real
network: ANTHROPIC_BASE_URL points at a local server (or at a closed local port) and
ANTHROPIC_API_KEY is a dummy value.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.codec import content_hash
from eventlog.errors import LLMError
from processors.llm import (
    DEFAULT_MODEL,
    LLM,
    Completion,
    LLMCallError,
    Prompt,
    as_completion,
    estimate_tokens,
    make_llm,
)
from processors.llm.anthropic_llm import AnthropicLLM
from processors.llm.fake import FakeLLM
from processors.llm.offline import MODEL as OFFLINE_MODEL
from processors.llm.offline import NOTHING_NEW, OfflineExtractor
from processors.llm.replay import ReplayLLM

from .conftest import REPO

DUMMY_KEY = "sk-ant-test-DUMMY-0123456789abcdef"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def no_real_network(monkeypatch):
    """A dummy key, no proxies, and a base URL that can only fail locally unless a test sets its own."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    for var in (*PROXY_VARS, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "EVLOG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


# --- a local Messages API ----------------------------------------------------------


class FakeAPI:
    """Scripted answers for POST /v1/messages; the last step repeats once the script is used up."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.url = ""

    def script(self, *steps: dict[str, Any]) -> FakeAPI:
        self.steps = list(steps)
        return self

    def next_step(self) -> dict[str, Any]:
        with self.lock:
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]


def ok(text: str | list[str] = "hello", *, input_tokens: int = 12, output_tokens: int = 7, model: str = "") -> dict:
    texts = [text] if isinstance(text, str) else text
    return {"status": 200, "texts": texts, "usage": (input_tokens, output_tokens), "model": model}


def error(status: int, etype: str, message: str, *, retry_after_ms: str | None = "1") -> dict:
    return {"status": status, "etype": etype, "message": message, "retry_after_ms": retry_after_ms}


def sleep(seconds: float) -> dict:
    return {"sleep": seconds}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        api: FakeAPI = self.server.api
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        api.requests.append({"path": self.path, "headers": headers, "json": json.loads(body)})
        step = api.next_step()
        try:
            if "sleep" in step:
                api.stop.wait(step["sleep"])
                self.reply(200, {"oops": "too late"})
            elif step["status"] == 200:
                req = api.requests[-1]["json"]
                self.reply(
                    200,
                    {
                        "id": f"msg_{len(api.requests)}",
                        "type": "message",
                        "role": "assistant",
                        "model": step["model"] or req["model"],
                        "content": [{"type": "text", "text": t} for t in step["texts"]],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": step["usage"][0], "output_tokens": step["usage"][1]},
                    },
                )
            else:
                headers = {"request-id": f"req_{len(api.requests)}"}
                if step["retry_after_ms"] is not None:
                    headers["retry-after-ms"] = step["retry_after_ms"]
                err = {"type": "error", "error": {"type": step["etype"], "message": step["message"]}}
                self.reply(step["status"], err, headers)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def reply(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@pytest.fixture
def api(monkeypatch):
    """A local Messages API on a random port, with ANTHROPIC_BASE_URL pointing at it."""
    server = QuietServer(("127.0.0.1", 0), Handler)
    fake = FakeAPI()
    server.api = fake  # type: ignore[attr-defined]
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    try:
        yield fake
    finally:
        fake.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def dream_prompt(entries: list[str] | None = None, memory: str = "", *, max_tokens: int = 2000) -> Prompt:
    entries = entries or []
    user = "\n".join(entries)
    return Prompt(
        purpose="dream",
        system="Extract durable facts.",
        user=f"MEMORY:\n{memory}\n\nHISTORY:\n{user}",
        max_tokens=max_tokens,
        inputs={"entries": [{"cursor": i + 1, "text": t} for i, t in enumerate(entries)], "memory": memory},
    )


def consolidate_prompt(messages: list[tuple[str, str]], *, max_tokens: int = 2000) -> Prompt:
    return Prompt(
        purpose="consolidate",
        system="Summarise.",
        user="\n".join(f"{r}: {c}" for r, c in messages),
        max_tokens=max_tokens,
        inputs={"messages": [{"role": r, "content": c} for r, c in messages]},
    )


def all_error_text(err: BaseException) -> str:
    return str(err) + repr(err) + "".join(traceback.format_exception(err))


def call(prompt: Prompt | None = None, **kwargs: Any) -> tuple[Completion | None, LLMCallError | None]:
    with AnthropicLLM(**{"model": "claude-test-model", "timeout": 5.0, **kwargs}) as llm:
        try:
            return llm.complete(prompt or dream_prompt(["I prefer tabs."])), None
        except LLMCallError as e:
            return None, e


# --- Prompt, Completion, helpers ---------------------------------------------------------


def test_prompt_hash_is_xxh3_128_of_purpose_system_user_and_max_tokens():
    p = dream_prompt(["I prefer tabs."])
    expected = content_hash({"purpose": "dream", "system": p.system, "user": p.user, "max_tokens": p.max_tokens})
    assert p.hash() == expected
    assert p.hash().startswith("xxh3_128:")
    assert len(p.hash()) == len("xxh3_128:") + 32


def test_prompt_hash_changes_with_each_hashed_field_but_not_with_inputs():
    p = dream_prompt(["I prefer tabs."])
    variants = [
        msgspec.structs.replace(p, purpose="consolidate"),
        msgspec.structs.replace(p, system=p.system + " "),
        msgspec.structs.replace(p, user=p.user + "x"),
        msgspec.structs.replace(p, max_tokens=p.max_tokens + 1),
    ]
    assert len({p.hash(), *(v.hash() for v in variants)}) == 5
    assert msgspec.structs.replace(p, inputs={}).hash() == p.hash()


def test_prompt_rejects_an_unknown_purpose_and_a_non_positive_max_tokens():
    with pytest.raises(ValueError, match="purpose"):
        Prompt(purpose="chat", system="", user="", max_tokens=10)
    with pytest.raises(ValueError, match="max_tokens"):
        Prompt(purpose="dream", system="", user="", max_tokens=0)


def test_completion_round_trips_through_its_recorded_dict_form():
    c = Completion(text="t", model="m", input_tokens=3, output_tokens=4, stop_reason="max_tokens")
    assert as_completion(msgspec.to_builtins(c), model="other") == c


def test_estimate_tokens_counts_ascii_by_four_characters_and_other_characters_one_each():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("我习惯早上写代码") == 8


def test_llm_error_kind_is_an_eventlog_llm_error_and_says_whether_a_retry_may_help():
    assert issubclass(LLMCallError, LLMError)
    assert LLMCallError("x", kind="overloaded").retryable
    assert LLMCallError("x", kind="timeout").retryable
    assert not LLMCallError("x", kind="bad_request").retryable
    assert not LLMCallError("x", kind="auth").retryable


# --- importing stays cheap ------------------------------------------------------------


def test_importing_processors_llm_does_not_import_the_anthropic_sdk():
    code = (
        "import sys, os\n"
        "import processors.llm as L\n"
        "from processors.llm import make_llm, Prompt, OfflineExtractor, ReplayLLM, FakeLLM\n"
        "assert 'anthropic' not in sys.modules, 'after import'\n"
        "make_llm('offline')\n"
        "llm = make_llm('anthropic')\n"
        "assert type(llm).__name__ == 'AnthropicLLM'\n"
        "assert 'anthropic' not in sys.modules, 'after constructing AnthropicLLM'\n"
        "print('ok')\n"
    )
    env = {**os.environ, "ANTHROPIC_API_KEY": DUMMY_KEY}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --- make_llm ---------------------------------------------------------------------------


def test_make_llm_without_a_key_gives_the_offline_extractor(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    llm = make_llm()
    assert isinstance(llm, OfflineExtractor)
    assert (llm.name, llm.model) == ("offline", OFFLINE_MODEL)


def test_make_llm_treats_a_blank_key_as_no_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    assert isinstance(make_llm(), OfflineExtractor)


def test_make_llm_with_a_key_gives_anthropic_with_the_default_model():
    llm = make_llm(timeout=12.5)
    assert isinstance(llm, AnthropicLLM)
    assert (llm.name, llm.model, llm.timeout, llm.max_retries) == ("anthropic", DEFAULT_MODEL, 12.5, 2)


def test_the_default_model_is_listed_by_the_installed_sdk_and_not_deprecated():
    from anthropic._data.deprecated_models import DEPRECATED_MODELS
    from anthropic.types.model import Model

    assert DEFAULT_MODEL in Model.__args__[0].__args__
    assert DEFAULT_MODEL not in DEPRECATED_MODELS


def test_make_llm_anthropic_without_a_key_fails_naming_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(LLMError, match="ANTHROPIC_API_KEY") as info:
        make_llm("anthropic")
    assert info.value.kind == "config"


def test_make_llm_honours_evlog_model_and_an_explicit_model_beats_it(monkeypatch):
    monkeypatch.setenv("EVLOG_MODEL", "claude-haiku-5-5")
    assert make_llm().model == "claude-haiku-5-5"
    assert make_llm("anthropic", model="claude-opus-5-5").model == "claude-opus-5-5"


def test_make_llm_offline_ignores_the_model_and_needs_no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert make_llm("offline", model="claude-opus-5-5").model == OFFLINE_MODEL


def test_make_llm_rejects_unknown_kinds_and_kinds_that_need_recordings():
    for kind in ("gpt", "replay", "fake"):
        with pytest.raises(LLMCallError) as info:
            make_llm(kind)
        assert info.value.kind == "config"


def test_anthropic_llm_repr_never_shows_the_key():
    llm = make_llm("anthropic")
    assert DUMMY_KEY not in repr(llm)
    assert DUMMY_KEY not in str(llm)


# --- AnthropicLLM against the local server ------------------------------------------------


def test_anthropic_answer_records_text_usage_and_sends_model_max_tokens_system_and_user(api):
    api.script(ok(["Hello, ", "world."], input_tokens=21, output_tokens=5, model="claude-test-model-2026"))
    prompt = dream_prompt(["I prefer tabs."], max_tokens=321)
    done, err = call(prompt)
    assert err is None
    assert done == Completion(
        text="Hello, world.", model="claude-test-model-2026", input_tokens=21, output_tokens=5, stop_reason="end_turn"
    )
    (req,) = api.requests
    assert req["path"] == "/v1/messages"
    # SDK 2.x sends the key as "Authorization: Bearer <key>"; older ones sent x-api-key.
    sent = req["headers"].get("x-api-key") or req["headers"].get("authorization", "").removeprefix("Bearer ")
    assert sent == DUMMY_KEY
    body = req["json"]
    assert body["model"] == "claude-test-model"
    assert body["max_tokens"] == 321
    assert body["system"] == prompt.system
    assert body["messages"] == [{"role": "user", "content": prompt.user}]


def test_anthropic_leaves_out_an_empty_system_prompt(api):
    api.script(ok())
    call(msgspec.structs.replace(dream_prompt(), system=""))
    assert "system" not in api.requests[0]["json"]


def test_anthropic_explicit_base_url_beats_the_environment(api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    api.script(ok("via argument"))
    done, err = call(base_url=api.url)
    assert err is None
    assert done is not None
    assert done.text == "via argument"


def test_anthropic_retries_a_rate_limit_and_then_succeeds(api):
    api.script(error(429, "rate_limit_error", "slow down"), ok("after 429"))
    done, err = call()
    assert err is None
    assert done is not None
    assert done.text == "after 429"
    assert len(api.requests) == 2


def test_anthropic_retries_two_server_errors_and_then_succeeds(api):
    api.script(
        error(500, "api_error", "boom", retry_after_ms=None),
        error(500, "api_error", "boom", retry_after_ms=None),
        ok("after two 500s"),
    )
    done, err = call()
    assert err is None
    assert done is not None
    assert done.text == "after two 500s"
    assert len(api.requests) == 3


def test_anthropic_overloaded_until_retries_run_out_is_an_overloaded_error(api):
    api.script(error(529, "overloaded_error", "Overloaded"))
    done, err = call()
    assert done is None
    assert isinstance(err, LLMError)
    assert (err.kind, err.status, err.retryable) == ("overloaded", 529, True)
    assert "529" in str(err)
    assert "Overloaded" in str(err)
    assert len(api.requests) == 3  # the first try and max_retries=2
    assert DUMMY_KEY not in all_error_text(err)


def test_anthropic_answer_slower_than_the_timeout_is_a_timeout_error(api):
    api.script(sleep(10))
    started = time.monotonic()
    done, err = call(timeout=0.5, max_retries=1)
    elapsed = time.monotonic() - started
    assert done is None
    assert err is not None
    assert err.kind == "timeout"
    assert err.retryable
    assert "0.5 s" in str(err)
    assert len(api.requests) == 2
    assert elapsed < 5
    assert DUMMY_KEY not in all_error_text(err)


def test_anthropic_bad_request_is_not_retried_and_masks_a_key_the_server_echoed(api):
    api.script(error(400, "invalid_request_error", f"max_tokens too large (key {DUMMY_KEY})"))
    done, err = call()
    assert done is None
    assert err is not None
    assert (err.kind, err.status, err.request_id) == ("bad_request", 400, "req_1")
    assert "max_tokens too large" in str(err)
    assert "[redacted]" in str(err)
    assert len(api.requests) == 1
    assert DUMMY_KEY not in all_error_text(err)
    assert err.__cause__ is None
    assert err.__suppress_context__


def test_anthropic_unauthorised_is_an_auth_error(api):
    api.script(error(401, "authentication_error", "invalid x-api-key"))
    done, err = call()
    assert done is None
    assert err is not None
    assert (err.kind, err.status) == ("auth", 401)
    assert not err.retryable
    assert len(api.requests) == 1
    assert DUMMY_KEY not in all_error_text(err)


def test_anthropic_unreachable_host_is_a_connection_error():
    done, err = call(max_retries=0)  # ANTHROPIC_BASE_URL is a closed local port
    assert done is None
    assert err is not None
    assert err.kind == "connection"
    assert DUMMY_KEY not in all_error_text(err)


def test_anthropic_client_can_be_reused_and_closed(api):
    api.script(ok("one"), ok("two"))
    with AnthropicLLM(model="m", timeout=5) as llm:
        assert llm.complete(dream_prompt()).text == "one"
        assert llm.complete(dream_prompt()).text == "two"
    llm.close()  # closing twice is harmless


# --- the offline extractor: dream ----------------------------------------------------------


def dream(entries: list[str], memory: str = "", **kw: Any) -> str:
    return OfflineExtractor().complete(dream_prompt(entries, memory, **kw)).text


def facts_under(text: str, heading: str) -> list[str]:
    section = text.split(f"## {heading}\n", 1)[1].split("\n\n## ", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


def test_offline_english_preference_is_a_user_profile_fact():
    text = dream(["I prefer pytest over unittest, and always use ruff for linting."])
    assert facts_under(text, "User Profile") == ["I prefer pytest over unittest, and always use ruff for linting"]
    assert facts_under(text, "Project Context") == []


def test_offline_project_convention_is_a_project_context_fact():
    text = dream(["Thanks! In this project we use Python 3.11 and keep tests under tests/."])
    assert facts_under(text, "Project Context") == ["In this project we use Python 3.11 and keep tests under tests/"]
    assert facts_under(text, "User Profile") == []


def test_offline_chinese_habit_and_request_are_two_user_profile_facts():
    text = dream(["我习惯早上写代码，不要在晚上十点以后给我发提醒"])
    assert facts_under(text, "User Profile") == ["我习惯早上写代码", "不要在晚上十点以后给我发提醒"]


def test_offline_chinese_project_convention_goes_to_project_context():
    text = dream(["好的。我们项目里统一用 pnpm，不用 npm。"])
    assert facts_under(text, "Project Context") == ["我们项目里统一用 pnpm，不用 npm"]


def test_offline_output_has_exactly_the_format_dream_expects():
    text = dream(["I always use vim. We use Postgres 16 in this repo."])
    assert text == "## User Profile\n- I always use vim\n\n## Project Context\n- We use Postgres 16 in this repo\n"


def test_offline_empty_input_says_nothing_new_under_both_headings():
    expected = f"## User Profile\n{NOTHING_NEW}\n\n## Project Context\n{NOTHING_NEW}\n"
    assert dream([]) == expected
    assert dream(["", "ok thanks", "Let me look at the logs."]) == expected


def test_offline_questions_are_not_facts():
    text = dream(
        [
            "Can you always use ruff?",
            "Do you prefer tabs or spaces",
            "What do we use for CI in this project",
            "你可以半夜不跑酷了吗",
            "你爱妈妈嘛",
            "我是不是不要再改了？",
        ]
    )
    assert facts_under(text, "User Profile") == []
    assert facts_under(text, "Project Context") == []


def test_offline_a_fact_already_in_memory_is_not_extracted_again():
    memory = "## User Profile\n- I prefer pytest over unittest\n- 我习惯早上写代码\n\n## Project Context\n- We use uv\n"
    text = dream(["I PREFER pytest   over unittest.", "我习惯早上写代码。", "We use uv.", "I use zsh."], memory)
    assert facts_under(text, "User Profile") == ["I use zsh"]
    assert facts_under(text, "Project Context") == []


def test_offline_a_fact_inside_a_longer_memory_line_counts_as_known():
    assert NOTHING_NEW in dream(["I use vim."], "## User Profile\n- I use vim and tmux every day\n")


def test_offline_is_deterministic():
    entries = [
        "I prefer pytest over unittest, and always use ruff for linting.",
        "我习惯早上写代码，不要在晚上十点以后给我发提醒。我们使用 Go 1.22。",
        "Never push to main directly. My name is Ada.",
    ]
    runs = {OfflineExtractor().complete(dream_prompt(entries, "- I use vim")).text for _ in range(3)}
    assert len(runs) == 1
    first = OfflineExtractor().complete(dream_prompt(entries))
    assert first == OfflineExtractor().complete(dream_prompt(entries))


def test_offline_duplicates_across_entries_are_kept_once():
    text = dream(["I always use black.", "i always use   black!", "I always use black"])
    assert facts_under(text, "User Profile") == ["I always use black"]


def test_offline_skips_what_the_assistant_said_and_strips_user_labels():
    entry = "[2026-03-08 17:13] USER: I like dark mode.\nASSISTANT: I always recommend light mode.\n助手：我喜欢跑酷"
    assert facts_under(dream([entry]), "User Profile") == ["I like dark mode"]


def test_offline_ignores_look_alike_phrases():
    text = dream(
        [
            "I don't know why the build fails.",
            "别人都在用 Windows。",
            "这个功能特别好用。",
            "The test never finished because of the lock.",
            "记住我们的对话",
            "Don't worry, it happens.",
            "Don't forget to drink water.",
            "I love it!",
            "Yeah, I love to.",
        ]
    )
    assert facts_under(text, "User Profile") == []
    assert facts_under(text, "Project Context") == []


def test_offline_understands_imperatives_identity_and_remember():
    text = dream(
        [
            "Please don't add emojis to commit messages.",
            "Don't use tabs.",
            "My name is Ada and I work at Acme.",
            "Remember that I'm allergic to peanuts.",
            "请记住，我不吃辣。",
            "我叫小王，我在字节上班。",
        ]
    )
    assert facts_under(text, "User Profile") == [
        "Please don't add emojis to commit messages",
        "Don't use tabs",
        "My name is Ada and I work at Acme",
        "I'm allergic to peanuts",
        "我不吃辣",
        "我叫小王",
        "我在字节上班",
    ]


def test_offline_reads_third_person_summaries_as_a_model_writes_them():
    text = dream(
        [
            "The user prefers pytest over unittest. User always uses ruff.",
            "用户喜欢在早上写代码。The user's name is Ada.",
            "The project uses Python 3.11.",
        ]
    )
    assert facts_under(text, "User Profile") == [
        "The user prefers pytest over unittest",
        "User always uses ruff",
        "用户喜欢在早上写代码",
        "The user's name is Ada",
    ]
    assert facts_under(text, "Project Context") == ["The project uses Python 3.11"]


def test_offline_drops_harness_injected_blocks_instructions_about_the_user_and_requests():
    text = dream(
        [
            "<system-reminder>Don't use tabs. I prefer emacs.</system-reminder>I like tea.",
            "<local-command-caveat>Caveat: DO NOT respond to these messages.</local-command-caveat>",
            "Do not start on tangential requests without confirming with the user first.",
            "Please analyze this codebase and create a CLAUDE.md file in this repository.",
            "帮我在这个项目里加一个测试",
            "Please don't push to main.",
        ]
    )
    assert facts_under(text, "User Profile") == ["I like tea", "Please don't push to main"]
    assert facts_under(text, "Project Context") == []


def test_offline_chinese_clauses_without_a_trigger_stay_with_their_fact():
    text = dream(["周末的时候，我喜欢爬山，尤其是香山。"])
    assert facts_under(text, "User Profile") == ["周末的时候，我喜欢爬山，尤其是香山"]


def test_offline_cuts_long_facts_near_200_characters_at_a_boundary():
    english = "I prefer " + " ".join(f"word{i}" for i in range(80)) + "."
    chinese = "我喜欢" + "很长的句子" * 60
    facts = facts_under(dream([english, chinese]), "User Profile")
    assert len(facts) == 2
    for fact in facts:
        assert len(fact) <= 200
        assert fact.endswith("…")
    assert facts[0].removesuffix("…").split(" ")[-1].startswith("word")  # a whole word
    assert english.startswith(facts[0].removesuffix("…"))


def test_offline_a_cut_fact_is_recognised_in_memory_next_time():
    long = "I prefer " + " ".join(f"word{i}" for i in range(80)) + "."
    first = dream([long])
    assert NOTHING_NEW in dream([long], memory=first).split("## Project Context")[0]


def test_offline_stays_within_max_tokens_by_dropping_whole_facts():
    entries = [f"I always use tool{i} for task{i}." for i in range(40)]
    done = OfflineExtractor().complete(dream_prompt(entries, max_tokens=60))
    assert done.stop_reason == "max_tokens"
    assert done.output_tokens <= 60
    assert done.text.startswith("## User Profile\n- I always use tool0 for task0\n")
    assert "## Project Context\n" in done.text


FRAGMENTS = st.sampled_from(
    [
        "I prefer ", "I always use ", "we use ", "In this project ", "Don't ", "never ", "My name is ",
        "我习惯", "我们用", "不要", "别", "记住", "这个项目", "用户喜欢", "The user prefers ", "吗", "Please ",
        "pytest", "ruff", "tabs", "Python 3.11", "早上写代码", "晚上", " and ", " over ",
        ". ", "。", "，", ", ", "? ", "？", "!", ";", "\n", "- ", "USER: ", "assistant: ", "[10:00] ",
    ]
)
ENTRY_TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=14).map("".join)
#: Message text without speaker labels (a label inside a message is not a speaker change).
MESSAGE_TEXT = st.lists(
    st.one_of(FRAGMENTS.filter(lambda f: ":" not in f), st.sampled_from(["Remember that ", "Please ", "帮我"])),
    max_size=14,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(ENTRY_TEXT, max_size=5))
def test_offline_dream_output_is_well_formed_and_a_rerun_over_it_finds_nothing_new(entries):
    first = dream(entries)
    assert first.startswith("## User Profile\n")
    assert first.endswith("\n")
    assert first.count("\n\n## Project Context\n") == 1
    for fact in facts_under(first, "User Profile") + facts_under(first, "Project Context"):
        assert 0 < len(fact) <= 200
        assert fact == fact.strip()
    assert first == dream(entries)
    nothing = f"## User Profile\n{NOTHING_NEW}\n\n## Project Context\n{NOTHING_NEW}\n"
    assert dream(entries, memory=first) == nothing


@settings(max_examples=150, deadline=None)
@given(st.lists(MESSAGE_TEXT, max_size=4))
def test_offline_consolidate_summary_keeps_every_fact_for_a_later_dream(messages):
    from processors.llm.offline import extract_facts

    summary = OfflineExtractor().complete(consolidate_prompt([("user", m) for m in messages])).text
    text = dream([summary])
    facts = facts_under(text, "User Profile") + facts_under(text, "Project Context")
    found = [f.removesuffix("…").casefold() for f in facts]
    for fact in extract_facts(messages):
        assert any(fact.removesuffix("…").casefold() in f for f in found), (fact, summary, text)


def test_offline_estimates_token_usage():
    prompt = dream_prompt(["I like tea."])
    done = OfflineExtractor().complete(prompt)
    assert done.input_tokens == estimate_tokens(prompt.system) + estimate_tokens(prompt.user)
    assert done.output_tokens == estimate_tokens(done.text)
    assert (done.model, done.stop_reason) == (OFFLINE_MODEL, "end_turn")


def test_offline_rejects_a_dream_prompt_without_structured_inputs():
    for inputs in ({}, {"entries": "text"}, {"entries": [{"cursor": 1}]}, {"entries": [], "memory": 3}):
        with pytest.raises(LLMCallError) as info:
            OfflineExtractor().complete(Prompt(purpose="dream", system="", user="u", max_tokens=10, inputs=inputs))
        assert info.value.kind == "bad_request"


# --- the offline extractor: consolidate ------------------------------------------------------


def test_offline_consolidate_summarises_first_sentences_and_lists_preferences():
    prompt = consolidate_prompt(
        [
            ("user", "Set up CI for this repo. It should run pytest."),
            ("assistant", "Sure, I'll add a workflow. Here it is."),
            ("tool", "wrote .github/workflows/ci.yml"),
            ("user", "Looks good!\nI prefer pytest over unittest, and always use ruff for linting."),
            ("user", "我习惯早上写代码，不要在晚上十点以后给我发提醒"),
        ]
    )
    done = OfflineExtractor().complete(prompt)
    assert done.text == (
        "Summary of 5 messages (3 from the user, 1 from the assistant, 1 other).\n"
        "User: Set up CI for this repo.; Looks good!; 我习惯早上写代码，不要在晚上十点以后给我发提醒\n"
        "Assistant: Sure, I'll add a workflow.\n"
        "Preferences and conventions stated by the user:\n"
        "- I prefer pytest over unittest, and always use ruff for linting\n"
        "- 我习惯早上写代码\n"
        "- 不要在晚上十点以后给我发提醒\n"
    )
    assert done.model == OFFLINE_MODEL
    assert OfflineExtractor().complete(prompt) == done


def test_offline_consolidate_summary_feeds_dream_the_same_facts_and_not_the_assistants():
    summary = (
        OfflineExtractor()
        .complete(
            consolidate_prompt(
                [
                    ("user", "I prefer pytest over unittest."),
                    ("assistant", "I always use unittest myself."),
                    ("user", "In this project we use Python 3.11."),
                ]
            )
        )
        .text
    )
    text = dream([summary])
    assert facts_under(text, "User Profile") == ["I prefer pytest over unittest"]
    assert facts_under(text, "Project Context") == ["In this project we use Python 3.11"]


def test_offline_consolidate_caps_the_user_line():
    messages = [("user", f"Message number {i} talks about a fairly long topic here.") for i in range(50)]
    text = OfflineExtractor().complete(consolidate_prompt(messages)).text
    user_line = next(line for line in text.splitlines() if line.startswith("User: "))
    assert len(user_line) <= len("User: ") + 600
    assert user_line.endswith("; …")


def test_offline_consolidate_of_no_messages_and_of_block_content():
    assert OfflineExtractor().complete(consolidate_prompt([])).text == (
        "Summary of 0 messages (0 from the user, 0 from the assistant).\n"
    )
    prompt = Prompt(
        purpose="consolidate",
        system="",
        user="u",
        max_tokens=500,
        inputs={"messages": [{"role": "user", "content": [{"type": "text", "text": "I like tea."}]}]},
    )
    assert "- I like tea" in OfflineExtractor().complete(prompt).text


def test_offline_consolidate_is_cut_to_max_tokens():
    messages = [("user", f"I always use tool{i} for task{i}.") for i in range(40)]
    done = OfflineExtractor().complete(consolidate_prompt(messages, max_tokens=30))
    assert done.stop_reason == "max_tokens"
    assert done.output_tokens <= 30


def test_offline_rejects_a_consolidate_prompt_without_messages():
    with pytest.raises(LLMCallError) as info:
        OfflineExtractor().complete(Prompt(purpose="consolidate", system="", user="u", max_tokens=10))
    assert info.value.kind == "bad_request"


# --- ReplayLLM -----------------------------------------------------------------------------


def test_replay_answers_recorded_outputs_by_prompt_hash_as_often_as_asked():
    p1, p2 = dream_prompt(["a"]), dream_prompt(["b"])
    recorded = Completion(text="## User Profile\n- x\n", model="claude-x", input_tokens=5, output_tokens=3)
    llm = ReplayLLM({p1.hash(): recorded, p2.hash(): msgspec.to_builtins(recorded) | {"text": "two"}})
    assert llm.complete(p1) == recorded
    assert llm.complete(p1) == recorded
    assert llm.complete(p2) == msgspec.structs.replace(recorded, text="two")
    assert llm.name == "replay"
    assert llm.history == [p1, p1, p2]


def test_replay_without_a_recording_fails_naming_the_prompt_hash():
    p = dream_prompt(["never recorded"])
    with pytest.raises(LLMError, match=f"no recorded output for prompt {p.hash()}") as info:
        ReplayLLM({}).complete(p)
    assert info.value.kind == "no_output"


def test_replay_of_a_sequence_answers_in_order_then_fails():
    p = dream_prompt()
    llm = ReplayLLM(["first", Completion(text="second", model="m")])
    assert [llm.complete(p).text, llm.complete(p).text] == ["first", "second"]
    assert llm.remaining == 0
    with pytest.raises(LLMCallError, match="no recorded output"):
        llm.complete(p)


def test_replay_never_touches_the_network(monkeypatch):
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("network used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    p = dream_prompt(["a"])
    assert ReplayLLM({p.hash(): "ok"}).complete(p).text == "ok"
    assert OfflineExtractor().complete(p).text.startswith("## User Profile")


# --- FakeLLM ------------------------------------------------------------------------------


def test_fake_answers_queued_texts_completions_and_raises_queued_exceptions_in_order():
    done = Completion(text="as is", model="m", input_tokens=1, output_tokens=2)
    llm = FakeLLM().enqueue("text", done, LLMCallError("scripted", kind="timeout"))
    p1, p2, p3 = dream_prompt(["1"]), dream_prompt(["2"]), dream_prompt(["3"])
    first = llm.complete(p1)
    assert (first.text, first.model, first.output_tokens) == ("text", "fake-model", estimate_tokens("text"))
    assert llm.complete(p2) is done
    with pytest.raises(LLMCallError, match="scripted") as info:
        llm.complete(p3)
    assert info.value.kind == "timeout"
    assert llm.history == [p1, p2, p3]
    assert isinstance(llm, LLM)
    assert llm.name == "fake"


def test_fake_with_an_empty_queue_raises_an_llm_error_not_an_assertion():
    llm = FakeLLM("only one")
    llm.complete(dream_prompt())
    with pytest.raises(LLMError) as info:
        llm.complete(dream_prompt())
    assert not isinstance(info.value, AssertionError)
    assert info.value.kind == "no_output"
    assert len(llm.history) == 2


def test_fake_rejects_outputs_of_other_types():
    with pytest.raises(TypeError):
        FakeLLM().enqueue(42)  # type: ignore[arg-type]
