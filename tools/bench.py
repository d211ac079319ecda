#!/usr/bin/env python3
"""evlog benchmarks: every figure next to a baseline measured in the same run.

Run from the repository root::

    .venv/bin/python tools/bench.py                # all benchmarks, a readable table (~30-40 min)
    .venv/bin/python tools/bench.py --quick        # smaller sizes, a smoke run (~5 min)
    .venv/bin/python tools/bench.py --slow --only cli_growth   # the growth table up to 10M (hours)
    .venv/bin/python tools/bench.py --json         # one JSON object per benchmark and line
    .venv/bin/python tools/bench.py --only replay_verify --only help_time
    .venv/bin/python tools/bench.py --list         # names and one-line descriptions

Only results go to stdout; progress goes to stderr. ``--check`` makes the exit status 1
when a target is missed. A benchmark that raises is reported (traceback on stderr, a
FAIL row with the error in its details) and the others still run; the exit status is
then 2. This process imports the library once; the subprocesses (every ``evlog``
command) run whatever is on disk when they start. If a library file changes during the
run, the affected results get ``library_changed`` in their details (and a warning on
stderr): their figures may mix two versions of the code (a checkpoint written by one
and refused by the other, say), so rerun them. All data comes from a seeded generator and lives in a temporary
directory (``--tmpdir`` picks where: fsync figures depend on that file system) that is
removed at the end. The full run writes several GB there at its peak (1M-event
workspaces, their NDJSON and catbuddy inputs, recall indexes). ``EVLOG_BENCH_MYSQL_URL``
(a MySQL/MariaDB database to write to, e.g. ``mysql://root@127.0.0.1:3306/evlog_bench``)
turns on the database benchmarks; without it they are skipped and say so on stderr.
The benchmarks of the command line, v0.1, contention and web live in ``tools/bench_*.py``
helper modules (imported below); their entries are here with the others.

How to read a figure
--------------------
A shared machine is noisy, so no number is reported alone: each benchmark times evlog
("ours") and a baseline doing the same work on the same data in the same run. The two
are interleaved (baseline, ours, ours, baseline, ...) and each keeps its best of
``--repeat`` (default 3) rounds. ``ratio`` is ours / baseline: for throughputs (events/s,
adds/s, msg/s) higher is better; for memory and wall time (MiB, MB, ms, s) it is a
multiple of the baseline and lower is better. A few targets are absolute (RSS in MiB =
2**20 bytes, dedup memory in MB = 10**6 bytes, start-up in ms, snapshot in messages/s);
their baselines are context, not the bar. Each result's details hold the sizes used, the
per-event times and the 1-minute load average when it started: on a busy machine (other
test runs share these 2 cores and this disk) treat a miss by a few percent as noise and
rerun.

The benchmarks
--------------
``append_nofsync`` (target: ratio >= 0.6)
    Events per second of ``Log.append`` with ``durability="none"``, one event per call,
    against a bare loop ``os.write(fd, ENCODER.encode(event) + b"\\n")`` on an
    ``O_APPEND`` file: the least any JSONL writer must do. The gap is evlog's own cost
    per append: stamping seq and ts, the xxh3 checksum, the lock and bookkeeping.
    The events are ``message.appended`` with chat-like contents: lengths drawn from a
    log-normal (median ~300 chars; ~10% under 70, ~10% over 1,300, a tail to 32k,
    roughly the shape of the Claude Code transcripts in ../shared/data/real), text
    mixing English prose, code (quotes, backslashes, newlines: JSON escaping), CJK and
    emoji. The sizes actually used are in the result's details. The baseline's lines
    are shorter (no seq, ts or checksum member); that is part of what evlog adds. Close
    is outside the timed region on both sides (evlog's close fsyncs, a bare close does not).
``append_nofsync_turn`` (target: ratio >= 0.6)
    The same events and baseline as ``append_nofsync``, but every ``Log.append`` runs
    inside one ``with log.turn():`` (the exclusive bulk mode: the lock is taken, and the
    log checked for other writers' appends, once for all of them). ``append_nofsync``
    (one turn per append: a non-blocking ``flock``, an ``fstat`` and the unlock each
    time) stays the multi-writer default; the two side by side show what a turn costs.
    Each append is still validated (``validate_event`` and the writer's type check, or
    their one-pass shortcut for plain messages, ``validate.plain_message``).
``append_nofsync_small``  (informational, no target)
    The same with ~250-byte lines, where per-call overhead dominates.
``append_fsync`` (target: ratio >= 1.0)
    ``durability="fsync"`` (fdatasync before append returns) against SQLite in WAL
    mode with ``synchronous=FULL``, one transaction per event: an autocommit INSERT of
    ``(seq INTEGER PRIMARY KEY, body BLOB)`` holding the same JSON (encoded inside the
    loop, as evlog does). Both promise that an acknowledged event survives an OS crash.
    Closing is inside the timed region on both sides (SQLite checkpoints its WAL then).
    5,000 events (2,000 with ``--quick``): SQLite checkpoints about every 1,000 commits
    and then *overwrites* its WAL file, and an fdatasync that changes no file size is
    cheaper than one on a growing file (as every log append is). So SQLite's first
    ~1,000 commits are its slowest and a short run flatters evlog; these sizes include
    several checkpoint cycles, closer to a long-running log.
``append_group`` (target: ratio >= 3.0)
    ``durability="group"`` (write now, background fdatasync every 10 ms) against SQLite
    WAL ``synchronous=NORMAL`` with one transaction per event: both survive a process
    crash and may lose the last moments on an OS crash (evlog: up to 10 ms; SQLite:
    commits since the last checkpoint, so SQLite promises less here, which favours the
    baseline). ``log.close()`` / ``conn.close()`` are timed so the final sync counts.
``append_vs_v01`` (target: ratio >= 0.9 in a turn, and >= 0.9 per append)
    The events of ``append_nofsync`` (100k; 20k with ``--quick``), appended with
    ``durability="none"`` by evlog v0.1 (commit ``cd11064``: ``git archive`` into the
    scratch directory, removed with it) and by this tree, each trial a fresh subprocess
    of the same interpreter with ``PYTHONPATH`` pointing at one tree (the child drops the
    venv's editable-install finder and runs from that tree, so nothing of the other tree
    is imported; it checks and reports which ``eventlog`` it loaded). The child reads the
    NDJSON events into its own ``MessageAppended`` Structs before its clock starts and
    closes the log after it stops. ``ours`` (the ratio) appends inside one
    ``log.turn()``: v0.1 had one writer holding the lock for its whole life, so that is
    the like-for-like mode; ``ratio_per_append`` is ours with one turn per append (the
    multi-writer default, which v0.1 could not do). What v0.1 did not do at all is
    validation, so the details give its cost per event: ``validate_event`` alone, the
    writer's type check (``DECODER.decode`` of the framed line) alone, their one-pass
    shortcut for messages whose fields hold their declared types within the limits
    (``validate.plain_message``, and the share of events that take it: those skip both),
    all timed in this process, best of rounds; ``validation_us_per_event`` is what the
    writer pays. Debatable: ours also keeps more state per append (the lock bookkeeping,
    ``last_append``), which is the price of many writers.
``ingest_vs_v01`` (target: ratio >= 0.9, input MiB/s)
    ``ingest_paths(ws.log, [real])`` over the real third-party transcripts in
    ``../shared/data/real`` (found as tests/conftest.py finds it, ``$EVLOG_REAL_DATA``
    first; read in place: 45 ``*.jsonl`` files, ~4.7 MiB of Claude Code, nanobot and Codex
    transcripts) into a fresh workspace with the default durability (fsync), then
    ``ws.close()`` (which writes the projection files), timed in a child as above, v0.1
    against this tree, best of 9 interleaved rounds (a round is about two seconds). The details give the
    messages and events each appended (they must match: the same work) and the whole
    ``evlog ingest`` command line of each tree (``cli_seconds_*``, start-up included,
    v0.1's CLI run as ``python -c 'from eventlog.cli import main; main()'``). Debatable:
    ours redacts secrets (a regex pass over every message) and validates every event,
    which v0.1 did not; that is in the figure on purpose. In its favour, ours fsyncs the
    log once per run (and per 64 MiB of source) where v0.1 fsynced each file's batch:
    both promise the same when the call returns (everything durable), and a crash
    mid-run loses whole files that a rerun appends again (tests/ingest/test_ingest_durability.py).
``replay_verify`` (target: ratio >= 0.7)
    Events per second of ``Log.open(dir).read()``, which checks every line's xxh3
    checksum, framing and dense seq, against reading the same segment files whole and
    decoding line by line (``for line in data.splitlines(): DECODER.decode(line)``),
    which checks nothing. The log is written one ``append`` at a time (as most events
    arrive). Debatable: evlog decodes a chunk with one ``decode_lines`` call, which is
    faster than per-line ``decode``, so the ratio can exceed 1 although evlog does more.
    The details therefore also report a stricter baseline,
    ``DECODER.decode_lines(data)`` per segment (the fastest unverified decode we know).
``sessions_fold`` (informational, no target)
    CPU microseconds per event of ``SessionsProjection.apply`` alone (a fresh projection, no
    flush, nothing written) over a log of 100,000 chat messages (50,000 with ``--quick``) in
    2000 sessions over 30 days, one ``session.created`` per session first (the shape of
    ``replay_check_1m``'s workspace; written with ``append_batch`` in chunks of 1000). The
    events are read and decoded before the clock starts. Baseline: the raw decode of the same
    log (``raw_decode_lines``), CPU time too. Medians of ``--repeat`` (at least 3) interleaved
    rounds. The ratio is what the sessions fold costs per event in decode-times: it is the
    largest share of every replay (``replay_check_1m``, ``replay_1m``).
``records_read`` (informational, no target)
    CPU microseconds per event of ``for rec in Log.open(dir).records()`` (every line's framing
    and checksum checked, seqs dense, one ``Record`` per event: what the projector reads) over
    ``sessions_fold``'s log, against the same raw decode, medians of interleaved rounds.
``replay_rss_1m`` (target: peak RSS <= 150 MB)
    Peak RSS (``ru_maxrss``) of a fresh subprocess that imports eventlog and iterates
    ``read()`` over 1M events (200k with ``--quick``) without keeping them. Baseline:
    the same subprocess' peak RSS right after the import, so ours - baseline is what
    reading costs. The log is written with ``append_batch`` in chunks of 1000 (fast to
    build; every line then carries the batch ``more`` member).
``sessions_list_500`` (target: ratio <= 2, i.e. ours <= 2 x SQLite's time)
    Milliseconds of ``LocalSessionStore.list()`` on an open store (warm: the session
    index is in memory, as in the agent process that holds the writer) over 500 sessions
    of 200 chat messages each (~70 MiB of session files), against SQLite on an open
    connection: a table of the same 500 sessions (every field the store lists) with an
    index on ``updated_at``, ``SELECT key, title, updated_at, message_count FROM sessions
    ORDER BY updated_at DESC`` and ``fetchall()``. Each variant is called in a loop for at
    least 0.25 s (after one untimed call); the figure is the mean per call, best of the
    rounds. Debatable, and against us: the store returns every field (preview,
    created_at, a copy of metadata, ...) as Structs, SQLite four columns as tuples, so
    the details also time SQLite selecting all nine columns (``sqlite_all_columns_ms``).
    The details hold the cold variant too, since a CLI call is cold: ``ours_cold_ms``
    opens ``LocalSessionStore(Workspace.open(home))`` read-only (while the writer holds
    the workspace), lists and closes (imports already done, page cache warm), next to
    SQLite's ``connect + query + close`` (``sqlite_cold_ms``). And the seed's way
    (``seed_ms``): ``os.listdir(sessions/)``, each of the 500 files opened and read whole,
    its first line ``json.loads``-ed, the list sorted by updated_at (page cache warm,
    which flatters the seed; it does not count lines for a message count, which would
    cost it more). ``seed_over_ours`` and ``seed_over_ours_cold`` are seed / ours (higher
    is better). Before timing, every variant must list the same keys in the same order.
    The workspace is built with ``ws.append`` (per session one atomic batch:
    ``session.created`` + 200 ``message.appended``; durability none) and closed once, so
    the session files exist.
``add_message_2000`` (target: ratio >= 50; adds/s, so ratio = seed time / ours time)
    300 ``add_message`` calls (100 with ``--quick``, which amortises the final flush over
    fewer adds) to a session that already holds 2000 messages (the file cap, ~1.5 MB of
    session file), with the workspace's default durability (``fsync``: every add
    returns after an fdatasync of the log). Each add passes its message id and
    timestamp (so the store's dedup check is included). The timed region ends with
    ``store.ws.flush()``, so the rewrites of the session file (the background flusher's,
    every 1 s, and that final one) are counted, amortised over the adds. Baseline, the
    seed's way: the session as a list of message dicts in memory; per add, append the
    dict, update the metadata (updated_at, preview), ``json.dumps`` the metadata and the
    newest 2000 messages into JSONL (``ensure_ascii=False`` and compact separators: the
    file's own format, so about as many bytes are written), write a temp file, fsync,
    rename it over the session file, fsync the directory (evlog's own rewrite uses
    fdatasync; for a new file both persist the size and blocks). Every trial works on a
    fresh copy of the same workspace (or session file), synced before its clock starts.
    What the ratio rests on, reported in the details: (1) amortising: messages that
    arrive slower than the flush interval each get a rewrite of their own (in the
    background, off the caller's path); ``ratio_flush_every_add`` is that worst case,
    a flush after every add. (2) The seed's time is mostly ``json.dumps``:
    ``ratio_vs_seed_msgspec`` uses msgspec for the seed's encoding, a stricter
    baseline. (3) Ours costs about one fdatasync per add, so the ratio depends on the
    disk: ``fdatasync_ms`` is measured on the same file system; where an fsync takes
    milliseconds (many laptops) the ratio is far lower. ``ratio_group`` is ours with
    durability ``group`` (appends synced every 10 ms in the background), for context.
``lease_wait`` (target: p99 wait with leases <= the p99 wait with plain turns)
    A subprocess appends as fast as it can (durability none) while this process appends
    200 events 20 ms apart (60 with ``--quick``); every wait of every repeat counts (no
    best-of). Once with the busy writer on leases (1 ms, handing the lock over when
    someone waits) and once with plain turns (``lease_seconds=0``), whose waiter gets in
    only when its poll hits a gap between two turns. ``ours`` is the p99 lock wait of this
    process's appends (``LogWriter.lock_waits``, 0 for turns that found the lock free)
    with leases, ``baseline`` the same with plain turns; p50s, maxima and how many events
    the busy writer wrote are in the details. What it shows: a lease does not make others
    wait longer than plain turns do.
``lock_wait_shared`` (target: p99 wait <= 1x the p99 duration of one append)
    Three writers share one workspace (5,000 messages of history, durability fsync): a
    daemon-like process looping ``processors.run(ws, "snapshot")`` and ``"digest"``
    (10 ms apart), an agent process adding messages one at a time with
    ``LocalSessionStore.add_message`` (0-10 ms apart), and this process appending 2,000
    single events with ``Log.append`` (300 with ``--quick``; 0-10 ms apart). Every writer
    wraps its log's ``append``/``append_batch`` (instance attributes; the library is
    untouched) to record per turn its wall time and its wait (from
    ``LogWriter.lock_waits``/``free_turns``); a turn's duration ("hold") is wall time -
    wait: catching up with the others' appends, framing, write, fdatasync. ``ours`` is
    the p99 wait of this process's appends, ``baseline`` the p99 hold of every turn of
    the three writers (the appends one may queue behind); p50s, maxima, the share of
    turns that waited and each writer's own figures are in the details, as are the
    agent's whole ``add_message`` latency and the daemon's run times (their work outside
    the lock, e.g. catching projections up). Debatable: "at most about one other
    append" is read as p99 wait <= p99 hold; an unlucky append may queue behind two
    (flock is not FIFO), so the max can exceed it without a miss.
``replay_check_1m`` (target: ratio <= 3, ours time / baseline time; peak RSS <= 128 MiB)
    Seconds of ``replay.check(ws)`` on a workspace whose log holds 1,002,000 events
    (202,000 with ``--quick``): 2000 ``session.created`` and 1M ``message.appended``
    (chat contents as above) in 2000 sessions, message times spread over 30 days. The
    log is built with ``log.append_batch`` in chunks of 1000 (durability none), then the
    workspace is opened normally and flushed, so live projections exist and are current
    before the clock starts. ``check`` replays the whole log into a fresh temporary
    directory (under ``$TMPDIR``, not ``--tmpdir``; evlog writes those files as it writes
    any projection file, atomically with fsync), compares every file byte for byte and
    must report no drift. Baseline: read the segment files whole and
    ``DECODER.decode`` each line (as in ``replay_verify``), which checks nothing and
    writes nothing: the floor of reading the log. So the ratio is what rebuilding,
    writing and comparing every projection costs on top of reading; the issue's bar of
    3x leaves about two decode-times for all of that. Then ``evlog replay --check`` runs
    once as a subprocess on the same workspace: its peak RSS (``peak_rss_mib``, from GNU
    time's ``%M``, see ``run_measured``) must stay <= 128 MiB (the check streams), and its
    wall time is ``cli_seconds``.
``replay_check_index_1m`` (target: ratio <= 3; peak RSS <= 128 MiB)
    ``replay.check(ws)`` on the workspace of ``replay_check_1m`` once it has its recall
    index (any workspace after ``evlog recall``, ``replay`` or a daemon pass): the index is
    built first (``recall.rebuild``, outside the clock; its time and messages/s are
    ``index_build_*``) and removed at the end, so the other rows see the workspace as it
    was. The check proves the full-text index with the digest its writer kept (no
    tokenising: ``projections/recall/ftsproof.py``) and the rows by a digest of them against a
    digest fold of the log fed by the projections' replay (one read of the log;
    ``projections/recall/rowproof.py``; issue 25). The same rounds time
    ``check(ws, full_index=True)`` (every row tokenised again and a whole second index built
    and compared, the older proof: ``full_index_seconds``, ``full_over_ours``), and each round's CPU seconds
    (``cpu_seconds_*``: on a shared machine the steadier figure). Baseline: as
    ``replay_check_1m``. Then ``evlog replay --check`` as a subprocess: its peak RSS.
``replay_1m`` (target: ratio <= 5)
    ``replay.rebuild(ws, recall_index="refresh")`` (what ``evlog replay`` does: every
    projection rebuilt and swapped in; the recall index kept, caught up, when it looks
    sound) on the same workspace with its recall index, against the raw decode baseline.
    The same rounds time ``recall_index="rebuild"`` (the index rebuilt from seq 1, what
    replay always did before: ``rebuild_index_seconds``, ``rebuild_over_ours``).
``recall_open_5000`` (target: ratio <= 3)
    Milliseconds to open the recall index of 5,000 sessions (20,000 messages) and close it,
    what every MCP recall call and hook search pays before searching: ``RecallIndex(path)``
    reads the position and, for an index of more than ``EAGER_SESSIONS`` sessions, no session
    until a fold needs one (it used to build all 5,000 session objects). Baseline: a bare
    ``sqlite3.connect`` of the same file and one ``SELECT`` of its position.
``snapshot_1m`` (target: >= 100,000 messages/s, absolute; peak RSS <= 128 MiB)
    Messages per second of ``processors.run(ws, "snapshot")`` over a workspace like
    ``replay_check_1m``'s (1M messages over 30 days in 2000 sessions; 200k with
    ``--quick``; the same data, each round on a fresh synced copy), with the
    projections loaded before the clock starts (as in a running daemon) and the default
    diary budget (200 KB a day, so most lines are trimmed again, with ``diary.trimmed``
    events). The timed region ends with ``ws.flush()`` so the diary files are written.
    Then ``processors.run(ws, "digest")`` is timed: ``digest_diary_bytes_per_s`` is the
    bytes in the diaries when it starts divided by its seconds (its appends, fsynced,
    included). Baseline for context (the ratio): a bare loop over the same log that
    reads the segments, ``DECODER.decode``-s each line and for each message computes the
    same ``xxh3_128`` of ``canonical_json(canonical_message(ev))`` and formats the same
    ``diary_line`` (with ``normalize_time``); no verification, no dedup lookup, nothing
    written. Debatable: the baseline includes reading the log, as the processor must;
    without it the ratio would be lower. Then ``evlog run snapshot`` and ``evlog run
    digest`` run once as subprocesses on a fresh copy: ``peak_rss_mib`` (snapshot, must
    be <= 128 MiB: the run streams) and ``cli_digest_peak_rss_mib``, with their wall times
    (start-up and loading the projections included).
``dedup_memory_1m`` (target: <= 32 MB, MB = 10**6 bytes)
    Bytes still allocated (tracemalloc) after building an ``eventlog.hashindex.HashIndex``
    of 1M random 128-bit keys, each mapped to a seq (1M with ``--quick`` too: the target
    is stated at 1M), against a Python ``set`` of the same 1M ints built the same way:
    each key a fresh int, as ``xxh3_128_intdigest`` returns them. tracemalloc counts the
    set's int objects (44 bytes each) and its table; a set cannot hold ints without
    their objects, while the index keeps their two 64-bit halves. The set holds no
    values, the index does, which favours the baseline. Details: ``memory_bytes()``,
    tracemalloc peaks, a ``dict`` key -> seq (the closer Python equivalent of a map),
    the size of ``to_bytes()`` (the on-disk form), the load time of
    ``HashIndex.from_bytes`` (best of rounds) and the build time without tracemalloc.
``help_time`` (target: <= 150 ms and <= 2x the baseline)
    Wall time of ``evlog --help`` (the console script next to this interpreter) as a
    subprocess, best of 5. Baseline: ``python -c "import click, msgspec"`` with the same
    interpreter: the floor of a CLI built on the two libraries every evlog command needs
    (``python_pass_ms``, the bare interpreter, is in the details). The console script's
    own wrapper (importlib.metadata entry point lookup) is part of ours.
``append_file_1m`` (target: time <= 1.0x the baseline; peak RSS <= 64 MiB)
    ``evlog append FILE`` end to end (the console script, a subprocess, into a workspace
    just made with ``init``: default durability, fsync per batch of 10,000) on NDJSON
    files of 10k, 100k and 1M chat-sized ``message.appended`` events (plus one
    ``session.created`` per 500 messages; the 1M file is ~775 MiB; 10k and 100k with
    ``--quick``). Baseline: a Python subprocess inserting the same lines into SQLite in
    one transaction (``executemany`` of the raw lines, streamed from the file, into
    ``(id INTEGER PRIMARY KEY, body TEXT)``, default rollback journal,
    ``synchronous=FULL``): it parses and checks nothing, evlog validates every line,
    stamps, checksums and folds the projections (session files are written at the end).
    Interleaved, best of ``--repeat`` per size. The figure is at the largest size; the
    growth table has each size's time, time per event and peak RSS (GNU time ``%M``) of
    both. Debatable: SQLite keeps no projections; evlog's session files are part of what
    ``append`` promises.
``ingest_1m`` (target: CPU <= 3x the baseline; peak RSS <= 128 MiB)
    ``evlog ingest DIR`` (the console script, a subprocess, into a workspace just made with
    ``init``) of a folder of generated catbuddy files of 200 chat-sized messages each: 1M
    messages in 5,000 files (100k in 500 with ``--quick``). Baseline: a Python subprocess
    running ``json.loads`` on every line of every file (the least any ingest of these files
    does). CPU seconds of each subprocess (``RUSAGE_CHILDREN``), median of ``--repeat``
    interleaved rounds: on this shared machine wall time mostly measures the other engineers.
    Debatable: the baseline parses only; ingest also redacts, deduplicates, frames, fsyncs
    and folds every session file.
``cli_growth`` (target: peak RSS of replay, replay --check and run snapshot <= 128 MiB at 1M)
    One workspace per size, made by ``append_file_1m``'s ``evlog append`` (10k, 100k and
    1M messages in sessions of 500, over 30 days), then these commands as subprocesses
    in this order, each run once (a 1M run takes minutes): ``evlog recall`` twice (the
    first builds the index: ``evlog replay`` would build it otherwise), ``run
    snapshot``, ``run digest``, ``replay``, ``replay --check``, ``verify``, ``stats``.
    ``evlog ingest`` of a folder of generated catbuddy files (500 messages each) holding
    the same number of messages runs on a fresh workspace of its own. Two tables: wall
    seconds and peak RSS by size. ``evlog --help`` is the floor row (start-up) and the
    baseline of the result. "per-msg growth" is (time - start-up) per message at the
    largest size over the size before: about 1 when linear; above 1.3 (and over a
    second) the row is marked superlinear. ``ours`` is the largest peak RSS of replay,
    replay --check and run snapshot at the largest size (their bound: a constant plus
    the largest event); every command's peak at that size is in the details.
    Debatable: one run each, so a few percent is noise; the shape across sizes and the
    RSS (which noise barely moves) are what the table is for.
``sessions_5000`` (target: ratio <= 1.5)
    Wall time of ``evlog sessions`` (a subprocess, the read-only path a user hits) on a
    workspace of 5,000 sessions of 20 chat messages each (4 with ``--quick``), against
    ``evlog --help``: listing must cost little beyond start-up. Interleaved, best of 5.
    Details: ``--json``, peak RSS, ours - help in ms. Before timing, ``--json`` must list
    all 5,000.
``tail_follow_latency`` (target: median <= 20 ms)
    A running ``evlog tail -f --json --after <end>`` subprocess; this process appends 300
    chat messages (100 with ``--quick``) with ``Log.append`` (durability fsync) at random
    gaps of 0-50 ms, takes a timestamp right after each append returns, and a reader
    thread takes one when the event's line (matched by message id) arrives on the
    subprocess' stdout. The figure is the median delay; p95, mean and max are in the
    details. Baseline: GNU ``tail -F -n 0`` on a plain JSONL file written with
    ``os.write`` the same way (the same lines and gaps). Before the clock, each side gets
    probe lines until one shows up, so start-up is not counted. Debatable: GNU tail
    waits on inotify, evlog polls the active segment every 10 ms (one ``stat`` a poll),
    so half a poll interval is its floor; the target is what an agent UI needs.
``open_caught_up`` (target: the writer's open + catch-up <= 2 s; 10M events under ``--slow``)
    tools/bench_open.py (its module docstring says what each row measures): a workspace of
    1M chat messages with an ingest's dedup keys (10M with ``--slow``, 100k with
    ``--quick``), made with ``evlog append FILE``, its recall index built; then, nothing
    new in the log, a fresh process each, interleaved, medians of 5: ``Workspace.open`` +
    ``catch_up`` (read-only and writer), ``evlog status``, ``evlog recall`` and a
    SessionStart hook, against ``python -c 'import eventlog'`` and a raw read of the
    checkpoint files; ``evlog stats`` (a full read) for the growth; then ``evlog replay``
    (wall, CPU, peak RSS). Debatable: sessions of 500 messages (20,000 at 10M); a user
    with many more, shorter sessions has a larger session index (it grows with sessions).
``recall_1m`` (target: build >= 50,000 msg/s; query p50 <= 20 ms, p95 <= 100 ms; index <= 1.5x the text)
    ``projections/recall/bench.py``'s ``bench(n)`` at 1M messages (100k with ``--quick``):
    seeded chat texts over a Zipf vocabulary, the index built from in-memory events (the
    projection's own cost, not reading the log), index bytes over the UTF-8 bytes of the
    texts, and ``recall`` latency of 300 natural-language questions (with and without a
    project filter). Baseline: a bare SQLite FTS5 table (default ``unicode61``
    tokenizer) of the same texts, ``executemany`` in one transaction, and 300 queries of
    three words of a random stored text OR-ed, ``ORDER BY rank LIMIT 10`` (``fts5_*`` in
    the details). Debatable: the bare table stores no metadata, no stemming, no CJK
    pairs, no neighbouring turns; recall does all of that.
``web_sessions_page_5k``, ``web_transcript_2k``, ``gateway_page_loads_50``, ``http_push_100k``
    tools/bench_web.py's benchmarks (its module docstring says what each measures and
    against what), run as ``tools/bench_web.py --json --only NAME`` subprocesses and
    reported here with their own targets. Run only when ``EVLOG_BENCH_MYSQL_URL`` (or
    ``EVLOG_TEST_MYSQL_URL``) is set, as ``mysql_push_100k``; the first two do not
    touch the database but are part of the same web suite.
``hook_session_start_100k``, ``hook_stop_20mb``, ``mcp_recall_1m``
    tools/bench_agents.py's benchmarks (its module docstring says what each measures and
    against what; its figures are medians of 15 runs, not best-of), run as
    ``tools/bench_agents.py --json --only NAME --tmpdir <this run's scratch>`` subprocesses
    and reported here with their own targets. Skipped (and said so) if the script is
    missing.

Adding a benchmark
------------------
Write ``def bench_x(ctx: Context) -> Result`` and decorate it with
``@benchmark("x", "one-line description")``. Time with ``best_of`` (interleaved best-of
rounds; ``repeat_trial`` for calls far shorter than a second) and build the record with
``throughput_result`` or ``Result`` directly. ``build_workspace`` makes a workspace from
event batches, ``copy_home`` a fresh synced copy of one for a trial that changes it,
and ``ctx.shared`` builds data once for every benchmark that reads it unchanged.
``run_measured`` runs a command and gives its wall time and peak RSS. A result with
more than one target lists the others as ``checks`` (``Check("peak_rss_mib", "<=",
128, " MiB", "rss")`` checks a value of its details); ``tables`` holds tables (a list of
dicts each) printed after the main table, e.g. growth by size. A long benchmark can
live in a ``tools/bench_<topic>.py`` module that does ``from bench import ...`` and is
imported from this file where it should run (this module registers itself as
``bench``, so the helpers share its registry).
"""

from __future__ import annotations

import argparse
import calendar
import contextlib
import gc
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import xxhash

from eventlog import codec
from eventlog.app import replay
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Config, Workspace, init_workspace
from eventlog.codec import DECODER, ENCODER, stamp_and_frame
from eventlog.events import Event, MessageAppended, SessionCreated
from eventlog.hashindex import HashIndex
from eventlog.log import Log
from eventlog.segments import segment_bases, segment_name
from eventlog.timeutil import normalize_time
from processors import run as run_processor
from processors.snapshot import canonical_message, diary_line
from projections.naming import safe_name
from projections.sessions import MAX_FILE_MESSAGES, PREVIEW_CHARS

# The helper modules (tools/bench_*.py) import what they share from this module by the
# name "bench"; run as a script, this module is "__main__", so it answers to both names
# (else the helpers would import a second copy with a registry of its own).
sys.modules.setdefault("bench", sys.modules[__name__])

SEED = 20261130
TIMESTAMP = "2026-11-30T00:00:00Z"
MIB = 1024 * 1024
MB = 1000 * 1000
DAY = 86_400
START = calendar.timegm((2026, 11, 1, 0, 0, 0))  # message times of the workspace benchmarks start here

# --------------------------------------------------------------------------- results


@dataclass
class Check:
    """A further target of a result: ``of`` is "ratio", "ours" or a key of its details."""

    of: str
    op: str  # ">=" or "<="
    target: float
    units: str = ""  # how the target is shown (default: "x" for a ratio, the result's units for ours)
    label: str = ""  # how the checked value is named in the table (default: ``of``)


@dataclass
class Result:
    """What every benchmark returns: our figure, the baseline's, and the target(s)."""

    name: str
    ours: float
    baseline: float
    units: str
    n: int
    baseline_name: str
    target: float | None = None  # None: informational
    target_of: str = "ratio"  # "ratio" or "ours": which number the target bounds
    target_op: str = ">="  # ">=" or "<="
    details: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)  # more targets; every one must hold to pass
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # e.g. growth tables, printed after the table

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else math.nan

    def _all_checks(self) -> list[Check]:
        main = [Check(self.target_of, self.target_op, self.target)] if self.target is not None else []
        return main + self.checks

    def _value(self, of: str) -> float:
        if of == "ratio":
            return self.ratio
        if of == "ours":
            return self.ours
        value = self.details.get(of)
        return math.nan if value is None else float(value)

    @property
    def passed(self) -> bool | None:
        checks = self._all_checks()
        if not checks:
            return None
        ok = True
        for c in checks:
            value = self._value(c.of)
            ok = ok and (value >= c.target if c.op == ">=" else value <= c.target)  # NaN (not measured) fails
        return ok

    @property
    def target_text(self) -> str:
        checks = self._all_checks()
        if not checks:
            return "-"
        parts = []
        for c in checks:
            unit = c.units or {"ratio": "x", "ours": f" {self.units}"}.get(c.of, "")
            name = "" if c.of in ("ratio", "ours") else f"{c.label or c.of} "
            parts.append(f"{name}{c.op} {c.target:g}{unit}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ours": round(self.ours, 3),
            "baseline": round(self.baseline, 3),
            "ratio": round(self.ratio, 4),
            "target": self.target,
            "target_of": self.target_of,
            "target_op": self.target_op,
            "pass": self.passed,
            "units": self.units,
            "n": self.n,
            "baseline_name": self.baseline_name,
            "checks": [{"of": c.of, "op": c.op, "target": c.target, "value": self._value(c.of)} for c in self.checks],
            "details": self.details,
            "tables": self.tables,
        }


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    run: Callable[[Context], Result]


BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(name: str, description: str) -> Callable[[Callable[[Context], Result]], Callable[[Context], Result]]:
    """Register ``fn(ctx) -> Result`` under ``name`` (run in registration order)."""

    def register(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        if name in BENCHMARKS:
            raise ValueError(f"benchmark {name!r} registered twice")
        BENCHMARKS[name] = Benchmark(name, description, fn)
        return fn

    return register


def progress(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


@dataclass
class Context:
    """What a benchmark gets: a scratch area, the size mode, seeded randomness."""

    root: str
    quick: bool = False
    slow: bool = False  # --slow: the growth benchmarks add 10M (issue 25's "no command superlinear up to 10M")
    repeats: int = 3
    _dirs: int = field(default=0, init=False)
    cache: dict[str, Any] = field(default_factory=dict, init=False)  # data shared by benchmarks (see ``shared``)

    def shared(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()`` once per run: benchmarks that read the same data (and leave it unchanged) share it."""
        if key not in self.cache:
            self.cache[key] = build()
        return self.cache[key]

    def size(self, default: int, quick: int) -> int:
        return quick if self.quick else default

    def rng(self, purpose: str) -> random.Random:
        """A generator seeded by ``purpose``: same data every run, independent streams."""
        return random.Random(f"{SEED}:{purpose}")

    def scratch(self, label: str) -> str:
        """A fresh empty directory under the temp root."""
        self._dirs += 1
        path = os.path.join(self.root, f"{self._dirs:04d}-{label}")
        os.makedirs(path)
        return path


# --------------------------------------------------------------------------- timing

Trial = Callable[[str], float]  # gets a fresh scratch dir, returns seconds of its timed region


def best_of(ctx: Context, trials: dict[str, Trial], rounds: int | None = None) -> dict[str, float]:
    """Run every trial ``rounds`` times, interleaved, rotating the order each round.

    Each call gets its own scratch directory (removed right after). Returns the best
    (smallest) seconds per trial name.
    """
    rounds = rounds or ctx.repeats
    names = list(trials)
    best = dict.fromkeys(names, math.inf)
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            scratch = ctx.scratch(name)
            try:
                seconds = trials[name](scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            best[name] = min(best[name], seconds)
            progress(f"  round {r + 1}/{rounds} {name}: {seconds * 1000:.1f} ms")
    return best


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn()`` takes (after a gc pass, so earlier garbage is not billed to it)."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cpu_timed(fn: Callable[[], object]) -> float:
    """CPU seconds (this process) ``fn()`` takes, after a gc pass: on a shared machine the steadier figure."""
    gc.collect()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def median_of(ctx: Context, trials: dict[str, Trial], rounds: int | None = None) -> dict[str, float]:
    """Like ``best_of`` (interleaved, the order rotating each round), but the median seconds per trial name
    (at least 3 rounds)."""
    rounds = max(3, rounds or ctx.repeats)
    names = list(trials)
    runs: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            scratch = ctx.scratch(name)
            try:
                runs[name].append(trials[name](scratch))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            progress(f"  round {r + 1}/{rounds} {name}: {runs[name][-1] * 1000:.1f} ms")
    return {k: statistics.median(v) for k, v in runs.items()}


def throughput_result(name: str, n: int, best: dict[str, float], *, baseline_name: str,
                      target: float | None, details: dict[str, Any]) -> Result:
    """A Result in events/s from best seconds of trials named 'ours' and 'baseline'."""
    per_event = {f"us_per_event_{k}": round(s / n * 1e6, 3) for k, s in best.items()}
    extra = {f"events_per_s_{k}": round(n / s, 1) for k, s in best.items() if k not in ("ours", "baseline")}
    return Result(name, n / best["ours"], n / best["baseline"], "events/s", n, baseline_name,
                  target=target, details={**details, **per_event, **extra})


# --------------------------------------------------------------------------- data

_WORDS = (
    "the a to of and in is it that for you this with on be not are as can I we have was "
    "but if what do will my so function return error file log event session memory test "
    "please could would should value list dict string config path import class async "
    "await request response server client token model user assistant message fix bug "
    "build run check update because then also just here there which when where why how"
).split()
_CODE = [
    'def handle(event):\n    if event.type == "message.appended":\n        return {"ok": True}\n',
    'const re = /\\d+\\.\\d+/g;\nconsole.log(`value: ${x}`);\n',
    'SELECT id, name FROM "users" WHERE path LIKE \'C:\\\\tmp\\\\%\';\n',
    '$ pytest -q tests/test_log.py\n\tFAILED test_recover - AssertionError\n',
    '{"key": "value", "nested": {"list": [1, 2, 3]}}\n',
]
_SYMBOLS = "→ ● ○ ↳ é ü ß ñ « » — … ✓ ✗ 😀 🐈 🚀 🎉 👍 🔥 💡 ∑ ≤ ≥ ±".split()
_KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"


def _prose(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 60))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(_SYMBOLS))
    return " ".join(words).capitalize() + rng.choice(".?!") + ("\n\n" if rng.random() < 0.3 else " ")


def _cjk(rng: random.Random) -> str:
    chars = [chr(rng.randint(0x4E00, 0x9FA5)) if rng.random() < 0.7 else rng.choice(_KANA) for _ in range(rng.randint(10, 80))]
    return "".join(chars) + rng.choice("。？！") + rng.choice(("", "", " 🐈", "\n"))


def make_corpus(rng: random.Random, chars: int = 400_000) -> str:
    """A long mixed text to cut message contents from: prose, code, CJK, symbols."""
    parts, total = [], 0
    while total < chars:
        kind = rng.random()
        piece = _prose(rng) if kind < 0.72 else rng.choice(_CODE) if kind < 0.87 else _cjk(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


def chat_length(rng: random.Random) -> int:
    """A chat message length in characters: log-normal, median ~300, clipped to [1, 32000]."""
    return max(1, min(32_000, int(rng.lognormvariate(math.log(300), 1.15))))


class EventFactory:
    """Seeded ``message.appended`` events with chat-like contents."""

    def __init__(self, rng: random.Random, sessions: int = 24) -> None:
        self.rng = rng
        self.corpus = make_corpus(rng)
        self.sessions = [f"cli:{rng.getrandbits(48):012x}" for _ in range(sessions)]
        self.count = 0

    def event(self, length: int, *, session_key: str | None = None, timestamp: str = TIMESTAMP) -> MessageAppended:
        """One message of ``length`` chars, in ``session_key`` (default: a random session of the factory)."""
        rng = self.rng
        start = rng.randrange(len(self.corpus) - length)
        self.count += 1
        return MessageAppended(
            session_key=rng.choice(self.sessions) if session_key is None else session_key,
            message_id=f"msg-{rng.getrandbits(64):016x}",
            role="user" if self.count % 2 else "assistant",
            content=self.corpus[start : start + length],
            timestamp=timestamp,
        )

    def chat(self, n: int) -> list[MessageAppended]:
        """``n`` events with the realistic length mix."""
        return [self.event(chat_length(self.rng)) for _ in range(n)]

    def sized(self, n: int, line_bytes: int) -> list[MessageAppended]:
        """``n`` events whose log lines are about ``line_bytes`` long."""
        probe = self.event(1)
        overhead = len(stamp_and_frame(probe, 1_000_000, TIMESTAMP.encode())) - 1
        length = max(1, line_bytes - overhead)
        out = []
        while len(out) < n:  # cut where the slice has as many chars as bytes (ASCII)
            ev = self.event(length)
            if ev.content.isascii():
                out.append(ev)
        return out

    def chunks(self, n: int, chunk: int) -> Iterator[list[MessageAppended]]:
        """``n`` realistic events in lists of at most ``chunk`` (never all in memory)."""
        while n > 0:
            k = min(chunk, n)
            yield self.chat(k)
            n -= k


def describe_events(events: list[MessageAppended]) -> dict[str, Any]:
    """Sizes of the events as evlog writes them (bytes per line) and how much is non-ASCII."""
    ts = TIMESTAMP.encode()
    sizes = sorted(len(stamp_and_frame(ev, 100_000 + i, ts)) for i, ev in enumerate(events))
    content_bytes = sum(len(ev.content.encode()) for ev in events)
    non_ascii = sum(len(ev.content.encode()) - len(ev.content) for ev in events)  # extra UTF-8 bytes
    q = lambda p: sizes[min(len(sizes) - 1, int(p * len(sizes)))]  # noqa: E731
    return {
        "line_bytes_mean": round(statistics.fmean(sizes), 1),
        "line_bytes_p10": q(0.10),
        "line_bytes_p50": q(0.50),
        "line_bytes_p90": q(0.90),
        "line_bytes_p99": q(0.99),
        "line_bytes_max": sizes[-1],
        "content_extra_utf8_bytes_share": round(non_ascii / content_bytes, 3) if content_bytes else 0.0,
    }


# --------------------------------------------------------------------------- writers

Writer = Callable[[str], tuple[Callable[[list], None], Callable[[], None]]]
"""Opens a store in a scratch dir; returns (write_all(events), close)."""


def evlog_writer(durability: str, *, in_turn: bool = False) -> Writer:
    """``Log.append`` one event per call; ``in_turn``: all of them inside one ``with log.turn():``."""

    def open_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
        log = Log.open(os.path.join(scratch, "log"), writable=True, create=True, durability=durability)  # type: ignore[arg-type]

        def write_all(events: list) -> None:
            append = log.append
            if in_turn:
                with log.turn():
                    for ev in events:
                        append(ev)
            else:
                for ev in events:
                    append(ev)

        return write_all, log.close

    return open_writer


def raw_jsonl_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
    fd = os.open(os.path.join(scratch, "raw.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write_all(events: list) -> None:
        write, encode = os.write, ENCODER.encode
        for ev in events:
            write(fd, encode(ev) + b"\n")

    return write_all, lambda: os.close(fd)


def sqlite_writer(synchronous: str) -> Writer:
    def open_writer(scratch: str) -> tuple[Callable[[list], None], Callable[[], None]]:
        conn = sqlite3.connect(os.path.join(scratch, "events.db"), isolation_level=None)  # autocommit
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body BLOB NOT NULL)")

        def write_all(events: list) -> None:
            execute, encode = conn.execute, ENCODER.encode
            for seq, ev in enumerate(events, 1):
                execute("INSERT INTO events (seq, body) VALUES (?, ?)", (seq, encode(ev)))

        return write_all, conn.close

    return open_writer


def append_trial(writer: Writer, events: list, *, close_timed: bool) -> Trial:
    """Time ``write_all(events)`` (and ``close()`` when ``close_timed``) on a fresh store."""

    def trial(scratch: str) -> float:
        write_all, close = writer(scratch)

        def run() -> None:
            write_all(events)
            if close_timed:
                close()

        try:
            return timed(run)
        finally:
            if not close_timed:
                close()

    return trial


def compare_appends(ctx: Context, name: str, events: list, *, ours: Writer, baseline: Writer,
                    baseline_name: str, close_timed: bool, target: float | None) -> Result:
    progress(f"{name}: {len(events)} events, best of {ctx.repeats}")
    best = best_of(ctx, {
        "baseline": append_trial(baseline, events, close_timed=close_timed),
        "ours": append_trial(ours, events, close_timed=close_timed),
    })
    details = {**describe_events(events), "close_timed": close_timed}
    return throughput_result(name, len(events), best, baseline_name=baseline_name, target=target, details=details)


# --------------------------------------------------------------------------- append benchmarks


@benchmark("append_nofsync", "Log.append (durability=none), chat-sized events, vs encode + os.write")
def bench_append_nofsync(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_nofsync")).chat(ctx.size(100_000, 20_000))
    return compare_appends(ctx, "append_nofsync", events, ours=evlog_writer("none"), baseline=raw_jsonl_writer,
                           baseline_name="msgspec encode + os.write, O_APPEND", close_timed=False, target=0.6)


@benchmark("append_nofsync_turn", "Log.append (durability=none) inside one log.turn() (bulk mode) vs encode + os.write")
def bench_append_nofsync_turn(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_nofsync")).chat(ctx.size(100_000, 20_000))  # append_nofsync's events
    return compare_appends(ctx, "append_nofsync_turn", events, ours=evlog_writer("none", in_turn=True),
                           baseline=raw_jsonl_writer, baseline_name="msgspec encode + os.write, O_APPEND",
                           close_timed=False, target=0.6)


@benchmark("append_nofsync_small", "Log.append (durability=none), ~250-byte events, vs encode + os.write")
def bench_append_nofsync_small(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_nofsync_small")).sized(ctx.size(100_000, 20_000), 250)
    return compare_appends(ctx, "append_nofsync_small", events, ours=evlog_writer("none"), baseline=raw_jsonl_writer,
                           baseline_name="msgspec encode + os.write, O_APPEND", close_timed=False, target=None)


@benchmark("append_fsync", "Log.append (durability=fsync) vs SQLite WAL synchronous=FULL, 1 txn/event")
def bench_append_fsync(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_fsync")).chat(ctx.size(5_000, 2_000))
    return compare_appends(ctx, "append_fsync", events, ours=evlog_writer("fsync"), baseline=sqlite_writer("FULL"),
                           baseline_name="SQLite WAL synchronous=FULL, autocommit INSERT", close_timed=True, target=1.0)


@benchmark("append_group", "Log.append (durability=group, 10 ms) vs SQLite WAL synchronous=NORMAL, 1 txn/event")
def bench_append_group(ctx: Context) -> Result:
    events = EventFactory(ctx.rng("append_group")).chat(ctx.size(20_000, 5_000))
    return compare_appends(ctx, "append_group", events, ours=evlog_writer("group"), baseline=sqlite_writer("NORMAL"),
                           baseline_name="SQLite WAL synchronous=NORMAL, autocommit INSERT", close_timed=True, target=3.0)


@benchmark("redact_door", "the secrets door per event (redact_event) and Log.append with and without it, CPU us/event")
def bench_redact_door(ctx: Context) -> Result:
    """CPU time per chat-sized event of the door alone, of the anchor scan alone (``re``'s floor for
    the detector), and of ``Log.append`` (durability=none) with the door and with it replaced by the
    identity (this row only), medians of interleaved rounds in the same run."""
    from eventlog import secrets, writer_append
    from eventlog.redact import redact_event

    events = EventFactory(ctx.rng("append_nofsync")).chat(ctx.size(100_000, 20_000))  # append_nofsync's events
    scan = secrets._ANCHOR.search

    def append(scratch: str, door: bool) -> float:
        write_all, close = evlog_writer("none")(scratch)
        saved = writer_append.redact_event
        if not door:
            setattr(writer_append, "redact_event", lambda ev: ev)  # noqa: B010  (this row only: the door's share)
        try:
            return cpu_timed(lambda: write_all(events))
        finally:
            setattr(writer_append, "redact_event", saved)  # noqa: B010
            close()

    trials: dict[str, Trial] = {
        "door": lambda _s: cpu_timed(lambda: [redact_event(ev) for ev in events]),
        "anchor_scan": lambda _s: cpu_timed(lambda: [scan(ev.content) for ev in events]),
        "append_with_door": lambda s: append(s, True),
        "append_without_door": lambda s: append(s, False),
    }
    us = {k: round(v / len(events) * 1e6, 3) for k, v in median_of(ctx, trials).items()}
    details = {**describe_events(events), **{f"cpu_us_per_event_{k}": v for k, v in us.items()},
               "door_share_of_append": round(1 - us["append_without_door"] / us["append_with_door"], 3)}
    return Result("redact_door", us["door"], us["anchor_scan"], "CPU us/event", len(events),
                  "the detector's anchor regex alone (re.search over each content)", details=details)


import bench_v01  # noqa: E402,F401  (registers append_vs_v01, ingest_vs_v01: next to the append benchmarks)

# --------------------------------------------------------------------------- replay benchmarks


def build_log(ctx: Context, label: str, n: int, *, batch: int) -> tuple[str, int]:
    """Write ``n`` realistic events (durability=none) to a new log; ``batch`` > 1 uses append_batch.

    Returns the log directory and its size in bytes.
    """
    path = os.path.join(ctx.scratch(label), "log")
    factory = EventFactory(ctx.rng(label))
    t0 = time.perf_counter()
    with Log.open(path, writable=True, create=True, durability="none") as log:
        for events in factory.chunks(n, 1000):
            if batch > 1:
                for i in range(0, len(events), batch):
                    log.append_batch(events[i : i + batch])
            else:
                for ev in events:
                    log.append(ev)
    size = sum(os.path.getsize(os.path.join(path, segment_name(b))) for b in segment_bases(path))
    progress(f"{label}: wrote {n} events, {size / MIB:.0f} MiB in {time.perf_counter() - t0:.1f} s")
    return path, size


def segment_files(log_dir: str) -> list[str]:
    return [os.path.join(log_dir, segment_name(b)) for b in segment_bases(log_dir)]


def read_trial(fn: Callable[[], int], n: int) -> Trial:
    """Time ``fn()``, which must return how many events it read (checked against ``n``)."""

    def trial(_scratch: str) -> float:
        got: list[int] = []
        seconds = timed(lambda: got.append(fn()))
        if got[0] != n:
            raise RuntimeError(f"read {got[0]} events, expected {n}")
        return seconds

    return trial


def evlog_read_all(log_dir: str) -> int:
    count = 0
    for _ev in Log.open(log_dir).read():
        count += 1
    return count


def raw_decode_lines(log_dir: str) -> int:
    count = 0
    decode = DECODER.decode
    for path in segment_files(log_dir):
        with open(path, "rb") as f:
            data = f.read()
        for line in data.splitlines():
            decode(line)
            count += 1
    return count


def raw_decode_chunked(log_dir: str) -> int:
    count = 0
    for path in segment_files(log_dir):
        with open(path, "rb") as f:
            count += len(DECODER.decode_lines(f.read()))
    return count


@benchmark("replay_verify", "Log.open().read() (verifying) vs read segments + DECODER.decode per line")
def bench_replay_verify(ctx: Context) -> Result:
    n = ctx.size(300_000, 100_000)
    log_dir, size = build_log(ctx, "replay_verify", n, batch=1)
    try:
        progress(f"replay_verify: {n} events, best of {ctx.repeats}")
        best = best_of(ctx, {
            "baseline": read_trial(lambda: raw_decode_lines(log_dir), n),
            "ours": read_trial(lambda: evlog_read_all(log_dir), n),
            "strict_baseline_decode_lines": read_trial(lambda: raw_decode_chunked(log_dir), n),
        })
    finally:
        shutil.rmtree(os.path.dirname(log_dir), ignore_errors=True)
    details = {
        "written_with": "append, one event per call",
        "log_mib": round(size / MIB, 1),
        "ratio_vs_strict_baseline": round(best["strict_baseline_decode_lines"] / best["ours"], 4),
    }
    return throughput_result("replay_verify", n, best, baseline_name="read segments, DECODER.decode per line (no checks)",
                             target=0.7, details=details)


FOLD_SESSIONS = 2000


def fold_log(ctx: Context) -> dict[str, Any]:
    """A log of 100k chat messages (50k with --quick) in 2000 sessions over 30 days, shaped as ``big_workspace``'s.

    One ``session.created`` per session first, then the messages in time order, written with
    ``log.append_batch`` in chunks of 1000 (durability "none"). Shared by ``sessions_fold`` and
    ``records_read``, which only read it.
    """
    n = ctx.size(100_000, 50_000)
    path = os.path.join(ctx.scratch("fold_log"), "log")
    rng = ctx.rng("fold_log")
    factory = EventFactory(rng, sessions=FOLD_SESSIONS)
    step = (BIG_DAYS * DAY - 120) / n
    with Log.open(path, writable=True, create=True, durability="none") as log:
        log.append_batch([SessionCreated(session_key=k, title=f"chat {i}", created_at=iso_ms(START))
                          for i, k in enumerate(factory.sessions)])
        for lo in range(0, n, 1000):
            log.append_batch([factory.event(chat_length(rng), timestamp=iso_ms(START + 60 + i * step))
                              for i in range(lo, min(n, lo + 1000))])
    size = sum(os.path.getsize(p) for p in segment_files(path))
    progress(f"fold_log: {n} messages in {FOLD_SESSIONS} sessions, {size / MIB:.0f} MiB")
    return {"log": path, "events": n + FOLD_SESSIONS, "messages": n, "log_mib": round(size / MIB, 1)}


def fold_result(name: str, ctx: Context, log: dict[str, Any], trials: dict[str, Trial], baseline_name: str) -> Result:
    """CPU us per event of ``ours`` and of the raw decode (``baseline``), medians of interleaved rounds."""
    n = log["events"]
    us = {k: round(v / n * 1e6, 3) for k, v in median_of(ctx, trials).items()}
    details = {"events": n, "messages": log["messages"], "sessions": FOLD_SESSIONS, "log_mib": log["log_mib"],
               **{f"cpu_us_per_event_{k}": v for k, v in us.items()}}
    return Result(name, us["ours"], us["baseline"], "CPU us/event", n, baseline_name, details=details)


def raw_decode_trial(log_dir: str, n: int) -> Trial:
    """CPU seconds of ``raw_decode_lines(log_dir)``, which must read ``n`` events."""

    def trial(_scratch: str) -> float:
        got: list[int] = []
        seconds = cpu_timed(lambda: got.append(raw_decode_lines(log_dir)))
        if got[0] != n:
            raise RuntimeError(f"read {got[0]} events, expected {n}")
        return seconds

    return trial


@benchmark("sessions_fold", "SessionsProjection.apply of every event of 100k chat messages in 2000 sessions vs raw decode, CPU us/event")
def bench_sessions_fold(ctx: Context) -> Result:
    from eventlog.fsio import OS_FS
    from projections.sessions import SessionsProjection

    log = ctx.shared("fold_log", lambda: fold_log(ctx))
    events = list(Log.open(log["log"]).read())  # decoded before the clock starts: the fold alone is timed

    def fold(scratch: str) -> float:
        apply = SessionsProjection(scratch, OS_FS, live=False).apply

        def run() -> None:
            for ev in events:
                apply(ev)

        return cpu_timed(run)

    return fold_result("sessions_fold", ctx, log, {"baseline": raw_decode_trial(log["log"], log["events"]), "ours": fold},
                       "read segments, DECODER.decode per line (the same log)")


@benchmark("records_read", "Log.records() (verified, a Record per event) over 100k chat messages vs raw decode, CPU us/event")
def bench_records_read(ctx: Context) -> Result:
    log = ctx.shared("fold_log", lambda: fold_log(ctx))
    n = log["events"]

    def records(_scratch: str) -> float:
        got = [0]

        def run() -> None:
            for _rec in Log.open(log["log"]).records():
                got[0] += 1

        seconds = cpu_timed(run)
        if got[0] != n:
            raise RuntimeError(f"read {got[0]} records, expected {n}")
        return seconds

    return fold_result("records_read", ctx, log, {"baseline": raw_decode_trial(log["log"], n), "ours": records},
                       "read segments, DECODER.decode per line (no checks)")


_RSS_CHILD = """
import json, resource, sys, time
from eventlog.log import Log
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
count = 0
for _ev in Log.open(sys.argv[1]).read():
    count += 1
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:  # Linux: the address space's own high-water mark, a cross-check of ru_maxrss
    with open("/proc/self/status") as f:
        hwm = int(f.read().split("VmHWM:")[1].split()[0])
except (OSError, IndexError, ValueError):
    hwm = None
print(json.dumps({"base_kib": base, "peak_kib": peak, "vmhwm_kib": hwm, "events": count, "seconds": seconds}))
"""


def clean_rss_argv(argv: list[str]) -> list[str]:
    """Run ``argv`` through ``sh``, which forks for it, so its ru_maxrss starts clean.

    On Linux a process's ``ru_maxrss`` carries over across exec the peak of the address
    space it replaced. Python's subprocess uses vfork, so a child exec'd straight from
    this (large) process would report *our* peak. ``sh -c '"$@"; exit $?'`` has to fork
    a fresh small address space before exec'ing ``argv`` (it is not the last command).
    """
    return ["sh", "-c", '"$@"; exit $?', "sh", *argv]


EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")  # the console script next to this interpreter


def evlog_script() -> str:
    """The ``evlog`` console script of this venv (every CLI benchmark runs it as a user would)."""
    if not os.access(EVLOG, os.X_OK):
        raise RuntimeError(f"no evlog console script at {EVLOG}; install the package into this interpreter's venv")
    return EVLOG


@dataclass
class Measured:
    """One command run: wall seconds, peak RSS (MiB) and how it ended."""

    seconds: float
    peak_mib: float
    returncode: int
    stderr: str


GNU_TIME = "/usr/bin/time"
_MAXRSS_WRAPPER = """
import os, resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


def run_measured(argv: list[str], *, stdin_path: str | None = None, stdout_path: str | None = None,
                 env: dict[str, str] | None = None, check: bool = True) -> Measured:
    """Run ``argv`` and measure its wall time and peak RSS (the command's own ``ru_maxrss``).

    The peak comes from GNU time (``/usr/bin/time -f %M``), which forks the command from
    its own small address space and reports what ``wait4`` says of that child alone. (A
    child exec'd straight from this large process would inherit our peak: see
    ``clean_rss_argv``.) Without GNU time, a small Python wrapper reports
    ``RUSAGE_CHILDREN`` instead, which adds the wrapper's ~10 MiB as a floor. Wall time is
    measured here around the whole run (GNU time's fork adds well under a millisecond).
    stdout goes to ``stdout_path`` (default /dev/null); the last 4000 characters of stderr
    are kept for error messages. ``check``: raise when the exit status is not 0.
    """
    with tempfile.TemporaryDirectory(prefix="evlog-bench-rss-") as tmp:
        rss_file = os.path.join(tmp, "maxrss")
        if os.access(GNU_TIME, os.X_OK):
            wrapped = [GNU_TIME, "-q", "-f", "%M", "-o", rss_file, *argv]
        else:
            wrapped = [sys.executable, "-c", _MAXRSS_WRAPPER, rss_file, *argv]
        err_path = os.path.join(tmp, "stderr")
        with open(err_path, "wb") as err, \
                (open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb")) as stdin, \
                (open(stdout_path, "wb") if stdout_path else open(os.devnull, "wb")) as stdout:
            t0 = time.perf_counter()
            code = subprocess.run(wrapped, stdin=stdin, stdout=stdout, stderr=err, env=env, check=False).returncode
            seconds = time.perf_counter() - t0
        with open(err_path, "rb") as f:
            stderr = f.read().decode(errors="replace")[-4000:]
        try:
            with open(rss_file) as f:
                peak_kib = float(f.read().split()[-1])
        except (OSError, IndexError, ValueError):
            peak_kib = math.nan
    if check and code != 0:
        raise RuntimeError(f"{' '.join(argv[:6])} ... exited {code}: {stderr.strip()[-1500:]}")
    return Measured(seconds, peak_kib / 1024, code, stderr)


@benchmark("replay_rss_1m", "peak RSS of a subprocess replaying 1M events with read()")
def bench_replay_rss(ctx: Context) -> Result:
    n = ctx.size(1_000_000, 200_000)
    log_dir, size = build_log(ctx, "replay_rss", n, batch=1000)
    try:
        progress(f"replay_rss_1m: replaying {n} events in a subprocess")
        proc = subprocess.run(clean_rss_argv([sys.executable, "-c", _RSS_CHILD, log_dir]),
                              capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(os.path.dirname(log_dir), ignore_errors=True)
    out = json.loads(proc.stdout)
    if out["events"] != n:
        raise RuntimeError(f"the subprocess read {out['events']} events, expected {n}")
    details = {
        "events_replayed": n,
        "quick_mode_smaller_than_1m": ctx.quick,
        "log_mib": round(size / MIB, 1),
        "reading_added_mib": round((out["peak_kib"] - out["base_kib"]) / 1024, 1),
        "replay_seconds": round(out["seconds"], 2),
        "vmhwm_mib": round(out["vmhwm_kib"] / 1024, 1) if out["vmhwm_kib"] else None,
    }
    return Result("replay_rss_1m", out["peak_kib"] / 1024, out["base_kib"] / 1024, "MiB", n,
                  "same subprocess right after 'import eventlog.log'", target=150, target_of="ours",
                  target_op="<=", details=details)


# --------------------------------------------------------------------------- workspaces


def iso_ms(t: float) -> str:
    """Unix time ``t`` as UTC ``YYYY-MM-DDTHH:MM:SS.fffZ`` (the form evlog normalises times to)."""
    ms = int(round(t * 1000))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def build_workspace(home: str, batches: Iterable[list[Event]], *, via_workspace: bool) -> float:
    """A new workspace at ``home`` holding ``batches`` (one atomic append each), projections flushed.

    Appends with durability "none" (fast to build), then closes the workspace: the close
    catches every projection up and writes its files and checkpoint. Afterwards the
    configuration is set back to the default durability ("fsync"), so whoever opens it
    next gets the workspace a user would have. ``via_workspace`` appends with
    ``ws.append`` (as the session store does), else with ``ws.log.append_batch``.
    Returns the seconds it took.
    """
    t0 = time.perf_counter()
    init_workspace(home, durability="none")
    ws = Workspace.open(home, writable=True)
    try:
        append = ws.append if via_workspace else ws.log.append_batch
        for batch in batches:
            append(batch)
    finally:
        ws.close()
    init_workspace(home, durability=Config().durability)
    return time.perf_counter() - t0


def tree_bytes(path: str) -> int:
    """Bytes of every file under ``path``."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _dirs, files in os.walk(path) for f in files)


def copy_home(template: str, scratch: str) -> str:
    """A copy of the workspace ``template`` in ``scratch``, written back to disk before it is used.

    ``os.sync()`` (outside every timed region) keeps the copy's dirty pages from being
    written back during a timed fsync, which would bill the copy to whoever syncs first.
    """
    home = os.path.join(scratch, "home")
    shutil.copytree(template, home)
    os.sync()
    return home


def repeat_trial(fn: Callable[[], object], min_seconds: float = 0.25) -> Trial:
    """Seconds per call of ``fn``: called in a loop for at least ``min_seconds`` (and 3 calls).

    For operations far shorter than a timer tick is noisy. One untimed warm-up call first
    (lazy imports, first-touch allocations).
    """

    def trial(_scratch: str) -> float:
        fn()
        gc.collect()
        calls, t0 = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - t0
            if calls >= 3 and elapsed >= min_seconds:
                return elapsed / calls

    return trial


# --------------------------------------------------------------------------- session benchmarks

LIST_SESSIONS = 500
LIST_MESSAGES = 200
_LIST_COLUMNS = "key, title, updated_at, message_count"
_ALL_COLUMNS = "key, title, preview, created_at, updated_at, last_consolidated, metadata, message_count, project"


def session_batches(factory: EventFactory, sessions: int, messages: int) -> Iterator[list[Event]]:
    """One batch per session: its ``session.created`` then ``messages`` chat messages.

    Each session starts at a random moment of November 2026 and its messages follow
    1 s to 10 min apart, so sessions' ``updated_at`` differ and interleave.
    """
    rng = factory.rng
    for i in range(sessions):
        key = f"cli:{rng.getrandbits(48):012x}"
        t = START + rng.uniform(0, 30 * DAY)
        batch: list[Event] = [SessionCreated(session_key=key, title=_prose(rng)[:60].strip(), created_at=iso_ms(t),
                                             metadata={"channel": "cli", "chat_id": str(i)})]
        for _ in range(messages):
            t += rng.uniform(1, 600)
            batch.append(factory.event(chat_length(rng), session_key=key, timestamp=iso_ms(t)))
        yield batch


def seed_list_sessions(sessions_dir: str) -> list[dict[str, Any]]:
    """The seed's listing: open every session file, read it whole, parse line 1, sort."""
    out = []
    for name in os.listdir(sessions_dir):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(sessions_dir, name), "rb") as f:
            data = f.read()
        out.append(json.loads(data[: data.find(b"\n")]))
    out.sort(key=lambda meta: meta.get("updated_at", ""), reverse=True)
    return out


def sqlite_sessions_db(path: str, infos: list) -> None:
    """A table of the same sessions (every field the store lists), indexed on updated_at."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (key TEXT PRIMARY KEY, title TEXT, preview TEXT, created_at TEXT, "
                 "updated_at TEXT, last_consolidated INTEGER, metadata TEXT, message_count INTEGER, project TEXT)")
    conn.execute("CREATE INDEX sessions_updated_at ON sessions (updated_at)")
    conn.executemany(f"INSERT INTO sessions ({_ALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [(i.key, i.title, i.preview, i.created_at, i.updated_at, i.last_consolidated,
                       json.dumps(i.metadata), i.message_count, i.project) for i in infos])
    conn.commit()
    conn.close()


def sqlite_list(conn: sqlite3.Connection, columns: str = _LIST_COLUMNS) -> list[tuple]:
    return conn.execute(f"SELECT {columns} FROM sessions ORDER BY updated_at DESC").fetchall()


def sqlite_list_cold(path: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return sqlite_list(conn)
    finally:
        conn.close()


def list_cold(home: str) -> list:
    """What a CLI call does: open the workspace read-only, list, close."""
    store = LocalSessionStore(Workspace.open(home))
    try:
        return store.list()
    finally:
        store.close()


@benchmark("sessions_list_500", "LocalSessionStore.list() of 500 sessions x 200 messages vs SQLite (and the seed's file scan)")
def bench_sessions_list(ctx: Context) -> Result:
    scratch = ctx.scratch("sessions_list")
    home = os.path.join(scratch, "home")
    factory = EventFactory(ctx.rng("sessions_list"), sessions=1)
    seconds = build_workspace(home, session_batches(factory, LIST_SESSIONS, LIST_MESSAGES), via_workspace=True)
    sessions_dir = os.path.join(home, "sessions")
    files = [n for n in os.listdir(sessions_dir) if n.endswith(".jsonl")]
    if len(files) != LIST_SESSIONS:
        raise RuntimeError(f"expected {LIST_SESSIONS} session files, found {len(files)}")
    progress(f"sessions_list_500: built {LIST_SESSIONS} sessions x {LIST_MESSAGES} messages in {seconds:.1f} s")
    db = os.path.join(scratch, "sessions.db")
    store = LocalSessionStore.open(home)  # the writer, as an agent process holds it: index in memory
    try:
        infos = store.list()
        sqlite_sessions_db(db, infos)
        conn = sqlite3.connect(db)
        try:
            want = [i.key for i in infos]  # every variant must list the same sessions in the same order
            for got in ([r[0] for r in sqlite_list(conn)], [m["key"] for m in seed_list_sessions(sessions_dir)],
                        [i.key for i in list_cold(home)]):
                if got != want:
                    raise RuntimeError("the listings disagree on the sessions or their order")
            progress(f"sessions_list_500: best of {ctx.repeats}")
            best = best_of(ctx, {
                "baseline": repeat_trial(lambda: sqlite_list(conn)),
                "ours": repeat_trial(store.list),
                "ours_cold": repeat_trial(lambda: list_cold(home)),
                "seed": repeat_trial(lambda: seed_list_sessions(sessions_dir)),
                "sqlite_cold": repeat_trial(lambda: sqlite_list_cold(db)),
                "sqlite_all_columns": repeat_trial(lambda: sqlite_list(conn, _ALL_COLUMNS)),
            })
        finally:
            conn.close()
    finally:
        store.close()
    ms = {k: v * 1000 for k, v in best.items()}
    details = {
        "sessions": LIST_SESSIONS,
        "messages_per_session": LIST_MESSAGES,
        "session_files_mib": round(tree_bytes(sessions_dir) / MIB, 1),
        **{f"{k}_ms": round(v, 3) for k, v in ms.items() if k not in ("ours", "baseline")},
        "seed_over_ours": round(ms["seed"] / ms["ours"], 1),
        "seed_over_ours_cold": round(ms["seed"] / ms["ours_cold"], 2),
        "ours_cold_over_sqlite_cold": round(ms["ours_cold"] / ms["sqlite_cold"], 2),
        "ours_over_sqlite_all_columns": round(ms["ours"] / ms["sqlite_all_columns"], 2),
        "page_cache": "warm for every variant (files and db just written)",
    }
    shutil.rmtree(scratch, ignore_errors=True)
    return Result("sessions_list_500", ms["ours"], ms["baseline"], "ms", LIST_SESSIONS,
                  f"SQLite SELECT {_LIST_COLUMNS} ORDER BY updated_at DESC (indexed), open connection",
                  target=2.0, target_op="<=", details=details)


def fdatasync_ms(directory: str, n: int = 50) -> float:
    """Milliseconds of one 200-byte append + fdatasync on this file system (context for fsync figures)."""
    path = os.path.join(directory, "fsync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            os.write(fd, b"x" * 199 + b"\n")
            os.fdatasync(fd)
        return (time.perf_counter() - t0) / n * 1000
    finally:
        os.close(fd)
        os.unlink(path)


def seed_atomic_write(path: str, data: bytes) -> None:
    """The seed's file replacement: temp file, write, fsync, rename over, fsync the directory."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _json_line(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _msgspec_line(value: Any) -> bytes:
    return msgspec.json.encode(value) + b"\n"


@benchmark("add_message_2000", "add_message to a 2000-message session (fsync, file rewrite amortised) vs the seed's full rewrite")
def bench_add_message(ctx: Context) -> Result:
    n = ctx.size(300, 100)
    rng = ctx.rng("add_message_2000")
    factory = EventFactory(rng, sessions=1)
    key = "cli:add-message-bench"
    clock = [START]

    def next_time() -> str:
        clock[0] += rng.uniform(1, 120)
        return iso_ms(clock[0])

    history: list[Event] = [SessionCreated(session_key=key, title="a long conversation", created_at=iso_ms(START))]
    history += [factory.event(chat_length(rng), session_key=key, timestamp=next_time()) for _ in range(MAX_FILE_MESSAGES)]
    new = [factory.event(chat_length(rng), session_key=key, timestamp=next_time()) for _ in range(n)]
    template = os.path.join(ctx.scratch("add_message_template"), "home")
    build_workspace(template, [history], via_workspace=True)
    file_rel = os.path.join("sessions", safe_name(key, ".jsonl"))
    session_file_bytes = os.path.getsize(os.path.join(template, file_rel))
    parts: dict[str, dict[str, float]] = {}  # trial -> the split of its best round

    def ours(durability: str, name: str) -> Trial:
        def trial(scratch: str) -> float:
            home = copy_home(template, scratch)
            if durability != Config().durability:
                init_workspace(home, durability=durability)
            store = LocalSessionStore.open(home)
            try:
                store.get(key)  # loads the projections from their checkpoint before the clock starts
                add, flush = store.add_message, store.ws.flush
                gc.collect()
                t0 = time.perf_counter()
                for ev in new:
                    add(key, ev.role, ev.content, message_id=ev.message_id, timestamp=ev.timestamp)
                t1 = time.perf_counter()
                flush()
                t2 = time.perf_counter()
                with open(os.path.join(home, file_rel), "rb") as f:
                    lines = f.read().splitlines()
                if len(lines) != MAX_FILE_MESSAGES + 1 or json.loads(lines[-1])["id"] != new[-1].message_id:
                    raise RuntimeError("the session file does not end with the newest 2000 messages")
            finally:
                store.close()
            if t2 - t0 < parts.get(name, {}).get("total", math.inf):
                parts[name] = {"total": t2 - t0, "adds": t1 - t0, "final_flush": t2 - t1}
            return t2 - t0

        return trial

    def seed(encode_line: Callable[[Any], bytes]) -> Trial:
        def trial(scratch: str) -> float:
            path = os.path.join(scratch, os.path.basename(file_rel))
            shutil.copyfile(os.path.join(template, file_rel), path)
            with open(path, "rb") as f:
                lines = f.read().splitlines()
            meta = json.loads(lines[0])
            messages = [json.loads(line) for line in lines[1:]]
            os.sync()

            def run() -> None:
                for ev in new:
                    messages.append({"id": ev.message_id, "sessionKey": key, "role": ev.role, "content": ev.content,
                                     "timestamp": ev.timestamp})
                    del messages[:-MAX_FILE_MESSAGES]
                    meta["updated_at"] = ev.timestamp
                    meta["preview"] = " ".join(ev.content.split())[:PREVIEW_CHARS]
                    seed_atomic_write(path, b"".join([encode_line(meta)] + [encode_line(m) for m in messages]))

            return timed(run)

        return trial

    def ours_flush_every_add(scratch: str) -> float:
        """Per add, when every add is followed by its own flush (messages slower than the flush interval)."""
        home = copy_home(template, scratch)
        k = min(30, n)
        store = LocalSessionStore.open(home)
        try:
            store.get(key)
            gc.collect()
            t0 = time.perf_counter()
            for ev in new[:k]:
                store.add_message(key, ev.role, ev.content, message_id=ev.message_id, timestamp=ev.timestamp)
                store.ws.flush()
            return (time.perf_counter() - t0) / k * n  # scaled to n adds, comparable with the others
        finally:
            store.close()

    progress(f"add_message_2000: {n} adds to a {MAX_FILE_MESSAGES}-message session, best of {ctx.repeats}")
    try:
        best = best_of(ctx, {
            "baseline": seed(_json_line),
            "ours": ours("fsync", "ours"),
            "ours_group": ours("group", "ours_group"),
            "seed_msgspec": seed(_msgspec_line),
            "ours_flush_every_add": ours_flush_every_add,
        })
    finally:
        shutil.rmtree(os.path.dirname(template), ignore_errors=True)
    per_add = {f"ms_per_add_{k}": round(v / n * 1000, 3) for k, v in best.items()}
    probe = ctx.scratch("fdatasync_probe")
    details = {
        "adds": n,
        "fdatasync_ms": round(fdatasync_ms(probe), 3),
        "session_messages_before": MAX_FILE_MESSAGES,
        "session_file_kib": round(session_file_bytes / 1024, 1),
        **per_add,
        "ours_adds_only_ms_per_add": round(parts["ours"]["adds"] / n * 1000, 3),
        "ours_final_flush_ms": round(parts["ours"]["final_flush"] * 1000, 1),
        "ours_group_adds_only_ms_per_add": round(parts["ours_group"]["adds"] / n * 1000, 3),
        "ratio_group": round(best["baseline"] / best["ours_group"], 1),
        "ratio_vs_seed_msgspec": round(best["seed_msgspec"] / best["ours"], 1),
        "ratio_flush_every_add": round(best["baseline"] / best["ours_flush_every_add"], 2),
    }
    return Result("add_message_2000", n / best["ours"], n / best["baseline"], "adds/s", n,
                  "seed: json.dumps all 2000 messages, temp file + fsync + rename + dir fsync, per add",
                  target=50.0, details=details)


import bench_contention  # noqa: E402,F401  (registers lock_wait_shared, lease_wait)

# --------------------------------------------------------------------------- 1M-event workspace benchmarks

BIG_SESSIONS = 2000
BIG_DAYS = 30


def big_workspace(ctx: Context) -> dict[str, Any]:
    """A workspace of ~2000 sessions and 1M messages (200k with --quick) over 30 days, flushed.

    Shared by ``replay_check_1m`` (which leaves it unchanged) and ``snapshot_1m`` (which
    works on copies). Built with ``log.append_batch`` in chunks of 1000 (durability
    "none"), one ``session.created`` per session first, then the messages in time order.
    """
    n = ctx.size(1_000_000, 200_000)
    home = os.path.join(ctx.scratch("workspace_1m"), "home")
    rng = ctx.rng("workspace_1m")
    factory = EventFactory(rng, sessions=BIG_SESSIONS)
    step = (BIG_DAYS * DAY - 120) / n  # every message inside the 30 days

    def batches() -> Iterator[list[Event]]:
        yield [SessionCreated(session_key=k, title=f"chat {i}", created_at=iso_ms(START)) for i, k in enumerate(factory.sessions)]
        for lo in range(0, n, 1000):
            yield [factory.event(chat_length(rng), timestamp=iso_ms(START + 60 + i * step)) for i in range(lo, min(n, lo + 1000))]

    progress(f"workspace_1m: building {n} messages in {BIG_SESSIONS} sessions")
    seconds = build_workspace(home, batches(), via_workspace=False)
    info = {
        "home": home,
        "messages": n,
        "events": n + BIG_SESSIONS,
        "log_mib": round(tree_bytes(os.path.join(home, "log")) / MIB, 1),
        "session_files_mib": round(tree_bytes(os.path.join(home, "sessions")) / MIB, 1),
    }
    progress(f"workspace_1m: {info['events']} events, log {info['log_mib']} MiB, session files "
             f"{info['session_files_mib']} MiB, built in {seconds:.1f} s")
    return info


@benchmark("replay_check_1m", "replay.check(ws) over 1M events (rebuild + byte compare) vs read + DECODER.decode per line")
def bench_replay_check(ctx: Context) -> Result:
    big = ctx.shared("workspace_1m", lambda: big_workspace(ctx))
    home, n = big["home"], big["events"]
    ws = Workspace.open(home, writable=True)
    try:
        ws.flush()  # live projections exist and are current before the clock starts

        def check(_scratch: str) -> float:
            drifts: list = []
            seconds = timed(lambda: drifts.extend(replay.check(ws).drifts))
            if drifts:
                raise RuntimeError(f"replay.check found drift: {drifts[:3]}")
            return seconds

        progress(f"replay_check_1m: {n} events, best of {ctx.repeats}")
        best = best_of(ctx, {
            "baseline": read_trial(lambda: raw_decode_lines(os.path.join(home, "log")), n),
            "ours": check,
        })
    finally:
        ws.close()
    progress("replay_check_1m: peak RSS of 'evlog replay --check' in a subprocess")
    cli = run_measured([evlog_script(), "--home", home, "replay", "--check"])
    details = {
        "peak_rss_mib": round(cli.peak_mib, 1),
        "cli_seconds": round(cli.seconds, 2),
        "events": n,
        "messages": big["messages"],
        "sessions": BIG_SESSIONS,
        "quick_mode_smaller_than_1m": ctx.quick,
        "log_mib": big["log_mib"],
        "session_files_mib": big["session_files_mib"],
        "us_per_event_ours": round(best["ours"] / n * 1e6, 2),
        "us_per_event_baseline": round(best["baseline"] / n * 1e6, 2),
        "check_writes_to": tempfile.gettempdir(),
    }
    return Result("replay_check_1m", best["ours"], best["baseline"], "s", n,
                  "read segments, DECODER.decode per line (no checks, no files)", target=3.0, target_op="<=",
                  checks=[Check("peak_rss_mib", "<=", 128, " MiB", "rss")], details=details)


def cpu_trial(fn: Callable[[], object], cpu: dict[str, list[float]], name: str) -> Trial:
    """Wall seconds of ``fn()``; its CPU seconds (this process) go to ``cpu[name]``."""

    def trial(_scratch: str) -> float:
        c0 = time.process_time()
        seconds = timed(fn)
        cpu.setdefault(name, []).append(time.process_time() - c0)
        return seconds

    return trial


def with_recall_index(ctx: Context) -> tuple[dict[str, Any], dict[str, float]]:
    """The 1M workspace with its recall index built now (removed by ``drop_recall_index``); build figures."""
    from eventlog.app import recall

    big = ctx.shared("workspace_1m", lambda: big_workspace(ctx))
    progress(f"recall index: building over {big['messages']} messages")
    with Workspace.open(big["home"], writable=True) as ws:
        ws.flush()
        c0, t0 = time.process_time(), time.perf_counter()
        recall.rebuild(ws)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return big, {"index_build_seconds": round(seconds, 2), "index_build_cpu_seconds": round(cpu, 2),
                 "index_build_msg_per_s": round(big["messages"] / seconds)}


def drop_recall_index(home: str) -> None:
    from projections.recall.workspace import index_path

    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(index_path(home) + suffix)


def cpu_details(cpu: dict[str, list[float]]) -> dict[str, float]:
    return {f"cpu_seconds_{k}": round(min(v), 2) for k, v in cpu.items()}


@benchmark("replay_check_index_1m", "replay.check(ws) over 1M events with the recall index (proved in one pass) vs read + decode")
def bench_replay_check_index(ctx: Context) -> Result:
    big, build = with_recall_index(ctx)
    home, n = big["home"], big["events"]
    cpu: dict[str, list[float]] = {}
    try:
        ws = Workspace.open(home, writable=True)
        try:
            def check(full: bool) -> None:
                result = replay.check(ws, full_index=True) if full else replay.check(ws)
                if not result.clean:
                    raise RuntimeError(f"replay.check found drift: {result.drifts[:3]} {result.index_problems[:3]}")

            progress(f"replay_check_index_1m: {n} events, best of {ctx.repeats}")
            best = best_of(ctx, {
                "baseline": read_trial(lambda: raw_decode_lines(os.path.join(home, "log")), n),
                "ours": cpu_trial(lambda: check(False), cpu, "ours"),
                "full_index": cpu_trial(lambda: check(True), cpu, "full_index"),
            })
        finally:
            ws.close()
        cli = run_measured([evlog_script(), "--home", home, "replay", "--check"])
    finally:
        drop_recall_index(home)
    details = {**build, **cpu_details(cpu), "peak_rss_mib": round(cli.peak_mib, 1), "cli_seconds": round(cli.seconds, 2),
               "full_index_seconds": round(best["full_index"], 2),
               "full_over_ours": round(best["full_index"] / best["ours"], 2), "events": n, "messages": big["messages"],
               "quick_mode_smaller_than_1m": ctx.quick, "us_per_event_ours": round(best["ours"] / n * 1e6, 2)}
    return Result("replay_check_index_1m", best["ours"], best["baseline"], "s", n,
                  "read segments, DECODER.decode per line (no checks, no files)", target=3.0, target_op="<=",
                  checks=[Check("peak_rss_mib", "<=", 128, " MiB", "rss")], details=details)


@benchmark("replay_1m", "replay.rebuild(ws) (evlog replay: recall index kept when sound) over 1M events vs read + decode")
def bench_replay(ctx: Context) -> Result:
    big, build = with_recall_index(ctx)
    home, n = big["home"], big["events"]
    cpu: dict[str, list[float]] = {}
    try:
        ws = Workspace.open(home, writable=True)
        try:
            done: list[str] = []
            progress(f"replay_1m: {n} events, best of {ctx.repeats}")
            best = best_of(ctx, {
                "baseline": read_trial(lambda: raw_decode_lines(os.path.join(home, "log")), n),
                "ours": cpu_trial(lambda: done.append(replay.rebuild(ws, recall_index="refresh").recall_index), cpu,
                                  "ours"),
                "rebuild_index": cpu_trial(lambda: replay.rebuild(ws, recall_index="rebuild"), cpu, "rebuild_index"),
            })
            if set(done) != {"kept"}:
                raise RuntimeError(f"evlog replay did not keep the sound recall index: {sorted(set(done))}")
        finally:
            ws.close()
    finally:
        drop_recall_index(home)
    details = {**build, **cpu_details(cpu), "rebuild_index_seconds": round(best["rebuild_index"], 2),
               "rebuild_over_ours": round(best["rebuild_index"] / best["ours"], 2), "events": n,
               "messages": big["messages"], "quick_mode_smaller_than_1m": ctx.quick}
    return Result("replay_1m", best["ours"], best["baseline"], "s", n,
                  "read segments, DECODER.decode per line (no checks, no files)", target=5.0, target_op="<=",
                  details=details)


@benchmark("recall_open_5000", "open + close the recall index of 5,000 sessions vs sqlite3.connect + one SELECT")
def bench_recall_open(ctx: Context) -> Result:
    from projections.recall import RecallIndex

    path = os.path.join(ctx.scratch("recall_open"), "recall.sqlite")
    ix = RecallIndex(path)
    seq = 0
    for k in range(5000):
        seq += 1
        ix.apply(SessionCreated(seq=seq, ts="", session_key=f"cli:session-{k}", project="proj", title=f"chat {k}"))
        for m in range(4):
            seq += 1
            ix.apply(MessageAppended(seq=seq, ts="", session_key=f"cli:session-{k}", message_id=str(m), role="user",
                                     content=f"message {m} of chat {k}"))
    ix.commit()
    ix.close()

    def ours() -> None:
        RecallIndex(path).close()

    def bare() -> None:
        db = sqlite3.connect(path)
        db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        db.close()

    best = best_of(ctx, {"baseline": repeat_trial(bare), "ours": repeat_trial(ours)}, rounds=max(ctx.repeats, 5))
    return Result("recall_open_5000", best["ours"] * 1000, best["baseline"] * 1000, "ms", 5000,
                  "sqlite3.connect + SELECT seq + close", target=3.0, target_op="<=",
                  details={"sessions": 5000, "messages": 20000})


def bare_snapshot_loop(log_dir: str) -> int:
    """What any snapshot must do at least: read, decode, hash the canonical message, format its diary line."""
    count = 0
    decode, h128, canon = DECODER.decode, xxhash.xxh3_128_intdigest, codec.canonical_json
    for path in segment_files(log_dir):
        with open(path, "rb") as f:
            data = f.read()
        for line in data.splitlines():
            ev = decode(line)
            if type(ev) is MessageAppended:
                h128(canon(canonical_message(ev)))
                diary_line(ev, normalize_time(ev.timestamp) or ev.ts)
                count += 1
    return count


@benchmark("snapshot_1m", "processors.run snapshot over 1M messages (msg/s), then digest (diary bytes/s)")
def bench_snapshot(ctx: Context) -> Result:
    big = ctx.shared("workspace_1m", lambda: big_workspace(ctx))
    n = big["messages"]
    digests: list[dict[str, Any]] = []

    def ours(scratch: str) -> float:
        home = copy_home(big["home"], scratch)
        ws = Workspace.open(home, writable=True)
        try:
            ws.projections  # noqa: B018 - projections loaded from their checkpoint, as in a running daemon
            gc.collect()
            t0 = time.perf_counter()
            snap = run_processor(ws, "snapshot")
            ws.flush()  # the diary files the snapshot's events project to
            t1 = time.perf_counter()
            diary = ws.diary.days  # type: ignore[attr-defined]
            diary_bytes = sum(day.size for day in diary.values())
            gc.collect()
            t2 = time.perf_counter()
            dig = run_processor(ws, "digest")
            t3 = time.perf_counter()
        finally:
            ws.close()
        if snap.events_consumed != n or dig.events_read == 0:
            raise RuntimeError(f"snapshot consumed {snap.events_consumed} of {n} messages; digest read {dig.events_read} lines")
        digests.append({"seconds": t3 - t2, "diary_bytes": diary_bytes, "days": len(diary), "entries": dig.entries_written,
                        "snapshot_trimmed_bytes": snap.bytes_trimmed, "snapshot_lines": snap.events_consumed - snap.duplicates_skipped,
                        "diary_events": snap.outputs.get("diary.lines", 0) + snap.outputs.get("diary.appended", 0),
                        "diary_trims": snap.outputs.get("diary.trimmed", 0)})
        return t1 - t0

    progress(f"snapshot_1m: {n} messages, best of {ctx.repeats}")
    best = best_of(ctx, {
        "baseline": read_trial(lambda: bare_snapshot_loop(os.path.join(big["home"], "log")), n),
        "ours": ours,
    })
    dig = min(digests, key=lambda d: d["seconds"])
    progress("snapshot_1m: peak RSS of 'evlog run snapshot' and 'evlog run digest' in subprocesses, on a fresh copy")
    scratch = ctx.scratch("snapshot_rss")
    try:
        home = copy_home(big["home"], scratch)
        cli_snap = run_measured([evlog_script(), "--home", home, "run", "snapshot", "--json"])
        cli_digest = run_measured([evlog_script(), "--home", home, "run", "digest", "--json"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    details = {
        "peak_rss_mib": round(cli_snap.peak_mib, 1),
        "cli_snapshot_seconds": round(cli_snap.seconds, 2),
        "cli_digest_peak_rss_mib": round(cli_digest.peak_mib, 1),
        "cli_digest_seconds": round(cli_digest.seconds, 2),
        "messages": n,
        "sessions": BIG_SESSIONS,
        "days": dig["days"],
        "diary_budget_bytes": Config().diary_budget_bytes,
        "quick_mode_smaller_than_1m": ctx.quick,
        "log_mib": big["log_mib"],
        "snapshot_seconds": round(best["ours"], 2),
        "diary_lines_written": dig["snapshot_lines"],
        "diary_events_written": dig["diary_events"],
        "diary_trims": dig["diary_trims"],
        "diary_bytes_trimmed": dig["snapshot_trimmed_bytes"],
        "digest_diary_bytes_per_s": round(dig["diary_bytes"] / dig["seconds"], 1),
        "digest_diary_bytes": dig["diary_bytes"],
        "digest_seconds": round(dig["seconds"], 3),
        "digest_entries": dig["entries"],
        "baseline_seconds": round(best["baseline"], 2),
    }
    return Result("snapshot_1m", n / best["ours"], n / best["baseline"], "msg/s", n,
                  "bare loop: read + decode + xxh3_128 of the canonical message + diary line, nothing written",
                  target=100_000, target_of="ours", checks=[Check("peak_rss_mib", "<=", 128, " MiB", "rss")], details=details)


# --------------------------------------------------------------------------- dedup memory


def traced(build: Callable[[], Any]) -> tuple[Any, int, int]:
    """``build()`` under tracemalloc: (its result, bytes still allocated after it, peak bytes during it)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        obj = build()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return obj, current - base, peak - base


@benchmark("dedup_memory_1m", "memory of 1M 128-bit hashes in HashIndex vs a Python set (tracemalloc), file size, load time")
def bench_dedup_memory(ctx: Context) -> Result:
    n = 1_000_000  # the target is stated at 1M; this is quick enough for --quick too
    seed = f"{SEED}:dedup_memory_1m"

    def build_index() -> HashIndex:
        idx, draw = HashIndex(), random.Random(seed).getrandbits
        add = idx.add
        for seq in range(1, n + 1):
            add(draw(128), seq)  # each key a fresh int, as xxh3_128_intdigest returns, dropped after the add
        return idx

    def build_set() -> set[int]:
        draw = random.Random(seed).getrandbits
        return {draw(128) for _ in range(n)}

    def build_dict() -> dict[int, int]:
        draw = random.Random(seed).getrandbits
        return {draw(128): seq for seq in range(1, n + 1)}

    progress(f"dedup_memory_1m: {n} keys")
    idx, idx_bytes, idx_peak = traced(build_index)
    if len(idx) != n:
        raise RuntimeError(f"the index holds {len(idx)} keys, expected {n} (a 128-bit collision?)")
    keys, set_bytes, set_peak = traced(build_set)
    del keys
    d, dict_bytes, _ = traced(build_dict)
    del d
    build_seconds = timed(build_index)  # without tracemalloc's overhead
    data = idx.to_bytes()
    probe = random.Random(seed).getrandbits(128)
    loaded: list[HashIndex] = []
    best = best_of(ctx, {"from_bytes": lambda _s: timed(lambda: loaded.append(HashIndex.from_bytes(data)))})
    if len(loaded[-1]) != n or loaded[-1].get(probe) != 1:
        raise RuntimeError("HashIndex.from_bytes did not give the index back")
    details = {
        "keys": n,
        "units": "MB = 10**6 bytes",
        "ours_memory_bytes_method_mb": round(idx.memory_bytes() / MB, 2),
        "ours_tracemalloc_peak_mb": round(idx_peak / MB, 2),
        "set_tracemalloc_peak_mb": round(set_peak / MB, 2),
        "dict_key_to_seq_mb": round(dict_bytes / MB, 2),
        "on_disk_mb": round(len(data) / MB, 2),
        "on_disk_bytes_per_key": round(len(data) / n, 2),
        "from_bytes_ms": round(best["from_bytes"] * 1000, 1),
        "build_seconds": round(build_seconds, 2),
        "us_per_add": round(build_seconds / n * 1e6, 3),
    }
    return Result("dedup_memory_1m", idx_bytes / MB, set_bytes / MB, "MB", n,
                  "Python set of the same 1M 128-bit ints (tracemalloc, ints included)", target=32, target_of="ours",
                  target_op="<=", details=details)


# --------------------------------------------------------------------------- MySQL gateway


@benchmark("mysql_push_100k", "evlog sync push of 100k messages in batches vs one INSERT per message (local MariaDB)")
def bench_mysql_push(ctx: Context) -> Result:
    """See tools/bench_mysql.py. Needs a database to write to: $EVLOG_BENCH_MYSQL_URL or $EVLOG_TEST_MYSQL_URL."""
    import bench_mysql
    from bench_mysql import mysql_push_100k

    dsn = os.environ.get("EVLOG_BENCH_MYSQL_URL") or os.environ.get("EVLOG_TEST_MYSQL_URL")
    if not dsn:
        progress("mysql_push_100k: skipped: set EVLOG_BENCH_MYSQL_URL to a MySQL/MariaDB database to write to")
        return None  # type: ignore[return-value]
    # bench_mysql.time_push pushes the same workspace as a new gateway user every round, which
    # sync now refuses after the first round (one workspace, one account). Each round pushes a
    # fresh copy of the workspace as it was before any push instead (copied outside the timing).
    push_once = bench_mysql.time_push
    pristine: dict[str, str] = {}

    def push_fresh_copy(home: str, db: str) -> tuple[float, Any]:
        if home not in pristine:
            pristine[home] = shutil.copytree(home, home + ".pristine")
        work = home + ".round"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(pristine[home], work)
        os.sync()
        return push_once(work, db)

    bench_mysql.time_push = push_fresh_copy
    try:
        res = mysql_push_100k(ctx.scratch("mysql"), dsn=dsn, quick=ctx.quick, repeats=ctx.repeats)
    finally:
        bench_mysql.time_push = push_once
    res["details"]["each_round_pushes"] = "a fresh copy of the unpushed workspace (see bench.py)"
    return Result(**res)


# --------------------------------------------------------------------------- start-up


def command_trial(argv: list[str]) -> Trial:
    def trial(_scratch: str) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t0

    return trial


@benchmark("help_time", "wall time of 'evlog --help' vs 'python -c \"import click, msgspec\"'")
def bench_help_time(ctx: Context) -> Result:
    evlog = evlog_script()
    progress("help_time: best of 5")
    best = best_of(ctx, {"baseline": command_trial([sys.executable, "-c", "import click, msgspec"]),
                         "ours": command_trial([evlog, "--help"]),
                         "python_pass": command_trial([sys.executable, "-c", "pass"])}, rounds=5)
    return Result("help_time", best["ours"] * 1000, best["baseline"] * 1000, "ms", 5,
                  f"{os.path.basename(sys.executable)} -c 'import click, msgspec'", target=150, target_of="ours",
                  target_op="<=", checks=[Check("ratio", "<=", 2.0)],
                  details={"command": f"{evlog} --help", "python_pass_ms": round(best["python_pass"] * 1000, 1),
                           "over_python_pass": round(best["ours"] / best["python_pass"], 2),
                           "ours_minus_baseline_ms": round((best["ours"] - best["baseline"]) * 1000, 1)})


import bench_cli  # noqa: E402,F401  (registers append_file_1m, cli_growth, sessions_5000, tail_follow_latency)
import bench_hybrid  # noqa: E402,F401  (registers embed_rate, hybrid_query_100k, hybrid_cli_oneshot)
import bench_open  # noqa: E402,F401  (registers open_caught_up)

# --------------------------------------------------------------------------- recall at scale


@benchmark("recall_1m", "recall index of 1M messages: build rate, size, query p50/p95 (projections/recall/bench.py) vs bare FTS5")
def bench_recall(ctx: Context) -> Result:
    """See projections/recall/bench.py; the baseline is a bare SQLite FTS5 table of the same texts."""
    from projections.recall.bench import bench as recall_bench

    n = ctx.size(1_000_000, 100_000)
    progress(f"recall_1m: {n} messages (projections/recall/bench.py)")
    ours = recall_bench(n, tmpdir=ctx.root, progress=lambda m: progress(f"  recall: {m}"))
    base = bare_fts5(ctx, n)
    details = {
        "messages": n,
        "quick_mode_smaller_than_1m": ctx.quick,
        "p50_ms": ours["p50_ms"],
        "p95_ms": ours["p95_ms"],
        "size_ratio": ours["size_ratio"],
        "project_p50_ms": ours["project_p50_ms"],
        "project_p95_ms": ours["project_p95_ms"],
        "source_in_top10": ours["source_in_top10"],
        "build_s": ours["build_s"],
        "index_mib": round(ours["index_bytes"] / MIB, 1),
        "text_mib": round(ours["text_bytes"] / MIB, 1),
        **{f"fts5_{k}": v for k, v in base.items()},
    }
    return Result("recall_1m", ours["build_msgs_per_s"], base["build_msgs_per_s"], "msg/s", n,
                  "bare SQLite FTS5 table (unicode61) of the same texts: executemany in one transaction; "
                  "queries: the same words OR-ed, ORDER BY rank LIMIT 10",
                  target=50_000, target_of="ours",
                  checks=[Check("p50_ms", "<=", 20, " ms", "p50"), Check("p95_ms", "<=", 100, " ms", "p95"),
                          Check("size_ratio", "<=", 1.5, "x", "size")], details=details)


def bare_fts5(ctx: Context, n: int) -> dict[str, Any]:
    """Build rate, size and query latency of a bare FTS5 table over recall's synthetic texts (the floor)."""
    import re

    from projections.recall.bench import events as recall_events

    texts = [e.content for e in recall_events(n) if isinstance(e, MessageAppended)]
    text_bytes = sum(len(t.encode()) for t in texts)
    path = os.path.join(ctx.scratch("fts5"), "fts.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE m USING fts5(content)")
    gc.collect()
    t0 = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO m (content) VALUES (?)", ((t,) for t in texts))
    build_s = time.perf_counter() - t0
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    rng = random.Random(f"{SEED}:fts5")
    lat = []
    for _ in range(300):
        words = re.findall(r"[a-z]{3,}", rng.choice(texts))
        query = " OR ".join(f'"{w}"' for w in rng.sample(words, min(3, len(words)))) or '"the"'
        t = time.perf_counter()
        conn.execute("SELECT rowid FROM m WHERE m MATCH ? ORDER BY rank LIMIT 10", (query,)).fetchall()
        lat.append(time.perf_counter() - t)
    conn.close()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    lat.sort()
    return {"build_msgs_per_s": round(n / build_s), "size_ratio": round(size / text_bytes, 3),
            "p50_ms": round(lat[len(lat) // 2] * 1000, 2), "p95_ms": round(lat[int(0.95 * (len(lat) - 1))] * 1000, 2)}


# --------------------------------------------------------------------------- web (tools/bench_web.py)


def script_result(ctx: Context, script: str, name: str, args: list[str]) -> Result | None:
    """Run ``tools/SCRIPT --json ARGS`` (a subprocess) and turn its JSON line named ``name`` into a Result.

    Those scripts print the fields of ``Result`` (plus ``ratio``/``pass``, recomputed here).
    None (skipped) when the script does not exist.
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    if not os.path.exists(path):
        progress(f"{name}: skipped: tools/{script} does not exist")
        return None
    argv = [sys.executable, path, "--json", *args] + (["--quick"] if ctx.quick else [])
    progress(f"{name}: tools/{script} {' '.join(a for a in args if '://' not in a)}" + (" --quick" if ctx.quick else ""))
    proc = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True)  # its progress goes to our stderr
    for line in proc.stdout.splitlines():
        fields = json.loads(line)
        if fields.get("name") == name:
            fields["details"] = {**fields.get("details", {}), "via": f"tools/{script}"}
            return Result(**{k: v for k, v in fields.items() if k in Result.__dataclass_fields__})
    raise RuntimeError(f"tools/{script} printed no result named {name}")


def bench_web_result(ctx: Context, name: str, prefix: str) -> Result | None:
    """``tools/bench_web.py --only PREFIX --dsn ...``, when a database is given."""
    dsn = os.environ.get("EVLOG_BENCH_MYSQL_URL") or os.environ.get("EVLOG_TEST_MYSQL_URL")
    if not dsn:
        progress(f"{name}: skipped: set EVLOG_BENCH_MYSQL_URL to a MySQL/MariaDB database to write to")
        return None
    return script_result(ctx, "bench_web.py", name, ["--only", prefix, "--dsn", dsn])


@benchmark("web_sessions_page_5k", "GET /sessions over 5,000 sessions, server time p50 (tools/bench_web.py)")
def bench_web_sessions(ctx: Context) -> Result:
    return bench_web_result(ctx, "web_sessions_page_5k", "web_sessions_page")  # type: ignore[return-value]


@benchmark("web_transcript_2k", "GET /s/<key>?per=2000, server time p50 (tools/bench_web.py)")
def bench_web_transcript(ctx: Context) -> Result:
    return bench_web_result(ctx, "web_transcript_2k", "web_transcript")  # type: ignore[return-value]


@benchmark("gateway_page_loads_50", "50 clients loading pages from 'evlog web --gateway' (tools/bench_web.py)")
def bench_gateway_page_loads(ctx: Context) -> Result:
    return bench_web_result(ctx, "gateway_page_loads_50", "gateway_page_loads")  # type: ignore[return-value]


@benchmark("http_push_100k", "'evlog sync push --gateway' of 100k messages over HTTP (tools/bench_web.py)")
def bench_http_push(ctx: Context) -> Result:
    return bench_web_result(ctx, "http_push_100k", "http_push")  # type: ignore[return-value]


# --------------------------------------------------------------------------- agents (tools/bench_agents.py)


def bench_agents_result(ctx: Context, name: str) -> Result | None:
    return script_result(ctx, "bench_agents.py", name, ["--only", name, "--tmpdir", ctx.root])


@benchmark("hook_session_start_100k", "'evlog hook claude-code' SessionStart on 100k messages vs 'evlog --help' (tools/bench_agents.py)")
def bench_hook_session_start(ctx: Context) -> Result:
    return bench_agents_result(ctx, "hook_session_start_100k")  # type: ignore[return-value]


@benchmark("hook_stop_20mb", "'evlog hook claude-code' Stop after a 20 MB transcript grew vs 'evlog --help' (tools/bench_agents.py)")
def bench_hook_stop(ctx: Context) -> Result:
    return bench_agents_result(ctx, "hook_stop_20mb")  # type: ignore[return-value]


@benchmark("mcp_recall_1m", "MCP tool 'recall' round trip over 1M messages vs in-process search (tools/bench_agents.py)")
def bench_mcp_recall(ctx: Context) -> Result:
    return bench_agents_result(ctx, "mcp_recall_1m")  # type: ignore[return-value]


# --------------------------------------------------------------------------- output


def human(value: float, units: str) -> str:
    if units == "events/s":
        return f"{value / 1000:,.1f}k ev/s"
    if units.endswith("/s") and value >= 10_000:
        return f"{value / 1000:,.1f}k {units}"
    if units in ("ms", "s") and value < 10:
        return f"{value:,.3f} {units}"
    return f"{value:,.1f} {units}"


def render_table(results: list[Result]) -> str:
    rows = [("benchmark", "ours", "baseline", "ratio", "target", "pass", "n")]
    for r in results:
        verdict = "FAIL" if "error" in r.details else {True: "PASS", False: "MISS", None: "info"}[r.passed]
        rows.append((r.name, human(r.ours, r.units), human(r.baseline, r.units), f"{r.ratio:.2f}x",
                     r.target_text, verdict, f"{r.n:,}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append("")
    for r in results:
        lines.append(f"{r.name}: baseline = {r.baseline_name}")
        lines.append("    " + ", ".join(f"{k}={v}" for k, v in r.details.items()))
    for r in results:
        for title, table in r.tables.items():
            lines += ["", f"{r.name}: {title}", render_rows(table)]
    return "\n".join(lines)


def render_rows(rows: list[dict[str, Any]]) -> str:
    """A list of dicts (same keys) as an aligned text table; numbers right-aligned."""
    if not rows:
        return "    (no rows)"
    keys = list(rows[0])

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{v:,}"
        return "-" if v is None else str(v)

    cells = [keys] + [[cell(row.get(k)) for k in keys] for row in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    numeric = [all(isinstance(row.get(k), (int, float)) or row.get(k) is None for row in rows) for k in keys]
    out = []
    for j, c in enumerate(cells):
        out.append("    " + "  ".join(x.rjust(w) if numeric[i] else x.ljust(w) for i, (x, w) in enumerate(zip(c, widths, strict=True))))
        if j == 0:
            out.append("    " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="one JSON object per benchmark and line")
    p.add_argument("--only", action="append", metavar="NAME", choices=list(BENCHMARKS),
                   help="run only this benchmark (repeatable): " + ", ".join(BENCHMARKS))
    p.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run (~5 min)")
    p.add_argument("--slow", action="store_true",
                   help="the growth benchmarks (append_file_1m, cli_growth) add a 10M size (hours, ~15 GB of scratch)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="interleaved rounds per benchmark, best kept (3)")
    p.add_argument("--tmpdir", metavar="DIR", help="where the scratch directory goes (default: the system temp dir)")
    p.add_argument("--check", action="store_true", help="exit 1 when any target is missed")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


LIBRARY_PACKAGES = ("eventlog", "projections", "processors")


def library_state() -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every library source file: to notice the code changing under a run."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = {}
    for pkg in LIBRARY_PACKAGES:
        for d, _dirs, files in os.walk(os.path.join(repo, pkg)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    out[os.path.relpath(path, repo)] = (st.st_mtime_ns, st.st_size)
    return out


def changed_files(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for b in BENCHMARKS.values():
            print(f"{b.name:22} {b.description}")
        return 0
    selected = [BENCHMARKS[name] for name in BENCHMARKS if not args.only or name in args.only]
    results: list[Result] = []
    failed: list[str] = []
    t0 = time.perf_counter()
    progress(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, python {sys.version.split()[0]}, "
             f"sqlite {sqlite3.sqlite_version}")
    with tempfile.TemporaryDirectory(prefix="evlog-bench-", dir=args.tmpdir) as root:
        ctx = Context(root, quick=args.quick, slow=args.slow, repeats=args.repeat)
        at_start = library_state()  # this process runs the code it imported now; subprocesses run what is on disk then
        for b in selected:
            started, load = time.perf_counter(), os.getloadavg()[0]
            before = library_state()
            try:
                result = b.run(ctx)
            except Exception as e:  # noqa: BLE001 - one broken benchmark must not cost the others' figures
                progress(f"{b.name}: FAILED after {time.perf_counter() - started:.1f} s:\n{traceback.format_exc()}")
                failed.append(b.name)
                result = Result(b.name, math.nan, math.nan, "", 0, "-", target=0.0,
                                details={"error": f"{type(e).__name__}: {str(e)[:300]}"})
            if result is None:  # skipped (its reason went to stderr)
                continue
            result.details["loadavg_1m_at_start"] = round(load, 2)  # a busy machine skews figures
            during, since = changed_files(before, library_state()), changed_files(at_start, before)
            if during or since:  # figures then mix library versions (in-process vs subprocess, round vs round)
                result.details["library_changed"] = (during or since)[:8]
                progress(f"{b.name}: WARNING: library files changed {'during this benchmark' if during else 'since the run started'}"
                         f": {', '.join((during or since)[:8])}")
            progress(f"{b.name}: done in {time.perf_counter() - started:.1f} s")
            results.append(result)
            if args.json:
                print(json.dumps(result.to_json()), flush=True)
    progress(f"all done in {time.perf_counter() - t0:.1f} s" + (" (--quick)" if args.quick else "")
             + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    if not args.json:
        print(render_table(results))
    if failed:
        return 2
    return 1 if args.check and any(r.passed is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
