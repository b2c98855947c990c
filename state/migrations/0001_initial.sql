-- opsbot's store on PostgreSQL, schema 1. Applied by opsbot itself (see src/postgres/migrate.rs)
-- in the schema named by [store.postgres] schema; never edit an applied migration: add one.
--
-- Records are the same versioned JSON envelopes the sled store keeps ({"v":1,"data":...}), so
-- one decoder checks both; columns beside them are what listings sort and filter on.

-- Counters: dense run ids (r-1, r-2...), audit sequence numbers, standing approval ids. Not
-- sequences: a sequence skips the numbers of rolled-back transactions, and run ids have no gaps.
CREATE TABLE counters (
    name text PRIMARY KEY,
    next bigint NOT NULL CHECK (next >= 1)
);
INSERT INTO counters (name, next) VALUES ('run', 1), ('audit', 1), ('standing', 1);

-- The maintenance notice.
CREATE TABLE meta (
    key text PRIMARY KEY,
    value jsonb NOT NULL
);

-- A run: its record, rewritten by every transition (rev counts them, for compare-and-swap),
-- and its plan, written once (a booked run's again, once, at its time). finished_at is where a
-- finished run is filed (its finish time), NULL while it is unfinished.
CREATE TABLE runs (
    id bigint PRIMARY KEY,
    rev bigint NOT NULL,
    record jsonb NOT NULL,
    plan jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX runs_unfinished ON runs (id) WHERE finished_at IS NULL;
CREATE INDEX runs_finished ON runs (finished_at, id) WHERE finished_at IS NOT NULL;

-- One row per lock key (a cluster, a cloud, a host), naming the unfinished run that holds it.
CREATE TABLE locks (
    key text PRIMARY KEY,
    run bigint NOT NULL
);

-- The audit log: append-only.
CREATE TABLE audit (
    seq bigint PRIMARY KEY,
    at timestamptz NOT NULL,
    run bigint,
    event jsonb NOT NULL
);
CREATE INDEX audit_by_time ON audit (at, seq);
CREATE INDEX audit_by_run ON audit (run, at, seq) WHERE run IS NOT NULL;

-- Run logs: the lines of each run in order, and how many lines and bytes each run's log has.
CREATE TABLE run_logs (
    run bigint NOT NULL,
    line bigint NOT NULL,
    text text NOT NULL,
    PRIMARY KEY (run, line)
);
CREATE TABLE run_log_sizes (
    run bigint PRIMARY KEY,
    lines bigint NOT NULL,
    bytes bigint NOT NULL
);

-- Chat deliveries already handled, forgotten after a day.
CREATE TABLE deliveries (
    id text PRIMARY KEY,
    at timestamptz NOT NULL
);
CREATE INDEX deliveries_at ON deliveries (at);

-- Schedules: the last fire of each, pauses, standing approvals.
CREATE TABLE fires (
    schedule text PRIMARY KEY,
    record jsonb NOT NULL
);
CREATE TABLE pauses (
    schedule text PRIMARY KEY,
    pause jsonb NOT NULL
);
CREATE TABLE standing (
    id bigint PRIMARY KEY,
    rev bigint NOT NULL,
    record jsonb NOT NULL
);

-- The lease of high availability: the active instance, and the epoch that fences its writes.
CREATE TABLE lease (
    name text PRIMARY KEY,
    holder text NOT NULL,
    epoch bigint NOT NULL,
    expires_at timestamptz NOT NULL
);
