package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// versionTable is goose's record of the applied migrations.
const versionTable = "triage_schema_version"

// SchemaVersion is the newest schema this binary knows: its last migration's number (the
// NNNNN of migrations/NNNNN_name.sql, as goose numbers them).
func SchemaVersion() int64 { return schemaVersion() }

var schemaVersion = sync.OnceValue(func() int64 {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic(err) // embedded: a test catches a build without them
	}
	var v int64
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64)
		if err != nil {
			panic(fmt.Sprintf("migration %s: its name must start with its number", e.Name()))
		}
		v = max(v, n)
	}
	return v
})

func provider(db *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	opts = append(opts, goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true))
	if db != nil {
		// Two `triage init` at once: the second waits for the first, then finds nothing to do.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(goose.DialectPostgres, db, sub, opts...)
}

// MigrateReport says what Migrate did.
type MigrateReport struct {
	// From and To are the schema versions before and after (equal: nothing to do).
	From, To int64
	// Applied names the migrations applied, in order.
	Applied []string
}

// Migrate brings the database at url to this binary's schema (SchemaVersion): the tables,
// their indexes and the change trigger. It is what `triage init` runs, and it is idempotent. A
// database whose schema is newer than the binary is refused (ErrSchemaNewer), with nothing
// changed.
func Migrate(ctx context.Context, url string) (MigrateReport, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return MigrateReport{}, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return MigrateReport{}, fmt.Errorf("connect to %s: %w", Redact(url), err)
	}
	defer pool.Close()
	from, err := dbVersion(ctx, pool)
	if err != nil {
		return MigrateReport{}, fmt.Errorf("read the schema version of %s: %w", Redact(url), err)
	}
	if err := checkNotNewer(from); err != nil {
		return MigrateReport{From: from, To: from}, err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return MigrateReport{}, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	rep := MigrateReport{From: from, To: from}
	for _, r := range res {
		if r.Error == nil {
			rep.Applied = append(rep.Applied, r.Source.Path)
			rep.To = r.Source.Version
		}
	}
	if err != nil {
		return rep, fmt.Errorf("migrate %s from schema %d to %d: %w (fix what it says, then run `triage init` again: applied migrations are kept)", Redact(url), from, SchemaVersion(), err)
	}
	return rep, nil
}

// ErrSchemaNewer is a database whose schema a newer triage made.
var ErrSchemaNewer = errors.New("the database's schema is newer than this triage")

// ErrSchemaOlder is a database without this binary's schema (`triage init` not run since an
// upgrade, or never).
var ErrSchemaOlder = errors.New("the database's schema is older than this triage")

func checkNotNewer(v int64) error {
	if max := SchemaVersion(); v > max {
		return fmt.Errorf("%w: it is at version %d, this binary knows versions up to %d; nothing was changed. Upgrade triage (every triage that uses this database must be at least as new), never downgrade a database", ErrSchemaNewer, v, max)
	}
	return nil
}

// checkCurrent says whether the schema at v is the binary's.
func checkCurrent(v int64) error {
	if err := checkNotNewer(v); err != nil {
		return err
	}
	if v < SchemaVersion() {
		if v == 0 {
			return fmt.Errorf("%w: it has no triage tables yet: run `triage init` to create them", ErrSchemaOlder)
		}
		return fmt.Errorf("%w: it is at version %d, this binary needs %d: run `triage init` to migrate it", ErrSchemaOlder, v, SchemaVersion())
	}
	return nil
}

// querier is a pool, a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// dbVersion reads the applied schema version without writing anything (goose's own reader
// creates its table): 0 where there is none. One statement, so opening a store costs one
// round trip for it: the table is read through query_to_xml only when it exists, as a
// statement naming a table that doesn't would fail.
func dbVersion(ctx context.Context, q querier) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `SELECT CASE WHEN to_regclass($1) IS NULL THEN 0 ELSE
  (xpath('/row/v/text()', query_to_xml('SELECT coalesce(max(version_id), 0) AS v FROM '||$1||' WHERE is_applied', false, true, '')))[1]::text::bigint END`,
		versionTable).Scan(&v)
	return v, err
}
