package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// statements records the SQL of every statement a database store sends.
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	s.sql = append(s.sql, d.SQL)
	s.mu.Unlock()
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// runTraced is c.run whose database store reports its statements to tracer.
func (c *cli) runTraced(tracer pgx.QueryTracer, args ...string) result {
	c.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return c.env[k] }, dbTracer: tracer}
	code := run(c.t.Context(), args, e)
	return result{code, out.String(), errb.String()}
}

// requeue-stale on a database is one statement, with no read before it, and says what the
// sheet's requeue-stale says: the same rows (IDs, row numbers, what was written, who held the
// claim and how long ago), as text and as JSON. The database is the sheet migrated, so both
// hold the same claims.
func TestRequeueStaleOnADatabaseIsOneStatement(t *testing.T) {
	db := pgtest.DB(t)
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	for _, args := range [][]string{{"init", "--database-url", db}, {"migrate", "--to", db}} {
		if r := c.run(args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	// The stamp and the age differ by the moments the two commands ran.
	stamp := regexp.MustCompile(`(?i)"updatedAt": "[^"]*"|updatedAt="[^"]*"`)
	age := regexp.MustCompile(`(claimed by \S+) [^"\n]* ago`)
	norm := func(s string) string {
		return age.ReplaceAllString(stamp.ReplaceAllString(s, "updatedAt=T"), "$1 AGE ago")
	}

	// j2's claim is 2 hours old, j3's 29 minutes: one at a time.
	for _, args := range [][]string{{"requeue-stale", "--older-than", "1h"}, {"requeue-stale", "--json", "--older-than", "20m"}} {
		sheet := c.run(args...)
		var st statements
		dbr := c.runTraced(&st, append(args, "--database-url", db)...)
		if sheet.code != 0 || dbr.code != 0 {
			t.Fatalf("%v: sheet exit %d, database exit %d\n%s%s", args, sheet.code, dbr.code, sheet.stderr, dbr.stderr)
		}
		if !strings.Contains(dbr.stdout, "claimed by w") {
			t.Errorf("%v on the database lists no claim:\n%s", args, dbr.stdout)
		}
		if norm(dbr.stdout) != norm(sheet.stdout) || dbr.stderr != sheet.stderr {
			t.Errorf("%v: the database says\n%s%s\nthe sheet says\n%s%s", args, dbr.stdout, dbr.stderr, sheet.stdout, sheet.stderr)
		}
		if args[1] == "--json" {
			var doc editDoc
			if err := json.Unmarshal([]byte(dbr.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Changed) != 1 || doc.Changed[0].ID != "j3" || doc.Changed[0].Row != 4 || doc.Changed[0].Set["status"] != "pending" || !strings.HasPrefix(doc.Changed[0].Note, "claimed by w2 ") {
				t.Errorf("--json on the database: %+v", doc)
			}
		}
		var onJobs []string
		for _, q := range st.sql {
			if strings.Contains(q, "jobs") {
				onJobs = append(onJobs, q)
			}
		}
		if len(onJobs) != 1 || !strings.Contains(onJobs[0], "UPDATE jobs") {
			t.Errorf("%v sent %d statements on jobs, want one UPDATE:\n%s", args, len(onJobs), strings.Join(onJobs, "\n---\n"))
		}
	}
	if r := c.run("requeue-stale", "--database-url", db); r.code != 0 || !strings.Contains(r.stderr, "no claims older than 30m") {
		t.Errorf("nothing left: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
