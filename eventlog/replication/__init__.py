"""Replication of the log between devices and teammates (issue 22: sync the log, not rows).

Every event that carries user meaning travels as a ``Replicated`` envelope (``envelope.py``):
its origin device, its seq in the origin's log, a hybrid logical clock, and the event itself.
A gateway keeps the envelopes in an append-only store (``store.py`` says the contract; the
in-memory store is there, the MySQL/MariaDB one in ``eventlog.app.gateway``), idempotent by
origin. Devices push what the gateway lacks and pull since their last gateway position, and
fold what they receive into the same projections as their own events.
"""
