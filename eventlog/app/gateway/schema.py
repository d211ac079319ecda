"""The gateway schema, applied by numbered migrations recorded in ``_evlog_migrations``.

``MIGRATIONS`` is the registry: ``@migration`` (its ``append``) adds a function named
``mNNN_what_it_does(cursor)``; ``migrate`` runs, in order, every one whose name the
``_evlog_migrations`` table does not list yet, records its name, and holds a server lock
(``GET_LOCK``) meanwhile so two processes never migrate at once. A migration never changes
once released: a schema change is a new migration. DDL commits on its own in MySQL, so
each step is written to be safe to run again after a crash halfway (``IF NOT EXISTS``,
drop-then-create for triggers).

The tables (utf8mb4 throughout, long text in LONGTEXT, JSON validated by the server):

* ``gateway_users``: ``id``, ``email`` (unique, lower-cased by the store), ``password_hash``
  (scrypt, see ``eventlog.app.gateway.users``), ``created_at``, and ``change_seq``, the user's
  change counter.
* ``gateway_sessions``: one row per (``user_id``, ``session_key``). ``key_hash`` is
  SHA-256 of the key (set by a trigger from ``session_key``, which is stored verbatim at any
  length); the primary key (``user_id``, ``key_hash``) is therefore the unique
  (user, session key). The row is a last-write-wins register: ``title``, ``preview`` (+
  ``preview_set``: set explicitly, else derived from the newest message), ``metadata``,
  ``project``, ``created_at`` and ``deleted_at`` (a tombstone: NULL while the session
  lives), versioned by (``updated_at``, ``origin``, ``rev``). ``cleared_*`` is the version
  of the newest delete ever applied: no message older than it may exist. ``active_at`` is
  the newest activity (listing order).
* ``gateway_session_messages``: unique key (``user_id``, ``key_hash``, ``id_hash``), where
  ``id_hash`` is SHA-256 of ``message_id`` (verbatim, any length; set by a trigger), so
  (user, session key, message id) is unique and is what upserts match on. The PRIMARY KEY
  (the clustered order InnoDB stores rows in) is (``user_id``, ``key_hash``, ``pos``):
  arrival order, so new messages are appended rather than scattered by their hashes (30%
  more rows/s measured) and a session's history is one range of the primary key. Foreign
  key to its session ON DELETE CASCADE, ``pos`` (arrival order), ``role``,
  ``content``, ``timestamp`` (the source's, verbatim), ``tool_calls``, ``extra``, and the
  same (``updated_at``, ``origin``, ``rev``) version.

* ``gateway_tokens`` (m005): SHA-256 of each web login session and device sync token, its
  user, kind (``web``/``sync``), label, creation, expiry and last use (``auth``).
* ``gateway_login_failures`` (m006): failed logins by e-mail hash and client address, the
  rate limit until m007 replaced it (it counted after the password check, so concurrent
  guesses all passed, and it limited an e-mail from everywhere, so a guesser locked its
  owner out). Nothing writes it since m007; it stays so that a gateway process of an
  older version, still running during an upgrade, keeps working.
* ``gateway_login_attempts`` (m007): one row per rate-limit bucket (a SHA-256 naming a
  client address, or a client address and an e-mail), its attempt count ``n`` and the start
  of its window: the shared, atomic login limit of every gateway process (``login_limit``).
* ``gateway_erasures`` (m008): each ``evlog erase`` a device made at the gateway, as hashed
  names of what it removed, for every other device to apply (``eventlog.app.gateway.erasure``).
* ``gateway_events``, ``gateway_event_position``, ``gateway_event_shares`` (m009): the
  replicated event log (``eventlog.app.gateway.event_store``): one row per envelope, unique by
  (``user_id``, ``origin``, ``origin_seq``), each with a ``position`` taken from the one
  counter row inside the pushing transaction (so positions commit in order); the body is the
  origin's bytes (LONGBLOB). Shares show one project's events (``project_hash``: SHA-256 of
  ``project``) of an owner to a member.
* ``gateway_event_devices`` (m010): each origin (device) of the event log and the account that
  owns it (the first to push it), by which the gateway decides an envelope's author; and
  ``gateway_event_relays`` (m010): the accounts that hold copies of another account's device's
  events, which the owner's erasure empties too (an erased envelope keeps its row, with an
  empty body).
* ``gateway_view_cursor``, ``gateway_view_sessions``, ``gateway_view_messages``,
  ``gateway_view_facts`` (m011): the web view's read models, a projection of each account's
  events (``eventlog.app.gateway.read_model``): the position folded up to with the
  projections' state, and the session, message-line and fact rows the pages read.
* ``gateway_row_migration`` (m012): each session row ``evlog gateway migrate`` turned into
  events, its origin seq and the highest message ``pos`` migrated (``row_migration``).

Every row carries ``change_seq``: the value of its user's counter when it last changed.
Triggers keep it for writers that do not set it (a web client's hand-written SQL), and
also version a hand-written change that did not set ``updated_at`` (origin ``sql``), turn
a hand-written ``deleted_at`` into a proper tombstone, and delete a session's messages
older than a new ``cleared`` version. evlog's own writers take a counter value per
transaction (``rows.next_change_seq``) and set it themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventlog.app.gateway.connection import Connection
from eventlog.errors import BackendError

Migration = Callable[[Any], None]
MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append  # the decorator: registers a migration in definition order

EPOCH = "1970-01-01 00:00:00.000"
TABLE_OPTIONS = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
LOCK_NAME = "evlog_gateway_migrations"


@migration
def m001_create_gateway_users(cur: Any) -> None:
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_users (
          id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          email VARCHAR(255) NOT NULL,
          password_hash VARCHAR(255) NOT NULL DEFAULT '',
          created_at DATETIME(3) NOT NULL,
          change_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
          PRIMARY KEY (id),
          UNIQUE KEY uq_gateway_users_email (email)
        ) {TABLE_OPTIONS}""")


@migration
def m002_create_gateway_sessions(cur: Any) -> None:
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_sessions (
          user_id BIGINT UNSIGNED NOT NULL,
          key_hash BINARY(32) NOT NULL DEFAULT '',
          session_key TEXT NOT NULL,
          title TEXT NOT NULL DEFAULT '',
          preview TEXT NOT NULL DEFAULT '',
          preview_set TINYINT(1) NOT NULL DEFAULT 0,
          metadata JSON NOT NULL DEFAULT '{{}}',
          project TEXT NOT NULL DEFAULT '',
          created_at DATETIME(3) NULL,
          deleted_at DATETIME(3) NULL,
          updated_at DATETIME(3) NOT NULL DEFAULT '{EPOCH}',
          origin VARCHAR(64) NOT NULL DEFAULT '',
          rev VARCHAR(64) NOT NULL DEFAULT '',
          cleared_at DATETIME(3) NOT NULL DEFAULT '{EPOCH}',
          cleared_origin VARCHAR(64) NOT NULL DEFAULT '',
          cleared_rev VARCHAR(64) NOT NULL DEFAULT '',
          active_at DATETIME(3) NOT NULL DEFAULT '{EPOCH}',
          change_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
          PRIMARY KEY (user_id, key_hash),
          KEY ix_gateway_sessions_list (user_id, active_at),
          KEY ix_gateway_sessions_changes (user_id, change_seq),
          CONSTRAINT fk_gateway_sessions_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


@migration
def m003_create_gateway_session_messages(cur: Any) -> None:
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_session_messages (
          user_id BIGINT UNSIGNED NOT NULL,
          key_hash BINARY(32) NOT NULL DEFAULT '',
          id_hash BINARY(32) NOT NULL DEFAULT '',
          session_key TEXT NOT NULL,
          message_id TEXT NOT NULL,
          pos BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          role TEXT NOT NULL,
          content LONGTEXT NOT NULL,
          timestamp TEXT NOT NULL DEFAULT '',
          tool_calls JSON NULL,
          extra JSON NOT NULL DEFAULT '{{}}',
          updated_at DATETIME(3) NOT NULL DEFAULT '{EPOCH}',
          origin VARCHAR(64) NOT NULL DEFAULT '',
          rev VARCHAR(64) NOT NULL DEFAULT '',
          change_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
          PRIMARY KEY (user_id, key_hash, pos),
          UNIQUE KEY uq_gateway_messages_id (user_id, key_hash, id_hash),
          KEY ix_gateway_messages_pos (pos),
          KEY ix_gateway_messages_changes (user_id, change_seq),
          CONSTRAINT fk_gateway_messages_session FOREIGN KEY (user_id, key_hash)
            REFERENCES gateway_sessions (user_id, key_hash) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


_BUMP = """
      UPDATE gateway_users SET change_seq = change_seq + 1 WHERE id = NEW.user_id;
      SET NEW.change_seq = (SELECT change_seq FROM gateway_users WHERE id = NEW.user_id);"""
_SESSION_CONTENT_SAME = """NEW.title <=> OLD.title AND NEW.preview_set <=> OLD.preview_set
        AND (NEW.preview <=> OLD.preview OR NEW.preview_set = 0) AND NEW.metadata <=> OLD.metadata
        AND NEW.project <=> OLD.project AND NEW.created_at <=> OLD.created_at
        AND (NEW.deleted_at IS NULL) = (OLD.deleted_at IS NULL)"""
_MESSAGE_CONTENT_SAME = """NEW.role <=> OLD.role AND NEW.content <=> OLD.content AND NEW.timestamp <=> OLD.timestamp
        AND NEW.tool_calls <=> OLD.tool_calls AND NEW.extra <=> OLD.extra"""
_VERSION_SAME = "NEW.updated_at <=> OLD.updated_at AND NEW.origin <=> OLD.origin AND NEW.rev <=> OLD.rev"
_CLEARED_SAME = ("NEW.cleared_at <=> OLD.cleared_at AND NEW.cleared_origin <=> OLD.cleared_origin "
                 "AND NEW.cleared_rev <=> OLD.cleared_rev")
_PLUS_1MS = "INTERVAL 1000 MICROSECOND"

TRIGGERS = {
    "gateway_sessions_before_insert": f"""
    BEFORE INSERT ON gateway_sessions FOR EACH ROW BEGIN
      SET NEW.key_hash = UNHEX(SHA2(NEW.session_key, 256));
      IF NEW.change_seq = 0 THEN
        IF NEW.updated_at = '{EPOCH}' AND NEW.origin = '' THEN
          SET NEW.updated_at = UTC_TIMESTAMP(3), NEW.origin = 'sql';
        END IF;
        IF NEW.created_at IS NULL THEN SET NEW.created_at = NEW.updated_at; END IF;
        IF NEW.active_at < NEW.updated_at THEN SET NEW.active_at = NEW.updated_at; END IF;
        {_BUMP}
      END IF;
    END""",
    "gateway_sessions_before_update": f"""
    BEFORE UPDATE ON gateway_sessions FOR EACH ROW BEGIN
      SET NEW.key_hash = UNHEX(SHA2(NEW.session_key, 256));
      IF NEW.change_seq = OLD.change_seq THEN
        IF {_VERSION_SAME} AND NOT ({_SESSION_CONTENT_SAME}) THEN
          SET NEW.updated_at = GREATEST(UTC_TIMESTAMP(3), OLD.updated_at + {_PLUS_1MS},
                IFNULL((SELECT MAX(m.updated_at) FROM gateway_session_messages m
                        WHERE m.user_id = OLD.user_id AND m.key_hash = OLD.key_hash), '{EPOCH}') + {_PLUS_1MS}),
              NEW.origin = 'sql', NEW.rev = '';
          IF NEW.deleted_at IS NOT NULL THEN
            SET NEW.deleted_at = NEW.updated_at;
            IF (NEW.updated_at, NEW.origin, NEW.rev) > (NEW.cleared_at, NEW.cleared_origin, NEW.cleared_rev) THEN
              SET NEW.cleared_at = NEW.updated_at, NEW.cleared_origin = NEW.origin, NEW.cleared_rev = NEW.rev;
            END IF;
          END IF;
          IF NEW.active_at < NEW.updated_at THEN SET NEW.active_at = NEW.updated_at; END IF;
        END IF;
        IF NOT ({_VERSION_SAME} AND {_CLEARED_SAME} AND {_SESSION_CONTENT_SAME}) THEN {_BUMP}
        END IF;
      END IF;
    END""",
    "gateway_sessions_after_update": """
    AFTER UPDATE ON gateway_sessions FOR EACH ROW BEGIN
      IF (NEW.cleared_at, NEW.cleared_origin, NEW.cleared_rev) > (OLD.cleared_at, OLD.cleared_origin, OLD.cleared_rev) THEN
        DELETE FROM gateway_session_messages WHERE user_id = NEW.user_id AND key_hash = NEW.key_hash
          AND (updated_at, origin, rev) < (NEW.cleared_at, NEW.cleared_origin, NEW.cleared_rev);
      END IF;
    END""",
    "gateway_messages_before_insert": f"""
    BEFORE INSERT ON gateway_session_messages FOR EACH ROW BEGIN
      SET NEW.key_hash = UNHEX(SHA2(NEW.session_key, 256)), NEW.id_hash = UNHEX(SHA2(NEW.message_id, 256));
      IF NEW.change_seq = 0 THEN
        IF NEW.updated_at = '{EPOCH}' AND NEW.origin = '' THEN
          SET NEW.updated_at = UTC_TIMESTAMP(3), NEW.origin = 'sql';
        END IF;
        {_BUMP}
      END IF;
    END""",
    "gateway_messages_before_update": f"""
    BEFORE UPDATE ON gateway_session_messages FOR EACH ROW BEGIN
      SET NEW.key_hash = UNHEX(SHA2(NEW.session_key, 256)), NEW.id_hash = UNHEX(SHA2(NEW.message_id, 256));
      IF NEW.change_seq = OLD.change_seq THEN
        IF {_VERSION_SAME} AND NOT ({_MESSAGE_CONTENT_SAME}) THEN
          SET NEW.updated_at = GREATEST(UTC_TIMESTAMP(3), OLD.updated_at + {_PLUS_1MS}), NEW.origin = 'sql', NEW.rev = '';
        END IF;
        IF NOT ({_VERSION_SAME} AND {_MESSAGE_CONTENT_SAME}) THEN {_BUMP}
        END IF;
      END IF;
    END""",
}


@migration
def m004_create_change_triggers(cur: Any) -> None:
    for name, body in TRIGGERS.items():
        cur.execute(f"DROP TRIGGER IF EXISTS {name}")
        cur.execute(f"CREATE TRIGGER {name} {body}")


@migration
def m005_create_gateway_tokens(cur: Any) -> None:
    """Per-user secrets: web login sessions (kind ``web``) and device sync tokens (kind ``sync``).

    Only the SHA-256 of a token is stored; the token itself exists in the user's cookie or
    the device's credentials file. Deleting the user deletes them (ON DELETE CASCADE).
    """
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_tokens (
          token_hash BINARY(32) NOT NULL,
          user_id BIGINT UNSIGNED NOT NULL,
          kind VARCHAR(16) NOT NULL,
          label VARCHAR(255) NOT NULL DEFAULT '',
          created_at DATETIME(3) NOT NULL,
          expires_at DATETIME(3) NULL,
          last_used_at DATETIME(3) NULL,
          PRIMARY KEY (token_hash),
          KEY ix_gateway_tokens_user (user_id, kind),
          CONSTRAINT fk_gateway_tokens_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


@migration
def m006_create_gateway_login_failures(cur: Any) -> None:
    """Failed logins, by e-mail hash and by client address: what rate-limits logins across every server process."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_login_failures (
          id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          email_hash BINARY(32) NOT NULL,
          client VARCHAR(64) NOT NULL DEFAULT '',
          at DATETIME(3) NOT NULL,
          PRIMARY KEY (id),
          KEY ix_gateway_login_failures_email (email_hash, at),
          KEY ix_gateway_login_failures_client (client, at),
          KEY ix_gateway_login_failures_at (at)
        ) {TABLE_OPTIONS}""")


@migration
def m007_create_gateway_login_attempts(cur: Any) -> None:
    """Login attempt counts per rate-limit bucket, taken before each password check (``login_limit``)."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_login_attempts (
          bucket BINARY(32) NOT NULL,
          started_at DATETIME(3) NOT NULL,
          n INT UNSIGNED NOT NULL,
          PRIMARY KEY (bucket),
          KEY ix_gateway_login_attempts_started (started_at)
        ) {TABLE_OPTIONS}""")


@migration
def m008_create_gateway_erasures(cur: Any) -> None:
    """Erasures other devices must apply (``eventlog.app.gateway.erasure``): hashed names only, never text."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_erasures (
          id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          user_id BIGINT UNSIGNED NOT NULL,
          erasure_id VARCHAR(64) NOT NULL,
          origin VARCHAR(64) NOT NULL DEFAULT '',
          refs LONGTEXT NOT NULL,
          created_at DATETIME(3) NOT NULL,
          PRIMARY KEY (id),
          KEY ix_gateway_erasures_user (user_id, id),
          CONSTRAINT fk_gateway_erasures_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


@migration
def m009_create_gateway_events(cur: Any) -> None:
    """The replicated event log, its position counter and its project shares (``event_store``)."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_events (
          position BIGINT UNSIGNED NOT NULL,
          user_id BIGINT UNSIGNED NOT NULL,
          origin VARCHAR(191) NOT NULL,
          origin_seq BIGINT UNSIGNED NOT NULL,
          hlc BIGINT UNSIGNED NOT NULL,
          type VARCHAR(191) NOT NULL,
          project_hash BINARY(32) NOT NULL,
          project TEXT NOT NULL,
          author VARCHAR(255) NOT NULL DEFAULT '',
          body LONGBLOB NOT NULL,
          PRIMARY KEY (position),
          UNIQUE KEY uq_gateway_events_origin (user_id, origin, origin_seq),
          KEY ix_gateway_events_user (user_id, position),
          KEY ix_gateway_events_project (project_hash, user_id, position),
          CONSTRAINT fk_gateway_events_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_event_position (
          id TINYINT UNSIGNED NOT NULL,
          position BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (id)
        ) {TABLE_OPTIONS}""")
    cur.execute("INSERT IGNORE INTO gateway_event_position (id, position) VALUES (1, 0)")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_event_shares (
          owner_id BIGINT UNSIGNED NOT NULL,
          project_hash BINARY(32) NOT NULL,
          member_id BIGINT UNSIGNED NOT NULL,
          project TEXT NOT NULL,
          read_only TINYINT(1) NOT NULL DEFAULT 0,
          PRIMARY KEY (owner_id, project_hash, member_id),
          KEY ix_gateway_event_shares_member (member_id),
          CONSTRAINT fk_gateway_event_shares_owner FOREIGN KEY (owner_id) REFERENCES gateway_users (id) ON DELETE CASCADE,
          CONSTRAINT fk_gateway_event_shares_member FOREIGN KEY (member_id) REFERENCES gateway_users (id)
            ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


@migration
def m010_create_gateway_event_devices(cur: Any) -> None:
    """Each origin (device) of the event log and the account that owns it: the first to push it (``event_store``).

    Filled from the events already stored: an origin belongs to the account of its earliest position.
    And ``gateway_event_relays``: the accounts holding copies of another account's device's events
    (where an erasure by the device's owner finds them without an index of every row by origin).
    """
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_event_devices (
          origin VARCHAR(191) NOT NULL,
          user_id BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (origin),
          KEY ix_gateway_event_devices_user (user_id),
          CONSTRAINT fk_gateway_event_devices_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute("INSERT IGNORE INTO gateway_event_devices (origin, user_id) "
                "SELECT origin, user_id FROM gateway_events ORDER BY position")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_event_relays (
          origin VARCHAR(191) NOT NULL,
          user_id BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (origin, user_id),
          CONSTRAINT fk_gateway_event_relays_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute("INSERT IGNORE INTO gateway_event_relays (origin, user_id) SELECT DISTINCT e.origin, e.user_id "
                "FROM gateway_events e JOIN gateway_event_devices d ON d.origin = e.origin WHERE d.user_id <> e.user_id")


@migration
def m011_create_gateway_views(cur: Any) -> None:
    """The web view's read models, folded from ``gateway_events`` per account (``read_model``)."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_view_cursor (
          user_id BIGINT UNSIGNED NOT NULL,
          position BIGINT UNSIGNED NOT NULL,
          state LONGBLOB NOT NULL,
          PRIMARY KEY (user_id),
          CONSTRAINT fk_gateway_view_cursor_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_view_sessions (
          user_id BIGINT UNSIGNED NOT NULL,
          file_hash BINARY(32) NOT NULL,
          updated_at VARCHAR(64) NOT NULL,
          session_key TEXT NOT NULL,
          project TEXT NOT NULL,
          row_json LONGBLOB NOT NULL,
          PRIMARY KEY (user_id, file_hash),
          KEY ix_gateway_view_sessions_list (user_id, updated_at),
          CONSTRAINT fk_gateway_view_sessions_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_view_messages (
          user_id BIGINT UNSIGNED NOT NULL,
          file_hash BINARY(32) NOT NULL,
          idx INT UNSIGNED NOT NULL,
          line LONGBLOB NOT NULL,
          PRIMARY KEY (user_id, file_hash, idx),
          CONSTRAINT fk_gateway_view_messages_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_view_facts (
          user_id BIGINT UNSIGNED NOT NULL,
          fact_id VARCHAR(191) NOT NULL,
          target_hash BINARY(32) NOT NULL,
          rank INT UNSIGNED NOT NULL,
          row_json LONGBLOB NOT NULL,
          PRIMARY KEY (user_id, fact_id),
          KEY ix_gateway_view_facts_file (user_id, target_hash, rank),
          CONSTRAINT fk_gateway_view_facts_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


@migration
def m012_create_gateway_row_migration(cur: Any) -> None:
    """How far ``evlog gateway migrate`` turned each session row into events (``row_migration``)."""
    cur.execute(f"""
        CREATE TABLE IF NOT EXISTS gateway_row_migration (
          user_id BIGINT UNSIGNED NOT NULL,
          key_hash BINARY(32) NOT NULL,
          seq BIGINT UNSIGNED NOT NULL,
          max_pos BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (user_id, key_hash),
          CONSTRAINT fk_gateway_row_migration_user FOREIGN KEY (user_id) REFERENCES gateway_users (id) ON DELETE CASCADE
        ) {TABLE_OPTIONS}""")


def migrate(conn: Connection) -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now (often none)."""

    def run(cur: Any) -> list[str]:
        cur.execute("SELECT GET_LOCK(%s, 60)", (LOCK_NAME,))
        if cur.fetchone()[0] != 1:
            raise BackendError(f"gateway {conn.dsn.target}: another process has been migrating the schema for 60 s")
        try:
            cur.execute("""CREATE TABLE IF NOT EXISTS _evlog_migrations (
                             name VARCHAR(191) NOT NULL PRIMARY KEY,
                             applied_at DATETIME(3) NOT NULL
                           ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin""")
            cur.execute("SELECT name FROM _evlog_migrations")
            done = {row[0] for row in cur.fetchall()}
            applied = []
            for fn in MIGRATIONS:
                if fn.__name__ in done:
                    continue
                fn(cur)
                cur.execute("INSERT INTO _evlog_migrations (name, applied_at) VALUES (%s, UTC_TIMESTAMP(3))",
                            (fn.__name__,))
                cur.connection.commit()
                applied.append(fn.__name__)
            return applied
        finally:
            cur.execute("SELECT RELEASE_LOCK(%s)", (LOCK_NAME,))
            cur.fetchall()

    return conn.transaction(run, doing="migrating the schema", retry=False)


def applied_migrations(conn: Connection) -> list[str]:
    """Names recorded in ``_evlog_migrations``, in the order they were applied."""
    return conn.transaction(lambda cur: (cur.execute("SELECT name FROM _evlog_migrations ORDER BY applied_at, name"),
                                         [r[0] for r in cur.fetchall()])[1], doing="reading migrations")
