"""``AnthropicLLM``: the Messages API through the official ``anthropic`` SDK.

One ``messages.create`` call per prompt: ``model``, ``max_tokens``, ``system`` (left
out when empty) and one user message holding ``prompt.user``. The answer's text blocks
are concatenated; input tokens are the SDK's total (``input_tokens`` plus cache creation
and cache reads), output tokens as reported. The SDK is imported, and its client built,
on the first call, so constructing this class (and ``make_llm``) stays cheap.

Transport: ``anthropic.Anthropic(api_key=..., base_url=..., timeout=..., max_retries=...)``.
``base_url=None`` lets the SDK read ``$ANTHROPIC_BASE_URL`` itself (then its default
host); ``timeout`` is seconds per HTTP attempt and the SDK retries 408/409/429/5xx and
connection failures ``max_retries`` times with backoff (honouring ``retry-after``). What
is still failing after that becomes an ``LLMCallError`` whose ``kind`` is ``timeout``,
``connection``, ``rate_limit``, ``overloaded`` (529), ``server`` (other 5xx), ``auth``
(401/403), ``bad_request`` (400/404/413/422) or ``other``. The SDK exception is not
chained (``from None``): its text may quote what the server sent, and an error printed
with its traceback must not carry the key; the message names the status, the API's
error type and message (with the key masked if the server echoed it) and the request id.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, ClassVar

from processors.llm import API_KEY_ENV, DEFAULT_MODEL, LLM, Completion, LLMCallError, LLMErrorKind, Prompt

if TYPE_CHECKING:
    import anthropic

_MASK = "[redacted]"


class AnthropicLLM(LLM):
    """Claude through the Messages API (see the module docstring)."""

    name: ClassVar[str] = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        timeout: float = 60.0,
        max_retries: int = 2,
        base_url: str | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        key = key.strip()
        if not key:
            msg = f"the anthropic LLM needs an API key: set {API_KEY_ENV}"
            raise LLMCallError(msg, kind="config")
        if timeout <= 0:
            msg = f"timeout must be positive, not {timeout}"
            raise LLMCallError(msg, kind="config")
        if max_retries < 0:
            msg = f"max_retries must be 0 or more, not {max_retries}"
            raise LLMCallError(msg, kind="config")
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.base_url = base_url
        self.__key = key  # name-mangled and never printed (see __repr__)
        self._client: anthropic.Anthropic | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<AnthropicLLM model={self.model!r} timeout={self.timeout} max_retries={self.max_retries}>"

    def client(self) -> anthropic.Anthropic:
        """The SDK client, built (and the SDK imported) on first use."""
        with self._lock:
            if self._client is None:
                import anthropic  # slow import, kept off the package import path

                self._client = anthropic.Anthropic(
                    api_key=self.__key,
                    base_url=self.base_url,  # None: the SDK reads ANTHROPIC_BASE_URL itself
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            return self._client

    def close(self) -> None:
        """Close the SDK's HTTP connections (a later call opens new ones)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def complete(self, prompt: Prompt) -> Completion:
        """One ``messages.create`` call; SDK failures become ``LLMCallError`` (see the module docstring)."""
        import anthropic

        client = self.client()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": prompt.max_tokens,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if prompt.system:
            kwargs["system"] = prompt.system
        try:
            message = client.messages.create(**kwargs)
        except anthropic.AnthropicError as e:
            raise self._error(e) from None
        text = "".join(block.text for block in message.content if getattr(block, "type", None) == "text")
        usage = message.usage
        input_tokens = (
            usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        )
        return Completion(
            text=text,
            model=str(message.model or self.model),
            input_tokens=input_tokens,
            output_tokens=usage.output_tokens,
            stop_reason=str(message.stop_reason or ""),
        )

    def _mask(self, text: str) -> str:
        return text.replace(self.__key, _MASK) if self.__key else text

    def _error(self, e: Exception) -> LLMCallError:
        """The ``LLMCallError`` for an SDK exception (never quoting the key)."""
        import anthropic

        where = f"model {self.model}"
        attempts = self.max_retries + 1
        tries = f"up to {attempts} attempts" if attempts > 1 else "1 attempt"
        if isinstance(e, anthropic.APITimeoutError):
            return LLMCallError(
                f"the Anthropic API did not answer within {self.timeout:g} s ({tries}, {where})", kind="timeout"
            )
        if isinstance(e, anthropic.APIConnectionError):
            return LLMCallError(
                f"could not connect to the Anthropic API ({type(e).__name__}, {tries}, {where})", kind="connection"
            )
        if isinstance(e, anthropic.APIStatusError):
            status = e.status_code
            kind = _status_kind(status)
            detail = " ".join(part for part in _api_error(e) if part) or "no error detail"
            request_id = getattr(e, "request_id", None)
            request = f", request {request_id}" if request_id else ""
            after = f" ({tries})" if kind in ("rate_limit", "server", "overloaded") else ""
            msg = f"the Anthropic API answered {status}{after}: {self._mask(detail)} ({where}{request})"
            return LLMCallError(msg, kind=kind, status=status, request_id=request_id)
        return LLMCallError(f"the Anthropic API call failed: {type(e).__name__} ({where})", kind="other")


def _api_error(e: Any) -> tuple[str, str]:
    """The API's error type and message (``error.type``, ``error.message`` of the body)."""
    etype, message = getattr(e, "type", None), getattr(e, "api_message", None)
    error = e.body.get("error") if isinstance(e.body, dict) else None
    if isinstance(error, dict):  # SDKs before the typed attributes
        etype = etype or error.get("type")
        message = message or error.get("message")
    return (etype if isinstance(etype, str) else "", message if isinstance(message, str) else "")


_STATUS_KINDS: dict[int, LLMErrorKind] = {
    400: "bad_request",
    401: "auth",
    403: "auth",
    404: "bad_request",
    408: "timeout",
    413: "bad_request",
    422: "bad_request",
    429: "rate_limit",
    529: "overloaded",
}


def _status_kind(status: int) -> LLMErrorKind:
    return _STATUS_KINDS.get(status, "server" if status >= 500 else "other")
