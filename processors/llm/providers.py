"""Which model evlog uses: the providers, the best one available, and the fallback to offline.

Providers (``PROVIDERS``): ``anthropic`` (an API key), ``openai`` (any OpenAI-compatible
endpoint), ``claude-code`` (Claude Code's headless mode with the user's own sign-in) and
``offline`` (the rules; always there).

* ``best_available()`` says which one ``evlog init`` picks and why, from what is set up:
  ``$EVLOG_LLM`` when it names one; else ``anthropic`` when ``$ANTHROPIC_API_KEY`` is set;
  else ``openai`` when an endpoint is named (``$EVLOG_OPENAI_BASE_URL``/``$OPENAI_BASE_URL``,
  or ``$OPENAI_API_KEY``) and a model (``$EVLOG_MODEL``); else ``claude-code`` when the
  ``claude`` program is found; else ``offline``.
* ``llm_for(ws, kind, model)``: the LLM a command or the daemon uses: ``kind``, else the
  workspace's ``llm`` setting (what init recorded), else ``make_llm``'s default. A model-
  backed one is wrapped in ``FallbackLLM``.
* ``FallbackLLM``: a call the provider fails (``LLMCallError``: not signed in, no server,
  a timeout, an answer that is not what the API returns) or answers with nothing usable
  for Dream (every operation refused) is answered by the offline extractor instead, and
  ``on_fallback`` is told why (the CLI prints it, the daemon logs it); the run records the
  model that answered (``offline-rules-v1``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from processors.llm import API_KEY_ENV, LLM, Completion, LLMCallError, Prompt

if TYPE_CHECKING:
    from processors.context import Context

PROVIDERS = ("claude-code", "openai", "anthropic", "offline")
KIND_ENV = "EVLOG_LLM"


@dataclass(frozen=True)
class Choice:
    """A provider and why it was chosen."""

    kind: str
    reason: str


def best_available(env: dict[str, str] | None = None) -> Choice:
    """The provider evlog should use here (see the module docstring)."""
    from processors.llm.claude_code import find_program

    env = dict(os.environ) if env is None else env
    named = env.get(KIND_ENV, "").strip()
    if named in PROVIDERS:
        return Choice(named, f"${KIND_ENV} names it")
    if env.get(API_KEY_ENV, "").strip():
        return Choice("anthropic", f"${API_KEY_ENV} is set")
    endpoint = (env.get("EVLOG_OPENAI_BASE_URL", "") or env.get("OPENAI_BASE_URL", "")).strip()
    if (endpoint or env.get("OPENAI_API_KEY", "").strip()) and env.get("EVLOG_MODEL", "").strip():
        return Choice("openai", f"an OpenAI-compatible endpoint is set up ({endpoint or 'api.openai.com'}, "
                                f"model {env['EVLOG_MODEL'].strip()})")
    program = find_program(env.get("EVLOG_CLAUDE") or None)
    if program:
        return Choice("claude-code", f"Claude Code is installed ({program}): its headless mode uses your own sign-in")
    return Choice("offline", "no model is set up (no API key, endpoint or Claude Code): the offline rules")


def current_choice(config: object) -> Choice:
    """The provider a workspace uses: its ``llm`` setting when set (``evlog init --llm``), else ``best_available()``."""
    kind = getattr(config, "llm", "")
    if kind:
        return Choice(kind, "chosen in evlog.json ('evlog init --llm')")
    return best_available()


class FallbackLLM(LLM):
    """A provider, answered by the offline extractor when it fails (see the module docstring)."""

    name: ClassVar[str] = "fallback"

    def __init__(self, primary: LLM, *, on_fallback: Callable[[str], Any] | None = None) -> None:
        from processors.llm.offline import OfflineExtractor

        self.primary = primary
        self.offline = OfflineExtractor()
        self.model = primary.model
        vars(self)["name"] = primary.name  # shadows the class's: a run records the provider it asked
        self.on_fallback = on_fallback
        self.fallbacks: list[str] = []

    def __repr__(self) -> str:
        return f"<FallbackLLM {self.primary!r} -> offline>"

    def complete(self, prompt: Prompt) -> Completion:
        try:
            out = self.primary.complete(prompt)
        except LLMCallError as e:
            return self._fall_back(prompt, f"{self.primary.name} failed ({e.kind}): {e}")
        if prompt.purpose == "facts" and not _usable(prompt, out.text):
            return self._fall_back(prompt, f"{self.primary.name} answered nothing Dream can use")
        return out

    def _fall_back(self, prompt: Prompt, why: str) -> Completion:
        note = f"{why}; the offline extractor answered instead"
        self.fallbacks.append(note)
        if self.on_fallback is not None:
            self.on_fallback(note)
        return self.offline.complete(prompt)

    def close(self) -> None:
        self.primary.close()


def _usable(prompt: Prompt, text: str) -> bool:
    """Whether an answer to a Dream prompt holds an operation, or is empty on purpose (not all refused)."""
    from processors.extract.llm import parse_ops

    existing = prompt.inputs.get("existing") or []
    ids = {f.get("fact_id") for f in existing if isinstance(f, dict)}
    ops, refused = parse_ops(text, {i for i in ids if isinstance(i, str)})
    return bool(ops) or not refused


def llm_for(ws: Context | None, kind: str | None = None, model: str | None = None, *,
            on_fallback: Callable[[str], Any] | None = None) -> LLM:
    """The LLM to use (see the module docstring); a model-backed one falls back to offline."""
    from processors.llm import make_llm

    config = getattr(ws, "config", None)
    kind = kind or getattr(config, "llm", "") or None
    model = model or getattr(config, "llm_model", "") or None
    try:
        llm = make_llm(kind, model=model)
    except LLMCallError as e:
        if e.kind != "config" or kind in (None, "offline"):
            raise
        if on_fallback is not None:
            on_fallback(f"the {kind} LLM cannot be used ({e}); the offline extractor answers instead")
        return make_llm("offline")
    return llm if llm.name == "offline" else FallbackLLM(llm, on_fallback=on_fallback)
