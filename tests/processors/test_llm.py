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
from processors.llm.offline import OfflineExtractor
from processors.llm.replay import ReplayLLM
from tests.conftest import REPO

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
    """A Dream (facts) prompt with these texts as its entries."""
    entries = entries or []
    user = "\n".join(entries)
    return Prompt(
        purpose="facts",
        system="Extract durable facts.",
        user=f"MEMORY:\n{memory}\n\nMESSAGES:\n{user}",
        max_tokens=max_tokens,
        inputs=facts_inputs(*entries),
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
    expected = content_hash({"purpose": "facts", "system": p.system, "user": p.user, "max_tokens": p.max_tokens})
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
        Prompt(purpose="facts", system="", user="", max_tokens=0)


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


# --- the offline extractor: facts (Dream) -------------------------------------------------------


def facts_inputs(*texts: str) -> dict:
    from processors.extract.model import Entry

    entries = [Entry(ref=f"s#{i}", seq=i + 1, session_key="s", message_id=str(i), speaker="user", role="user",
                     time="2025-03-01T10:00:00.000Z", text=t) for i, t in enumerate(texts)]
    return {"entries": [msgspec.to_builtins(e) for e in entries], "existing": []}


def test_offline_facts_answers_the_extractors_operations_as_the_json_a_model_would_write():
    from processors.extract.llm import format_ops, parse_ops
    from processors.extract.model import Entry
    from processors.extract.offline import extract

    inputs = facts_inputs("I prefer pytest over unittest.", "what's the weather?")
    prompt = Prompt(purpose="facts", system="s", user="u", max_tokens=100, inputs=inputs)
    done = OfflineExtractor().complete(prompt)
    entries = msgspec.convert(inputs["entries"], list[Entry])
    assert done.text == format_ops(extract(entries, []), entries)
    ops, refused = parse_ops(done.text, set(), entries=entries)
    assert refused == [] and [o.text for o in ops] == ["The user prefers pytest over unittest."]
    assert done.model == "offline-rules-v1" == OfflineExtractor().model and OfflineExtractor().complete(prompt) == done


def test_offline_facts_with_malformed_inputs_is_a_bad_request():
    prompt = Prompt(purpose="facts", system="s", user="u", max_tokens=100, inputs={"entries": [{"text": 1}]})
    with pytest.raises(LLMCallError) as err:
        OfflineExtractor().complete(prompt)
    assert err.value.kind == "bad_request"


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
    assert json.loads(OfflineExtractor().complete(p).text) == {"ops": []}


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
