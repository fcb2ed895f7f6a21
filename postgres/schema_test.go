package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// Migrate makes the schema once; again it does nothing.
func TestMigrateIsIdempotent(t *testing.T) {
	url := pgtest.DB(t)
	rep, err := postgres.Migrate(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != 0 || rep.To != postgres.SchemaVersion() || len(rep.Applied) != int(postgres.SchemaVersion()) {
		t.Fatalf("first: %+v", rep)
	}
	rep, err = postgres.Migrate(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != rep.To || len(rep.Applied) != 0 {
		t.Fatalf("second: %+v", rep)
	}
}

// A database without the schema is refused by Open, saying to run `triage init`; one a newer
// triage migrated is refused by Open and by Migrate, which changes nothing.
func TestSchemaVersionIsChecked(t *testing.T) {
	url := pgtest.DB(t)
	_, err := postgres.Open(t.Context(), url, postgres.Options{})
	if !errors.Is(err, postgres.ErrSchemaOlder) || !strings.Contains(err.Error(), "triage init") {
		t.Fatalf("empty database: %v", err)
	}
	if _, err := postgres.Migrate(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	newer := postgres.SchemaVersion() + 1
	if _, err := conn.Exec(t.Context(), "INSERT INTO triage_schema_version (version_id, is_applied) VALUES ($1, true)", newer); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Options{})
	if !errors.Is(err, postgres.ErrSchemaNewer) || !strings.Contains(err.Error(), "Upgrade triage") {
		t.Fatalf("open a newer database: %v", err)
	}
	rep, err := postgres.Migrate(t.Context(), url)
	if !errors.Is(err, postgres.ErrSchemaNewer) || rep.To != newer || len(rep.Applied) != 0 {
		t.Fatalf("migrate a newer database: %+v %v", rep, err)
	}
}

// The password is never printed: not by Redact, not in a connection error, not by the store.
func TestPasswordNeverPrinted(t *testing.T) {
	for _, in := range []string{
		"postgres://alice:s3cret@db.example.com:5432/triage?sslmode=require",
		"postgresql://alice:s3cret@db.example.com/triage",
		"postgres://alice@db.example.com/triage?password=s3cret&sslmode=verify-full",
		"host=db.example.com user=alice password=s3cret dbname=triage",
		"host=db.example.com password = 's3 cret' dbname=triage",
		"postgres://alice:s3cret@db.example.com:notaport/%zz",
	} {
		if out := postgres.Redact(in); strings.Contains(out, "s3cret") || strings.Contains(out, "s3 cret") {
			t.Errorf("Redact(%q) = %q", in, out)
		}
	}
	if got := postgres.Redact("postgres://alice:s3cret@h/db?sslmode=require"); got != "postgres://alice:xxxxx@h/db?sslmode=require" {
		t.Errorf("redacted: %q", got)
	}
	// A server that isn't there: the error names the URL, redacted.
	_, err := postgres.Open(t.Context(), "postgres://alice:s3cret@/nodb?host="+t.TempDir(), postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "xxxxx") {
		t.Fatalf("error: %v", err)
	}
	_, err = postgres.Open(t.Context(), "postgres://alice:s3cret@h:notaport/db", postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("parse error: %v", err)
	}
	// A store prints its URL redacted.
	url := pgtest.DB(t)
	if _, err := postgres.Migrate(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(t.Context(), strings.Replace(url, "triage@", "triage:s3cret@", 1), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s := st.String() + st.SpreadsheetID(); strings.Contains(s, "s3cret") {
		t.Fatalf("store prints %q", s)
	}
}
