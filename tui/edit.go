// Edit and replay (E): a dead letter's payload opens pretty-printed in $VISUAL/$EDITOR (the
// TUI suspends, tea.Exec), is checked as JSON when the editor exits, the change is shown as a
// diff, and after a confirm it is written by ID with the payload as loaded as the
// expectation (someone else's change meanwhile is a reported conflict, nothing is written).
// The row's key never changes (invariant 3): an edit that would change it is refused, and a
// minted key is saved in the key cell with the payload. Once the write lands, the replay of
// that row is offered through the replay confirm. u undoes the write like any other.

package tui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/aymanbagabas/go-udiff"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// defaultEditor is run when neither $VISUAL nor $EDITOR is set.
const defaultEditor = "vi"

// payloadEditor is E's component: the payload edit in progress, from E to its write (the root
// offers the replay after it: afterPayloadWrite), the editor's run, the checks of what it
// left and the diff to confirm.
type payloadEditor struct {
	c      *common
	tabs   *tabSet      // the root's tabs: where the edited row is when the editor is done
	remote bool         // over triage serve (Options.Remote): no editor on the shared host
	e      *payloadEdit // the edit in progress, nil without one
}

// Update takes what the editor left (editorDoneMsg) and the answers of the edit's dialogs
// (editStepAction); what the root must do comes back as actions (a toast, a dialog, the
// editor again, the write).
func (pe payloadEditor) Update(msg tea.Msg) (payloadEditor, action) {
	switch msg := msg.(type) {
	case editorDoneMsg:
		return pe, pe.done(msg)
	case editStepAction:
		return pe, pe.step(msg)
	}
	return pe, nil
}

// editorAction: run the editor (run, a tea.Exec), then toast note ("" for none) once the TUI
// is back.
type editorAction struct {
	run  tea.Cmd
	note string
}

func (editorAction) isAction() {}

// payloadEdit is one payload edit, from E to its write (and the replay offered after it).
type payloadEdit struct {
	tab  string
	id   string // the row's identity: its key, located by at write time
	row  int
	old  string // the payload cell exactly as loaded: the write expects it
	text string // what the editor opens: the pretty-printed payload, then the last invalid save
	raw  bool   // the old payload is not JSON: opened as it is
	// saveKey is the row's minted key, written to its empty key cell with the payload:
	// minted from the row's content, it would change with the payload (invariant 3).
	saveKey string
	newText string // the new payload, compacted, once a valid save differs
}

// editStep is what the user chose in one of the edit's dialogs.
type editStep int

const (
	editCancel editStep = iota // no, esc: nothing is written
	editReopen                 // the save was not JSON: open the editor again on it
	editWrite                  // yes to the diff: write it
)

// editStepAction carries an edit dialog's answer to the root.
type editStepAction struct{ step editStep }

func (editStepAction) isAction() {}

// editDialog is a confirm whose no (n, esc, enter) ends the edit, so the edit always says
// that nothing was written.
type editDialog struct{ confirm }

// Update answers like a confirm; its close is the edit's cancel.
func (d editDialog) Update(msg tea.Msg) (dialog, action) {
	nd, a := d.confirm.Update(msg)
	if c, ok := nd.(confirm); ok {
		d.confirm = c
	}
	if _, ok := a.(closeAction); ok {
		return d, editStepAction{step: editCancel}
	}
	return d, a
}

// editorDoneMsg is the editor's exit: the file's text as it was left, or why it failed.
type editorDoneMsg struct {
	text string
	err  error
}

// editorCommand is the editor to run: $VISUAL, else $EDITOR, as the user wrote it ("code
// --wait", "'/opt/My Editor/ed' -n"); "" when neither is set (then defaultEditor). It is run
// the way git runs core.editor, through the shell with the file as "$@", so quoting and
// arguments mean what they mean in the user's shell.
func editorCommand(visual, editor string) string {
	for _, v := range []string{visual, editor} {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// editorRun is the editor's run as a tea.ExecCommand: it writes the text to a file of its
// own (0600, in a 0700 directory), runs the editor on it with the terminal, reads the file
// back and removes the directory (with any swap or backup file the editor left). All of it
// happens while the program is suspended, never in Update.
type editorRun struct {
	editor string // the command line, run through sh with the file as "$@"
	text   string
	out    string // the file's text after the editor exited
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// SetStdin is the terminal's input, for the editor.
func (r *editorRun) SetStdin(in io.Reader) { r.stdin = in }

// SetStdout is the terminal's output, for the editor.
func (r *editorRun) SetStdout(out io.Writer) { r.stdout = out }

// SetStderr is where the editor's errors go.
func (r *editorRun) SetStderr(out io.Writer) { r.stderr = out }

// Run writes the file, runs the editor and reads the file back.
func (r *editorRun) Run() error {
	dir, err := os.MkdirTemp("", "triage-edit-")
	if err != nil {
		return fmt.Errorf("create a directory for the payload: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "payload.json")
	if err := os.WriteFile(path, []byte(r.text), 0o600); err != nil {
		return fmt.Errorf("write the payload to %s: %w", path, err)
	}
	cmd := exec.Command("sh", "-c", r.editor+` "$@"`, r.editor, path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.stdin, r.stdout, r.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the editor (%s) failed: %w", r.editor, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the payload back from %s: %w", path, err)
	}
	r.out = string(b)
	return nil
}

// start answers E: in the table the marked row (only one) else the cursor row; in the detail
// view (sc.detail) the record shown. It opens the editor (editorAction) on the edit it keeps.
func (pe *payloadEditor) start(sc actionScope) action {
	inDetail := sc.detail != nil
	if pe.remote {
		// An editor here would run on the shared host as the service account (vi's :!sh is
		// a shell next to the Sheets credential): never over triage serve.
		return toastAction{toastInfo, "editing a payload is not available over triage serve: the editor would run on the shared host; use triage on your own machine"}
	}
	if why := pe.c.roleRefusal(model.AccessOperator, "edit a payload"); why != "" {
		return toastAction{toastInfo, why}
	}
	if why := sc.busy; why != "" {
		return toastAction{toastInfo, why}
	}
	ts := sc.tabs.current()
	if inDetail {
		ts = sc.tabs.named(sc.detail.tab)
	}
	if ts == nil || ts.data == nil {
		return nil
	}
	if ts.cfg.Role != model.RoleDeadLetter {
		return toastAction{toastInfo, fmt.Sprintf("editing a payload is for dead letters (the %s tab)", model.DefaultTabName(model.RoleDeadLetter))}
	}
	if !inDetail && ts.nMarked > 1 {
		return toastAction{toastInfo, fmt.Sprintf("%s edits one row and %d are marked: %s unmarks them", firstKey(pe.c.keys.EditPayload), ts.nMarked, firstKey(pe.c.keys.UnmarkAll))}
	}
	_, p, ok := sc.targets()
	switch {
	case !ok:
		return toastAction{toastInfo, "no row to edit"}
	case p.gone > 0:
		return goneToast(p.gone)
	case len(p.ids) == 0:
		return toastAction{toastError, p.noID.note()}
	}
	r, _, found := ts.data.record(p.ids[0])
	if !found {
		return goneToast(1)
	}
	e, why := pe.newEdit(ts, r)
	if why != "" {
		return toastAction{toastError, why}
	}
	pe.e = e
	return pe.open()
}

// newEdit prepares the edit of record r of ts, or says why it can't be edited.
func (pe *payloadEditor) newEdit(ts *tabState, r *model.Record) (*payloadEdit, string) {
	t := ts.data.table
	row := fmt.Sprintf("row %d", r.Row)
	switch {
	case !t.Header.Has(model.FPayload):
		return nil, "the tab has no payload column: nothing to edit"
	case r.Status == model.StatusDelivered:
		return nil, row + " was delivered: its payload is no longer sent, so editing it changes nothing"
	case r.Status == model.StatusDiscarded:
		return nil, fmt.Sprintf("%s is discarded: set its status back to dead (%s) to edit and replay it", row, firstKey(pe.c.keys.SetStatus))
	case r.Status != model.StatusDead && r.Status != model.StatusRejected:
		return nil, fmt.Sprintf("%s has status %q: only dead and rejected rows are edited", row, cellLine(r.Status))
	}
	e := &payloadEdit{tab: ts.name(), id: r.ID, row: r.Row, old: t.Get(r, model.FPayload)}
	if r.KeyOrigin == model.KeyMinted {
		if !t.Header.Has(model.FKey) {
			return nil, row + "'s key is minted from its content, which includes the payload, and the tab has no key column to keep it in: add a \"key\" header (triage init) first"
		}
		e.saveKey = r.ID
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(strings.TrimSpace(e.old)), "", "  "); err == nil {
		e.text = pretty.String() + "\n"
	} else {
		e.text, e.raw = e.old, true
	}
	return e, ""
}

// open suspends the TUI and runs the editor on the edit's text (editorAction), saying, once
// it is back, that a payload that isn't JSON was opened as it is.
func (pe *payloadEditor) open() action {
	run := &editorRun{editor: cmp.Or(pe.c.editor, defaultEditor), text: pe.e.text}
	a := editorAction{run: tea.Exec(run, func(err error) tea.Msg { return editorDoneMsg{text: run.out, err: err} })}
	if pe.e.raw {
		a.note = fmt.Sprintf("row %d's payload is not valid JSON: opened as it is", pe.e.row)
	}
	return a
}

// done checks what the editor left: nothing changed, not JSON (offer to reopen), the key
// changed (refused), or a change to show as a diff and confirm.
func (pe *payloadEditor) done(msg editorDoneMsg) action {
	e := pe.e
	if e == nil {
		return nil
	}
	if msg.err != nil {
		pe.e = nil
		return toastAction{toastError, fmt.Sprintf("%v; nothing written", msg.err)}
	}
	text := msg.text
	if strings.TrimSpace(text) == "" {
		pe.e = nil
		return toastAction{toastInfo, "the file was left empty: nothing written"}
	}
	if e.raw && strings.TrimSpace(text) == strings.TrimSpace(e.old) {
		pe.e = nil
		return toastAction{toastInfo, "no change: nothing written"}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(strings.TrimSpace(text))); err != nil {
		e.text = text // reopen on the user's work, not on the old payload
		return dialogAction{newEditInvalid(pe.c, jsonErrorAt(text))}
	}
	if oldCompact, ok := compactJSON(e.old); ok && oldCompact == compact.String() {
		pe.e = nil
		return toastAction{toastInfo, "no change: nothing written"}
	}
	e.newText = compact.String()
	ts := pe.tabs.named(e.tab)
	var r *model.Record
	if ts != nil {
		r, _, _ = ts.data.record(e.id)
	}
	if r == nil {
		pe.e = nil
		return goneToast(1)
	}
	if why := keyChange(ts.data.table, r, e); why != "" {
		pe.e = nil
		return toastAction{toastError, fmt.Sprintf("%s; nothing written", why)}
	}
	return dialogAction{newEditDiff(pe.c, e)}
}

// compactJSON is s compacted (key order, spacing of numbers and strings kept exactly), and
// whether s is JSON at all.
func compactJSON(s string) (string, bool) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(strings.TrimSpace(s))); err != nil {
		return "", false
	}
	return b.String(), true
}

// jsonErrorAt says where JSON text is broken: "line 3, column 7: invalid character '}'…"
// (json.Compact doesn't say where; Unmarshal's check does: the bad character is the last of
// the Offset bytes it read).
func jsonErrorAt(text string) string {
	var raw json.RawMessage
	err := json.Unmarshal([]byte(text), &raw)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err == nil {
			return "not JSON"
		}
		return err.Error()
	}
	prefix := text[:min(len(text), int(se.Offset))]
	line := strings.Count(prefix, "\n") + 1
	col := utf8.RuneCountInString(prefix[strings.LastIndexByte(prefix, '\n')+1:])
	return fmt.Sprintf("line %d, column %d: %s", line, max(1, col), se.Error())
}

// keyChange says why an edit would change the row's key, or "" when it doesn't: the key
// computed from the row as it would be after the write must be the key it has now, with no
// disagreement between the key cell and the payload (invariant 3).
func keyChange(t *model.Table, r *model.Record, e *payloadEdit) string {
	cells := append([]string(nil), r.Cells...)
	put := func(f model.Field, v string) {
		col := t.Header.Col(f)
		if col < 0 {
			return
		}
		for len(cells) <= col {
			cells = append(cells, "")
		}
		cells[col] = v
	}
	put(model.FPayload, e.newText)
	if e.saveKey != "" {
		put(model.FKey, e.saveKey)
	}
	key, _, problem := model.EffectiveKey(t.Config, t.Header, cells)
	field := t.Config.BodyKeyFields[strings.TrimSpace(t.Get(r, model.FSource))]
	switch {
	case problem != "":
		return "the new payload disagrees with the row's key: " + problem
	case key != e.id && r.KeyOrigin == model.KeyPayload && field != "":
		if k, ok := model.PayloadKey(e.newText, field); ok {
			return fmt.Sprintf("the payload's %s field is the row's key and a call's key never changes: it was %q, the edit makes it %q", field, e.id, k)
		}
		return fmt.Sprintf("the payload's %s field is the row's key (%q) and a call's key never changes: the edit removes it", field, e.id)
	case key != e.id:
		return fmt.Sprintf("the edit would change the row's key from %q to %q, and a call's key never changes", e.id, key)
	}
	return ""
}

// newEditInvalid is the dialog for a save that is not JSON: reopen the editor on it, or
// drop the edit.
func newEditInvalid(c *common, where string) editDialog {
	d := newConfirm(c, "The payload is not valid JSON. Open the editor again?", []string{where, "Nothing was written."}, writeOp{})
	d.yes = editStepAction{step: editReopen}
	d.yesLabel = "reopen"
	return editDialog{d}
}

// newEditDiff is the dialog that shows the change and asks to write it, default No.
func newEditDiff(c *common, e *payloadEdit) editDialog {
	q := fmt.Sprintf("Write the new payload to row %d (key %s)?", e.row, shortID(e.id))
	var notes []string
	if e.raw {
		notes = append(notes, "The old payload was not JSON; the new one is.")
	}
	if e.saveKey != "" {
		notes = append(notes, fmt.Sprintf("Its key %s was minted from the row's content: it is saved in the key cell with the payload, so it stays the row's key.", shortID(e.saveKey)))
	}
	notes = append(notes, "Written only if the payload is still as it was loaded.")
	oldLines := strings.Split(strings.TrimRight(prettyJSON(e.old), "\n"), "\n")
	newLines := strings.Split(strings.TrimRight(prettyJSON(e.newText), "\n"), "\n")
	d := newConfirm(c, q, notes, writeOp{})
	d.yes = editStepAction{step: editWrite}
	d.yesLabel = "write"
	d.list = lineDiff(oldLines, newLines, 2)
	d.listTitle = "Payload: - old, + new"
	d.showList = true
	if l := d.layout(); l.scrolls() {
		// A small window: open on the first change rather than on the notes.
		for i, line := range l.mid {
			if strings.HasPrefix(line, "R- ") || strings.HasPrefix(line, "R+ ") {
				d.offset = l.clamp(i - 1)
				break
			}
		}
	}
	return editDialog{d}
}

// lineDiff is a line diff of a and b (go-udiff, the diff gopls uses): "- " removed, "+ "
// added, "  " kept, with ctx kept lines around each change and "  …" for the kept lines left
// out between and around the hunks.
func lineDiff(a, b []string, ctx int) []string {
	before, after := strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"
	u, err := udiff.ToUnifiedDiff("", "", before, udiff.Lines(before, after), ctx)
	if err != nil {
		// Not expected (the edits come from before itself); the whole change still shows.
		var out []string
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	var out []string
	next := 1 // the first line of a not shown yet (1-based)
	// gap stands for a[from-1 : to-1], the kept lines between hunks: one line costs as much
	// as its "…", so it is shown.
	gap := func(from, to int) {
		switch {
		case to-from == 1:
			out = append(out, "  "+a[from-1])
		case to > from:
			out = append(out, "  …")
		}
	}
	for _, h := range u.Hunks {
		gap(next, h.FromLine)
		next = h.FromLine // FromLine is where the hunk starts in a (ToLine: in b)
		for _, l := range h.Lines {
			mark := "  "
			switch l.Kind {
			case udiff.Delete:
				mark = "- "
			case udiff.Insert:
				mark = "+ "
			}
			if l.Kind != udiff.Insert {
				next++
			}
			out = append(out, mark+strings.TrimSuffix(l.Content, "\n"))
		}
	}
	if len(u.Hunks) > 0 {
		gap(next, len(a)+1)
	}
	return out
}

// step carries out the answer of an edit dialog: reopen the editor, write, or cancel.
func (pe *payloadEditor) step(a editStepAction) action {
	e := pe.e
	if e == nil {
		return nil
	}
	switch a.step {
	case editReopen:
		return pe.open()
	case editWrite:
		edit := model.Edit{Tab: e.tab, ID: e.id,
			Expect: map[model.Field]string{model.FPayload: e.old},
			Set:    map[model.Field]string{model.FPayload: e.newText}}
		if e.saveKey != "" {
			// Not in Expect, so undo leaves the key in place (a key cell that holds a value
			// is never written again); the store refuses a key cell that holds another key.
			edit.Set[model.FKey] = e.saveKey
		}
		return writeAction{writeOp{kind: writeEditPayload, tab: e.tab, edits: []model.Edit{edit}}}
	}
	pe.e = nil
	return toastAction{toastInfo, "edit cancelled: nothing written"}
}

// afterPayloadWrite offers to replay the row once its new payload is written: the replay
// confirm of that row alone (default No), through the same plan and run as R.
func (m *Model) afterPayloadWrite(msg appliedMsg) tea.Cmd {
	e := m.edit.e
	if msg.op.kind != writeEditPayload || e == nil {
		return nil
	}
	m.edit.e = nil
	if msg.err != nil || len(msg.res.Applied) == 0 || m.dialog != nil {
		return nil // onWritten reported it
	}
	ts := m.tabs.named(e.tab)
	if ts == nil || ts.data == nil {
		return nil
	}
	r, ri, ok := ts.data.record(e.id)
	if !ok {
		return nil
	}
	if r.Status == model.StatusRejected {
		return m.toasts.sayf(toastInfo, "row %d is still rejected: %s clears its error, then %s replays it", r.Row, firstKey(m.c.keys.ClearError), firstKey(m.c.keys.Replay))
	}
	if m.opts.Replayer == nil {
		return m.toasts.sayf(toastInfo, "replay isn't wired into this TUI; run: triage replay --tab %s %s", ts.name(), r.ID)
	}
	if m.replay.running() || m.replay.planning || m.writes.writing {
		return nil
	}
	m.replay.planSeq++
	snap, recs := snapshot(ts.data.table, []int32{ri})
	plan := replayPlannedMsg{seq: m.replay.planSeq, tab: ts.name(), snap: snap, recs: recs}
	plan.plan = m.opts.Replayer.Plan(snap, recs)
	cmd := m.onReplayPlanned(plan)
	if d, ok := m.dialog.(confirm); ok {
		d.notes = append([]string{fmt.Sprintf("Row %d's new payload is written. Replay it now, with that payload, under its key %s?", r.Row, shortID(r.ID))}, d.notes...)
		m.dialog = d
	}
	return cmd
}
