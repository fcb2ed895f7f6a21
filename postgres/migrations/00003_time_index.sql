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
    y int;
    mo int;
    d int;
    off interval := make_interval(mins => 0);
BEGIN
    m := regexp_match(btrim(t), '^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2}(?:\.\d{1,9})?)(Z|z|[+-]\d{2}:\d{2})$');
    IF m IS NULL THEN
        RETURN NULL;
    END IF;
    y := m[1]::int;
    mo := m[2]::int;
    d := m[3]::int;
    -- A date or time that doesn't exist (2026-02-30, 24:00, :60) is no time. Checked, not
    -- caught: an EXCEPTION block is a subtransaction per row, which a parallel index build
    -- can't start, and which makes every insert slow.
    IF y < 1 OR mo < 1 OR mo > 12 OR d < 1 OR m[4]::int > 23 OR m[5]::int > 59 OR m[6]::numeric >= 60
        OR d > extract(day FROM make_date(y, mo, 1) + interval '1 month' - interval '1 day') THEN
        RETURN NULL;
    END IF;
    IF m[7] NOT IN ('Z', 'z') THEN
        off := make_interval(mins => (substr(m[7], 1, 1) || '1')::int * (substr(m[7], 2, 2)::int * 60 + substr(m[7], 5, 2)::int));
    END IF;
    RETURN make_timestamp(y, mo, d, m[4]::int, m[5]::int, m[6]::double precision) - off;
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
