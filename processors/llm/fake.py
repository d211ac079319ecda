"""``FakeLLM``: a scripted model for tests.

``enqueue(*outputs)`` queues answers; each ``complete`` call records its prompt in
``.history`` and takes the next one: a str becomes a ``Completion`` (model
``fake-model`` unless given, output tokens estimated), a ``Completion`` is returned as it
is, and an exception instance is raised (an ``LLMCallError(kind="timeout")`` to script a
timeout, say). An empty queue raises ``LLMCallError`` (kind ``no_output``), not an
AssertionError, so code under test sees the same failure type as from a real model.
"""

from __future__ import annotations

from collections import deque
from typing import ClassVar

from processors.llm import LLM, Completion, LLMCallError, Prompt, as_completion

Output = str | Completion | BaseException


class FakeLLM(LLM):
    """A queue of scripted answers (see the module docstring)."""

    name: ClassVar[str] = "fake"

    def __init__(self, *outputs: Output, model: str = "fake-model") -> None:
        self.model = model
        #: Every prompt received, in order (including those answered by an exception).
        self.history: list[Prompt] = []
        self._queue: deque[Completion | BaseException] = deque()
        self.enqueue(*outputs)

    def enqueue(self, *outputs: Output) -> FakeLLM:
        """Queue answers (str, Completion or exception instance); returns self for chaining."""
        for out in outputs:
            if isinstance(out, BaseException):
                self._queue.append(out)
            elif isinstance(out, str | Completion):
                self._queue.append(as_completion(out, model=self.model))
            else:
                msg = f"FakeLLM outputs are str, Completion or exception instances, not {type(out).__name__}"
                raise TypeError(msg)
        return self

    @property
    def pending(self) -> int:
        """How many queued answers are left."""
        return len(self._queue)

    def complete(self, prompt: Prompt) -> Completion:
        """The next queued answer (raised if it is an exception)."""
        self.history.append(prompt)
        if not self._queue:
            msg = f"FakeLLM has no queued output for prompt {prompt.hash()} (call {len(self.history)})"
            raise LLMCallError(msg, kind="no_output")
        out = self._queue.popleft()
        if isinstance(out, BaseException):
            raise out
        return out
