-- triage_utc without its EXCEPTION block (migration 3 now makes it so; this brings a database
-- that applied the earlier body up to it): the same answer for every text, without a
-- subtransaction per row, so the time index builds in parallel on a populated table and an
-- insert doesn't pay for it. triage_cell_time keeps its EXCEPTION blocks (it indexes nothing:
-- requeue-stale's one statement calls it) and says so: PARALLEL UNSAFE, so no parallel plan
-- tries to start a subtransaction in a worker.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION triage_utc(t text) RETURNS timestamp
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
ALTER FUNCTION triage_cell_time(text) PARALLEL UNSAFE;

-- +goose Down
-- triage_utc keeps its new body: it answers as the old one did.
ALTER FUNCTION triage_cell_time(text) PARALLEL SAFE;
