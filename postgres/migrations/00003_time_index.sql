-- History by time runs on an index: a row's time (a dead letter's or a message's timestamp, a
-- job's claimedAt) as UTC, read from RFC 3339 text ("2026-01-02T10:00:00Z", an offset, or
-- fractions of a second), NULL for any other text. It is immutable (the text carries its own
-- offset; the session's time zone plays no part), so it can be indexed.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION triage_utc(t text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    m text[];
    off interval;
BEGIN
    m := regexp_match(btrim(t), '^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2}(?:\.\d{1,9})?)(Z|z|[+-]\d{2}:\d{2})$');
    IF m IS NULL THEN
        RETURN NULL;
    END IF;
    off := make_interval(mins => 0);
    IF m[7] NOT IN ('Z', 'z') THEN
        off := make_interval(mins => (substr(m[7], 1, 1) || '1')::int * (substr(m[7], 2, 2)::int * 60 + substr(m[7], 5, 2)::int));
    END IF;
    RETURN make_timestamp(m[1]::int, m[2]::int, m[3]::int, m[4]::int, m[5]::int, m[6]::double precision) - off;
EXCEPTION WHEN others THEN
    -- A date that doesn't exist (2026-02-30): no time.
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE INDEX inbox_time ON inbox (triage_utc("timestamp"));
CREATE INDEX failed_calls_time ON failed_calls (triage_utc("timestamp"));
CREATE INDEX jobs_time ON jobs (triage_utc(claimedat));

-- +goose Down
DROP INDEX jobs_time;
DROP INDEX failed_calls_time;
DROP INDEX inbox_time;
DROP FUNCTION triage_utc(text);
