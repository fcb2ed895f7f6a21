-- Replay leases (model.Leases): a row of failed_calls is sent by one run at a time. A run
-- inserts a lease per row it is about to send, by the row's effective key (a key cell may
-- still be empty when the lease is taken), and deletes them when it ends. A lease another run
-- may take over is one whose until has passed, or whose run's session advisory lock (lock)
-- is free: the run's connection is gone, so the run is.

-- +goose Up
CREATE TABLE replay_leases (
    key text PRIMARY KEY,
    run text NOT NULL,
    lock bigint NOT NULL,
    holder text NOT NULL,
    since timestamptz NOT NULL,
    until timestamptz NOT NULL
);
CREATE INDEX replay_leases_run ON replay_leases (run);

-- +goose Down
DROP TABLE replay_leases;
