package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/sheets/emulator"
)

// set-status against a sheet whose quota runs out mid-command (1 read a minute; the command
// reads twice) waits the quota out, says so on stderr while it waits, and writes; with a
// budget too short for the wait, it fails at once saying what to do, having written nothing.
func TestSetStatusWaitsOutTheQuota(t *testing.T) {
	clk := testbed.NewClock()
	emu := emulator.New()
	emu.AddWorkbook(smallWorkbook())
	emu.SetClock(clk.Now)
	srv := testbed.Serve(t, emu)
	c := newCLI(t, srv.URL)
	c.clock = &quotaClock{Now: clk.Now, Sleep: clk.Sleep}
	emu.SetQuotaPerMinute(1)
	r := c.run("--spreadsheet", "s1", "set-status", "--tab", "Inbox", "--status", "read", "m1")
	waiting := regexp.MustCompile(`triage: Sheets quota reached \(reads per minute per user\): waiting \d+ s\n`)
	if r.code != 0 || !waiting.MatchString(r.stderr) || cell(t, emu, "Inbox", 2, 4) != "read" {
		t.Fatalf("set-status under the quota: exit %d, m1 %q, %v\n%s%s", r.code, cell(t, emu, "Inbox", 2, 4), emu.Counts(), r.stdout, r.stderr)
	}

	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[quota]\nbudget = \"10s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emu.SetQuotaPerMinute(0)
	emu.SetQuotaPerMinute(1)
	r = c.run("--spreadsheet", "s1", "--config", cfg, "set-status", "--tab", "Inbox", "--status", "done", "m1")
	if r.code == 0 || !strings.Contains(r.stderr, "quota budget") || !strings.Contains(r.stderr, "[quota] budget") || cell(t, emu, "Inbox", 2, 4) != "read" {
		t.Fatalf("set-status past the budget: exit %d, m1 %q\n%s%s", r.code, cell(t, emu, "Inbox", 2, 4), r.stdout, r.stderr)
	}
	if r = c.run("config", "check", "--config", cfg); r.code != 0 {
		t.Errorf("config check of [quota]: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
