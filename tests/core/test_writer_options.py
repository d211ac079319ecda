"""eventlog.writer_options: the log options, validated once whichever door they come through."""

from __future__ import annotations

import os

import pytest

from eventlog.errors import InvalidEventError
from eventlog.log import Log
from eventlog.reader import LogReader
from eventlog.writer import LogWriter
from eventlog.writer_options import DEFAULT_LEASE_SECONDS, LogOptions


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"durability": "sometimes"}, "durability"),
    ({"segment_bytes": 1023}, "segment_bytes"),
    ({"group_commit_interval": 0.0}, "group_commit_interval"),
    ({"lease_seconds": -0.1}, "lease_seconds"),
    ({"lease_seconds": 1.5}, "lease_seconds"),
])
def test_an_out_of_range_option_is_refused_naming_it(kwargs, field):
    with pytest.raises(InvalidEventError) as e:
        LogOptions(**kwargs)
    assert e.value.field == field
    assert field in str(e.value)


def test_a_bad_option_creates_and_locks_nothing_through_either_door(tmp_path):
    d = str(tmp_path / "log")
    with pytest.raises(InvalidEventError, match="group_commit_interval"):
        Log.open(d, writable=True, create=True, group_commit_interval=-1)
    assert not os.path.exists(d)
    os.makedirs(d)
    with pytest.raises(InvalidEventError, match="segment_bytes"):
        LogWriter.open(LogReader(d), segment_bytes=10)
    assert os.listdir(d) == []  # no lock file, no segment


def test_fsync_takes_no_lease_whatever_is_asked():
    assert LogOptions("fsync", lease_seconds=0.5).lease == 0.0
    assert LogOptions("group", lease_seconds=0.5).lease == 0.5
    assert LogOptions("none").lease == DEFAULT_LEASE_SECONDS


def test_the_writer_keeps_the_options_it_was_opened_with(tmp_path):
    with Log.open(str(tmp_path / "log"), writable=True, create=True, durability="none", segment_bytes=4096,
                  lease_seconds=0.0) as log:
        assert log.writer is not None
        assert log.writer.options == LogOptions("none", 4096, lease_seconds=0.0)
        assert (log.writer.durability, log.writer.segment_bytes, log.writer.lease_seconds) == ("none", 4096, 0.0)
