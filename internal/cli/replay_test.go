package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The dead-letter header of the CLI tests' workbook.
var replayHeader = []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}

const (
	replayID  = "r1"
	replayTab = "failed_calls"
	crmSecret = "crm-s3cret-value"
)

// dl is one dead-letter row of a test workbook.
type dl struct {
	source, url, payload, key, status string
}

func (d dl) cells(i int) []any {
	return []any{46000.25 + float64(i)/100, d.source, d.url, d.payload, "boom", "1", "POST", d.key, d.status, ""}
}

// replayFixture is a dead-letter tab in the emulator behind a real loopback server, receivers
// behind real loopback servers, and a config file whose sources point at them.
type replayFixture struct {
	t       *testing.T
	emu     *emulator.Emulator
	env     map[string]string
	cfgPath string
	crm     *receiver.Receiver
	crmURL  string
	billing *receiver.Receiver
	billURL string
	evilURL string
	evilHit atomic.Int32
	rows    []dl
}

func newReplayFixture(t *testing.T, rows func(f *replayFixture) []dl) *replayFixture {
	t.Helper()
	f := &replayFixture{t: t, crm: receiver.New(),
		billing: &receiver.Receiver{Default: receiver.Fault{Mode: receiver.Unauthorized}}}
	crmSrv := httptest.NewServer(f.crm)
	t.Cleanup(crmSrv.Close)
	billSrv := httptest.NewServer(f.billing)
	t.Cleanup(billSrv.Close)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.evilHit.Add(1) }))
	t.Cleanup(evil.Close)
	f.crmURL, f.billURL, f.evilURL = crmSrv.URL+"/v1/contacts", billSrv.URL+"/hooks/invoice", evil.URL+"/v1/contacts"

	f.rows = rows(f)
	grid := [][]any{replayHeader}
	for i, r := range f.rows {
		grid = append(grid, r.cells(i))
	}
	f.emu = emulator.New()
	f.emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: replayID, Title: "Replay CLI", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: replayTab, Rows: grid}}})
	emuSrv := httptest.NewServer(f.emu)
	t.Cleanup(emuSrv.Close)

	dir := t.TempDir()
	f.cfgPath = filepath.Join(dir, "config.toml")
	cfg := fmt.Sprintf(`
[sources.crm]
url_prefixes = [%q]
[sources.crm.headers]
Authorization = "env:CRM_TOKEN"

[sources.billing]
url_prefixes = [%q]
[sources.billing.headers]
Authorization = "env:BILLING_TOKEN"
`, crmSrv.URL+"/v1/", billSrv.URL+"/hooks/")
	if err := os.WriteFile(f.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f.env = map[string]string{
		"SHEETS_EMULATOR_HOST": strings.TrimPrefix(emuSrv.URL, "http://"),
		"XDG_CONFIG_HOME":      dir, "XDG_STATE_HOME": dir, "HOME": dir,
		"CRM_TOKEN":     crmSecret,
		"BILLING_TOKEN": "billing-wrong-value",
	}
	return f
}

// replayRun is one `triage replay` invocation's outcome.
type replayRun struct {
	code           int
	stdout, stderr string
}

func (f *replayFixture) run(ctx context.Context, args ...string) replayRun {
	f.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	full := append([]string{"replay", "--spreadsheet", replayID, "--config", f.cfgPath}, args...)
	code := run(ctx, full, e)
	r := replayRun{code: code, stdout: out.String(), stderr: errb.String()}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, crmSecret) || strings.Contains(s, "billing-wrong-value") {
			f.t.Errorf("a secret was printed:\n%s", s)
		}
	}
	return r
}

func (f *replayFixture) runCtx(args ...string) replayRun {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.run(ctx, args...)
}

// runJSON runs the command (runCtx), fails the test unless it exits with want, and parses
// its JSON document.
func (f *replayFixture) runJSON(want int, args ...string) (replayRun, replayJSON) {
	f.t.Helper()
	r := f.runCtx(args...)
	if r.code != want {
		f.t.Fatalf("exit %d, want %d\n%s", r.code, want, r.stderr)
	}
	return r, parseReplayJSON(f.t, r)
}

// cell returns data row i's (0-based) column named h, as text.
func (f *replayFixture) cell(i int, h string) string {
	rows := f.emu.Cells(replayID, replayTab)
	col := -1
	for c, v := range rows[0] {
		if v == h {
			col = c
		}
	}
	if i+1 >= len(rows) || col < 0 || col >= len(rows[i+1]) {
		return ""
	}
	return model.CellString(rows[i+1][col])
}

// minted is the key triage mints for data row i (its key cell empty).
func (f *replayFixture) minted(i int) string {
	r := f.rows[i]
	return model.MintKey(r.source, r.url, r.payload, model.CellString(r.cells(i)[0]))
}

// replayJSON is the --json document as a script sees it.
type replayJSON struct {
	Tab    string         `json:"tab"`
	DryRun bool           `json:"dry_run"`
	Counts map[string]int `json:"counts"`
	Halted bool           `json:"halted"`
	Halt   *struct {
		Cause, Source, Detail string
	} `json:"halt"`
	Cancelled    bool     `json:"cancelled"`
	NotAttempted []string `json:"not_attempted"`
	Refused      []struct {
		ID     string `json:"id"`
		Row    int    `json:"row"`
		Reason string `json:"reason"`
	} `json:"refused"`
	Skipped    []struct{ ID, Reason string } `json:"skipped"`
	UnknownIDs []string                      `json:"unknown_ids"`
	WriteBack  struct {
		Requests  int      `json:"requests"`
		Conflicts []string `json:"conflicts"`
		Errors    []string `json:"errors"`
	} `json:"write_back"`
	Recovered []string `json:"recovered"`
	Held      []struct {
		By  string   `json:"by"`
		IDs []string `json:"ids"`
	} `json:"held"`
	Rows []struct {
		ID        string `json:"id"`
		Row       int    `json:"row"`
		Key       string `json:"key"`
		State     string `json:"state"`
		Attempts  int    `json:"attempts"`
		Detail    string `json:"detail"`
		WriteBack string `json:"write_back"`
	} `json:"rows"`
	WouldSend []struct {
		Method, URL, Key, Source string
		Headers                  []string
	} `json:"would_send"`
	ExitCode int `json:"exit_code"`
}

func parseReplayJSON(t *testing.T, r replayRun) replayJSON {
	t.Helper()
	var doc replayJSON
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
	if doc.ExitCode != r.code {
		t.Errorf("exit_code %d in JSON, process exit %d", doc.ExitCode, r.code)
	}
	return doc
}

func crmRows(f *replayFixture) []dl {
	return []dl{
		{"crm", f.crmURL, `{"email":"a@x","n":1}`, "k1", "dead"},
		{"crm", f.crmURL, `{"email":"b@x","n":2}`, "k2", ""},
		{"crm", f.crmURL, `{"email":"c@x","n":3}`, "", "dead"}, // key minted
		{"crm", f.crmURL, `{"email":"d@x","n":4}`, "k4", "delivered"},
		{"crm", f.crmURL, `{"email":"e@x","n":5}`, "k5", "rejected"},
		{"crm", f.crmURL, `{"email":"f@x","n":6}`, "k6", "discarded"},
	}
}

func TestReplayAllDeliversAndWritesBack(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	r, doc := f.runJSON(exitOK, "--all", "--json")
	if doc.Tab != replayTab || doc.Counts["delivered"] != 3 || doc.Counts["skipped"] != 3 || doc.Counts["refused"] != 0 || doc.Halted {
		t.Errorf("summary %+v", doc)
	}
	if len(doc.Rows) != 3 || len(doc.Skipped) != 3 || len(doc.NotAttempted) != 0 {
		t.Errorf("rows %+v skipped %+v", doc.Rows, doc.Skipped)
	}
	if doc.WriteBack.Requests < 2 || len(doc.WriteBack.Conflicts) != 0 || len(doc.WriteBack.Errors) != 0 {
		t.Errorf("write-back %+v (want the key write and at least one flush)", doc.WriteBack)
	}
	for i := 0; i < 3; i++ {
		if s := f.cell(i, "status"); s != "delivered" {
			t.Errorf("row %d status %q", i, s)
		}
		if a := f.cell(i, "attempts"); a != "2" { // 1 before + 1 now
			t.Errorf("row %d attempts %q", i, a)
		}
		if f.cell(i, "replayed_at") == "" || f.cell(i, "error") != "" {
			t.Errorf("row %d replayed_at %q error %q", i, f.cell(i, "replayed_at"), f.cell(i, "error"))
		}
	}
	minted := f.minted(2)
	if k := f.cell(2, "key"); k != minted {
		t.Errorf("minted key cell %q, want %q", k, minted)
	}
	for i := 3; i < 6; i++ {
		if f.cell(i, "attempts") != "1" || f.cell(i, "replayed_at") != "" {
			t.Errorf("skipped row %d was written", i)
		}
	}
	eff := f.crm.Effects()
	if len(eff) != 3 || eff["k1"] != 1 || eff["k2"] != 1 || eff[minted] != 1 {
		t.Errorf("effects %v", eff)
	}
	for _, a := range f.crm.Attempts() {
		if a.Headers.Get("Authorization") != crmSecret {
			t.Errorf("attempt without the source's secret: %v", a.Headers)
		}
	}
	for _, o := range f.emu.ValueInputOptions() {
		if o != "RAW" {
			t.Errorf("a write used valueInputOption %q", o)
		}
	}
	if !strings.Contains(r.stderr, "replay: 3/3 delivered 3") || !strings.Contains(r.stderr, "write-back:") {
		t.Errorf("stderr lacks the progress line or the summary:\n%s", r.stderr)
	}

	// Again: everything is delivered now, so nothing is sent and the exit is 0.
	before := len(f.crm.Attempts())
	r = f.runCtx("--all")
	if r.code != exitOK || len(f.crm.Attempts()) != before {
		t.Errorf("second run: exit %d, %d new attempts\n%s", r.code, len(f.crm.Attempts())-before, r.stderr)
	}
}

func TestReplay401HaltsAndListsNotAttempted(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		return []dl{
			{"billing", f.billURL, `{"invoice":"I-1"}`, "b1", "dead"},
			{"billing", f.billURL, `{"invoice":"I-2"}`, "b2", "dead"},
			{"billing", f.billURL, `{"invoice":"I-3"}`, "b3", "dead"},
		}
	})
	r, doc := f.runJSON(exitHalted, "--all", "--json", "--concurrency", "1")
	if !doc.Halted || doc.Halt == nil || doc.Halt.Cause != "systemic" || doc.Halt.Source != "billing" || !strings.Contains(doc.Halt.Detail, "BILLING_TOKEN") {
		t.Fatalf("halt %+v", doc.Halt)
	}
	if len(doc.NotAttempted) != 2 || doc.Counts["not-attempted"] != 2 || doc.Counts["systemic"] != 1 {
		t.Errorf("not attempted %v counts %v", doc.NotAttempted, doc.Counts)
	}
	if n := len(f.billing.Attempts()); n != 1 {
		t.Errorf("billing got %d requests, want 1 (nothing new after the halt)", n)
	}
	sent := 0
	for i := 0; i < 3; i++ {
		if strings.Contains(f.cell(i, "error"), "401") {
			sent++
			if f.cell(i, "status") != "dead" || f.cell(i, "attempts") != "2" {
				t.Errorf("sent row %d: status %q attempts %q", i, f.cell(i, "status"), f.cell(i, "attempts"))
			}
		} else if f.cell(i, "attempts") != "1" || f.cell(i, "replayed_at") != "" {
			t.Errorf("row %d was not attempted but written", i)
		}
	}
	if sent != 1 {
		t.Errorf("%d rows carry the 401", sent)
	}
	if !strings.Contains(r.stderr, "HALTED (systemic, source billing)") || !strings.Contains(r.stderr, "not attempted") {
		t.Errorf("stderr lacks the halt:\n%s", r.stderr)
	}
}

func TestReplayDryRunSendsAndWritesNothing(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	r, doc := f.runJSON(exitOK, "--all", "--dry-run", "--json")
	if !doc.DryRun || len(doc.WouldSend) != 3 {
		t.Fatalf("dry run %+v", doc)
	}
	keys := map[string]bool{}
	for _, c := range doc.WouldSend {
		keys[c.Key] = true
		if c.Method != "POST" || c.URL != f.crmURL || c.Source != "crm" || len(c.Headers) != 1 || c.Headers[0] != "Authorization: env:CRM_TOKEN (set)" {
			t.Errorf("would send %+v", c)
		}
	}
	if !keys["k1"] || !keys["k2"] || !keys[f.minted(2)] {
		t.Errorf("keys %v", keys)
	}
	if n := len(f.crm.Attempts()); n != 0 {
		t.Errorf("a dry run sent %d requests", n)
	}
	if n := f.emu.Count(emulator.MethodValuesBatchUpdate); n != 0 {
		t.Errorf("a dry run wrote %d times", n)
	}
	if f.cell(2, "key") != "" {
		t.Error("a dry run wrote the minted key")
	}
	// Human form: the calls on stdout.
	r = f.runCtx("--all", "--dry-run", "--readonly")
	if r.code != exitOK || !strings.Contains(r.stdout, f.crmURL) || !strings.Contains(r.stdout, "env:CRM_TOKEN (set)") || !strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("human dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(f.crm.Attempts()) + f.emu.Count(emulator.MethodValuesBatchUpdate); n != 0 {
		t.Errorf("dry runs sent or wrote %d times", n)
	}
}

func TestReplayUnknownIDIsExit1(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	r, doc := f.runJSON(exitPartial, "k1", "nope", "--json")
	if len(doc.UnknownIDs) != 1 || doc.UnknownIDs[0] != "nope" || doc.Counts["delivered"] != 1 || doc.Counts["unknown"] != 1 {
		t.Errorf("doc %+v", doc)
	}
	if f.cell(0, "status") != "delivered" || f.cell(1, "status") != "" {
		t.Errorf("statuses %q %q", f.cell(0, "status"), f.cell(1, "status"))
	}
	if !strings.Contains(r.stderr, `unknown ID "nope"`) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	// --source filters: an ID of another source is not sent.
	r = f.runCtx("--source", "billing", "k2")
	if r.code != exitPartial || len(f.crm.Attempts()) != 1 {
		t.Errorf("--source billing k2: exit %d, crm attempts %d\n%s", r.code, len(f.crm.Attempts()), r.stderr)
	}
}

func TestReplayURLOutsidePrefixesIsRefused(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		return []dl{
			{"crm", f.evilURL, `{"n":1}`, "e1", "dead"},
			{"crm", f.crmURL, `{"n":2}`, "k2", "dead"},
			{"nosuch", f.crmURL, `{"n":3}`, "k3", "dead"},
		}
	})
	_, doc := f.runJSON(exitPartial, "--all", "--json")
	if len(doc.Refused) != 2 || doc.Counts["refused"] != 2 || doc.Counts["delivered"] != 1 {
		t.Fatalf("doc %+v", doc)
	}
	if !strings.Contains(doc.Refused[0].Reason, "not under any allowed prefix") || doc.Refused[0].ID != "e1" {
		t.Errorf("refusal %+v", doc.Refused[0])
	}
	if !strings.Contains(doc.Refused[1].Reason, `source "nosuch" is not configured`) {
		t.Errorf("refusal %+v", doc.Refused[1])
	}
	if n := f.evilHit.Load(); n != 0 {
		t.Errorf("the disallowed host was contacted %d times", n)
	}
	if f.cell(0, "attempts") != "1" || f.cell(0, "status") != "dead" {
		t.Error("a refused row was written")
	}
}

func TestReplayUsageErrors(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	for _, args := range [][]string{
		{},
		{"--all", "k1"},
		{"--all", "--concurrency", "99"},
		{"--all", "--readonly"},
		{"--all", "--source", "nosuch"},
		{"--all", "--tab", "Nope"},
		{"--all", "--bogus"},
	} {
		r := f.runCtx(args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

// TestReplayKillAndRerun interrupts a run mid-way (Ctrl-C), then runs it again: every row is
// acted on exactly once, keys never change, and the interrupted run's finished rows are
// written back.
func TestReplayKillAndRerun(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		var rows []dl
		for i := 0; i < 8; i++ {
			key := fmt.Sprintf("k%d", i)
			if i%3 == 0 {
				key = "" // minted
			}
			rows = append(rows, dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), key, "dead"})
		}
		return rows
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	effects := 0
	f.crm.Latency = 30 * time.Millisecond
	f.crm.OnEffect = func(string, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if effects++; effects == 3 {
			cancel() // Ctrl-C while the third call is in flight
		}
	}
	r := f.run(ctx, "--all", "--json", "--concurrency", "1")
	if r.code != exitPartial {
		t.Fatalf("interrupted run: exit %d, want 1\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	if !doc.Cancelled || doc.Counts["delivered"] != 3 || len(doc.NotAttempted) != 5 {
		t.Fatalf("interrupted run: %+v", doc)
	}
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	keys1 := make([]string, 8)
	delivered := 0
	for i := range keys1 {
		keys1[i] = f.cell(i, "key")
		if keys1[i] == "" {
			t.Errorf("row %d has no key cell after the first run", i)
		}
		if f.cell(i, "status") == "delivered" {
			delivered++
		}
	}
	if delivered != 3 {
		t.Errorf("%d rows written back as delivered, want 3 (the in-flight call's too)", delivered)
	}

	r = f.runCtx("--all", "--json")
	if r.code != exitOK {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	doc = parseReplayJSON(t, r)
	if doc.Counts["delivered"] != 5 || doc.Counts["skipped"] != 3 {
		t.Errorf("rerun counts %v", doc.Counts)
	}
	eff := f.crm.Effects()
	if len(eff) != 8 {
		t.Errorf("%d keys acted on, want 8: %v", len(eff), eff)
	}
	for i, k := range keys1 {
		if f.cell(i, "key") != k {
			t.Errorf("row %d key changed: %q → %q", i, k, f.cell(i, "key"))
		}
		if eff[k] != 1 {
			t.Errorf("row %d (%s) acted %d times", i, k, eff[k])
		}
		if f.cell(i, "status") != "delivered" {
			t.Errorf("row %d status %q", i, f.cell(i, "status"))
		}
	}
	for _, a := range f.crm.Attempts() {
		if a.Key == "" {
			t.Error("a request carried no key")
		}
	}
}

// TestReplayWriteBackCountedAndNotDone: write_back.requests is the number of write requests
// the store sent for the run (every spreadsheets.batchUpdate: the check before sending, the
// fence of its lost answer, the write-back), not the number of writes asked for; and rows
// delivered whose outcome could not be written back (the sheet still says they wait) are not
// done: the last line counts them, each JSON row says why, and the exit code is 1.
func TestReplayWriteBackCountedAndNotDone(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		var rows []dl
		for i := range 6 {
			rows = append(rows, dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), "", "dead"}) // keys minted
		}
		return rows
	})
	// The check's write (it saves the minted keys) lands but its answer is lost: the store
	// fences it, then settles it from its journal. Every write once a call has gone out
	// fails (400: no retry).
	f.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Drop: true})
	var failing atomic.Bool
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == emulator.MethodBatchUpdate && len(f.crm.Attempts()) > 0 && !failing.Swap(true) {
			f.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Status: 400, Times: 100, Message: "test: write refused"})
		}
	})
	// The summary is written once the run is over and before the command deletes its
	// journal sheets (another write): what the emulator has counted by then is the run's.
	atSummary := -1
	out := writerFunc(func(p []byte) (int, error) {
		if atSummary < 0 {
			atSummary = f.emu.Count(emulator.MethodBatchUpdate)
		}
		return len(p), nil
	})
	var stdout, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: io.MultiWriter(out, &stdout), stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, []string{"replay", "--spreadsheet", replayID, "--config", f.cfgPath, "--all", "--json"}, e)
	r := replayRun{code: code, stdout: stdout.String(), stderr: errb.String()}
	doc := parseReplayJSON(t, r)
	if r.code != exitPartial {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if doc.Counts["delivered"] != 6 || len(doc.WriteBack.Errors) == 0 {
		t.Fatalf("counts %v, write-back errors %q\n%s", doc.Counts, doc.WriteBack.Errors, r.stderr)
	}
	if got := doc.WriteBack.Requests; got != atSummary || got < 3 {
		t.Errorf("write_back.requests = %d; the emulator got %d write requests (at least the check, its fence and the write-back)", got, atSummary)
	}
	for _, row := range doc.Rows {
		if row.WriteBack == "" || !strings.Contains(row.WriteBack, "could not be written back") {
			t.Errorf("row %d (%s): write_back %q, want why its outcome was not written", row.Row, row.ID, row.WriteBack)
		}
	}
	if !strings.Contains(r.stderr, "replay: 6 rows of 6 selected not done") {
		t.Errorf("the last line should count the 6 rows whose outcome was not written:\n%s", r.stderr)
	}
	for i := range 6 {
		if got := f.cell(i, "status"); got != "dead" {
			t.Errorf("row %d: status %q, want it still dead", i, got)
		}
	}
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

// TestReplaySourceConcurrencyWithoutFlag: a source's `concurrency = 10` in the config stands
// when --concurrency is left out (the flag's default must not cap it to 4), and --concurrency
// given caps it. Each request is held until the expected number are in flight at once (or
// 10s have passed, when they never are).
func TestReplaySourceConcurrencyWithoutFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 10}, {[]string{"--concurrency", "3"}, 3}} {
		t.Run(fmt.Sprint(tc.want), func(t *testing.T) {
			peak, cancel := testbed.NewPeak(tc.want, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
			defer cancel()
			// The first call to a source goes out alone and must succeed before the others
			// are sent (a halt costs one call): it is answered at once, the rest measured.
			var first atomic.Bool
			gate := testbed.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if first.CompareAndSwap(false, true) {
					w.WriteHeader(http.StatusOK)
					return
				}
				peak.ServeHTTP(w, r)
			}))
			f := newReplayFixture(t, func(f *replayFixture) []dl {
				var rows []dl
				for i := range 30 {
					rows = append(rows, dl{"gate", gate.URL + "/in", fmt.Sprintf(`{"n":%d}`, i), fmt.Sprintf("g-%02d", i), "dead"})
				}
				return rows
			})
			cfg := fmt.Sprintf("[sources.gate]\nurl_prefixes = [%q]\nconcurrency = 10\n", gate.URL+"/")
			if err := os.WriteFile(f.cfgPath, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			r := f.runCtx(append([]string{"--all", "--json"}, tc.args...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if p := peak.Max(); p > tc.want {
				t.Errorf("%d requests in flight at once, want at most %d", p, tc.want)
			}
			if !peak.Reached() {
				t.Errorf("never %d requests in flight at once (peak %d)", tc.want, peak.Max())
			}
		})
	}
}

// Naming a rejected or discarded row is asking for something that can't be done: it is
// skipped and the exit code says some rows are not done. A named delivered row is done.
func TestReplayNamedStickyRowIsNotDone(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	if r := f.runCtx("k4"); r.code != exitOK {
		t.Errorf("a named delivered row: exit %d, want 0\n%s", r.code, r.stderr)
	}
	for _, id := range []string{"k5", "k6"} {
		if r := f.runCtx(id); r.code != exitPartial {
			t.Errorf("named %s: exit %d, want 1\n%s", id, r.code, r.stderr)
		}
	}
	if len(f.crm.Attempts()) != 0 {
		t.Errorf("a skipped row was sent: %v", f.crm.Attempts())
	}
}

// hookReceiver is a chat webhook on loopback: it records each alert posted to it.
type hookReceiver struct {
	mu    sync.Mutex
	posts []map[string]any
	raw   []string
	url   string // the webhook's URL (its path holds a "token")
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		h.mu.Lock()
		h.posts, h.raw = append(h.posts, m), append(h.raw, string(b))
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook/T0/B0/hooktoken123"
	return h
}

func (h *hookReceiver) messages() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.posts...)
}

// withNotify adds a [notify] section to the fixture's config, its allowlist the webhook's
// host and /hook/, and the webhook's URL as $HOOK.
func withNotify(t *testing.T, f *replayFixture, h *hookReceiver, section string) {
	t.Helper()
	prefix := h.url[:strings.Index(h.url, "/hook/")+len("/hook/")]
	cfg, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(cfg), "\n[notify]"); i >= 0 {
		cfg = cfg[:i]
	}
	cfg = append(cfg, fmt.Sprintf("\n[notify]\nurl_prefixes = [%q]\n%s", prefix, section)...)
	if err := os.WriteFile(f.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	f.env["HOOK"] = h.url
}

func billingRows(f *replayFixture) []dl {
	return []dl{
		{"billing", f.billURL, `{"invoice":"I-1"}`, "b1", "dead"},
		{"billing", f.billURL, `{"invoice":"I-2"}`, "b2", "dead"},
		{"billing", f.billURL, `{"invoice":"I-3"}`, "b3", "dead"},
	}
}

// noSecrets fails when a text holds a source's secret or the webhook's token.
func noReplaySecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{crmSecret, "billing-wrong-value", "hooktoken123"} {
		if strings.Contains(s, sec) {
			t.Errorf("%s holds the secret %q", what, sec)
		}
	}
}

// TestReplayHaltWritesReportAndAlertsOnce: a run that halts on a 401 (the real CLI against
// the emulator and a receiver answering 401) writes its report, linked to the rows, and posts
// exactly one alert saying why; the exit code is the halt's.
func TestReplayHaltWritesReportAndAlertsOnce(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	// A tab whose gid is not 0, so a link to the wrong tab can't pass.
	const gid = 914062753
	wb := f.emu.Workbook(replayID)
	wb.Sheets[0].SheetID = gid
	f.emu.AddWorkbook(wb)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "replay.html")
	r := f.runCtx("--all", "--json", "--concurrency", "1", "--report", path, "--notify", "env:HOOK")
	if r.code != exitHalted {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	msgs := h.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d alerts, want 1", len(msgs))
	}
	m := msgs[0]
	text, _ := m["text"].(string)
	if !strings.HasPrefix(text, "triage replay on failed_calls halted: systemic, source billing: 401") || !strings.Contains(text, "BILLING_TOKEN") ||
		!strings.Contains(text, "0 delivered, 3 not done") || !strings.Contains(text, "report: "+path) {
		t.Errorf("alert text %q", text)
	}
	if m["halted"] != true || m["tab"] != replayTab || m["spreadsheet"] != replayID || m["exit_code"] != float64(3) || m["not_done"] != float64(3) {
		t.Errorf("alert %v", m)
	}
	noReplaySecrets(t, "the alert", h.raw[0])
	if strings.Contains(h.raw[0], "invoice") {
		t.Error("the alert holds a payload")
	}
	if !strings.Contains(r.stderr, "notify: alert sent to 127.0.0.1") || !strings.Contains(r.stderr, "report: "+path) {
		t.Errorf("stderr:\n%s", r.stderr)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	noReplaySecrets(t, "the report", out)
	if !strings.Contains(out, "HALTED (systemic, source billing)") || !strings.Contains(out, "Authorization: env:BILLING_TOKEN") {
		t.Errorf("the report lacks the halt or the config:\n%s", out)
	}
	// Each not-done row links to its own row of the tab's gid.
	links := regexp.MustCompile(`<a href="https://docs\.google\.com/spreadsheets/d/r1/edit#gid=(\d+)&amp;range=A(\d+)"[^>]*>row (\d+)</a>`).FindAllStringSubmatch(out, -1)
	rows := map[string]bool{}
	for _, l := range links {
		if l[1] != fmt.Sprint(gid) || l[2] != l[3] {
			t.Errorf("link %s: gid %s (want %d), range A%s for row %s", l[0], l[1], gid, l[2], l[3])
		}
		rows[l[3]] = true
	}
	if len(rows) != 3 || !rows["2"] || !rows["3"] || !rows["4"] || len(doc.Rows) != 3 {
		t.Errorf("linked rows %v", rows)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the report's directory holds %d files (a temporary file left?)", len(entries))
	}

	// Markdown the same way; the config's [notify] url alone is enough.
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	md := filepath.Join(dir, "replay.md")
	r = f.runCtx("--all", "--report", md)
	if r.code != exitHalted || len(h.messages()) != 2 {
		t.Fatalf("exit %d, %d alerts\n%s", r.code, len(h.messages()), r.stderr)
	}
	b, err = os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("[row 2](https://docs.google.com/spreadsheets/d/r1/edit#gid=%d&range=A2)", gid)) {
		t.Errorf("the Markdown report (%v):\n%s", err, b)
	}
}

// TestReplayCleanRunSendsNoAlert: every row done: a report, no alert, exit 0.
func TestReplayCleanRunSendsNoAlert(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	path := filepath.Join(t.TempDir(), "ok.md")
	r := f.runCtx("--all", "--report", path)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := len(h.messages()); n != 0 {
		t.Errorf("%d alerts for a clean run", n)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "Every selected row is done.") || !strings.Contains(string(b), "| 3 | 0 |") {
		t.Errorf("report (%v):\n%s", err, b)
	}
	noReplaySecrets(t, "the report", string(b))
}

// TestReplayNotifyOutsideAllowlistIsRefused: a notify URL that isn't under [notify]
// url_prefixes is refused before anything is sent, from the flag, the environment or the
// config, and `config check` says so with the line.
func TestReplayNotifyOutsideAllowlistIsRefused(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	for _, args := range [][]string{
		{"--notify", "https://hooks.evil.example/hook/T0/B0/hooktoken123"},
		{"--notify", strings.Replace(h.url, "/hook/", "/other/", 1)},
		{"--notify", "env:EVIL"},
	} {
		f.env["EVIL"] = "https://hooks.evil.example/hook/hooktoken123"
		r := f.runCtx(append([]string{"--all"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "url_prefixes") || !strings.Contains(r.stderr, "nothing was sent") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 || len(h.messages()) != 0 {
		t.Errorf("%d calls sent, %d alerts", n, len(h.messages()))
	}

	withNotify(t, f, h, "url = \"https://hooks.evil.example/hook/x\"\n")
	r := f.runCtx("--all")
	if r.code != exitUsage || !strings.Contains(r.stderr, "notify.url") {
		t.Errorf("config: exit %d\n%s", r.code, r.stderr)
	}
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	if code := run(t.Context(), []string{"config", "check", "--config", f.cfgPath}, e); code != exitUsage ||
		!regexp.MustCompile(`config\.toml:\d+: notify\.url: the notify URL \(host hooks\.evil\.example\) is not under`).MatchString(out.String()) {
		t.Errorf("config check: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// TestReplayDeadNotifyKeepsTheExitCode: an alert that can't be delivered is said on stderr
// (naming the host, not the URL) and the exit code stays the run's.
func TestReplayDeadNotifyKeepsTheExitCode(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/hook/hooktoken123"
	dead.Close()
	cfg, _ := os.ReadFile(f.cfgPath)
	cfg = append(cfg, fmt.Sprintf("\n[notify]\nurl_prefixes = [%q]\ntimeout = \"2s\"\n", dead.URL+"/hook/")...)
	if err := os.WriteFile(f.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.runCtx("--all", "--json", "--notify", deadURL)
	if r.code != exitHalted || !strings.Contains(r.stderr, "notify: post to 127.0.0.1") || !strings.Contains(r.stderr, "the exit code is the run's") {
		t.Errorf("halted: exit %d\n%s", r.code, r.stderr)
	}
	parseReplayJSON(t, r)

	// Some rows not done (an unknown ID): 1, whatever the alert did.
	r = f.runCtx("nope", "--notify", deadURL)
	if r.code != exitPartial || !strings.Contains(r.stderr, "the exit code is the run's") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	noReplaySecrets(t, "stderr", r.stderr)
}

// TestReplayReportUsage: a report path that can't work is a usage error before anything is
// sent; one that fails after a clean run makes the exit 1 and says why.
func TestReplayReportUsage(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--all", "--report", filepath.Join(dir, "r.txt")},
		{"--all", "--report", filepath.Join(dir, "missing", "r.html")},
		{"--all", "--dry-run", "--report", filepath.Join(dir, "r.html")},
		{"--all", "--dry-run", "--notify", "https://x.example/"},
	} {
		if r := f.runCtx(args...); r.code != exitUsage {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 {
		t.Errorf("%d calls sent", n)
	}
	// The path is a directory: the run happens, the report can't take its place.
	taken := filepath.Join(dir, "taken.html")
	if err := os.Mkdir(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	r := f.runCtx("--all", "--json", "--report", taken)
	if r.code != exitPartial || !strings.Contains(r.stderr, "was not written") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	if doc.Counts["delivered"] != 3 {
		t.Errorf("counts %v", doc.Counts)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the report's directory (a temporary file left?)", len(entries))
	}
}

// TestReplayReportByHand prints a halted run's stderr and report (go test -run ByHand -v).
func TestReplayReportByHand(t *testing.T) {
	if os.Getenv("TRIAGE_REPORT_BY_HAND") == "" {
		t.Skip("set TRIAGE_REPORT_BY_HAND=dir to look at a report")
	}
	f := newReplayFixture(t, func(f *replayFixture) []dl { return append(billingRows(f), crmRows(f)...) })
	h := newHookReceiver(t)
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	dir := os.Getenv("TRIAGE_REPORT_BY_HAND")
	r := f.runCtx("--all", "--concurrency", "1", "--report", filepath.Join(dir, "by-hand.html"))
	_ = f.runCtx("--all", "--concurrency", "1", "--report", filepath.Join(dir, "by-hand.md"))
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s\nalerts:\n%s", r.code, r.stdout, r.stderr, strings.Join(h.raw, "\n"))
}

// brokenWriter is a stdout that can't be written (a closed pipe).
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A halted run whose --json summary can't be written still exits 3 and still alerts: the
// run happened, and how it ended is what cron must learn.
func TestReplayHaltWithBrokenStdoutKeepsExitAndAlert(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: brokenWriter{}, stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, []string{"replay", "--spreadsheet", replayID, "--config", f.cfgPath, "--all", "--json", "--concurrency", "1", "--notify", "env:HOOK"}, e)
	if code != exitHalted {
		t.Errorf("exit %d, want 3 (the run halted; only its summary was lost)\n%s", code, errb.String())
	}
	if n := len(h.messages()); n != 1 {
		t.Errorf("%d alerts, want 1", n)
	}
}
