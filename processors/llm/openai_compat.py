"""``OpenAICompatibleLLM``: any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).

One ``POST <base_url>/chat/completions`` per prompt with ``{"model", "messages": [system,
user], "max_tokens", "temperature": 0}`` and ``Authorization: Bearer <key>`` when a key is
given (local servers need none). The answer is ``choices[0].message.content``; usage is
``usage.prompt_tokens`` / ``usage.completion_tokens`` when the server reports them, else
estimated.

Built on the standard library (``urllib.request``), not the ``openai`` package: the call
is one JSON POST, the package is a large dependency to import in a background job, and
the servers that copy the API (Ollama, llama.cpp's server, vLLM, LM Studio) accept exactly
this request; nothing else of the SDK is used.

Settings: ``base_url`` (``$EVLOG_OPENAI_BASE_URL``, else ``$OPENAI_BASE_URL``, else
``https://api.openai.com/v1``), ``model`` (``$EVLOG_MODEL``; required: there is no default
across servers), ``api_key`` (``$OPENAI_API_KEY``; optional). Failures are
``LLMCallError``: ``timeout``, ``connection``, ``auth`` (401/403), ``rate_limit`` (429),
``server`` (5xx), ``bad_request`` (other 4xx, and an answer that is not the expected JSON:
a hostile or broken server); the message quotes at most a short, redacted excerpt, never
the key. A body beyond ``MAX_BODY_BYTES`` is refused.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, ClassVar

from eventlog.secrets import redact
from processors.llm import LLM, Completion, LLMCallError, LLMErrorKind, Prompt, estimate_tokens

BASE_URL_ENV = "EVLOG_OPENAI_BASE_URL"
KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_BODY_BYTES = 4 * 1024 * 1024


def configured_base_url() -> str:
    """The endpoint the environment names ("" when none does)."""
    return (os.environ.get(BASE_URL_ENV, "") or os.environ.get("OPENAI_BASE_URL", "")).strip()


class OpenAICompatibleLLM(LLM):
    """A chat completions endpoint (see the module docstring)."""

    name: ClassVar[str] = "openai"

    def __init__(self, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 120.0) -> None:
        model = (model or os.environ.get("EVLOG_MODEL", "")).strip()
        if not model:
            raise LLMCallError("the openai LLM needs a model name (--model or $EVLOG_MODEL, e.g. gpt-4o-mini, "
                               "llama3.1 for Ollama)", kind="config")
        url = (base_url or configured_base_url() or DEFAULT_BASE_URL).strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise LLMCallError(f"the openai base URL must start with http:// or https://, not {url!r}", kind="config")
        if timeout <= 0:
            raise LLMCallError(f"timeout must be positive, not {timeout}", kind="config")
        self.model = model
        self.base_url = url
        self.timeout = float(timeout)
        self.__key = (api_key if api_key is not None else os.environ.get(KEY_ENV, "")).strip()

    def __repr__(self) -> str:
        return f"<OpenAICompatibleLLM base_url={self.base_url!r} model={self.model!r}>"

    def complete(self, prompt: Prompt) -> Completion:
        """One chat completion; failures become ``LLMCallError`` (see the module docstring)."""
        messages = ([{"role": "system", "content": prompt.system}] if prompt.system else []) + \
            [{"role": "user", "content": prompt.user}]
        body = json.dumps({"model": self.model, "messages": messages, "max_tokens": prompt.max_tokens,
                           "temperature": 0}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - http(s) checked above
                raw = resp.read(MAX_BODY_BYTES + 1)
        except urllib.error.HTTPError as e:
            raise self._status_error(e.code, e.read(2000)) from None
        except TimeoutError:
            raise LLMCallError(f"{self.base_url} did not answer within {self.timeout:g} s", kind="timeout") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                raise LLMCallError(f"{self.base_url} did not answer within {self.timeout:g} s", kind="timeout") from None
            raise LLMCallError(f"could not connect to {self.base_url}: {self._mask(str(reason))}",
                               kind="connection") from None
        if len(raw) > MAX_BODY_BYTES:
            raise LLMCallError(f"{self.base_url} answered more than {MAX_BODY_BYTES} bytes", kind="bad_request")
        return self._parse(raw)

    def _parse(self, raw: bytes) -> Completion:
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise LLMCallError(f"{self.base_url} answered something that is not JSON: {self._excerpt(raw)}",
                               kind="bad_request") from None
        text = _content(data)
        if text is None:
            raise LLMCallError(f"{self.base_url} answered JSON without choices[0].message.content: "
                               f"{self._excerpt(raw)}", kind="bad_request")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else self.model
        finish = data["choices"][0].get("finish_reason")
        return Completion(text=text, model=model[:100], input_tokens=_count(usage.get("prompt_tokens")),
                          output_tokens=_count(usage.get("completion_tokens")) or estimate_tokens(text),
                          stop_reason=finish if isinstance(finish, str) else "end_turn")

    def _status_error(self, status: int, body: bytes) -> LLMCallError:
        kind: LLMErrorKind = ("auth" if status in (401, 403) else "rate_limit" if status == 429 else
                              "server" if status >= 500 else "bad_request")
        return LLMCallError(f"{self.base_url} answered {status}: {self._excerpt(body)} (model {self.model})",
                            kind=kind, status=status)

    def _mask(self, text: str) -> str:
        return text.replace(self.__key, "[redacted]") if self.__key else text

    def _excerpt(self, raw: bytes) -> str:
        text = self._mask(" ".join(raw.decode("utf-8", "replace").split()))
        text = redact(text)[0]
        return (text[:200] + "...") if len(text) > 200 else (text or "(empty)")


def _content(data: Any) -> str | None:
    """``choices[0].message.content`` when it is text, else None."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        return None
    first = data["choices"][0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None


def _count(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**9 else 0
