package cli

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// migratedDB is a fresh database of the package's private server with triage's schema, and a
// connection to it that acts as another person would (closed when the test ends). Rows given
// as SQL statements are inserted first.
func migratedDB(t *testing.T, seed ...string) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.DB(t)
	if _, err := postgres.Migrate(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, sql := range seed {
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return url, conn
}

// openDB opens the postgres store on url with opts, closed when the test ends.
func openDB(t *testing.T, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}
