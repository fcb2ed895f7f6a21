package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/replay"
)

// editorScript writes a shell script to use as $EDITOR: body runs with the file to edit as $1.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nset -e\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// startEditTUI runs the TUI over the production wiring (replay.Runner as its Replayer, the
// real store on the emulator), with the editor in the program's environment.
func startEditTUI(t *testing.T, f *replayFixture, editor string) *teatest.TestModel {
	t.Helper()
	src := &replay.Source{Name: "crm", URLPrefixes: []string{f.url + "/"}}
	client := &replay.Client{Sources: map[string]*replay.Source{"crm": src}, Getenv: func(string) string { return "" },
		Base: time.Millisecond, Cap: 10 * time.Millisecond}
	m := New(Options{Store: f.store, SpreadsheetID: replaySheet, Replayer: &replay.Runner{Client: client, Store: f.store}})
	tm := teatest.NewTestModel(t, probed{m}, testbed.TermOptions(100, 30, "EDITOR="+editor)...)
	waitScreen(t, tm, "Replay desk")
	return tm
}

// TestEditPayloadEndToEnd: the editor script changes one field; after the confirm the emulator
// holds the new payload, compact, in that row, and the key cell is unchanged; u puts the old
// payload back; edited again, the offered replay sends the edited body under the original key.
func TestEditPayloadEndToEnd(t *testing.T) {
	f := newReplayFixture(t, "crm", 3)
	tm := startEditTUI(t, f, editorScript(t, `sed 's/"n": 3/"n": 33/' "$1" > "$1.new"; mv "$1.new" "$1"`))
	const oldBody, newBody = `{"id":"k-3","n":3}`, `{"id":"k-3","n":33}`

	// Newest first: k-3 is the cursor row (sheet row 4).
	tm.Send(press("E"))
	waitScreen(t, tm, "Write the new payload to row 4 (key k-3)?", `-   "n": 3`, `+   "n": 33`)
	if got := f.cells()["k-3"][3]; got != oldBody {
		t.Fatalf("written before the confirm: %q", got)
	}
	tm.Send(press("y"))
	waitScreen(t, tm, "new payload written", "Replay 1 call to 1 source (crm)?", "new payload is written")
	c := f.cells()["k-3"]
	if c[3] != newBody || c[7] != "k-3" {
		t.Errorf("emulator row: payload %q key %q, want %s under k-3", c[3], c[7], newBody)
	}
	tm.Send(press("n")) // not now
	tm.Send(press("u"))
	waitScreen(t, tm, "undone on failed_calls: 1 row restored")
	if c := f.cells()["k-3"]; c[3] != oldBody || c[7] != "k-3" {
		t.Errorf("after undo: payload %q key %q", c[3], c[7])
	}

	tm.Send(press("E"))
	waitScreen(t, tm, "Write the new payload to row 4 (key k-3)?")
	tm.Send(press("y"))
	waitScreen(t, tm, "Replay 1 call to 1 source (crm)?")
	tm.Send(press("y"))
	waitScreen(t, tm, "Replay finished", "1 delivered")
	tm.Send(press("esc"))
	tm.Send(press("q"))
	finalModel(t, tm)
	if got := string(f.rcv.EffectBody("k-3")); got != newBody {
		t.Errorf("the receiver got %q under k-3, want the edited %s", got, newBody)
	}
	for _, a := range f.rcv.Attempts() {
		if a.Key != "k-3" || a.Headers.Get("Idempotency-Key") != "k-3" {
			t.Errorf("an attempt carried key %q (header %q), want k-3", a.Key, a.Headers.Get("Idempotency-Key"))
		}
	}
	if c := f.cells()["k-3"]; c[3] != newBody || c[7] != "k-3" || c[8] != "delivered" {
		t.Errorf("after the replay: %v", c)
	}
}

// TestEditPayloadInvalidJSON: the script writes invalid JSON: the screen names the error with
// its line and column, and nothing changes in the emulator.
func TestEditPayloadInvalidJSON(t *testing.T) {
	f := newReplayFixture(t, "crm", 2)
	before := f.cells()
	tm := startEditTUI(t, f, editorScript(t, `printf '{\n  "id": "k-2",\n  "n": \n' > "$1"`))
	tm.Send(press("E"))
	waitScreen(t, tm, "not valid JSON", "line 4, column 1: unexpected end of JSON input", "reopen")
	tm.Send(press("n"))
	waitScreen(t, tm, "edit cancelled: nothing written")
	tm.Send(press("q"))
	finalModel(t, tm)
	for k, c := range f.cells() {
		if strings.Join(c, "|") != strings.Join(before[k], "|") {
			t.Errorf("%s changed: %v → %v", k, before[k], c)
		}
	}
}

// TestEditPayloadUnchanged: the script changes nothing: nothing is written, and it says so.
func TestEditPayloadUnchanged(t *testing.T) {
	f := newReplayFixture(t, "crm", 2)
	before := f.cells()
	writes := f.emu.Count("spreadsheets.batchUpdate")
	tm := startEditTUI(t, f, editorScript(t, `touch "$1"`))
	tm.Send(press("E"))
	waitScreen(t, tm, "no change: nothing written")
	tm.Send(press("q"))
	finalModel(t, tm)
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != writes {
		t.Errorf("%d writes for an unchanged payload", n-writes)
	}
	for k, c := range f.cells() {
		if strings.Join(c, "|") != strings.Join(before[k], "|") {
			t.Errorf("%s changed: %v → %v", k, before[k], c)
		}
	}
}

// TestEditPayloadConflict: someone changes the payload in the sheet between the editor and
// the confirm: the write is a reported conflict, and their value stays.
func TestEditPayloadConflict(t *testing.T) {
	f := newReplayFixture(t, "crm", 2)
	tm := startEditTUI(t, f, editorScript(t, `sed 's/"n": 2/"n": 22/' "$1" > "$1.new"; mv "$1.new" "$1"`))
	tm.Send(press("E"))
	waitScreen(t, tm, "Write the new payload to row 3 (key k-2)?")
	const theirs = `{"id":"k-2","n":2,"fixed_by":"someone else"}`
	if err := f.emu.SetCell(replaySheet, "failed_calls", 3, 3, theirs); err != nil { // sheet row 3 is k-2
		t.Fatal(err)
	}
	tm.Send(press("y"))
	waitScreen(t, tm, "1 conflict", "not overwritten")
	tm.Send(press("q"))
	fm := finalModel(t, tm)
	if got := f.cells()["k-2"][3]; got != theirs {
		t.Errorf("the emulator holds %q, want the other person's %q", got, theirs)
	}
	if fm.dialog != nil && strings.Contains(ansiStripSGR(fm.View().Content), "Replay 1 call") {
		t.Error("a replay was offered after a conflict")
	}
}
