"""``ReplayLLM``: recorded outputs answered again, without a network, ever.

Dream records every model answer with its prompt hash; replaying the log rebuilds
MEMORY.md from those records instead of calling a model. Recordings are either a
mapping ``prompt hash -> output`` (looked up by ``Prompt.hash()``, answered as often as
asked) or a sequence of outputs (answered in order, one per call, whatever the prompt).
An output is a ``Completion``, its text, or its dict form (``msgspec.to_builtins`` of a
Completion, as stored in an event). A prompt with nothing recorded raises
``LLMCallError("no recorded output for prompt <hash>")`` with kind ``no_output``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from processors.llm import LLM, Completion, LLMCallError, Prompt, as_completion

Recorded = Completion | str | Mapping[str, Any]


class ReplayLLM(LLM):
    """Answers from recordings (see the module docstring)."""

    name: ClassVar[str] = "replay"

    def __init__(self, recordings: Mapping[str, Recorded] | Sequence[Recorded], *, model: str = "replay") -> None:
        self.model = model
        self._by_hash: dict[str, Completion] | None = None
        self._in_order: list[Completion] = []
        self._next = 0
        if isinstance(recordings, Mapping):
            self._by_hash = {str(h): as_completion(v, model=model) for h, v in recordings.items()}
        elif isinstance(recordings, Sequence) and not isinstance(recordings, str):
            self._in_order = [as_completion(v, model=model) for v in recordings]
        else:
            msg = f"recordings must be a mapping of prompt hashes or a sequence, not {type(recordings).__name__}"
            raise TypeError(msg)
        #: Every prompt asked, in order (answered or not).
        self.history: list[Prompt] = []

    @property
    def remaining(self) -> int:
        """Outputs of a sequence not yet answered (0 for a mapping)."""
        return len(self._in_order) - self._next

    def complete(self, prompt: Prompt) -> Completion:
        """The recorded output for ``prompt``, or ``LLMCallError`` (kind ``no_output``)."""
        self.history.append(prompt)
        if self._by_hash is not None:
            found = self._by_hash.get(prompt.hash())
        elif self._next < len(self._in_order):
            found = self._in_order[self._next]
            self._next += 1
        else:
            found = None
        if found is None:
            msg = f"no recorded output for prompt {prompt.hash()}"
            raise LLMCallError(msg, kind="no_output")
        return found
