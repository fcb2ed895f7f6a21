-- A cell as model reads it, in SQL, so a statement decides exactly as model does: triage_trim
-- is strings.TrimSpace (Go's white space, not just the blank), and triage_cell_time is
-- model.ParseTime read in UTC (the zone the store decodes in): a serial number (days since
-- 1899-12-30, to the second), RFC 3339 (also as Go's parser takes it: a one-digit hour, a
-- comma before the fraction, offsets to ±24:60), the zone-less forms 2006-01-02T15:04[:05],
-- 2006-01-02 15:04[:05], 2006-01-02, 1/2/2006[ 15:04[:05]], 2 Jan 2006 15:04, Jan 2, 2006
-- 15:04, and RFC 1123 (a zone name reads as UTC, as Go reads a name it doesn't know; a numeric
-- offset is applied); NULL for anything else. Times keep microseconds (Go keeps nanoseconds).
-- requeue-stale's one statement (Store.RequeueStale) decides staleness with it, exactly as
-- model.Requeue does (postgres/requeue_test.go holds the two equal).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION triage_trim(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT btrim(t, chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32) || chr(133) || chr(160)
        || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197)
        || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233)
        || chr(8239) || chr(8287) || chr(12288))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION triage_cell_time(t text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    s text := triage_trim(t);
    m text[];
    f double precision;
    days double precision;
    y int;
    mo int;
    d int;
    h int := 0;
    mi int := 0;
    sec int := 0;
    frac text;
    off interval := interval '0';
    wall timestamp;
    months constant text[] := ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    weekdays constant text[] := ARRAY['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
BEGIN
    IF s = '' THEN
        RETURN NULL;
    END IF;
    -- A serial number, as strconv.ParseFloat reads one: decimal or hexadecimal (with a p
    -- exponent), with underscores between digits; NaN, which SerialToTime reads as day 0.
    IF lower(s COLLATE "C") = 'nan' THEN
        RETURN timestamp '1899-12-30';
    END IF;
    IF s ~ '^[+-]?([0-9](_?[0-9])*(\.([0-9](_?[0-9])*)?)?|\.[0-9](_?[0-9])*)([eE][+-]?[0-9](_?[0-9])*)?$' THEN
        BEGIN
            f := replace(s, '_', '')::double precision;
        EXCEPTION WHEN others THEN
            RETURN NULL; -- out of range: ParseFloat fails, and no layout reads it
        END;
    ELSE
        m := regexp_match(s, '^([+-]?)0[xX]((?:_?[0-9a-fA-F])*)(?:\.((?:[0-9a-fA-F](?:_?[0-9a-fA-F])*)?))?[pP]([+-]?[0-9](?:_?[0-9])*)$');
        IF m IS NOT NULL AND m[2] || coalesce(m[3], '') <> '' THEN
            DECLARE
                digits text := replace(m[2] || coalesce(m[3], ''), '_', '');
                mant numeric := 0;
            BEGIN
                FOR i IN 1..length(digits) LOOP
                    mant := mant * 16 + strpos('0123456789abcdef', lower(substr(digits, i, 1) COLLATE "C")) - 1;
                END LOOP;
                f := mant::double precision * power(2::double precision, replace(m[4], '_', '')::int - 4 * length(replace(coalesce(m[3], ''), '_', '')));
                IF m[1] = '-' THEN
                    f := -f;
                END IF;
            EXCEPTION WHEN others THEN
                RETURN NULL; -- out of range
            END;
        END IF;
    END IF;
    IF f IS NOT NULL THEN
        IF f <= 0 OR f > 2958465 THEN
            RETURN NULL;
        END IF;
        days := floor(f);
        -- math.Round: half away from zero (the value is not negative).
        RETURN timestamp '1899-12-30' + make_interval(days => days::int) + make_interval(secs => floor((f - days) * 86400 + 0.5));
    END IF;
    -- RFC 3339 (time.RFC3339Nano), and the zone-less ISO forms.
    m := regexp_match(s, '^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:(T| +)([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$');
    IF m IS NOT NULL THEN
        IF m[9] IS NOT NULL AND (m[4] <> 'T' OR m[7] IS NULL) THEN
            RETURN NULL; -- a zone only in RFC 3339, which has a T and seconds
        END IF;
        y := m[1]::int; mo := m[2]::int; d := m[3]::int;
        IF m[5] IS NOT NULL THEN
            h := m[5]::int; mi := m[6]::int; sec := coalesce(m[7], '0')::int;
        END IF;
        frac := m[8];
        IF m[9] IS NOT NULL AND m[9] <> 'Z' THEN
            IF substr(m[9], 2, 2)::int > 24 OR substr(m[9], 5, 2)::int > 60 THEN
                RETURN NULL;
            END IF;
            off := make_interval(mins => (substr(m[9], 1, 1) || '1')::int * (substr(m[9], 2, 2)::int * 60 + substr(m[9], 5, 2)::int));
        END IF;
    ELSE
        -- 1/2/2006, 1/2/2006 15:04, 1/2/2006 15:04:05 (month first).
        m := regexp_match(s, '^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})(?: +([0-9]{1,2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?$');
        IF m IS NOT NULL THEN
            mo := m[1]::int; d := m[2]::int; y := m[3]::int;
            IF m[4] IS NOT NULL THEN
                h := m[4]::int; mi := m[5]::int; sec := coalesce(m[6], '0')::int;
            END IF;
            frac := m[7];
        ELSE
            -- 2 Jan 2006 15:04, and Jan 2, 2006 15:04.
            m := regexp_match(s, '^(?:([0-9]{1,2}) +([A-Za-z]{3})|([A-Za-z]{3}) +([0-9]{1,2}),) +([0-9]{4}) +([0-9]{1,2}):([0-9]{2})$');
            IF m IS NOT NULL THEN
                mo := array_position(months, lower(coalesce(m[2], m[3]) COLLATE "C"));
                IF mo IS NULL THEN
                    RETURN NULL;
                END IF;
                d := coalesce(m[1], m[4])::int; y := m[5]::int; h := m[6]::int; mi := m[7]::int;
            ELSE
                -- RFC 1123: Mon, 02 Jan 2006 15:04:05 MST, or with -0700.
                m := regexp_match(s, '^([A-Za-z]{3}), +([0-9]{2}) +([A-Za-z]{3}) +([0-9]{4}) +([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))? +(.*)$');
                IF m IS NULL OR array_position(weekdays, lower(m[1] COLLATE "C")) IS NULL THEN
                    RETURN NULL;
                END IF;
                mo := array_position(months, lower(m[3] COLLATE "C"));
                IF mo IS NULL THEN
                    RETURN NULL;
                END IF;
                d := m[2]::int; y := m[4]::int; h := m[5]::int; mi := m[6]::int; sec := m[7]::int; frac := m[8];
                IF m[9] ~ '^[+-][0-9]{4}$' THEN
                    IF substr(m[9], 2, 2)::int > 24 OR substr(m[9], 4, 2)::int > 60 THEN
                        RETURN NULL;
                    END IF;
                    off := make_interval(mins => (substr(m[9], 1, 1) || '1')::int * (substr(m[9], 2, 2)::int * 60 + substr(m[9], 4, 2)::int));
                ELSIF NOT (m[9] COLLATE "C" ~ '^(UTC|ChST|MeST|WITA|[A-Z]{3}|[A-Z]{3}T|[A-Z]{4}T)$' AND m[9] !~ '^(UTC|GMT).')
                    AND NOT (m[9] ~ '^(GMT)?[+-][0-9]+$' AND length(ltrim(substring(m[9] FROM '[0-9]+$'), '0')) <= 2 AND substring(m[9] FROM '[0-9]+$')::int <= 23) THEN
                    RETURN NULL; -- not a zone Go's parser takes
                END IF;
            END IF;
        END IF;
    END IF;
    IF h > 23 OR mi > 59 OR sec > 59 THEN
        RETURN NULL;
    END IF;
    IF y = 0 THEN
        y := -1; -- Go's year 0 is 1 BC
    END IF;
    BEGIN
        wall := make_timestamp(y, mo, d, h, mi, sec);
    EXCEPTION WHEN others THEN
        RETURN NULL; -- no such day (2026-02-30) or month
    END;
    IF frac IS NOT NULL THEN
        wall := wall + make_interval(secs => ('0.' || substr(frac, 1, 6))::double precision);
    END IF;
    RETURN wall - off;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION triage_cell_time(text);
DROP FUNCTION triage_trim(text);
