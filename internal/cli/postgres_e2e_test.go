package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/demo"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// The graduation path end to end: `config check` validates [store] url (the password never
// printed); `init` makes the tables (again: nothing to do); `migrate` carries the sheet
// (again: nothing added), leaving the sheet as it was; then list and set-status work on the
// database, chosen by the flag, the environment or the config.
func TestGraduateToPostgres(t *testing.T) {
	db := pgtest.DB(t)
	emu, url := startEmu(t, smallWorkbook())
	before := emu.Cells("s1", "Inbox")
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"

	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[store]\nurl = \"mysql://triage:s3cret@db/triage\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.run("config", "check", "--config", cfg)
	if r.code != exitUsage || !strings.Contains(r.stdout, ":2: database URL mysql://triage:xxxxx@db/triage") || strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Fatalf("config check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("list", "--tab", "inbox", "--database-url", "postgres://triage:s3cret@db:port/triage")
	if r.code != exitUsage || strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Fatalf("bad --database-url: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("list", "--tab", "inbox", "--database-url", db)
	if r.code != exitUsage || !strings.Contains(r.stderr, "run `triage init`") {
		t.Fatalf("list before init: exit %d\n%s", r.code, r.stderr)
	}

	r = c.run("init", "--database-url", db)
	if r.code != 0 || !strings.Contains(r.stdout, "schema version 0 → 6") {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("init", "--database-url", db)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to do") {
		t.Fatalf("init again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = c.run("migrate", "--to", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Inbox → inbox: 4 rows: 4 added, 0 already there, 0 not carried") ||
		!strings.Contains(r.stdout, "Jobs → jobs: 3 rows: 3 added") || !strings.Contains(r.stdout, "failed_calls: not in the spreadsheet") ||
		!strings.Contains(r.stderr, "Inbox → inbox: 4/4 rows") {
		t.Fatalf("migrate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("migrate", "--to", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Inbox → inbox: 4 rows: 0 added, 4 already there") {
		t.Fatalf("migrate again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := emu.Cells("s1", "Inbox"); len(after) != len(before) {
		t.Fatalf("the sheet changed")
	}

	// The database, by the environment: the open work only (m3 is done).
	c.env["TRIAGE_DATABASE_URL"] = db
	r = c.run("list", "--tab", "inbox")
	if r.code != 0 || !strings.Contains(r.stdout, "m1") || !strings.Contains(r.stdout, "m4") || strings.Contains(r.stdout, "m3") {
		t.Fatalf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// History is searched, not loaded: done rows are listed when asked for, by --status or by
	// the filter, from the database.
	for _, args := range [][]string{{"--status", "done"}, {"--filter", "status:done"}} {
		r = c.run(append([]string{"list", "--tab", "inbox"}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "m3") || strings.Contains(r.stdout, "m1") || !strings.Contains(r.stderr, "history of \"Inbox\" searched") {
			t.Fatalf("list %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r = c.run("set-status", "--tab", "Inbox", "--status", "read", "m1", "nope")
	if r.code != exitPartial || !strings.Contains(r.stderr, `no row with ID "nope"`) {
		t.Fatalf("set-status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("list", "--tab", "inbox", "--status", "read")
	if r.code != 0 || !strings.Contains(r.stdout, "m1") {
		t.Fatalf("list read: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := cell(t, emu, "Inbox", 2, 4); got != "new" {
		t.Errorf("the sheet was written: m1 %q", got)
	}
	r = c.run("--readonly", "set-status", "--tab", "Inbox", "--status", "spam", "m2")
	if r.code != exitUsage {
		t.Fatalf("--readonly: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A settled row is reached by its ID as on the sheet: done (out of the open work), then
	// back to new.
	for _, st := range []string{"done", "new"} {
		r = c.run("set-status", "--tab", "Inbox", "--status", st, "m1")
		if r.code != exitOK || !strings.Contains(r.stdout, "m1") {
			t.Fatalf("set-status %s of m1: exit %d\n%s%s", st, r.code, r.stdout, r.stderr)
		}
	}
	r = c.run("list", "--tab", "inbox", "--status", "new")
	if r.code != 0 || !strings.Contains(r.stdout, "m1") {
		t.Fatalf("m1 is not new again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// By the config file, the password never printed in an error.
	delete(c.env, "TRIAGE_DATABASE_URL")
	bad := strings.Replace(db, "triage@", "triage:s3cret@", 1)
	bad = strings.Replace(bad, "host=%2F", "host=%2Fnonexistent%2F", 1)
	if err := os.WriteFile(cfg, []byte("[store]\nurl = \""+bad+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.run("list", "--tab", "inbox", "--config", cfg)
	if r.code != exitUsage || strings.Contains(r.stdout+r.stderr, "s3cret") || !strings.Contains(r.stderr, "xxxxx") {
		t.Fatalf("unreachable database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The demo workbook graduates whole: its Inbox holds a message with a NUL (and BEL, BS, DEL),
// which PostgreSQL's text can't store as it is; migrate carries every row, and `list --json`
// of the database shows that message exactly as the sheet's does.
func TestGraduateTheDemoWorkbook(t *testing.T) {
	db := pgtest.DB(t)
	wb, err := demo.Workbook(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, url := startEmu(t, wb)
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = wb.SpreadsheetID
	if r := c.run("init", "--database-url", db); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without the config replay runs with, a dead letter with an empty key cell would get a
	// guessed key for good (contact-form's is its payload's "id"): those rows are refused,
	// named, and so is the demo's one Inbox row without an ID. Every other row goes in.
	r := c.run("migrate", "--to", db)
	if r.code != exitPartial || !strings.Contains(r.stdout, "Inbox → inbox: 59 rows: 58 added, 0 already there, 1 not carried") ||
		!strings.Contains(r.stdout, "row 2: no ID") || !strings.Contains(r.stdout, "failed_calls → failed_calls: 25 rows: 22 added, 0 already there, 3 not carried") ||
		!strings.Contains(r.stdout, `source "contact-form" is not in the config`) || !strings.Contains(r.stdout, "Jobs → jobs: 17 rows: 17 added") {
		t.Fatalf("migrate of the demo without its config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// With the demo's sources, the rest goes in, each with the key a replay would send.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[sources.contact-form]\nurl_prefixes = [\"https://script.google.com/macros/s/\"]\nkey = \"body:id\"\n"+
		"[sources.crm]\nurl_prefixes = [\"https://crm.example/v1/\"]\n[sources.billing]\nurl_prefixes = [\"https://billing.example/hooks/\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.run("migrate", "--to", db, "--config", cfg)
	if !strings.Contains(r.stdout, "failed_calls → failed_calls: 25 rows: 3 added, 22 already there, 0 not carried") {
		t.Fatalf("migrate of the demo with its config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The proof: every carried row read back and compared (times as instants, the NUL
	// message byte for byte).
	for _, want := range []string{"Inbox → inbox: verified: 58 of 58 rows", "failed_calls → failed_calls: verified: 25 of 25 rows", "Jobs → jobs: verified: 17 of 17 rows"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("migrate doesn't say %q:\n%s", want, r.stdout)
		}
	}
	r = c.run("list", "--tab", "deadletter", "--database-url", db, "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "cf-81b2e4") {
		t.Fatalf("the contact-form row's key is not its payload's id on the database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A replay on the database says where it wrote (here nothing: the demo's URLs are not
	// under this config's prefixes), not "requests to the sheet".
	r = c.run("replay", "--all", "--database-url", db, "--config", cfg)
	if !strings.Contains(r.stderr, "write-back: 0 transactions on postgres://") {
		t.Errorf("replay on the database: exit %d\n%s", r.code, r.stderr)
	}
	// --verify alone: nothing copied; a cell someone changed on the database is found.
	r = c.run("migrate", "--to", db, "--config", cfg, "--verify")
	if r.code != exitOK || strings.Contains(r.stdout, "added") || !strings.Contains(r.stdout, "verified: 25 of 25 rows") {
		t.Fatalf("migrate --verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "UPDATE failed_calls SET payload = '{}' WHERE key = 'cf-81b2e4'"); err != nil {
		t.Fatal(err)
	}
	r = c.run("migrate", "--to", db, "--config", cfg, "--verify")
	if r.code != exitPartial || !strings.Contains(r.stdout, "verified: 24 of 25 rows") || !strings.Contains(r.stdout, "(cf-81b2e4): payload is \"{}\" on the database") {
		t.Fatalf("migrate --verify after a change on the database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	messages := func(args ...string) map[string]string {
		t.Helper()
		r := c.run(append([]string{"list", "--tab", "inbox", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("list %v: exit %d\n%s", args, r.code, r.stderr)
		}
		var doc struct {
			Rows []map[string]any `json:"rows"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("list --json: %v\n%s", err, r.stdout)
		}
		out := map[string]string{}
		for _, row := range doc.Rows {
			id, _ := row["id"].(string)
			cells, _ := row["fields"].(map[string]any)
			msg, _ := cells["Message"].(string)
			out[id] = msg
		}
		return out
	}
	// The database lists the open work; each of its rows reads as the sheet's.
	onSheet, onDB := messages(), messages("--database-url", db)
	if len(onDB) == 0 {
		t.Fatal("the database lists no message")
	}
	nul := 0
	for id, m := range onDB {
		if strings.Contains(m, "ding") && strings.Contains(m, " nul") {
			nul++ // the message with the NUL (as list --json shows it, sanitised or not)
		}
		if onSheet[id] != m {
			t.Errorf("message %s: the database reads %q, the sheet %q", id, m, onSheet[id])
		}
	}
	if nul == 0 {
		t.Fatal("the demo holds no message with a NUL any more: the test proves nothing")
	}
}
