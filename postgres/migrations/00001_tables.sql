-- The three tabs of a workbook as tables (docs/DESIGN.md §11). Every cell is text, as the
-- sheet holds it, so an edit's expected values compare exactly as they do on the sheet; the
-- ID is the primary key, a dead letter's idempotency key is unique (NULL: none yet).

-- +goose Up
CREATE TABLE inbox (
    row_no     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id         text PRIMARY KEY CHECK (btrim(id) <> '' AND id = btrim(id)),
    "timestamp" text NOT NULL DEFAULT '',
    name       text NOT NULL DEFAULT '',
    email      text NOT NULL DEFAULT '',
    message    text NOT NULL DEFAULT '',
    status     text NOT NULL DEFAULT '',
    triaged_by text NOT NULL DEFAULT '',
    triaged_at text NOT NULL DEFAULT ''
);
-- The TUI's default view: the open messages, in arrival order.
CREATE INDEX inbox_open ON inbox (row_no) WHERE lower(btrim(status)) NOT IN ('done', 'spam');
CREATE INDEX inbox_status ON inbox (lower(btrim(status)), row_no);

CREATE TABLE failed_calls (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "timestamp" text NOT NULL DEFAULT '',
    source      text NOT NULL DEFAULT '',
    url         text NOT NULL DEFAULT '',
    payload     text NOT NULL DEFAULT '',
    error       text NOT NULL DEFAULT '',
    attempts    text NOT NULL DEFAULT '',
    method      text NOT NULL DEFAULT '',
    key         text UNIQUE,
    status      text NOT NULL DEFAULT '',
    replayed_at text NOT NULL DEFAULT '',
    triaged_by  text NOT NULL DEFAULT '',
    triaged_at  text NOT NULL DEFAULT ''
);
-- The default view: calls still waiting (dead) or held (rejected), not delivered or discarded.
CREATE INDEX failed_calls_open ON failed_calls (id) WHERE lower(btrim(status)) NOT IN ('delivered', 'discarded');
CREATE INDEX failed_calls_status ON failed_calls (lower(btrim(status)), id);
-- A write finds a dead letter by its effective key: the key cell trimmed, or (no key yet) by
-- its content among the rows without one.
CREATE INDEX failed_calls_key_trim ON failed_calls (btrim(key));
CREATE INDEX failed_calls_keyless ON failed_calls (id) WHERE key IS NULL OR btrim(key) = '';

CREATE TABLE jobs (
    row_no     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id         text PRIMARY KEY CHECK (btrim(id) <> '' AND id = btrim(id)),
    type       text NOT NULL DEFAULT '',
    payload    text NOT NULL DEFAULT '',
    status     text NOT NULL DEFAULT '',
    claimedby  text NOT NULL DEFAULT '',
    claimedat  text NOT NULL DEFAULT '',
    lasterror  text NOT NULL DEFAULT '',
    updatedat  text NOT NULL DEFAULT '',
    attempts   text NOT NULL DEFAULT '',
    triaged_by text NOT NULL DEFAULT '',
    triaged_at text NOT NULL DEFAULT ''
);
CREATE INDEX jobs_open ON jobs (row_no) WHERE lower(btrim(status)) <> 'done';
-- Workers claim the oldest pending job (blank reads as pending).
CREATE INDEX jobs_pending ON jobs (row_no) WHERE lower(btrim(status)) IN ('', 'pending');
CREATE INDEX jobs_status ON jobs (lower(btrim(status)), row_no);

-- Each Apply's transaction records its token here, so a commit whose answer was lost is
-- settled by looking it up (invariant 1: never counted done without proof).
CREATE TABLE triage_writes (
    token text PRIMARY KEY,
    at    timestamptz NOT NULL DEFAULT now()
);

-- A timestamp cell as a time, NULL when it isn't one (a cell may hold anything).
-- +goose StatementBegin
CREATE FUNCTION triage_time(t text) RETURNS timestamptz
LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    RETURN t::timestamptz;
EXCEPTION WHEN others THEN
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION triage_time(text);
DROP TABLE triage_writes;
DROP TABLE jobs;
DROP TABLE failed_calls;
DROP TABLE inbox;
