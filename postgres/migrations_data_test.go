package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// Migrations that can't fail on data: a database an older triage made (schema 2) holding
// 200,000 dead letters and messages (TRIAGE_MIGRATION_ROWS: another number; 1,000,000 runs in
// about a minute), under the server's default settings (a parallel index
// build included), takes every later migration; the time index answers as before for every
// kind of text (no time, a date that doesn't exist, 24:00, :60, offsets, fractions).
func TestMigrationsApplyOnAPopulatedDatabase(t *testing.T) {
	url := pgtest.DB(t)
	ctx := t.Context()
	if err := postgres.MigrateTo(ctx, url, 2); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	n := 200_000
	if s := os.Getenv("TRIAGE_MIGRATION_ROWS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dead := make([][]any, n)
	inbox := make([][]any, n)
	for i := range n {
		ts := base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		if i%97 == 0 {
			ts = "2026-02-30T10:00:00Z" // no such day
		}
		dead[i] = []any{ts, "crm", "https://crm.example/in", fmt.Sprintf(`{"n":%d}`, i), "500", "1", "POST", fmt.Sprintf("k%d", i), "dead"}
		inbox[i] = []any{ts, "Name", "n@example.com", "hello", "new", fmt.Sprintf("m%d", i)}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"failed_calls"}, []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"}, pgx.CopyFromRows(dead)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"inbox"}, []string{"timestamp", "name", "email", "message", "status", "id"}, pgx.CopyFromRows(inbox)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	rep, err := postgres.Migrate(ctx, url)
	if err != nil {
		t.Fatalf("migrating a populated database: %v", err)
	}
	if rep.To != postgres.SchemaVersion() {
		t.Fatalf("at schema %d, want %d", rep.To, postgres.SchemaVersion())
	}
	for text, want := range map[string]string{
		"2026-01-02T10:00:00Z":         "2026-01-02 10:00:00",
		" 2026-01-02t10:00:00z ":       "2026-01-02 10:00:00",
		"2026-01-02T10:00:00+02:30":    "2026-01-02 07:30:00",
		"2026-01-02T10:00:00.25-01:00": "2026-01-02 11:00:00.25",
		"2024-02-29T00:00:00Z":         "2024-02-29 00:00:00",
		"2026-02-29T00:00:00Z":         "",
		"2026-02-30T10:00:00Z":         "",
		"2026-13-01T10:00:00Z":         "",
		"2026-01-02T24:00:00Z":         "",
		"2026-01-02T10:60:00Z":         "",
		"2026-01-02T10:00:60Z":         "",
		"2026-01-02 10:00":             "",
		"46000.25":                     "",
		"":                             "",
	} {
		var got *string
		if err := conn.QueryRow(ctx, "SELECT triage_utc($1)::text", text).Scan(&got); err != nil {
			t.Fatalf("triage_utc(%q): %v", text, err)
		}
		g := ""
		if got != nil {
			g = *got
		}
		if g != want {
			t.Errorf("triage_utc(%q) = %q, want %q", text, g, want)
		}
	}
}
