package pgtest_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabasesAreSeparate: two tests' databases are two databases of one running server.
func TestDatabasesAreSeparate(t *testing.T) {
	a, b := pgtest.DB(t), pgtest.DB(t)
	if a == b {
		t.Fatalf("one URL for two databases: %s", a)
	}
	ctx := t.Context()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE only_here (x int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a table made in one test's database is in another's")
	}
	var v string
	if err := ca.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s at %s", v, a)
}
