"""``Record``: what a ``@dataclass`` gives a small value class (``__eq__``, ``__repr__``), without importing ``dataclasses``.

``import dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``): as much
CPU as the interpreter's own start-up. The classes a context hook builds (``hooks.HookResult``,
``capture.CaptureState``, ``context.MemoryContext`` and ``ProjectScope``, ``repo_identity``'s
``GitPlace`` and ``Identity``) derive from ``Record`` instead: each names its fields in
``__slots__`` (in order) and writes its ``__init__``; equality and ``repr`` are a dataclass's
(same class, fields equal in order; ``Name(field=value, ...)``). ``FrozenRecord`` also refuses
assignment after ``__init__`` and hashes its fields, as ``@dataclass(frozen=True)`` does.
"""

from __future__ import annotations


class Record:
    """Equality and ``repr`` over ``__slots__``, as a dataclass has them."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq=True

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"


class FrozenRecord(Record):
    """A ``Record`` whose fields are set once, in ``__init__`` (``_freeze``), and which hashes them."""

    __slots__: tuple[str, ...] = ()

    def _freeze(self, **values: object) -> None:
        for name in self.__slots__:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())
