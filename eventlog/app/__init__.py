"""The application layer: what composes the log, projections and processors into evlog.

``workspace`` (the composition root: config, the log, the projections), ``session_store``
(the API an agent loop embeds), ``replay`` (rebuild, check, look back in time) and
``gateway`` (the MySQL copy several devices sync through). It sits above ``processors/``
and ``projections/``; the command line (``eventlog.cli``) sits above it.
"""
