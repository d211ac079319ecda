"""A regular expression compiled at its first use, not at import.

``re.compile`` costs 0.1-7 ms a pattern in a fresh process. A module that holds many patterns
but runs few of them in a short process (``eventlog.secrets``: ~50 shapes, of which a
SessionStart hook redacting its memory files runs the anchor scan and the few shapes the
anchors found) pays for all of them at import unless each waits for its first use.

``LazyPattern(source)`` stands where ``re.compile(source)`` stood: the first call of one of
its matching methods compiles it (``re``'s own cache), and every method is then the compiled
pattern's bound method, kept on the instance, so later calls cost what they cost before.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing's, without importing typing (a context hook's path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

#: The methods of a compiled pattern a ``LazyPattern`` serves.
METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "split")


class LazyPattern:
    """``re.compile(source)``, compiled when one of ``METHODS`` is first looked up."""

    match: Callable[..., re.Match[str] | None]
    search: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]
    split: Callable[..., list[str | Any]]

    def __init__(self, source: str) -> None:
        self.source = source

    def __getattr__(self, name: str) -> Any:
        """Only reached before the first use (afterwards the methods are instance attributes)."""
        if name not in METHODS:
            raise AttributeError(name)
        compiled = re.compile(self.source)
        for method in METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    @property
    def compiled(self) -> bool:
        """Whether the pattern has been compiled (what tests of a process's work look at)."""
        return "match" in self.__dict__

    def __repr__(self) -> str:
        return f"LazyPattern({self.source!r})"
