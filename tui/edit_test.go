package tui

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// editOn opens E on the dead-letter tab's cursor row (k-2, rejected, in testWorkbook) and
// hands back what the editor would have left in the file.
func editOn(t *testing.T, m *Model, text string) {
	t.Helper()
	keys(m, "2")
	cmd := send(m, press("E"))
	if m.edit.e == nil || cmd == nil {
		t.Fatalf("E started no edit; toasts: %q", toastTexts(m))
	}
	send(m, editorDoneMsg{text: text})
}

const k2Edited = "{\n  \"id\": \"k-2\",\n  \"name\": \"Grace Hopper\"\n}\n"

// TestEditOpensPrettyPayload: the editor gets the payload indented, the row's key and the old
// cell as they were loaded; the editor comes from $VISUAL, else $EDITOR.
func TestEditOpensPrettyPayload(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, tea.EnvMsg{"EDITOR=code --wait", "TERM=xterm"})
	if m.c.editor != "code --wait" {
		t.Errorf("editor %q", m.c.editor)
	}
	keys(m, "2", "E")
	e := m.edit.e
	if e == nil {
		t.Fatalf("no edit: %q", toastTexts(m))
	}
	if e.text != "{\n  \"id\": \"k-2\",\n  \"name\": \"Grace\"\n}\n" || e.old != `{"id":"k-2","name":"Grace"}` || e.id != "k-2" || e.row != 3 || e.raw {
		t.Errorf("edit = %+v", *e)
	}
	for _, c := range []struct {
		visual, editor string
		want           string
	}{
		{"", "vim", "vim"},
		{"nano -w", "vim", "nano -w"},
		{"", ` '/opt/My Editor/ed' --flag "a b" `, `'/opt/My Editor/ed' --flag "a b"`},
		{"  ", "", ""},
	} {
		if got := editorCommand(c.visual, c.editor); got != c.want {
			t.Errorf("editorCommand(%q, %q) = %q, want %q", c.visual, c.editor, got, c.want)
		}
	}
}

// TestEditRefusals: E refuses, with a reason and without opening an editor, where an edit
// can't be written or makes no sense.
func TestEditRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		wb   func(testing.TB) *model.Workbook
		ro   bool
		keys []string
		want string
	}{
		{"read-only", testWorkbook, true, []string{"2", "E"}, "read-only"},
		{"two marked", testWorkbook, false, []string{"2", "space", "space", "E"}, "E edits one row and 2 are marked: V unmarks them"},
		{"delivered", testWorkbook, false, []string{"2", "G", "E"}, "was delivered"},
		{"inbox", testWorkbook, false, []string{"E"}, "editing a payload is for dead letters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newLoaded(t, c.wb(t), 80, 24, func(o *Options) { o.Store = nopStore{t: t, readOnly: c.ro} })
			var cmd tea.Cmd
			for _, k := range c.keys {
				cmd = send(m, press(k))
			}
			if m.edit.e != nil || m.dialog != nil {
				t.Error("the edit started")
			}
			if !strings.Contains(toastTexts(m), c.want) {
				t.Errorf("toasts %q, want %q", toastTexts(m), c.want)
			}
			_ = cmd
		})
	}
}

// TestEditOutcomes: what the editor leaves decides what happens: no change, not JSON (the
// dialog names line and column and offers to reopen), a change (the diff and its confirm,
// whose yes writes by ID with the old cell as the expectation, undoable).
func TestEditOutcomes(t *testing.T) {
	t.Run("unchanged", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		editOn(t, m, "{\"id\":\"k-2\",   \"name\":\"Grace\"}") // same JSON, other spacing
		if m.dialog != nil || m.edit.e != nil || !strings.Contains(toastTexts(m), "no change: nothing written") {
			t.Errorf("dialog %v edit %v toasts %q", m.dialog != nil, m.edit.e != nil, toastTexts(m))
		}
	})
	t.Run("invalid", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		bad := "{\n  \"id\": \"k-2\",\n  \"name\": }\n"
		editOn(t, m, bad)
		s := plainScreen(m)
		if !strings.Contains(s, "not valid JSON") || !strings.Contains(s, "line 3, column 11") || !strings.Contains(s, "reopen") {
			t.Errorf("the dialog names the error:\n%s", s)
		}
		d := m.dialog
		_, act := d.Update(press("y"))
		if a, ok := act.(editStepAction); !ok || a.step != editReopen {
			t.Errorf("y = %#v, want reopen", act)
		}
		// Reopen opens the editor on what the user wrote, not on the old payload.
		if cmd := send(m, press("y")); cmd == nil || m.edit.e == nil || m.edit.e.text != bad {
			t.Errorf("reopen: edit %+v", m.edit.e)
		}
		send(m, editorDoneMsg{text: bad})
		send(m, press("n"))
		if m.dialog != nil || m.edit.e != nil || !strings.Contains(toastTexts(m), "edit cancelled: nothing written") {
			t.Errorf("cancel: dialog %v toasts %q", m.dialog != nil, toastTexts(m))
		}
	})
	t.Run("editor failed", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		keys(m, "2", "E")
		send(m, editorDoneMsg{err: errors.New(`the editor (nope) failed: exec: "nope": executable file not found in $PATH`)})
		if m.edit.e != nil || !strings.Contains(toastTexts(m), "executable file not found") || !strings.Contains(toastTexts(m), "nothing written") {
			t.Errorf("toasts %q", toastTexts(m))
		}
	})
	t.Run("changed", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		editOn(t, m, k2Edited)
		s := plainScreen(m)
		for _, w := range []string{"Write the new payload to row 3 (key k-2)? [y/N]", `-   "name": "Grace"`, `+   "name": "Grace Hopper"`} {
			if !strings.Contains(s, w) {
				t.Errorf("the diff lacks %q:\n%s", w, s)
			}
		}
		_, act := m.dialog.Update(press("enter"))
		if a, ok := act.(editStepAction); !ok || a.step != editCancel {
			t.Errorf("enter = %#v: the default is No", act)
		}
		cmd := send(m, press("y"))
		if !m.writes.writing || m.writes.inflight == nil || cmd == nil {
			t.Fatal("y wrote nothing")
		}
		op := *m.writes.inflight
		want := model.Edit{Tab: "failed_calls", ID: "k-2",
			Expect: map[model.Field]string{model.FPayload: `{"id":"k-2","name":"Grace"}`},
			Set:    map[model.Field]string{model.FPayload: `{"id":"k-2","name":"Grace Hopper"}`}}
		if op.kind != writeEditPayload || len(op.edits) != 1 || !reflect.DeepEqual(op.edits[0], want) {
			t.Errorf("write %+v, want %+v", op.edits, want)
		}
		// It lands: the row shows it, the replay isn't offered for a rejected row (it says how),
		// and u undoes it with the inverse edit.
		send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 3}}}})
		r, _, _ := m.tabs.current().data.record("k-2")
		if got := m.tabs.current().data.table.Get(r, model.FPayload); got != want.Set[model.FPayload] {
			t.Errorf("the row shows %q", got)
		}
		if !strings.Contains(toastTexts(m), "new payload written · u undoes") || !strings.Contains(toastTexts(m), "row 3 is still rejected: e clears its error, then R replays it") {
			t.Errorf("toasts %q", toastTexts(m))
		}
		send(m, press("u"))
		if inv := m.writes.inflight; inv == nil || !reflect.DeepEqual(inv.edits[0], want.Inverse()) || inv.edits[0].Set[model.FPayload] != want.Expect[model.FPayload] {
			t.Errorf("undo sends %+v", inv)
		}
	})
}

// TestEditKeyNeverChanges: the key comes from the payload's id (the source is configured so):
// an edit that changes or removes it is refused before anything is written; a minted key is
// saved in the key cell with the payload (not expected, so undo leaves it); a row whose key is
// minted in a tab without a key column can't be edited.
func TestEditKeyNeverChanges(t *testing.T) {
	payloadKeyed := func(tb testing.TB) *model.Workbook {
		wb := testWorkbook(tb)
		tc := model.DefaultTabConfig(model.RoleDeadLetter)
		tc.BodyKeyFields = map[string]string{"crm": "id"}
		tab, err := model.Decode(tc, rowsOf(
			[]string{"timestamp", "source", "url", "payload", "error", "key", "status"},
			[]string{"2025-05-31T10:00:00Z", "crm", "https://crm.example/x", `{"id":"p-1","n":1}`, "503", "", "dead"},
			[]string{"2025-05-30T10:00:00Z", "mailer", "https://mail.example/x", `{"to":"a@example.com"}`, "503", "", "dead"},
		), nil)
		if err != nil {
			tb.Fatal(err)
		}
		wb.Tabs[1] = tab
		return wb
	}
	for _, c := range []struct{ text, want string }{
		{`{"id":"p-2","n":1}`, `the payload's id field is the row's key and a call's key never changes: it was "p-1", the edit makes it "p-2"`},
		{`{"n":1}`, `the payload's id field is the row's key ("p-1") and a call's key never changes: the edit removes it`},
	} {
		m := newLoaded(t, payloadKeyed(t), 80, 24)
		editOn(t, m, c.text)
		if m.dialog != nil || m.edit.e != nil || !strings.Contains(toastTexts(m), c.want) || !strings.Contains(toastTexts(m), "nothing written") {
			t.Errorf("%s: dialog %v, toasts %q", c.text, m.dialog != nil, toastTexts(m))
		}
	}
	// The id kept, another field changed: fine, and no key cell is written (the payload keeps it).
	m := newLoaded(t, payloadKeyed(t), 80, 24)
	editOn(t, m, `{"id":"p-1","n":2}`)
	send(m, press("y"))
	if op := m.writes.inflight; op == nil || len(op.edits[0].Set) != 1 {
		t.Fatalf("write %+v", op)
	}
	// A minted key (mailer has no key field): saved with the payload, outside Expect.
	m = newLoaded(t, payloadKeyed(t), 80, 24)
	keys(m, "2", "j")
	r, _ := m.tabs.current().current()
	if r.KeyOrigin != model.KeyMinted {
		t.Fatalf("mailer's key is %v", r.KeyOrigin)
	}
	send(m, press("E"))
	send(m, editorDoneMsg{text: `{"to":"b@example.com"}`})
	if !strings.Contains(plainScreen(m), "it is saved in") {
		t.Errorf("the confirm says the minted key is saved:\n%s", plainScreen(m))
	}
	send(m, press("y"))
	op := m.writes.inflight
	if op == nil || op.edits[0].Set[model.FKey] != r.ID || op.edits[0].ID != r.ID {
		t.Fatalf("write %+v, want the key %s saved", op, r.ID)
	}
	if _, ok := op.edits[0].Expect[model.FKey]; ok {
		t.Error("the key cell is expected: undo would blank a key cell that holds a key")
	}
	if _, ok := op.edits[0].Inverse().Set[model.FKey]; ok {
		t.Error("undo writes the key cell")
	}
	// Minted, and no key column to keep it in.
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rowsOf(
		[]string{"timestamp", "source", "url", "payload", "status"},
		[]string{"2025-05-31T10:00:00Z", "crm", "https://crm.example/x", `{"n":1}`, "dead"}))
	m = newLoaded(t, wb, 80, 24)
	keys(m, "2", "E")
	if m.edit.e != nil || !strings.Contains(toastTexts(m), "no key column") {
		t.Errorf("toasts %q", toastTexts(m))
	}
}

// TestEditNotJSONAndNumbers: a payload that isn't JSON opens as it is and says so; the new
// payload is compacted with its key order and numbers exactly as typed.
func TestEditNotJSONAndNumbers(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rowsOf(
		[]string{"timestamp", "source", "url", "payload", "key", "status"},
		[]string{"2025-05-31T10:00:00Z", "crm", "https://crm.example/x", "order=1&qty=2", "k-1", "dead"}))
	m := newLoaded(t, wb, 80, 24)
	keys(m, "2")
	cmd := send(m, press("E"))
	if m.edit.e == nil || !m.edit.e.raw || m.edit.e.text != "order=1&qty=2" {
		t.Fatalf("edit %+v", m.edit.e)
	}
	found := false
	for _, msg := range cmdMsgs(t, tea.Batch(cmd)) {
		_ = msg
	}
	if strings.Contains(toastTexts(m), "not valid JSON: opened as it is") {
		found = true
	}
	if !found {
		t.Errorf("toasts %q", toastTexts(m))
	}
	send(m, editorDoneMsg{text: "{\n  \"z\": 1.50,\n  \"a\": 12345678901234567890,\n  \"e\": 1e3\n}\n"})
	send(m, press("y"))
	op := m.writes.inflight
	want := `{"z":1.50,"a":12345678901234567890,"e":1e3}`
	if op == nil || op.edits[0].Set[model.FPayload] != want || op.edits[0].Expect[model.FPayload] != "order=1&qty=2" {
		t.Errorf("write %+v, want %s", op, want)
	}
	if !json.Valid([]byte(want)) {
		t.Error("bad want")
	}
}

// TestLineDiff: changed lines with context, gaps marked.
func TestLineDiff(t *testing.T) {
	a := strings.Split("{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5,\n  \"f\": 6\n}", "\n")
	b := append([]string(nil), a...)
	b[5] = "  \"e\": 50,"
	b = append(b[:2], b[3:]...) // "b" removed
	got := strings.Join(lineDiff(a, b, 1), "\n")
	long := strings.Join(lineDiff(append(append([]string{"x", "y"}, a...), "z", "w"), append(append([]string{"x", "y"}, b...), "z", "w"), 1), "\n")
	if !strings.HasPrefix(long, "  …\n") || !strings.HasSuffix(long, "\n  …") {
		t.Errorf("gaps of more than one line are marked:\n%s", long)
	}
	want := "  {\n    \"a\": 1,\n-   \"b\": 2,\n    \"c\": 3,\n    \"d\": 4,\n-   \"e\": 5,\n+   \"e\": 50,\n    \"f\": 6\n  }"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}

// TestGoldenMatrixEdit: the edit's diff and its confirm, in every size and terminal.
func TestGoldenMatrixEdit(t *testing.T) {
	goldenMatrix(t, "edit_diff", nil, func(t *testing.T, m *Model) { editOn(t, m, k2Edited) })
}

// The editor runs as git runs core.editor: through the shell, so a quoted path with a space
// and the user's own arguments mean what they mean there, and the file comes last.
func TestEditorRunsThroughTheShell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "My Editor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n# $1 is the flag, $2 the file\n[ \"$1\" = \"--wait\" ] || exit 3\nsed -i 's/Grace/Grace Hopper/' \"$2\"\n"
	if err := os.WriteFile(filepath.Join(dir, "ed"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := &editorRun{editor: "'" + dir + "/ed' --wait", text: "{\"name\": \"Grace\"}\n", stdout: io.Discard, stderr: io.Discard}
	if err := run.Run(); err != nil {
		t.Fatal(err)
	}
	if run.out != "{\"name\": \"Grace Hopper\"}\n" {
		t.Errorf("the editor's file: %q", run.out)
	}
}
