"""The event catalogue follows its own rules (CONVENTIONS 4 and 5)."""

from __future__ import annotations

import re

import msgspec
import pytest

from eventlog import codec
from eventlog.events import EVENT_TYPES, TYPES_BY_TAG, Event


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__struct_config__.tag)
def test_event_types_are_frozen_tagged_and_keep_seq_and_ts_first(cls):
    cfg = cls.__struct_config__
    assert re.fullmatch(r"[a-z]+(\.[a-z_]+)+", cfg.tag), "tags are dotted lowercase names"
    assert cfg.frozen and cfg.tag_field == "type"
    assert not cfg.forbid_unknown_fields, "old readers must skip fields added later"
    assert cls.__struct_fields__[:3] == ("seq", "ts", "dedup"), "declare subclasses with kw_only=True"
    assert cls.__doc__ and cls.__doc__.strip(), "every event has a one-line docstring"
    for f in msgspec.structs.fields(cls):
        assert f.name not in ("more", "h", "type"), f"{f.name} is reserved for framing"
    own = cls.__annotations__
    assert not {"seq", "ts", "dedup"} & set(own), "a subclass must not redefine the base fields"


def test_tags_are_unique_and_decodable():
    assert len(TYPES_BY_TAG) == len(EVENT_TYPES)
    for tag, cls in TYPES_BY_TAG.items():
        assert cls.__struct_config__.tag == tag
        assert issubclass(cls, Event)


def test_unknown_fields_from_a_newer_writer_are_skipped():
    line = b'{"type":"session.created","seq":3,"ts":"t","session_key":"k","added_later":{"x":1}}'
    ev = codec.decode(line)
    assert ev.session_key == "k" and ev.seq == 3


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def test_type_is_the_tag_on_every_event_class_and_instance_and_not_a_field():
    assert set(_subclasses(Event)) == set(EVENT_TYPES), "every event class is in EVENT_TYPES (which sets its type)"
    for tag, cls in TYPES_BY_TAG.items():
        assert cls.type == tag and "type" in cls.__dict__, "a plain class attribute of its own"
        assert "type" not in cls.__struct_fields__
    ev = codec.decode(b'{"type":"message.appended","seq":4,"ts":"t","session_key":"k","message_id":"m",'
                      b'"role":"user","content":"hi"}')
    assert ev.type == "message.appended"
    assert msgspec.structs.replace(ev, content="x").type == "message.appended"
    assert msgspec.json.decode(msgspec.json.encode(ev))["type"] == "message.appended"
    assert msgspec.json.encode(ev).startswith(b'{"type":"message.appended","seq":4,')
    assert codec.decode(msgspec.json.encode(ev)) == ev
