package sheets_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

func setStatus(tab, id, saw, now string) model.Edit {
	return model.Edit{Tab: tab, ID: id,
		Expect: map[model.Field]string{model.FStatus: saw},
		Set:    map[model.Field]string{model.FStatus: now}}
}

// cellAt returns a cell of emu.Cells as text ("" past the end).
func cellAt(rows [][]any, r, c int) string {
	if r >= len(rows) || c >= len(rows[r]) {
		return ""
	}
	return model.CellString(rows[r][c])
}

// Apply of 1,000 edits is exactly two requests: one batchGet, one batchUpdate.
func TestApply1000TwoRequests(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "big", Title: "big", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(1200)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	loadThenReset(t, f, s)
	edits := make([]model.Edit, 1000)
	for i := range edits {
		edits[i] = setStatus("Inbox", "m"+itoa(i+101), "new", "done")
	}
	res, err := s.Apply(ctx(t), edits)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1000 || !res.OK() {
		t.Fatalf("result: %s", res.Summary())
	}
	f.wantCount(t, mBatchGet, 1)
	f.wantCount(t, mBatchUpdate, 1)
	f.wantTotal(t, "apply", 2)
	rows := f.emu.Cells(f.id, "Inbox")
	for r := 1; r < len(rows); r++ {
		want := "new"
		if r >= 101 && r <= 1100 {
			want = "done"
		}
		if got := cellAt(rows, r, 4); got != want {
			t.Fatalf("row %d status %q, want %q", r+1, got, want)
		}
	}
}

// Edits to several tabs in one Apply are still two requests; zero edits are none.
func TestApplySeveralTabsAndZero(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "multi", Title: "multi", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(3)},
		{Title: "Jobs", Rows: [][]any{{"id", "status", "lastError"}, {"j1", "error", "boom"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), queueTab("")}})
	loadThenReset(t, f, s)
	res, err := s.Apply(ctx(t), nil)
	if err != nil || f.total() != 0 || len(res.Applied)+len(res.Conflicts)+len(res.Missing) != 0 {
		t.Fatalf("zero edits: %v, %d requests", err, f.total())
	}
	res, err = s.Apply(ctx(t), []model.Edit{
		setStatus("Inbox", "m2", "new", "read"),
		{Tab: "Jobs", ID: "j1", Expect: map[model.Field]string{model.FStatus: "error", model.FLastError: "boom"},
			Set: map[model.Field]string{model.FStatus: "pending", model.FLastError: ""}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 2 {
		t.Fatalf("result %s", res.Summary())
	}
	f.wantTotal(t, "apply over two tabs", 2)
	if got := f.emu.Cells(f.id, "Jobs"); cellAt(got, 1, 1) != "pending" || cellAt(got, 1, 2) != "" {
		t.Errorf("jobs = %v", got)
	}
	if got := f.emu.Cells(f.id, "Inbox"); cellAt(got, 2, 4) != "read" {
		t.Errorf("inbox row 3 = %v", got[2])
	}
}

// Invariant 11: a read-only store sends nothing and says why.
func TestReadOnly(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "ro", Title: "ro", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), deadTab("")}, ReadOnly: true})
	if !s.ReadOnly() || s.SpreadsheetID() != "ro" {
		t.Fatalf("ReadOnly %v ID %q", s.ReadOnly(), s.SpreadsheetID())
	}
	_, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")})
	if !errors.Is(err, sheets.ErrReadOnly) || !strings.Contains(err.Error(), "--readonly") {
		t.Errorf("apply: err = %v, want ErrReadOnly mentioning --readonly", err)
	}
	rep, err := s.EnsureSchema(ctx(t))
	if !errors.Is(err, sheets.ErrReadOnly) || rep.Changed() {
		t.Errorf("init: err = %v, report %+v", err, rep)
	}
	if got := f.total(); got != 0 {
		t.Errorf("read-only store sent %d requests: %v", got, f.emu.Counts())
	}
	if _, err := s.Load(ctx(t)); err != nil {
		t.Errorf("read-only load: %v", err)
	}
}

// Invariant 2: a formula-looking body is written RAW and stays text.
func TestRawWritesKeepFormulasAsText(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "raw", Title: "raw", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	evil := `=IMPORTXML("http://x","//a")`
	res, err := s.Apply(ctx(t), []model.Edit{{Tab: "Inbox", ID: "m2",
		Expect: map[model.Field]string{model.FMessage: "hello 2"},
		Set:    map[model.Field]string{model.FMessage: evil, model.FName: "+1 (555) 0100", model.FStatus: "-"}}})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("%v %s", err, res.Summary())
	}
	// The write is an updateCells whose values are all stringValue/numberValue (stored as
	// is, never parsed): the emulator logs it as RAW; a formulaValue would log FORMULA.
	if n, opts := f.emu.Count(mBatchUpdate), f.emu.ValueInputOptions(); n != 1 || len(opts) != 1 || opts[0] != "RAW" {
		t.Errorf("%d spreadsheets.batchUpdate, writes logged as %q; want 1, [RAW]", n, opts)
	}
	for _, c := range []int{1, 3, 4} {
		if f.emu.Formula(f.id, "Inbox", 3, c) {
			t.Errorf("column %d of row 3 became a formula", c)
		}
	}
	wb := f.load(t, s)
	tab := wb.Tab(model.RoleInbox)
	rec := &tab.Records[tab.Index("m2")]
	if got := tab.Get(rec, model.FMessage); got != evil {
		t.Errorf("message round-tripped as %q, want %q", got, evil)
	}
	if got := tab.Get(rec, model.FName); got != "+1 (555) 0100" {
		t.Errorf("name round-tripped as %q", got)
	}
}

// Audit columns are filled when the tab has them, and never created when it doesn't.
func TestAuditColumns(t *testing.T) {
	withAudit := append(append([]any{}, inboxHeader...), "triaged_by", "Triaged At")
	rows := [][]any{withAudit, {1.0, "a", "a@x", "hi", "new", "m1"}, {2.0, "b", "b@x", "yo", "new", "m2"}}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "audit", Title: "audit", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: rows},
		{Title: "Other", Rows: inboxRows(2)},
	}})
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), inboxTab("Other", "new")}, Actor: "ann@example.com", Now: func() time.Time { return now }})
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m2", "new", "done"), setStatus("Other", "m1", "new", "done")})
	if err != nil || len(res.Applied) != 2 {
		t.Fatalf("%v %s", err, res.Summary())
	}
	got := f.emu.Cells(f.id, "Inbox")
	if cellAt(got, 2, 6) != "ann@example.com" || cellAt(got, 2, 7) != "2026-03-04T04:06:07Z" || cellAt(got, 2, 4) != "done" {
		t.Errorf("audited row = %v", got[2])
	}
	if cellAt(got, 1, 6) != "" || cellAt(got, 1, 7) != "" {
		t.Errorf("untouched row got audit cells: %v", got[1])
	}
	other := f.emu.Cells(f.id, "Other")
	if len(other[0]) != 6 || len(other[1]) != 6 || cellAt(other, 1, 4) != "done" {
		t.Errorf("tab without audit columns changed shape: %v / %v", other[0], other[1])
	}
}

// Two edits of one row: applied in order, the second sees the first, one write per cell.
func TestSameRowTwice(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "twice", Title: "twice", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	res, err := s.Apply(ctx(t), []model.Edit{
		setStatus("Inbox", "m1", "new", "read"),
		setStatus("Inbox", "m1", "read", "done"),
		setStatus("Inbox", "m1", "new", "spam"), // saw a state that no longer holds
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 2 || len(res.Conflicts) != 1 || res.Conflicts[0].Now != "done" {
		t.Fatalf("result %+v", res)
	}
	if got := f.emu.Cells(f.id, "Inbox"); cellAt(got, 1, 4) != "done" {
		t.Errorf("status %q, want done", cellAt(got, 1, 4))
	}
}

// A conflict writes nothing of its edit; a duplicate ID is a conflict with a clear message;
// an empty or unknown ID is missing; an unconfigured tab is an error before any request.
func TestApplyConflictsAndMissing(t *testing.T) {
	rows := inboxRows(4)
	rows[4][5] = "m2" // row 5 duplicates m2
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "cm", Title: "cm", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	res, err := s.Apply(ctx(t), []model.Edit{
		{Tab: "Inbox", ID: "m1", Expect: map[model.Field]string{model.FStatus: "new", model.FMessage: "edited?"},
			Set: map[model.Field]string{model.FStatus: "done", model.FMessage: "x"}},
		setStatus("Inbox", "m2", "new", "done"),
		setStatus("Inbox", "nope", "new", "done"),
		setStatus("Inbox", "", "new", "done"),
		setStatus("inbox", "m3", "new", "done"), // tab names match case-insensitively
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1 || res.Applied[0].Edit.ID != "m3" || res.Applied[0].Row != 4 {
		t.Errorf("applied = %+v", res.Applied)
	}
	if len(res.Conflicts) != 2 || len(res.Missing) != 2 {
		t.Fatalf("result %+v", res)
	}
	c := res.Conflicts[0]
	if c.Field != model.FMessage || c.Saw != "edited?" || c.Now != "hello 1" || c.Row != 2 {
		t.Errorf("conflict = %+v", c)
	}
	if d := res.Conflicts[1].String(); !strings.Contains(d, "rows 3, 5") {
		t.Errorf("duplicate conflict %q doesn't name both rows", d)
	}
	got := f.emu.Cells(f.id, "Inbox")
	if cellAt(got, 1, 4) != "new" || cellAt(got, 1, 3) != "hello 1" {
		t.Errorf("conflicting edit was partly written: %v", got[1])
	}
	if cellAt(got, 2, 4) != "new" || cellAt(got, 4, 4) != "new" {
		t.Errorf("a duplicate-ID row was written")
	}
	f.reset()
	if _, err := s.Apply(ctx(t), []model.Edit{setStatus("Elsewhere", "m1", "new", "x")}); err == nil || f.total() != 0 {
		t.Errorf("unconfigured tab: err %v, %d requests", err, f.total())
	}
}

// Setting a column the tab doesn't have is a conflict, not a silent drop.
func TestApplySetMissingColumn(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "mc", Title: "mc", Sheets: []*emulator.Sheet{{Title: "Jobs", Rows: [][]any{{"id", "status"}, {"j1", "error"}}}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{queueTab("")}})
	res, err := s.Apply(ctx(t), []model.Edit{{Tab: "Jobs", ID: "j1", Expect: map[model.Field]string{model.FStatus: "error"},
		Set: map[model.Field]string{model.FStatus: "pending", model.FLastError: ""}}})
	if err != nil || len(res.Conflicts) != 1 || res.Conflicts[0].Field != model.FLastError {
		t.Fatalf("%v %+v", err, res)
	}
	if got := f.emu.Cells(f.id, "Jobs"); cellAt(got, 1, 1) != "error" {
		t.Errorf("partly written: %v", got)
	}
	if f.emu.Count(mBatchUpdate) != 0 {
		t.Errorf("nothing to write, yet a batchUpdate was sent")
	}
}

// A failed batchUpdate is an error, with nothing reported as written.
func TestApplyWriteFails(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "wf", Title: "wf", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 403})
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")})
	if !errors.Is(err, sheets.ErrNotShared) || len(res.Applied)+len(res.Conflicts)+len(res.Missing) != 0 {
		t.Errorf("err %v result %+v", err, res)
	}
	// A write retried after a 503 that was in fact applied is harmless: same cells, same values.
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
	res, err = s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")})
	if err != nil || len(res.Applied) != 1 {
		t.Errorf("retry after an applied 503: %v %+v", err, res)
	}
}

// A tab deleted since the load: its edits are missing, the others still apply.
func TestApplyTabVanished(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "tv", Title: "tv", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(2)},
		{Title: "Jobs", SheetID: 7, Rows: [][]any{{"id", "status"}, {"j1", "error"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), queueTab("")}})
	del := f.emu.Workbook(f.id)
	del.Sheets = del.Sheets[:1]
	f.emu.AddWorkbook(del)
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Jobs", "j1", "error", "pending"), setStatus("Inbox", "m1", "new", "done")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != 1 || res.Missing[0].Tab != "Jobs" || len(res.Applied) != 1 {
		t.Errorf("result %+v", res)
	}
}

// Dead letters whose key cell is empty are located by their effective key, wherever the
// row has moved, and the minted key is written to the key cell.
func TestDeadLetterLocatedByEffectiveKey(t *testing.T) {
	header := []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}
	rows := [][]any{header}
	for i := 1; i <= 6; i++ {
		rows = append(rows, []any{45500.0 + float64(i), "crm", "https://crm.example/hook", fmt.Sprintf(`{"n":%d}`, i), "503", 1.0, "POST", "", "dead"})
	}
	rows = append(rows, []any{45600.0, "form", "https://script.google.com/macros/s/x/exec", `{"id":"sub-9","text":"hi"}`, "", 1.0, "POST", "", ""})
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "dl", Title: "dl", Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: rows}}})
	tc := deadTab("")
	tc.BodyKeyFields = map[string]string{"form": "id"}
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}})
	wb := f.load(t, s)
	tab := wb.Tab(model.RoleDeadLetter)
	target := tab.Records[3] // row 5, minted key
	form := tab.Records[6]   // payload key
	if target.KeyOrigin != model.KeyMinted || form.ID != "sub-9" {
		t.Fatalf("origins %v %q", target.KeyOrigin, form.ID)
	}
	// Another writer inserts rows above and sorts by payload, descending.
	f.emu.InsertRows(f.id, "failed_calls", 2, [][]any{{45400.0, "crm", "https://crm.example/other", `{"n":0}`, "", 1.0, "POST", "", ""}})
	f.emu.SortRows(f.id, "failed_calls", 3, true)
	mint := model.Edit{Tab: tab.Config.Name, ID: target.ID,
		Expect: map[model.Field]string{model.FKey: "", model.FStatus: tab.Get(&target, model.FStatus)},
		Set:    map[model.Field]string{model.FKey: target.ID, model.FStatus: "delivered", model.FAttempts: "2"}}
	done := model.Edit{Tab: tab.Config.Name, ID: form.ID, Expect: map[model.Field]string{model.FStatus: ""},
		Set: map[model.Field]string{model.FStatus: "delivered", model.FReplayedAt: "2026-01-02T03:04:05Z"}}
	res, err := s.Apply(ctx(t), []model.Edit{mint, done})
	if err != nil || len(res.Applied) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	got := f.emu.Cells(f.id, "failed_calls")
	hits := 0
	for r := 1; r < len(got); r++ {
		switch cellAt(got, r, 3) {
		case `{"n":4}`:
			hits++
			if cellAt(got, r, 7) != target.ID || cellAt(got, r, 8) != "delivered" || cellAt(got, r, 5) != "2" {
				t.Errorf("target row %d = %v", r+1, got[r])
			}
			if _, isNum := got[r][5].(float64); !isNum {
				t.Errorf("attempts written as %T, want a number", got[r][5])
			}
			if res.Applied[0].Row != r+1 {
				t.Errorf("reported row %d, landed on %d", res.Applied[0].Row, r+1)
			}
		case `{"id":"sub-9","text":"hi"}`:
			hits++
			if cellAt(got, r, 8) != "delivered" || cellAt(got, r, 7) != "" {
				t.Errorf("form row = %v", got[r])
			}
		default:
			if cellAt(got, r, 7) != "" || (cellAt(got, r, 8) != "dead" && cellAt(got, r, 8) != "") {
				t.Errorf("row %d changed: %v", r+1, got[r])
			}
		}
	}
	if hits != 2 {
		t.Errorf("found %d target rows", hits)
	}
	// The identity survives the write: the same edit again is a conflict (key no longer empty).
	res, err = s.Apply(ctx(t), []model.Edit{mint})
	if err != nil || len(res.Conflicts) != 1 || res.Conflicts[0].Field != model.FKey {
		t.Errorf("re-apply: %v %+v", err, res)
	}
}

// loadThenReset loads once (as every caller of Apply does first: it caches the tabs'
// sheetIds, which updateCells needs) and zeroes the request counts.
func loadThenReset(t *testing.T, f *fixture, s *sheets.Store) {
	t.Helper()
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	f.reset()
}

// A store that never loaded asks for the tabs' sheetIds once, on its first write only.
func TestApplyWithoutLoadAsksSheetIDsOnce(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "cold", Title: "cold", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(3)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	for i, id := range []string{"m1", "m2"} {
		res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", id, "new", "done")})
		if err != nil || len(res.Applied) != 1 {
			t.Fatalf("apply %s: %v %s", id, err, res.Summary())
		}
		want := map[string]int{mBatchGet: 1, mBatchUpdate: 1}
		if i == 0 {
			want["spreadsheets.get"] = 1
		}
		if got := f.emu.Counts(); !maps.Equal(got, want) {
			t.Errorf("apply %d sent %v, want %v", i+1, got, want)
		}
		f.reset()
	}
}
