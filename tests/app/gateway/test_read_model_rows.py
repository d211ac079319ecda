"""The gateway's fact row and the projection's fact agree (no database needed).

``read_model.FactRow`` is a subset of ``projections.memory.Fact``: each field must exist in ``Fact``
with the same type and default, and ``fact_row`` must copy every one of them, so a field renamed or
retyped in ``Fact`` cannot silently drop out of the gateway's memory page.
"""

from __future__ import annotations

import msgspec

from eventlog.app.gateway.read_model import FactRow, fact_row
from projections.memory import Fact


def _fields(cls: type) -> dict[str, msgspec.inspect.Field]:
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.name: f for f in info.fields}


def test_every_row_field_is_a_fact_field_of_the_same_type_and_default():
    row, fact = _fields(FactRow), _fields(Fact)
    missing = sorted(set(row) - set(fact))
    assert not missing, f"FactRow fields not in Fact: {missing}"
    for name, f in row.items():
        assert f.type == fact[name].type, name
        assert f.default == fact[name].default, name


def test_fact_row_copies_every_field():
    f = Fact(fact_id="f1", seq=7, section="Preferences", text="The user prefers tabs.", scope="project",
             project="p", subject="user", state="superseded", pinned=True, by="dream", changed_by="user",
             author="bob@example.com", superseded_by="f2", supersedes="f0")
    row = fact_row(f)
    for name in FactRow.__struct_fields__:
        assert getattr(row, name) == getattr(f, name), name
    assert row.target == f.target == "p"
