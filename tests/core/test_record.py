"""``eventlog.record``: a dataclass's equality, repr and (frozen) hashing, without importing ``dataclasses``."""

from __future__ import annotations

import dataclasses

import pytest

from eventlog.app.repo_identity import GitPlace
from eventlog.record import FrozenRecord, Record


class Point(Record):
    __slots__ = ("x", "ys")

    def __init__(self, x: int = 0, ys: list[int] | None = None) -> None:
        self.x, self.ys = x, [] if ys is None else ys


class Other(Record):
    __slots__ = ("x", "ys")

    def __init__(self, x: int = 0, ys: list[int] | None = None) -> None:
        self.x, self.ys = x, [] if ys is None else ys


@dataclasses.dataclass
class DataPoint:
    x: int = 0
    ys: list[int] = dataclasses.field(default_factory=list)


def test_equality_and_repr_are_a_dataclasss() -> None:
    assert Point(1, [2]) == Point(1, [2]) and Point(1, [2]) != Point(1, [3]) and Point(1) != Other(1)
    assert repr(Point(1, [2])) == repr(DataPoint(1, [2])).replace("DataPoint", "Point")
    assert Point().ys is not Point().ys  # a fresh default each time, as default_factory gives
    with pytest.raises(TypeError):
        hash(Point())


def test_a_frozen_record_refuses_assignment_and_hashes_its_fields() -> None:
    place = GitPlace("/r", "/r/.git", "/r/.git")
    assert isinstance(place, FrozenRecord) and hash(place) == hash(GitPlace("/r", "/r/.git", "/r/.git"))
    assert {place: 1}[GitPlace("/r", "/r/.git", "/r/.git")] == 1
    with pytest.raises(AttributeError):
        place.top = "/elsewhere"  # type: ignore[misc]
    assert repr(place) == "GitPlace(top='/r', git_dir='/r/.git', common_dir='/r/.git')"
