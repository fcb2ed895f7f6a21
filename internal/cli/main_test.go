package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// cli runs one triage invocation in-process with the given environment.
type cli struct {
	t   *testing.T
	env map[string]string
	// width, when set, is the width of the terminal stdout and stderr are (else: not one).
	width int
	// clock, when set, is the Sheets quota pacer's clock.
	clock *quotaClock
}

type result struct {
	code           int
	stdout, stderr string
}

func (c *cli) run(args ...string) result {
	c.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return c.env[k] }, quotaClock: c.clock}
	if c.width > 0 {
		e.termWidth = func(io.Writer) int { return c.width }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, args, e)
	return result{code, out.String(), errb.String()}
}

func newCLI(t *testing.T, emuURL string) *cli {
	dir := t.TempDir()
	return &cli{t: t, env: map[string]string{
		"SHEETS_EMULATOR_HOST": strings.TrimPrefix(emuURL, "http://"),
		"XDG_CONFIG_HOME":      dir,
		"XDG_STATE_HOME":       dir,
		"HOME":                 dir,
	}}
}

func startEmu(t *testing.T, wb *emulator.Workbook) (*emulator.Emulator, string) {
	t.Helper()
	emu := emulator.New()
	emu.AddWorkbook(wb)
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	return emu, srv.URL
}

func smallWorkbook() *emulator.Workbook {
	return &emulator.Workbook{SpreadsheetID: "s1", Title: "Test", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			{46000.5, "Ann", "ann@x", "hello", "new", "m1"},
			{46000.6, "Bob", "bob@x", "\x1b]0;pwned\x07hi", "", "m2"},
			{46000.7, "Cy", "cy@x", "bye", "done", "m3"},
			{46000.8, "Eve\u202e", "e@x", "c1 \u009b31m", "new\x1b[2J\u0085", "m4"},
		}},
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt"},
			{"j1", "sync", "{}", "error", "w1", "", "boom", ""},
			{"j2", "sync", "{}", "claimed", "w1", model.FormatTime(time.Now().Add(-2 * time.Hour)), "", ""},
			{"j3", "sync", "{}", "claimed", "w2", model.FormatTime(time.Now().Add(-29 * time.Minute)), "", ""},
		}},
	}}
}

func cell(t *testing.T, emu *emulator.Emulator, tab string, row, col int) string {
	t.Helper()
	rows := emu.Cells("s1", tab)
	if row-1 >= len(rows) || col >= len(rows[row-1]) {
		return ""
	}
	return model.CellString(rows[row-1][col])
}

func TestListSanitisesAndFilters(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--status", "new")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u0085", "\u202e"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("list printed a raw %q: %q", bad, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "m4") {
		t.Errorf("hostile row not listed: %q", r.stdout)
	}
	if !strings.Contains(r.stdout, "2025-12-09 12:00") {
		t.Errorf("timestamps should be shown as dates in the sheet's zone, not serials: %q", r.stdout)
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--json")
	for _, bad := range []string{"\x1b", "\u009b", "\u0085", "\u202e"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("list --json printed a raw %q", bad)
		}
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--status", "new")
	if !strings.Contains(r.stdout, "m1") || !strings.Contains(r.stdout, "m2") || strings.Contains(r.stdout, "m3") {
		t.Errorf("status filter wrong:\n%s", r.stdout)
	}
	// The filter language: status by prefix, OR, a quoted phrase; --status stays exact.
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--filter", `status:n|d "by"`)
	if r.code != 0 || !strings.Contains(r.stdout, "m3") || strings.Contains(r.stdout, "m1") {
		t.Errorf("status:n|d \"by\": exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--filter", "status:n")
	if r.code != 0 || !strings.Contains(r.stdout, "m1") || !strings.Contains(r.stdout, "m2") {
		t.Errorf("status:n should match new (blank too): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// An unknown field is a usage error naming the tab's fields, not an empty list.
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--filter", "is:new")
	if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "unknown field is: — fields here: status, timestamp, name, email, message, id") ||
		!strings.Contains(r.stderr, `quote it: "is:…"`) {
		t.Errorf("is:new: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "--filter", `"is:new" https://x 12:30`)
	if r.code != 0 {
		t.Errorf("quoted text and URLs are text: exit %d, %s", r.code, r.stderr)
	}
	r = c.run("list", "--tab", "inbox", "--json", "--spreadsheet", "s1")
	var doc struct {
		Tab  string `json:"tab"`
		Rows []struct {
			ID     string            `json:"id"`
			Status string            `json:"status"`
			Fields map[string]string `json:"fields"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--json is not one JSON document: %v\n%s", err, r.stdout)
	}
	if doc.Tab != "Inbox" || len(doc.Rows) != 4 || doc.Rows[1].Status != "new" || doc.Rows[0].Fields["Name"] != "Ann" || doc.Rows[3].Fields["Name"] != "Eve\u202e" {
		t.Errorf("json %+v", doc)
	}
}

func TestNoNetworkAtStartupIsExit2(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	c := newCLI(t, dead)
	for _, args := range [][]string{
		{"--spreadsheet", "s1", "list", "--tab", "Inbox"},
		{"--spreadsheet", "s1"}, // the TUI: its first load happens before the screen is taken
	} {
		r := c.run(args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
		if !strings.Contains(r.stderr, "reach") || strings.Contains(r.stderr, "panic") {
			t.Errorf("%v: unclear message %q", args, r.stderr)
		}
	}
}

func TestWrongSpreadsheetAndMissingTab(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	r := c.run("--spreadsheet", "nope", "list", "--tab", "Inbox")
	if r.code != exitUsage || !strings.Contains(r.stderr, `"nope"`) {
		t.Errorf("wrong ID: %d %q", r.code, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "list", "--tab", "failed_calls")
	if r.code != exitUsage || !strings.Contains(r.stderr, "triage init") {
		t.Errorf("missing tab: %d %q", r.code, r.stderr)
	}
	r = c.run("list", "--tab", "Inbox")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--spreadsheet") {
		t.Errorf("no spreadsheet: %d %q", r.code, r.stderr)
	}
}

func TestPrecedenceFlagEnvConfig(t *testing.T) {
	wb := smallWorkbook()
	emu := emulator.New()
	emu.AddWorkbook(wb)
	other := smallWorkbook()
	other.SpreadsheetID = "s2"
	other.Sheets[0].Rows = other.Sheets[0].Rows[:2]
	emu.AddWorkbook(other)
	srv := httptest.NewServer(emu)
	defer srv.Close()
	c := newCLI(t, srv.URL)
	cfgPath := filepath.Join(c.env["XDG_CONFIG_HOME"], "triage", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o755)
	os.WriteFile(cfgPath, []byte("spreadsheet = \"cfg-missing\"\n"), 0o600)
	count := func(r result) int { return strings.Count(r.stdout, "\n") - 1 }
	if r := c.run("list", "--tab", "Inbox"); r.code != exitUsage || !strings.Contains(r.stderr, "cfg-missing") {
		t.Errorf("config not used: %d %s", r.code, r.stderr)
	}
	c.env["TRIAGE_SPREADSHEET"] = "s2"
	if r := c.run("list", "--tab", "Inbox"); r.code != 0 || count(r) != 1 {
		t.Errorf("env should beat config: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := c.run("list", "--tab", "Inbox", "--spreadsheet", "s1"); r.code != 0 || count(r) != 4 {
		t.Errorf("flag should beat env: %d %q", r.code, r.stdout)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.toml")
	os.WriteFile(p, []byte("refresh = \"soon\"\n[sources.crm]\npreset = \"nope\"\n"), 0o600)
	c := &cli{t: t, env: map[string]string{}}
	r := c.run("config", "check", "--config", p)
	if r.code != exitUsage {
		t.Fatalf("exit %d", r.code)
	}
	for _, want := range []string{p + ":1: refresh", p + ":2: source crm has no url_prefixes", p + ":3: source crm: unknown preset"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in\n%s", want, r.stdout)
		}
	}
	os.WriteFile(p, []byte("refresh = \"30s\"\n[keys]\nfrobnicate = [\"z\"]\nreplay = [\"r\"]\n"), 0o600)
	r = c.run("config", "check", "--config", p)
	if r.code != exitUsage || !strings.Contains(r.stdout, p+":3: ") || !strings.Contains(r.stdout, "frobnicate") ||
		!strings.Contains(r.stdout, `"r" is bound to both`) {
		t.Errorf("[keys] problems: exit %d\n%s", r.code, r.stdout)
	}
	os.WriteFile(p, []byte("refresh = \"30s\"\n"), 0o600)
	if r := c.run("config", "check", "--config", p); r.code != 0 {
		t.Errorf("good config: %d %s", r.code, r.stdout)
	}
}

func TestConfigCheckWithoutAFileAndHelp(t *testing.T) {
	dir := t.TempDir()
	c := &cli{t: t, env: map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir}}
	if r := c.run("config", "check"); r.code != 0 || !strings.Contains(r.stdout, "no config file") {
		t.Errorf("no default config: %+v", r)
	}
	if r := c.run("config", "check", "--config", filepath.Join(dir, "nope.toml")); r.code != exitUsage {
		t.Errorf("a named config that doesn't exist: %+v", r)
	}
	if r := c.run("--help"); r.code != 0 || !strings.Contains(r.stdout, "triage replay") {
		t.Errorf("--help should print usage on stdout: %+v", r)
	}
}

func TestRequeueStaleReportsClaimsItCantWrite(t *testing.T) {
	wb := smallWorkbook()
	old := model.FormatTime(time.Now().Add(-3 * time.Hour))
	wb.Sheets[1].Rows = append(wb.Sheets[1].Rows,
		[]any{"jd", "sync", "{}", "claimed", "w3", old, "", ""},
		[]any{"jd", "sync", "{}", "claimed", "w4", old, "", ""})
	emu, url := startEmu(t, wb)
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	r := c.run("requeue-stale")
	if r.code != exitPartial || !strings.Contains(r.stderr, "stale claim not requeued") || !strings.Contains(r.stderr, "share the ID") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if cell(t, emu, "Jobs", 3, 3) != "pending" {
		t.Errorf("the writable stale claim should still be requeued")
	}
	// Clearing an error twice: the second run finds nothing to do, which is done, not a failure.
	if r := c.run("clear-error", "--tab", "Jobs", "j1"); r.code != 0 {
		t.Fatalf("clear-error: %d %s", r.code, r.stderr)
	}
	if r := c.run("clear-error", "--tab", "Jobs", "j1"); r.code != 0 {
		t.Errorf("clear-error again: exit %d %s", r.code, r.stderr)
	}
}

// A missing or broken dead-letter tab is reported with its real cause and its configured
// name, whether it was asked for by role (replay's default) or by name; never as
// `no tab "deadletter"`.
func TestMissingOrBrokenDeadLetterTabSaysWhy(t *testing.T) {
	_, url := startEmu(t, smallWorkbook()) // no failed_calls tab
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	for _, args := range [][]string{
		{"replay", "--all"},
		{"replay", "--all", "--dry-run"},
		{"list", "--tab", "failed_calls"},
		{"list", "--tab", "deadletter"},
	} {
		r := c.run(args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
		if !strings.Contains(r.stderr, `the deadletter tab "failed_calls" is not in the spreadsheet`) ||
			!strings.Contains(r.stderr, "triage init") || !strings.Contains(r.stderr, "[tabs.deadletter] name") {
			t.Errorf("%v: the message should name the tab, the cause and the fixes:\n%s", args, r.stderr)
		}
	}

	wb := smallWorkbook()
	wb.Sheets = append(wb.Sheets, &emulator.Sheet{Title: "failed_calls", Rows: [][]any{
		{"timestamp", "source", "url", "error", "key", "status"}, // no payload
		{46000.5, "crm", "https://x/y", "boom", "k1", "dead"},
	}})
	_, url = startEmu(t, wb)
	c = newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	for _, args := range [][]string{
		{"replay", "--all"},
		{"replay", "k1"},
		{"list", "--tab", "failed_calls"},
		{"list", "--tab", "deadletter", "--json"},
	} {
		r := c.run(args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
		if !strings.Contains(r.stderr, `"failed_calls"`) || !strings.Contains(r.stderr, `missing required column "payload"`) ||
			strings.Contains(r.stderr, "no tab") {
			t.Errorf("%v: the message should say the header lacks payload:\n%s", args, r.stderr)
		}
	}
}

// --older-than and --concurrency refuse values that would silently mean something else:
// zero and negative durations (requeue-stale used to fall back to 30m), and a concurrency of
// 0 (refused like -3 and 21), each naming the flag and what it takes.
func TestNumericFlagsRefuseZeroAndNegative(t *testing.T) {
	emu, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	for _, v := range []string{"-5m", "0", "0s", "-1h"} {
		r := c.run("requeue-stale", "--older-than", v)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--older-than") || !strings.Contains(r.stderr, "positive duration") {
			t.Errorf("--older-than %s: exit %d %q", v, r.code, r.stderr)
		}
	}
	if cell(t, emu, "Jobs", 3, 3) != "claimed" || cell(t, emu, "Jobs", 4, 3) != "claimed" {
		t.Errorf("a refused requeue-stale wrote: %v", emu.Cells("s1", "Jobs"))
	}
	if r := c.run("requeue-stale", "--older-than", "1h", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "j2") {
		t.Errorf("--older-than 1h: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	for _, v := range []string{"0", "-3", "21"} {
		r := c.run("replay", "--all", "--concurrency", v)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--concurrency "+v) || !strings.Contains(r.stderr, "from 1 to 20") {
			t.Errorf("--concurrency %s: exit %d %q", v, r.code, r.stderr)
		}
	}
}

// init tells the operator about an unlabeled data column it left alone, and writes its
// headers elsewhere.
func TestInitReportsUnlabeledDataColumns(t *testing.T) {
	wb := smallWorkbook()
	wb.Sheets = append(wb.Sheets, &emulator.Sheet{Title: "failed_calls", Rows: [][]any{
		{"timestamp", "source", "url", "payload"},
		{46000.5, "crm", "https://x/y", "{}", "my note"},
	}})
	emu, url := startEmu(t, wb)
	c := newCLI(t, url)
	r := c.run("--spreadsheet", "s1", "init")
	if r.code != 0 || !strings.Contains(r.stdout, `tab "failed_calls": column E holds data but has no header`) {
		t.Fatalf("init: %d %q %q", r.code, r.stdout, r.stderr)
	}
	rows := emu.Cells("s1", "failed_calls")
	if len(rows[0]) < 5 || model.CellString(rows[0][4]) != "" || model.CellString(rows[1][4]) != "my note" {
		t.Errorf("column E was adopted: %v", rows)
	}
}
