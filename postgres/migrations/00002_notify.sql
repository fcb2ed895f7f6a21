-- Live, not polled: every statement that changes a tab tells listeners which table changed
-- (channel triage_changes), once per statement, so a bulk write is one notice.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION triage_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('triage_changes', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER inbox_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON inbox
    FOR EACH STATEMENT EXECUTE FUNCTION triage_notify();
CREATE TRIGGER failed_calls_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON failed_calls
    FOR EACH STATEMENT EXECUTE FUNCTION triage_notify();
CREATE TRIGGER jobs_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON jobs
    FOR EACH STATEMENT EXECUTE FUNCTION triage_notify();

-- +goose Down
DROP TRIGGER jobs_notify ON jobs;
DROP TRIGGER failed_calls_notify ON failed_calls;
DROP TRIGGER inbox_notify ON inbox;
DROP FUNCTION triage_notify();
