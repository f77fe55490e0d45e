"""hz's tables in PostgreSQL (schema ``hz``), versioned like the SQLite ledger's.

The columns are the SQLite ledger's (``hz.runtime.ledger.db``) with PostgreSQL types, plus
``seq`` (insertion order; SQLite has its ``rowid``). Times are seconds since the epoch, as in
SQLite, so the shared code reads both alike. Unlike SQLite's, ``runs.state`` has a CHECK
constraint made from the states' registry (decision 0013).
"""

from __future__ import annotations

from hz.runtime.ledger.states import check_constraint

SCHEMA = "hz"
#: The name of the CHECK constraint on ``runs.state``.
STATE_CHECK = "runs_state_check"
#: The rows of ``hz.locks``: a lock's name picks one (two names may share one, and then wait
#: for each other a moment: each lock is held for one short transaction).
LOCK_SLOTS = 1024

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE hz.runs (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        request_key text NOT NULL,
        state text NOT NULL,
        failure_kind text,
        attempt integer NOT NULL DEFAULT 1,
        retry_of text,
        batch text,
        job_name text NOT NULL,
        job_digest text NOT NULL,
        inputs_sha256 text NOT NULL,
        workdir text NOT NULL,
        receipt_dir text,
        packet_json text NOT NULL,
        max_usd double precision NOT NULL,
        runner text,
        settings_digest text,
        reserved_usd double precision NOT NULL DEFAULT 0,
        cost_usd double precision,
        generation bigint NOT NULL DEFAULT 0,
        owner text,
        owner_pid integer,
        owner_start bigint,
        owner_boot text,
        owner_host text,
        lease_until double precision,
        host text,
        host_id text,
        boot_id text,
        pid integer,
        pgid integer,
        proc_start bigint,
        private_dir text,
        cancel_requested_at double precision,
        observed_json text,
        result_json text,
        receipt_path text,
        not_before double precision NOT NULL DEFAULT 0,
        created_at double precision NOT NULL,
        dispatched_at double precision,
        ended_at double precision,
        queue text NOT NULL DEFAULT 'default',
        priority integer NOT NULL DEFAULT 0,
        job_id bigint,
        worker text,
        swept_at double precision
    );
    CREATE INDEX runs_request_key ON hz.runs (request_key, created_at);
    CREATE INDEX runs_state ON hz.runs (state, not_before);
    CREATE INDEX runs_dispatched ON hz.runs (dispatched_at);
    CREATE INDEX runs_batch ON hz.runs (batch, state);
    CREATE INDEX runs_claim ON hz.runs (state, queue, priority, not_before);
    CREATE INDEX runs_host ON hz.runs (host_id, state);
    CREATE TABLE hz.events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id text NOT NULL REFERENCES hz.runs (id),
        at double precision NOT NULL,
        state text NOT NULL,
        detail text
    );
    CREATE INDEX events_run ON hz.events (run_id, seq);
    """,
    # 2: a run a worker holds for a spend ceiling (as the SQLite ledger's migration 3).
    """
    ALTER TABLE hz.runs ADD COLUMN held_reason text;
    ALTER TABLE hz.runs ADD COLUMN held_since double precision;
    """,
    # 3: the states a row may hold, from the one registry (``hz.runtime.ledger.states``).
    # Named as PostgreSQL named the column's constraint migration 1 used to create, so a
    # ledger made before this one gets it replaced, not doubled.
    f"""
    ALTER TABLE hz.runs DROP CONSTRAINT IF EXISTS {STATE_CHECK};
    ALTER TABLE hz.runs ADD CONSTRAINT {STATE_CHECK} {check_constraint()};
    """,
    # 4: the packet, job or contract the run was made from (as the SQLite ledger's
    # migration 4).
    """
    ALTER TABLE hz.runs ADD COLUMN target text;
    """,
    # 5: the pid namespaces of the owner and of the run's processes (as SQLite's 5).
    """
    ALTER TABLE hz.runs ADD COLUMN owner_pidns text;
    ALTER TABLE hz.runs ADD COLUMN pidns text;
    """,
    # 6: hz's locks as rows of its own table (``PgDb.lock``): an advisory lock can be taken
    # by any role that may connect, and held for ever.
    f"""
    CREATE TABLE hz.locks (slot integer PRIMARY KEY);
    INSERT INTO hz.locks (slot) SELECT generate_series(0, {LOCK_SLOTS - 1});
    """,
    # 7: each scheduled job a worker fires (as SQLite's 6).
    """
    CREATE TABLE hz.schedules (
        job text PRIMARY KEY,
        paused integer NOT NULL DEFAULT 0,
        since double precision NOT NULL,
        changed_at double precision NOT NULL
    );
    """,
    # 8: each publish of a run's draft (as the SQLite ledger's migration 7).
    """
    CREATE TABLE hz.publish_steps (
        run_id text NOT NULL REFERENCES hz.runs (id),
        step integer NOT NULL,
        target text NOT NULL,
        args_json text NOT NULL,
        state text NOT NULL,
        generation bigint NOT NULL DEFAULT 0,
        attempts integer NOT NULL DEFAULT 0,
        marker text NOT NULL,
        sha256 text,
        location text,
        detail text,
        lease_until double precision,
        owner_json text,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        PRIMARY KEY (run_id, step)
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
