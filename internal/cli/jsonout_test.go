package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// hostile is what a row can hold that a terminal would act on: an OSC title, a bracketed
// paste end (which would let the rest of a copied line run as typed), an 8-bit CSI, the
// 7-bit CSI, bidi overrides and isolates, and a NEL.
const hostile = "\x1b]0;pwned\x07\x1b[201~\u009b31m\u202eevil\u2066\u200f\u061c\x1b[2J\u0085"

// checkNoRawControls fails if out holds a byte or character the sanitiser replaces: ESC and
// the other C0 controls (but newline and tab), C1 controls (encoded in UTF-8), DEL and the
// bidi controls.
func checkNoRawControls(t *testing.T, where, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && r != '\t' && model.Unsafe(r) {
			t.Errorf("%s: raw U+%04X at byte %d: %q", where, r, i, out[max(0, i-30):min(len(out), i+30)])
			return
		}
	}
}

// Invariant 9 for set-status and clear-error: text and --json, stdout and stderr. A hostile
// ID is echoed sanitised in text and escaped in JSON, and the JSON decodes to the very ID.
func TestEditCommandsSanitiseOutput(t *testing.T) {
	// IDs are trimmed (TrimSpace takes a trailing NEL): end them with something else.
	id := "m-" + hostile + "-1"
	jobID := "j-" + hostile + "-1"
	emu, url := startEmu(t, &emulator.Workbook{SpreadsheetID: "s1", Title: "Hostile", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			{46000.5, "Eve" + hostile, "e@x", hostile, "new", id},
			{46000.6, "Bob", "b@x", "hi", "new", "m2"},
		}},
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt"},
			{jobID, "sync", `{"x":"` + hostile + `"}`, "error", "w1", "", "boom " + hostile, ""},
			{"j2", "sync", "{}", "claimed" + hostile, "w1", "", "", ""},
		}},
	}})
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"

	r := c.run("set-status", "--tab", "Inbox", "--status", "read", id, "nope"+hostile)
	if r.code != exitPartial || !strings.Contains(r.stdout, "row 2") {
		t.Fatalf("set-status: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkNoRawControls(t, "set-status stdout", r.stdout)
	checkNoRawControls(t, "set-status stderr", r.stderr)
	if !strings.Contains(r.stdout, "m-␛]0;pwned␇␛[201~⍰31m⇄evil⇄") {
		t.Errorf("set-status: the ID should be shown with visible placeholders: %q", r.stdout)
	}

	r = c.run("set-status", "--json", "--tab", "Inbox", "--status", "done", id, "nope"+hostile)
	checkNoRawControls(t, "set-status --json stdout", r.stdout)
	checkNoRawControls(t, "set-status --json stderr", r.stderr)
	var doc editDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("set-status --json: %v\n%s", err, r.stdout)
	}
	if len(doc.Changed) != 1 || doc.Changed[0].ID != id || doc.Changed[0].Set["Status"] != "done" || doc.ExitCode != exitPartial {
		t.Errorf("set-status --json: %+v", doc)
	}
	// An ID no row has is missing (as the README says), not unchanged, and decodes as given.
	if len(doc.Missing) != 1 || doc.Missing[0] != "nope"+hostile || len(doc.Unchanged) != 0 {
		t.Errorf("set-status --json: the unknown ID should be under missing, as given: missing %q, unchanged %+v", doc.Missing, doc.Unchanged)
	}
	if got := cell(t, emu, "Inbox", 2, 4); got != "done" {
		t.Errorf("status cell = %q", got)
	}

	for _, args := range [][]string{
		{"clear-error", "--tab", "Jobs", jobID, "j2"},
		{"clear-error", "--tab", "Jobs", "--json", jobID, "j2"},
	} {
		r = c.run(args...)
		if r.code != exitPartial {
			t.Errorf("%v: exit %d (j2 is not a sticky error)\n%s", args[:4], r.code, r.stderr)
		}
		checkNoRawControls(t, "clear-error stdout", r.stdout)
		checkNoRawControls(t, "clear-error stderr", r.stderr)
	}
	doc = editDoc{}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("clear-error --json: %v\n%s", err, r.stdout)
	}
	// The first run cleared the job; the second finds it already released.
	if len(doc.Unchanged) != 2 || doc.Unchanged[0].ID != jobID || !doc.Unchanged[0].Done || doc.Unchanged[1].ID != "j2" {
		t.Errorf("clear-error --json: %+v", doc)
	}
}

// Invariant 9 for replay: --json, --dry-run --json and the text forms, stdout and stderr.
// Keys, URLs, sources and statuses from the sheet come out with placeholders in text and
// escaped in JSON, and the JSON decodes to the sheet's text. (Which of these rows are sent
// and which refused is the replay package's business; each is listed somewhere, by its ID.)
func TestReplayOutputIsSanitised(t *testing.T) {
	bidiKey := "k1\u202e\u2066x"   // bidi controls: a header can carry them
	c1Key := "k2" + hostile + "-2" // ESC and C1: refused before sending
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		return []dl{
			{"crm", f.crmURL, `{"n":"` + hostile + `"}`, bidiKey, "dead"},
			{"crm", f.crmURL, `{"n":2}`, c1Key, "dead"},
			{"crm", f.crmURL + "/" + hostile, `{"n":3}`, "k3", "dead"},     // URL: refused
			{"crm" + hostile, f.crmURL, `{"n":4}`, "k4", "dead"},           // no such source: refused
			{"crm", f.crmURL, `{"n":5}`, "k5", "rejected" + hostile + "x"}, // odd status
		}
	})
	if err := f.emu.SetCell(replayID, replayTab, 2, 4, "boom "+hostile); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, env: f.env}
	base := []string{"--spreadsheet", replayID, "--config", f.cfgPath, "replay"}

	type entry struct{ ID, Key, URL, Source, Reason, State string }
	var doc struct {
		Rows      []entry `json:"rows"`
		Refused   []entry `json:"refused"`
		Skipped   []entry `json:"skipped"`
		WouldSend []entry `json:"would_send"`
	}
	ids := func(where string, stdout string) map[string]entry {
		t.Helper()
		doc.Rows, doc.Refused, doc.Skipped, doc.WouldSend = nil, nil, nil, nil
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, stdout)
		}
		out := map[string]entry{}
		for _, l := range [][]entry{doc.Rows, doc.Refused, doc.Skipped, doc.WouldSend} {
			for _, e := range l {
				out[e.ID] = e
			}
		}
		for _, id := range []string{bidiKey, c1Key, "k3", "k4", "k5"} {
			if _, ok := out[id]; !ok {
				t.Errorf("%s: no entry with ID %q: the JSON must decode to the sheet's text\n%s", where, id, stdout)
			}
		}
		return out
	}

	r := c.run(append(base, "--all", "--dry-run", "--json")...)
	checkNoRawControls(t, "replay --dry-run --json stdout", r.stdout)
	checkNoRawControls(t, "replay --dry-run --json stderr", r.stderr)
	if e := ids("replay --dry-run --json", r.stdout); e[bidiKey].Key != bidiKey && e[bidiKey].Reason == "" {
		t.Errorf("dry run: the key should decode as in the sheet: %+v", e[bidiKey])
	}
	if !strings.Contains(r.stdout, `\u202e`) || !strings.Contains(r.stdout, `\u009b`) {
		t.Errorf("dry run: bidi and C1 characters should be escaped, not dropped:\n%s", r.stdout)
	}

	r = c.run(append(base, "--all", "--dry-run")...)
	checkNoRawControls(t, "replay --dry-run stdout", r.stdout)
	checkNoRawControls(t, "replay --dry-run stderr", r.stderr)
	if !strings.Contains(r.stdout+r.stderr, "k1⇄⇄x") {
		t.Errorf("dry run text: the key should show with placeholders:\n%s\n%s", r.stdout, r.stderr)
	}

	r = c.run(append(base, "--all", "--json")...)
	checkNoRawControls(t, "replay --json stdout", r.stdout)
	checkNoRawControls(t, "replay --json stderr", r.stderr)
	ids("replay --json", r.stdout)

	r = c.run(append(base, "--all")...)
	checkNoRawControls(t, "replay stdout", r.stdout)
	checkNoRawControls(t, "replay stderr", r.stderr)
	if !strings.Contains(r.stderr, "refused:") {
		t.Errorf("replay text: refusals should be listed:\n%s", r.stderr)
	}
}

// The writer itself: an 8-bit CSI split across two writes is still caught, tabs and newlines
// pass, and the bytes reported written are the caller's.
func TestSafeWriter(t *testing.T) {
	var buf bytes.Buffer
	w := newSafeWriter(&buf)
	for _, p := range []string{"a\t\xc2", "\x9b", "31m\n\xe2\x80", "\xaeb\x1b[201~\r\n", "\xc2"} {
		n, err := w.Write([]byte(p))
		if err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "a\t⍰31m\n⇄b␛[201~\n\uFFFD"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if newSafeWriter(w) != w {
		t.Error("wrapping twice should give the same writer")
	}
	// The progress line's own carriage return gets through; one in its text does not.
	buf.Reset()
	redrawLine(w, "replay: 1/2 \rspoof \u009b")
	if got := buf.String(); got != "\rreplay: 1/2 spoof ⍰" {
		t.Errorf("redraw = %q", got)
	}
}

// writeJSON escapes what the sanitiser would replace, and nothing a parser would read
// differently.
func TestWriteJSONEscapesAndRoundTrips(t *testing.T) {
	v := map[string]string{"k": hostile + "\t\n" + "ok é 👋 \u2028\ufeff\x7f"}
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	checkNoRawControls(t, "writeJSON", buf.String())
	for _, esc := range []string{`\u009b`, `\u202e`, `\u2066`, `\u0085`, `\u001b`, `\u007f`, `\ufeff`} {
		if !strings.Contains(buf.String(), esc) {
			t.Errorf("writeJSON should escape as %s: %s", esc, buf.String())
		}
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["k"] != v["k"] {
		t.Errorf("round trip: %v %q", err, back["k"])
	}
}

// requeue-stale --json: the stale claims, with who claimed them (a hostile worker name is
// escaped, and decodes as written), in a dry run and for real.
func TestRequeueStaleJSON(t *testing.T) {
	wb := smallWorkbook()
	wb.Sheets[1].Rows[2][4] = "w1" + hostile + "!"
	emu, url := startEmu(t, wb)
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	for _, dry := range []bool{true, false} {
		args := []string{"requeue-stale", "--json"}
		if dry {
			args = append(args, "--dry-run")
		}
		r := c.run(args...)
		checkNoRawControls(t, "requeue-stale --json stdout", r.stdout)
		checkNoRawControls(t, "requeue-stale --json stderr", r.stderr)
		var doc editDoc
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
			t.Fatalf("dry=%v: exit %d, %v\n%s\n%s", dry, r.code, err, r.stdout, r.stderr)
		}
		if doc.DryRun != dry || len(doc.Changed) != 1 || doc.Changed[0].ID != "j2" || doc.Changed[0].Set["status"] != "pending" ||
			!strings.Contains(doc.Changed[0].Note, "claimed by w1"+hostile+"! ") {
			t.Errorf("dry=%v: %+v", dry, doc)
		}
	}
	if cell(t, emu, "Jobs", 3, 3) != "pending" || cell(t, emu, "Jobs", 4, 3) != "claimed" {
		t.Errorf("requeue touched the wrong rows: %v", emu.Cells("s1", "Jobs"))
	}
	r := c.run("requeue-stale")
	if r.code != 0 || !strings.Contains(r.stderr, "no claims older than") {
		t.Errorf("second run: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// The set of an edit command's --json names each column as the tab's header row does (as
// list --json's fields do), whatever spelling the sheet uses: a script reads a row with
// list --json and what a command set on it with the same keys.
func TestEditDocSetKeysAreColumnNames(t *testing.T) {
	_, url := startEmu(t, &emulator.Workbook{SpreadsheetID: "s1", Title: "Ops", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "Status", "claimed_by", "Claimed At", "last_error", "updatedAt"},
			{"j1", "sync", "{}", "error", "w1", "", "boom", ""},
			{"j2", "sync", "{}", "claimed", "w1", model.FormatTime(time.Now().Add(-2 * time.Hour)), "", ""},
		}},
	}})
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	var list struct {
		Rows []struct {
			Fields map[string]string `json:"fields"`
		} `json:"rows"`
	}
	r := c.run("list", "--tab", "Jobs", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Rows) == 0 {
		t.Fatalf("list --json: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	for _, args := range [][]string{
		{"requeue-stale", "--dry-run", "--json"},
		{"clear-error", "--tab", "Jobs", "--json", "j1"},
	} {
		r := c.run(args...)
		var doc editDoc
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || len(doc.Changed) != 1 {
			t.Fatalf("%v: exit %d, %v\n%s\n%s", args, r.code, err, r.stdout, r.stderr)
		}
		want := map[string][]string{
			"requeue-stale": {"Status", "claimed_by", "Claimed At", "updatedAt"},
			"clear-error":   {"Status", "claimed_by", "Claimed At", "updatedAt"},
		}[args[0]]
		for _, k := range want {
			if _, ok := doc.Changed[0].Set[k]; !ok {
				t.Errorf("%v: set has no %q: %v", args, k, doc.Changed[0].Set)
			}
		}
		for k := range doc.Changed[0].Set {
			if _, ok := list.Rows[0].Fields[k]; !ok {
				t.Errorf("%v: set key %q is not a column of the tab (list --json fields: %v)", args, k, list.Rows[0].Fields)
			}
		}
	}
}
