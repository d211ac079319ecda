"""The language-model layer that Dream and the Consolidator call: one small interface.

A processor builds a ``Prompt`` (its purpose, the system and user text a model would
read, ``max_tokens``, and the same material again as structured ``inputs``) and hands it
to an ``LLM``, which answers with a ``Completion`` (text, model, token usage, stop
reason) or raises ``LLMCallError``, an ``eventlog.errors.LLMError`` whose ``kind`` says
what went wrong (``timeout``, ``rate_limit``, ``server``, ``overloaded``, ``connection``,
``bad_request``, ``auth``, ``config``, ``no_output``, ``other``) and whose message never
holds a credential. ``Prompt.hash()`` identifies a prompt across runs; Dream records it
with the raw output, model and usage, so a replay finds the same output again by hash.

Six implementations sit behind the interface: ``ClaudeCodeLLM`` (Claude Code's headless
mode, the user's own sign-in), ``OpenAICompatibleLLM`` (OpenAI, Ollama, vLLM, llama.cpp,
LM Studio), ``AnthropicLLM`` (the official SDK, key
from ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` honoured, imported lazily because the
SDK is slow to import), ``OfflineExtractor`` (deterministic rules that read
``Prompt.inputs`` instead of parsing the prompt text, so the tool works without a key
or a network), ``ReplayLLM`` (recorded outputs by prompt hash, never a network) and
``FakeLLM`` (a scripted queue for tests). ``make_llm()`` picks Anthropic when a key is
set and the offline extractor otherwise. Importing this package imports none of them;
the names resolve on first use.
"""

from __future__ import annotations

import abc
import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import msgspec

from eventlog.codec import content_hash
from eventlog.errors import LLMError
from eventlog.secrets import redact_value

if TYPE_CHECKING:
    from processors.llm.anthropic_llm import AnthropicLLM
    from processors.llm.claude_code import ClaudeCodeLLM
    from processors.llm.fake import FakeLLM
    from processors.llm.offline import OfflineExtractor
    from processors.llm.openai_compat import OpenAICompatibleLLM
    from processors.llm.replay import ReplayLLM

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_MODEL",
    "MODEL_ENV",
    "PURPOSES",
    "AnthropicLLM",
    "ClaudeCodeLLM",
    "Completion",
    "FakeLLM",
    "LLMCallError",
    "LLMErrorKind",
    "OfflineExtractor",
    "OpenAICompatibleLLM",
    "Prompt",
    "ReplayLLM",
    "as_completion",
    "estimate_tokens",
    "make_llm",
]

#: The Claude model used when neither ``model=`` nor ``$EVLOG_MODEL`` names one. The
#: newest Sonnet the installed SDK lists (types/model.py) and not in its deprecation
#: table: Sonnet is the cost/quality middle that a background extraction job needs.
DEFAULT_MODEL = "claude-sonnet-5-5"
API_KEY_ENV = "ANTHROPIC_API_KEY"
MODEL_ENV = "EVLOG_MODEL"
PURPOSES = ("facts", "consolidate")

LLMErrorKind = Literal[
    "timeout",  # no answer within the client timeout (after the SDK's retries)
    "rate_limit",  # 429 after the SDK's retries
    "server",  # 5xx other than 529
    "overloaded",  # 529: the API is overloaded
    "connection",  # the host could not be reached
    "bad_request",  # 400, 404, 413, 422, or a prompt an implementation cannot use
    "auth",  # 401 / 403: the key is missing its rights or wrong
    "config",  # no key, unknown kind: fix the setup, retrying will not help
    "no_output",  # a replayer or fake has nothing recorded or queued for the prompt
    "other",
]
_RETRYABLE = frozenset({"timeout", "rate_limit", "server", "overloaded", "connection"})


class LLMCallError(LLMError):
    """An ``LLMError`` that says what kind of failure it was (see ``LLMErrorKind``).

    ``status`` is the HTTP status when the API answered, ``request_id`` the API's request
    id when it sent one. The message never contains the API key.
    """

    def __init__(
        self, message: str, *, kind: LLMErrorKind = "other", status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.kind: LLMErrorKind = kind
        self.status = status
        self.request_id = request_id

    @property
    def retryable(self) -> bool:
        """True for transient failures (timeout, rate limit, 5xx, overloaded, connection)."""
        return self.kind in _RETRYABLE


class Prompt(msgspec.Struct, frozen=True, kw_only=True):
    """What a processor asks a model: the text a model reads, plus structured inputs.

    ``inputs`` carries the same material as ``user`` in a form the offline extractor
    reads without parsing text: for ``facts`` (Dream) ``{"entries": [Entry, ...],
    "existing": [ExistingFact, ...]}`` as builtins (``processors.extract.model``), for
    ``consolidate`` ``{"messages": [{"role": str, "content": str}, ...]}``.
    """

    purpose: str
    system: str
    user: str
    max_tokens: int
    inputs: dict[str, Any] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        _redact_prompt(self)
        if self.purpose not in PURPOSES:
            msg = f"Prompt.purpose must be one of {', '.join(PURPOSES)}, not {self.purpose!r}"
            raise ValueError(msg)
        if self.max_tokens <= 0:
            msg = f"Prompt.max_tokens must be positive, not {self.max_tokens}"
            raise ValueError(msg)

    def hash(self) -> str:
        """``xxh3_128:<hex>`` of the canonical JSON of purpose, system, user and max_tokens.

        The hashed value is the object ``{"max_tokens", "purpose", "system", "user"}``
        (``eventlog.codec.content_hash``: sorted keys, compact UTF-8). ``inputs`` and the
        model are left out: the text is what a model answers, and a recorded output is
        found again whatever model produced it.
        """
        return content_hash(
            {"purpose": self.purpose, "system": self.system, "user": self.user, "max_tokens": self.max_tokens}
        )


def _redact_prompt(prompt: Prompt) -> None:
    """Redact every secret in a prompt's text and inputs in place (INVARIANTS I24: every prompt passes the door again).

    The log's door already redacted what a prompt is built from; this catches what came
    another way (a log written before the door, a hand-edited MEMORY.md, a processor's own
    text), so no implementation (a remote model, the offline extractor, a recorder) ever
    sees a secret. Runs when the prompt is made, so its hash is the hash of what is sent.
    """
    for name in ("system", "user", "inputs"):
        value = getattr(prompt, name)
        new, kinds = redact_value(value)
        if kinds:
            msgspec.structs.force_setattr(prompt, name, new)


class Completion(msgspec.Struct, frozen=True, kw_only=True):
    """A model's answer and what it cost (``msgspec.to_builtins`` gives a recordable dict)."""

    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str = "end_turn"


class LLM(abc.ABC):
    """A language model as the processors see it: ``complete(prompt) -> Completion``.

    ``complete`` raises ``LLMCallError`` (an ``eventlog.errors.LLMError``) on every
    failure it can name; it never retries on its own beyond what its transport does.
    """

    #: "anthropic", "offline", "replay" or "fake".
    name: ClassVar[str]
    #: The model id this implementation asks for (or stands for).
    model: str

    @abc.abstractmethod
    def complete(self, prompt: Prompt) -> Completion:
        """Answer ``prompt`` or raise ``LLMCallError``."""

    def close(self) -> None:  # noqa: B027 - optional hook, most implementations hold nothing
        """Release connections (a no-op unless the implementation holds any)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} model={self.model!r}>"


def estimate_tokens(text: str) -> int:
    """A token estimate without a tokenizer: ASCII characters / 4 (rounded up) + 1 per other character.

    English averages about four characters a token; CJK text is closer to one token a
    character, so counting ``len(text) / 4`` alone would under-count Chinese by about 4x.
    """
    ascii_chars = sum(1 for c in text if c < "\x80")
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def as_completion(value: Completion | str | Mapping[str, Any], *, model: str) -> Completion:
    """A ``Completion`` from a recorded value: a Completion, its text, or its dict form.

    A bare text gets ``model`` and estimated output tokens; a dict is checked field by field.
    """
    if isinstance(value, Completion):
        return value
    if isinstance(value, str):
        return Completion(text=value, model=model, output_tokens=estimate_tokens(value))
    if isinstance(value, Mapping):
        data = {"model": model, **value}
        try:
            return msgspec.convert(data, Completion)
        except msgspec.ValidationError as e:
            msg = f"a recorded output is not a completion: {e}"
            raise LLMCallError(msg, kind="bad_request") from None
    msg = f"a recorded output must be a Completion, a str or a mapping, not {type(value).__name__}"
    raise TypeError(msg)


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def make_llm(kind: str | None = None, *, model: str | None = None, timeout: float = 60.0) -> LLM:
    """The LLM the processors use.

    ``kind`` None: ``$EVLOG_LLM`` when set, else ``"anthropic"`` when ``$ANTHROPIC_API_KEY``
    is set (and not blank), else ``"offline"``. ``"anthropic"`` without a key raises
    ``LLMCallError`` (kind ``config``) naming the variable. The Anthropic model is
    ``model``, else ``$EVLOG_MODEL``, else ``DEFAULT_MODEL``; the offline extractor has one
    fixed model name (``offline-rules-v1``) whatever is asked. ``"claude-code"`` runs
    Claude Code's headless mode (``claude_code``), ``"openai"`` an OpenAI-compatible
    endpoint (``openai_compat``). ``timeout`` is seconds per HTTP attempt (the SDK retries
    twice). Replay and fake LLMs need recordings or a script, so they are built directly,
    not here. ``providers.llm_for`` adds the workspace's setting and the offline fallback.
    """
    key = _env(API_KEY_ENV)
    if kind is None:
        kind = _env("EVLOG_LLM") or ("anthropic" if key else "offline")
    if kind == "offline":
        from processors.llm.offline import OfflineExtractor

        return OfflineExtractor()
    if kind == "anthropic":
        if not key:
            msg = (
                f"the anthropic LLM needs an API key: set {API_KEY_ENV} "
                "(or leave the kind unset to use the offline extractor)"
            )
            raise LLMCallError(msg, kind="config")
        from processors.llm.anthropic_llm import AnthropicLLM

        return AnthropicLLM(api_key=key, model=model or _env(MODEL_ENV) or DEFAULT_MODEL, timeout=timeout)
    if kind == "claude-code":
        from processors.llm.claude_code import ClaudeCodeLLM

        return ClaudeCodeLLM(model=model or _env(MODEL_ENV), timeout=max(timeout, 180.0))
    if kind == "openai":
        from processors.llm.openai_compat import OpenAICompatibleLLM

        return OpenAICompatibleLLM(model=model or _env(MODEL_ENV), timeout=max(timeout, 120.0))
    if kind in ("replay", "fake"):
        msg = f"the {kind} LLM is built directly ({'ReplayLLM' if kind == 'replay' else 'FakeLLM'}), not by make_llm"
        raise LLMCallError(msg, kind="config")
    msg = f"unknown LLM kind {kind!r}: use 'claude-code', 'openai', 'anthropic' or 'offline' (or leave it unset)"
    raise LLMCallError(msg, kind="config")


_LAZY = {
    "AnthropicLLM": "processors.llm.anthropic_llm",
    "ClaudeCodeLLM": "processors.llm.claude_code",
    "OpenAICompatibleLLM": "processors.llm.openai_compat",
    "OfflineExtractor": "processors.llm.offline",
    "ReplayLLM": "processors.llm.replay",
    "FakeLLM": "processors.llm.fake",
}


def __getattr__(name: str) -> Any:
    """Resolve the implementations on first use, so importing this package stays cheap."""
    module = _LAZY.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib

    return getattr(importlib.import_module(module), name)
