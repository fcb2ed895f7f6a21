package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// SetBeforeWrite installs f to run between each edit's read and its conditional write.
func (s *Store) SetBeforeWrite(f func()) { s.beforeWrite = f }

// OpenDialing is Open whose connections are made by dial (a test's faulty network).
func OpenDialing(ctx context.Context, url string, opts Options, dial pgconn.DialFunc) (*Store, error) {
	return openConfigured(ctx, url, opts, func(c *pgx.ConnConfig) { c.DialFunc = dial })
}

// OpenTraced is Open whose connections report every statement to tracer.
func OpenTraced(ctx context.Context, url string, opts Options, tracer pgx.QueryTracer) (*Store, error) {
	return openConfigured(ctx, url, opts, func(c *pgx.ConnConfig) { c.Tracer = tracer })
}

// openConfigured is Open with set applied to the connection config first.
func openConfigured(ctx context.Context, url string, opts Options, set func(*pgx.ConnConfig)) (*Store, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	set(cfg.ConnConfig)
	return open(ctx, url, cfg, opts)
}

// Kill ends a store as a killed process would: every connection closed at once, the runs'
// too, releasing nothing first.
func Kill(s *Store) {
	s.runs.mu.Lock()
	for _, h := range s.runs.runs {
		_ = h.conn.Conn().Close(context.Background())
		h.conn.Release()
	}
	s.runs.runs = nil
	s.runs.mu.Unlock()
	s.Close()
}

// MigrateTo brings the database at url up to schema version v only (a database an older
// triage made).
func MigrateTo(ctx context.Context, url string, v int64) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, v)
	return err
}
