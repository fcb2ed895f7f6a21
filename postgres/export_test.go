package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SetBeforeWrite installs f to run between each edit's read and its conditional write.
func (s *Store) SetBeforeWrite(f func()) { s.beforeWrite = f }

// OpenDialing is Open whose connections are made by dial (a test's faulty network).
func OpenDialing(ctx context.Context, url string, opts Options, dial pgconn.DialFunc) (*Store, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.DialFunc = dial
	return open(ctx, url, cfg, opts)
}

// OpenTraced is Open whose connections report every statement to tracer.
func OpenTraced(ctx context.Context, url string, opts Options, tracer pgx.QueryTracer) (*Store, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = tracer
	return open(ctx, url, cfg, opts)
}
