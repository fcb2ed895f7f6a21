package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

func TestDeadLetterFilters(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2")
	for q, want := range map[string]int{
		"source:mailer":           1,
		"source:crm":              7,
		"status:rejected":         1,
		"status:dead":             7,
		"error:timeout":           1,
		"error:503 source:crm":    6,
		"!source:crm":             1,
		"source:crm !status:dead": 1,
	} {
		keys(m, "/")
		typeText(m, q)
		keys(m, "enter")
		if got := len(m.tabs.current().visible); got != want {
			t.Errorf("filter %q shows %d rows, want %d", q, got, want)
		}
		keys(m, "esc")
	}
}

func TestDiscardAndUndo(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "D") // cursor row k-1: at once, no confirm
	if m.dialog != nil || !m.writes.writing || len(m.writes.inflight.edits) != 1 {
		t.Fatalf("one row is discarded without a confirm: dialog %T writing %v", m.dialog, m.writes.writing)
	}
	e := m.writes.inflight.edits[0]
	if e.ID != "k-1" || e.Set[model.FStatus] != "discarded" || e.Expect[model.FStatus] != "dead" {
		t.Errorf("discard edit: %v", e)
	}
	send(m, appliedMsg{op: *m.writes.inflight, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}})
	if out := plainScreen(m); !strings.Contains(out, "1 discarded · u undoes") {
		t.Errorf("discard says it can be undone:\n%s", out)
	}
	keys(m, "u")
	if !m.writes.writing || m.writes.inflight.edits[0].Set[model.FStatus] != "dead" || m.writes.inflight.edits[0].Expect[model.FStatus] != "discarded" {
		t.Fatalf("u reverts the discard: %v", m.writes.inflight)
	}
	send(m, appliedMsg{op: *m.writes.inflight, res: model.ApplyResult{Applied: []model.Applied{{Edit: m.writes.inflight.edits[0]}}}})

	discardMarked(t, m)
	discardRefused(t)
}

// discardMarked: marked rows ask to confirm (default No), stating the count; delivered rows
// are left.
func discardMarked(t *testing.T, m *Model) {
	// Marked rows: a confirm (default No) that states the count; delivered rows are left.
	keys(m, "G", "k", "k", "space", "space", "space") // m-1, r-1 marked... and the last row
	keys(m, "D")
	d, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("discarding several rows asks first, got %T:\n%s", m.dialog, plainScreen(m))
	}
	if n := len(d.writeOp().edits); n != 3 || !strings.Contains(plainScreen(m), "Discard 3 dead letters? [y/N]") {
		t.Errorf("%d edits:\n%s", n, plainScreen(m))
	}
	keys(m, "enter")
	if m.dialog != nil || m.writes.writing {
		t.Error("enter is No")
	}
	keys(m, "D", "y")
	if !m.writes.writing || len(m.writes.inflight.edits) != 3 {
		t.Errorf("y discards the marked rows")
	}
}

// discardRefused: D explains itself outside the dead-letter tab and on a delivered row.
func discardRefused(t *testing.T) {
	// Not on other tabs.
	m2 := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m2, "D")
	if m2.writes.writing || !strings.Contains(plainScreen(m2), "discard is for dead letters") {
		t.Errorf("D outside the dead-letter tab explains:\n%s", plainScreen(m2))
	}
	// A delivered row isn't discarded.
	m3 := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m3, "2", "G", "D")
	if m3.writes.writing || !strings.Contains(plainScreen(m3), "delivered rows aren't discarded") {
		t.Errorf("D on a delivered row explains:\n%s", plainScreen(m3))
	}
}

func TestClearErrorOnDeadLetters(t *testing.T) {
	wb := testWorkbook(t)
	m := newLoaded(t, wb, 100, 30)
	keys(m, "2", "/")
	typeText(m, "status:rejected")
	keys(m, "enter", "e")
	if !m.writes.writing || len(m.writes.inflight.edits) != 1 {
		t.Fatalf("e on one rejected dead letter writes at once")
	}
	e := m.writes.inflight.edits[0]
	if _, blanks := e.Set[model.FError]; e.ID != "k-2" || e.Set[model.FStatus] != "dead" || blanks || e.Expect[model.FStatus] != "rejected" {
		t.Errorf("clear-error edit on a dead letter (dead, why it was rejected kept): %v", e)
	}

	// Bulk: two rejected rows marked, one dead row marked too (skipped with a reason).
	rows := deadRows()
	rows = append(rows, rowsOf([]string{"2025-05-31T12:00:00Z", "crm", "https://crm.example/api/leads", `{"id":"k-5"}`, "410 Gone", "1", "POST", "k-5", "rejected", ""})...)
	wb = testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rows)
	m = newLoaded(t, wb, 100, 30)
	keys(m, "2", "*", "e")
	d, ok := m.dialog.(confirm)
	if !ok || len(d.writeOp().edits) != 2 {
		t.Fatalf("bulk clear-error confirms the 2 rejected rows: %T\n%s", m.dialog, plainScreen(m))
	}
	if out := plainScreen(m); !strings.Contains(out, "Clear the sticky error of 2 rows? [y/N]") || !strings.Contains(out, "3 rows skipped: no sticky error (only rejected rows have one)") {
		t.Errorf("bulk clear-error dialog:\n%s", out)
	}
	for _, e := range d.writeOp().edits {
		if e.Set[model.FStatus] != "dead" || e.Expect[model.FStatus] != "rejected" {
			t.Errorf("bulk edit %v", e)
		}
	}
}

func TestDeadLetterDetail(t *testing.T) {
	rows := deadRows()
	rows = append(rows,
		rowsOf([]string{"2025-05-31T12:00:00Z", "crm", "https://crm.example/api/leads", `{"id": "k-9", "name": broken}`, "400", "1", "PUT", "", "dead", ""})...)
	rows = append(rows,
		rowsOf([]string{"2025-05-31T13:00:00Z", "crm", "https://crm.example/api/leads", `{"id":"p-7","name":"key in payload"}`, "503", "1", "", "", "dead", ""})...)
	wb := testWorkbook(t)
	tc := model.DefaultTabConfig(model.RoleDeadLetter)
	tc.BodyKeyFields = map[string]string{"crm": "id"} // key = "body:id"
	tab, err := model.Decode(tc, rows, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	wb.Tabs[1] = tab
	m := newLoaded(t, wb, 80, 40)
	keys(m, "2", "enter") // newest: the key from the payload
	out := plainScreen(m)
	for _, want := range []string{"Destination  POST https://crm.example/api/leads", "Key          p-7 · from the payload", `"name": "key in payload"`} {
		if !strings.Contains(out, want) {
			t.Errorf("detail lacks %q:\n%s", want, out)
		}
	}
	keys(m, "esc", "j", "enter") // the broken payload: its key is minted
	out = plainScreen(m)
	for _, want := range []string{"Key          triage-", "minted from the row,", "Destination  PUT https://crm.example/api/leads", "! not valid JSON (shown as is): invalid character 'b'",
		"(at byte 23)", `{"id": "k-9", "name": broken}`} {
		if !strings.Contains(out, want) {
			t.Errorf("detail lacks %q:\n%s", want, out)
		}
	}
	// The payload comes last, after error, attempts and replayed_at.
	at := map[string]int{}
	for i, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			if _, seen := at[f[0]]; !seen {
				at[f[0]] = i
			}
		}
	}
	if at["payload"] < at["replayed_at"] || at["error"] > at["payload"] {
		t.Errorf("the payload goes last:\n%s", out)
	}

	// A key from the payload says so.
	keys(m, "esc", "j", "j", "enter")
	if out := plainScreen(m); !strings.Contains(out, "Key          k-1 · from the key cell") {
		t.Errorf("the key's origin is shown:\n%s", out)
	}
	keys(m, "esc", "k", "k", "enter")
	// tab moves the field focus; y copies the raw value of the focused field.
	keys(m, "tab")
	if f, _ := m.detail.focused(); f.label != "Key" {
		t.Errorf("tab focuses the next field, got %q", f.label)
	}
	keys(m, "G")
	f, _ := m.detail.focused()
	if f.label != "payload" || f.copyValue() != `{"id": "k-9", "name": broken}` {
		t.Errorf("the last field is the payload, copied as is: %q %q", f.label, f.copyValue())
	}
	send(m, press("y"))
	if !strings.Contains(plainScreen(m), `copied payload: {"id": "k-9"`) {
		t.Errorf("y says what it copied:\n%s", plainScreen(m))
	}
	keys(m, "shift+tab")
	if f, _ := m.detail.focused(); f.label == "payload" {
		t.Error("shift+tab moves the focus back")
	}
}
