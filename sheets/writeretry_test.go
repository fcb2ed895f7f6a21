package sheets_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// hookSleep is a fake RetryPolicy.Sleep that runs a hook during the first n backoffs: the
// moment another writer gets to sort or insert rows while the store waits to retry.
type hookSleep struct {
	mu    sync.Mutex
	calls int
	hooks []func()
}

func (h *hookSleep) Sleep(ctx context.Context, d time.Duration) error {
	h.mu.Lock()
	i := h.calls
	h.calls++
	h.mu.Unlock()
	if i < len(h.hooks) && h.hooks[i] != nil {
		h.hooks[i]()
	}
	return ctx.Err()
}

func (h *hookSleep) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// statusByID maps each row's ID (column 5) to its status (column 4), and fails on a
// duplicated ID.
func statusByID(t *testing.T, rows [][]any) map[string]string {
	t.Helper()
	m := map[string]string{}
	for r := 1; r < len(rows); r++ {
		id := cellAt(rows, r, 5)
		if _, dup := m[id]; dup {
			t.Fatalf("ID %q on two rows: %v", id, rows)
		}
		m[id] = cellAt(rows, r, 4)
	}
	return m
}

// mustDo fails the test on an emulator error (hooks run outside the test goroutine's frame).
func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

// Invariant 1 across a retried write: the first batchUpdate fails with a 503 without being
// performed, and while the store backs off another writer inserts rows above and sorts the
// tab. The retry must not resend the old addresses: it locates and verifies again and writes
// each edit on its ID's current row; an edit whose cell changed during the backoff is a
// conflict.
func TestApplyRetryRelocatesAfterMove(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "rr", Title: "rr", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(6)}}})
	hs := &hookSleep{hooks: []func(){func() {
		mustDo(t, f.emu.InsertRows(f.id, "Inbox", 2, [][]any{
			{45100.0, "Zed", "z@x", "hi", "new", "x1"},
			{45101.0, "Yan", "y@x", "yo", "new", "x2"},
		}))
		mustDo(t, f.emu.SortRows(f.id, "Inbox", 1, true)) // by Name, descending
		// Someone reads m3 meanwhile.
		rows := f.emu.Cells(f.id, "Inbox")
		for r := 1; r < len(rows); r++ {
			if cellAt(rows, r, 5) == "m3" {
				mustDo(t, f.emu.SetCell(f.id, "Inbox", r+1, 4, "read"))
			}
		}
	}}}
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "read", "done", "spam")}, Retry: sheets.RetryPolicy{Sleep: hs.Sleep}})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, Times: 1})
	before := statusByID(t, f.emu.Cells(f.id, "Inbox"))
	res, err := s.Apply(ctx(t), []model.Edit{
		setStatus("Inbox", "m2", "new", "done"),
		setStatus("Inbox", "m5", "new", "spam"),
		setStatus("Inbox", "m3", "new", "done"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if hs.Calls() != 1 {
		t.Errorf("backed off %d times, want 1", hs.Calls())
	}
	if len(res.Applied) != 2 || len(res.Conflicts) != 1 || res.Conflicts[0].Edit.ID != "m3" || res.Conflicts[0].Now != "read" {
		t.Fatalf("result %+v", res)
	}
	rows := f.emu.Cells(f.id, "Inbox")
	got := statusByID(t, rows)
	want := map[string]string{"x1": "new", "x2": "new", "m2": "done", "m5": "spam", "m3": "read"}
	for id, st := range before {
		if _, ok := want[id]; !ok {
			want[id] = st
		}
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s status %q, want %q (sheet %v)", id, got[id], st, rows)
		}
	}
	for _, a := range res.Applied {
		if id := cellAt(rows, a.Row-1, 5); id != a.Edit.ID {
			t.Errorf("%s reported at row %d, which holds %s", a.Edit.ID, a.Row, id)
		}
	}
	if n := f.emu.Count(mBatchGet); n != 2 {
		t.Errorf("batchGet sent %d times, want 2 (locate, then locate again after the failed write)", n)
	}
	if n := f.emu.Count(mBatchUpdate); n != 3 {
		t.Errorf("spreadsheets.batchUpdate sent %d times, want 3 (the failed write, its fence, the write)", n)
	}
}

// A write that landed although the client saw a 503 (the answer was lost), then a sort and
// an insert during the backoff: the fence finds the write's journal entry, which shows it
// landed on the IDs' rows as read, so the edits are applied (at the rows they landed on),
// nothing is written again, and no other row changes. Two edits
// of one row (the second expecting the first's value) count as applied together.
func TestApplyRetryAfterLandedWrite(t *testing.T) {
	header := append(slices.Clone(inboxHeader), "triaged_by")
	rows := [][]any{header}
	rows = append(rows, inboxRows(6)[1:]...)
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "rl", Title: "rl", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
	var landed [][]any
	hs := &hookSleep{hooks: []func(){func() {
		landed = f.emu.Cells(f.id, "Inbox")
		mustDo(t, f.emu.SortRows(f.id, "Inbox", 3, true)) // by Message, descending
		mustDo(t, f.emu.InsertRows(f.id, "Inbox", 2, [][]any{{45100.0, "Zed", "z@x", "hi", "new", "x1"}}))
	}}}
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "read", "done")}, Actor: "ann", Retry: sheets.RetryPolicy{Sleep: hs.Sleep}})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
	res, err := s.Apply(ctx(t), []model.Edit{
		setStatus("Inbox", "m2", "new", "read"),
		setStatus("Inbox", "m2", "read", "done"),
		setStatus("Inbox", "m4", "new", "done"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 3 || len(res.Conflicts) != 0 || len(res.Missing) != 0 {
		t.Fatalf("result %+v, want all three applied", res)
	}
	after := f.emu.Cells(f.id, "Inbox")
	for _, a := range res.Applied {
		if id := cellAt(landed, a.Row-1, 5); id != a.Edit.ID {
			t.Errorf("%s reported at row %d, which held %s when the write landed", a.Edit.ID, a.Row, id)
		}
	}
	for r := 1; r < len(after); r++ {
		id, st, by := cellAt(after, r, 5), cellAt(after, r, 4), cellAt(after, r, 6)
		switch id {
		case "m2", "m4":
			if st != "done" || by != "ann" {
				t.Errorf("row %d (%s) = %v, want done by ann", r+1, id, after[r])
			}
		default:
			if st != "new" || by != "" {
				t.Errorf("row %d (%s) changed: %v", r+1, id, after[r])
			}
		}
	}
	if n := f.emu.Count(mBatchUpdate); n != 2 {
		t.Errorf("spreadsheets.batchUpdate sent %d times, want 2 (the landed write is not repeated: the write, its fence)", n)
	}
	if n := f.emu.Count(mBatchGet); n != 2 {
		t.Errorf("batchGet sent %d times, want 2", n)
	}
}

// A write that keeps failing is given up after RetryPolicy.MaxAttempts sends in all, reads
// included, with the last error; nothing is reported as written.
func TestApplyRetryBounded(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "rb", Title: "rb", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(3)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}, Retry: sheets.RetryPolicy{MaxAttempts: 3}})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, Times: 10})
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")})
	var se *sheets.Error
	if !errors.As(err, &se) || se.Code != 503 {
		t.Fatalf("err = %v, want the 503", err)
	}
	if len(res.Applied)+len(res.Conflicts)+len(res.Missing) != 0 {
		t.Errorf("result %+v on failure", res)
	}
	if n := f.emu.Count(mBatchUpdate); n != 3 {
		t.Errorf("spreadsheets.batchUpdate sent %d times, want 3 (the write, then its fence twice)", n)
	}
	if n := len(f.sleep.Waits()); n != 2 {
		t.Errorf("slept %d times, want 2", n)
	}
	// A failing read counts against the same budget.
	f.emu.ClearFaults()
	f.reset()
	f.emu.InjectFault(emulator.Fault{Method: mBatchGet, Status: 503, Times: 1})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, Times: 10})
	if _, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")}); err == nil {
		t.Fatal("no error")
	}
	// batchGet fails; batchGet, the write fails; its fence fails: 3 failures.
	if c := f.emu.Counts(); c[mBatchGet] != 2 || c[mBatchUpdate] != 2 || f.total() != 4 {
		t.Errorf("sent %v, want 2 batchGets (1 failed) and 2 failed batchUpdates (the write, its fence)", c)
	}
}

// Store.Apply to tabs whose names need quoting in A1 ranges: a space, an apostrophe, and
// "!" / ":" (the A1 separators).
func TestApplyQuotedTabNames(t *testing.T) {
	wb := quotedNamesWorkbook()
	wb.Sheets = append(wb.Sheets, &emulator.Sheet{Title: "q!1: north", SheetID: 33, Rows: inboxRows(3)})
	f := newFixture(t, wb)
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("it's", "new", "done"), deadTab("failed calls"), inboxTab("q!1: north", "new", "done")}})
	loadThenReset(t, f, s)
	res, err := s.Apply(ctx(t), []model.Edit{
		setStatus("it's", "m2", "new", "done"),
		{Tab: "failed calls", ID: "k-1", Expect: map[model.Field]string{model.FStatus: "dead"},
			Set: map[model.Field]string{model.FStatus: "delivered", model.FAttempts: "3"}},
		setStatus("q!1: north", "m3", "new", "done"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 3 || !res.OK() {
		t.Fatalf("result %+v", res)
	}
	if n := f.total(); n != 2 {
		t.Errorf("sent %d requests, want 2: %v", n, f.emu.Counts())
	}
	its := f.emu.Cells(f.id, "it's")
	if cellAt(its, 2, 4) != "done" || cellAt(its, 1, 4) != "new" || cellAt(its, 3, 4) != "new" {
		t.Errorf("it's = %v", its)
	}
	fc := f.emu.Cells(f.id, "failed calls")
	if cellAt(fc, 1, 8) != "delivered" || cellAt(fc, 1, 5) != "3" || cellAt(fc, 2, 8) != "" {
		t.Errorf("failed calls = %v", fc)
	}
	q := f.emu.Cells(f.id, "q!1: north")
	if cellAt(q, 3, 4) != "done" || cellAt(q, 1, 4) != "new" || cellAt(q, 2, 4) != "new" {
		t.Errorf("q!1: north = %v", q)
	}
	if other := f.emu.Cells(f.id, "Sheet1"); len(other) != 1 || len(other[0]) != 1 {
		t.Errorf("Sheet1 changed: %v", other)
	}
}

// Queue edits built from a load meet workers that moved on before the write (DESIGN §2,
// stale claims): a re-claimed or finished job is not requeued, an error job a person already
// re-queued is not clobbered, a requeue lands on its job wherever the row moved, and a
// claim younger than the threshold is never requeued.
func TestQueueConflictsBetweenLoadAndWrite(t *testing.T) {
	header := []any{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}
	rows := [][]any{header,
		{"j1", "email", `{"n":1}`, "claimed", "w1", "2026-03-04T10:00:00Z", "", "2026-03-04T10:00:00Z", 1.0},
		{"j2", "email", `{"n":2}`, "claimed", "w1", "2026-03-04T10:00:00Z", "", "2026-03-04T10:00:00Z", 1.0},
		{"j3", "sms", `{"n":3}`, "claimed", "w2", "2026-03-04T10:05:00Z", "", "2026-03-04T10:05:00Z", 1.0},
		{"j4", "email", `{"n":4}`, "error", "w1", "2026-03-04T09:00:00Z", "boom", "2026-03-04T09:01:00Z", 3.0},
		{"j5", "email", `{"n":5}`, "claimed", "w3", "2026-03-04T10:31:00Z", "", "2026-03-04T10:31:00Z", 1.0},
		{"j6", "fax", `{"n":6}`, "pending", "", "", "", "2026-03-04T08:00:00Z", 0.0},
	}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "q", Title: "q", TimeZone: "UTC", Sheets: []*emulator.Sheet{{Title: "Jobs", Rows: rows}}})
	now := time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC)
	tc := queueTab("")
	tc.StaleAfter = 30 * time.Minute
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}, Now: func() time.Time { return now }})
	wb := f.load(t, s)
	tab := wb.Tab(model.RoleQueue)
	rec := func(id string) *model.Record {
		i := tab.Index(id)
		if i < 0 {
			t.Fatalf("no job %s", id)
		}
		return &tab.Records[i]
	}
	var edits []model.Edit
	for _, id := range []string{"j1", "j2", "j3"} {
		e, ok := model.Requeue(tab, rec(id), now)
		if !ok {
			t.Fatalf("%s (claimed 55+ minutes ago) not requeueable", id)
		}
		edits = append(edits, e)
	}
	// (v) A claim 29 minutes old, threshold 30 minutes: never requeued.
	if _, ok := model.Requeue(tab, rec("j5"), now); ok {
		t.Errorf("j5, claimed 29 minutes ago, was requeued at a 30m threshold")
	}
	clear4, ok := model.ClearError(tab, rec("j4"), now)
	if !ok {
		t.Fatal("j4 (error) can't be cleared")
	}
	edits = append(edits, clear4)

	// The workers and a person, between the load and the write.
	find := func(id string) int {
		cells := f.emu.Cells(f.id, "Jobs")
		for r := 1; r < len(cells); r++ {
			if cellAt(cells, r, 0) == id {
				return r + 1
			}
		}
		t.Fatalf("no row for %s", id)
		return 0
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// (i) A worker re-claims j1.
	must(f.emu.SetCell(f.id, "Jobs", find("j1"), 4, "w9"))
	must(f.emu.SetCell(f.id, "Jobs", find("j1"), 5, "2026-03-04T10:58:00Z"))
	// (ii) A worker finishes j2.
	must(f.emu.SetCell(f.id, "Jobs", find("j2"), 3, "done"))
	// (iv) A person re-queues j4 by hand.
	must(f.emu.SetCell(f.id, "Jobs", find("j4"), 3, "pending"))
	must(f.emu.SetCell(f.id, "Jobs", find("j4"), 6, nil))
	// (iii) New jobs above, then a sort by type: j3 moves.
	must(f.emu.InsertRows(f.id, "Jobs", 2, [][]any{
		{"j7", "zz", "{}", "pending", "", "", "", "", 0.0},
		{"j8", "aa", "{}", "pending", "", "", "", "", 0.0},
	}))
	must(f.emu.SortRows(f.id, "Jobs", 1, true))
	if find("j3") == 4 {
		t.Fatal("the test's moves left j3 where it was")
	}

	before := f.emu.Cells(f.id, "Jobs")
	res, err := s.Apply(ctx(t), edits)
	if err != nil {
		t.Fatal(err)
	}
	conflicts := map[string]model.Conflict{}
	for _, c := range res.Conflicts {
		conflicts[c.Edit.ID] = c
	}
	if len(res.Applied) != 1 || res.Applied[0].Edit.ID != "j3" || len(conflicts) != 3 || len(res.Missing) != 0 {
		t.Fatalf("result %+v, want j3 applied and j1, j2, j4 conflicts", res)
	}
	if c := conflicts["j1"]; c.Field != model.FClaimedAt && c.Field != model.FClaimedBy {
		t.Errorf("j1 conflict on %s, want claimedBy/claimedAt: %s", c.Field, c)
	}
	if c := conflicts["j2"]; c.Field != model.FStatus || c.Now != "done" {
		t.Errorf("j2 conflict %s", c)
	}
	if _, ok := conflicts["j4"]; !ok {
		t.Errorf("j4 not a conflict")
	}
	// Only j3's status, claim and updatedAt changed, on j3's row.
	after := f.emu.Cells(f.id, "Jobs")
	r3 := find("j3") - 1
	if res.Applied[0].Row != r3+1 {
		t.Errorf("j3 reported at row %d, is at row %d", res.Applied[0].Row, r3+1)
	}
	if len(after) != len(before) {
		t.Fatalf("%d rows after, %d before", len(after), len(before))
	}
	for r := range before {
		for c := range max(len(before[r]), len(after[r])) {
			want := cellAt(before, r, c)
			if r == r3 && c == 3 {
				want = "pending"
			}
			if r == r3 && (c == 4 || c == 5) {
				want = "" // the claim is released (claimedBy, claimedAt)
			}
			if r == r3 && c == 7 {
				want = model.FormatTime(now)
			}
			if got := cellAt(after, r, c); got != want {
				t.Errorf("row %d col %d = %q, want %q", r+1, c, got, want)
			}
		}
	}
	if got := cellAt(after, find("j5")-1, 3); got != "claimed" {
		t.Errorf("j5 status %q, want claimed", got)
	}
	if row := after[find("j4")-1]; cellAt(after, find("j4")-1, 3) != "pending" || cellAt(after, find("j4")-1, 6) != "" {
		t.Errorf("j4 clobbered: %v", row)
	}
}

// auditRows is inboxRows(n) with triaged_by (column 6) and triaged_at (column 7) headers.
func auditRows(n int) [][]any {
	rows := inboxRows(n)
	rows[0] = append(slices.Clone(inboxHeader), "triaged_by", "triaged_at")
	return rows
}

// rowOf returns the 1-based row whose ID (column 5) is id.
func rowOf(t *testing.T, rows [][]any, id string) int {
	t.Helper()
	for r := 1; r < len(rows); r++ {
		if cellAt(rows, r, 5) == id {
			return r + 1
		}
	}
	t.Fatalf("no row for %s in %v", id, rows)
	return 0
}

// The write lands but its answer is lost (503), and during the backoff another writer sets
// m2's status back to what it was: a deliberate change. The journal entry the write made
// proves it landed on m2's row as read, so m2 is applied and never written again: the other
// writer's change stands. No triaged_at column is needed (the tab has none). m4, whose landed
// write nobody touched, is applied too. The fence is the only other write.
func TestApplyLostAnswerLandedThenReverted(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "lr", Title: "lr", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(5)}}})
	hs := &hookSleep{hooks: []func(){func() {
		rows := f.emu.Cells(f.id, "Inbox")
		r := rowOf(t, rows, "m2")
		if got := cellAt(rows, r-1, 4); got != "done" {
			t.Errorf("during the backoff m2 status = %q: the failed write did not land", got)
		}
		mustDo(t, f.emu.SetCell(f.id, "Inbox", r, 4, "new"))
	}}}
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}, Actor: "ann", Retry: sheets.RetryPolicy{Sleep: hs.Sleep}})
	loadThenReset(t, f, s)
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, Times: 1, After: true})
	res, err := s.Apply(ctx(t), []model.Edit{
		setStatus("Inbox", "m2", "new", "done"),
		setStatus("Inbox", "m4", "new", "done"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if hs.Calls() != 1 {
		t.Errorf("backed off %d times, want 1", hs.Calls())
	}
	if len(res.Applied) != 2 || len(res.Conflicts) != 0 || len(res.Missing) != 0 || !res.OK() {
		t.Fatalf("result %+v, want both applied (the journal shows where the lost write landed)", res)
	}
	rows := f.emu.Cells(f.id, "Inbox")
	if got := cellAt(rows, 2, 4); got != "new" {
		t.Errorf("m2 status %q, want the other writer's %q (never written again)", got, "new")
	}
	if got := cellAt(rows, 4, 4); got != "done" {
		t.Errorf("m4 status %q, want done", got)
	}
	if n := f.emu.Count(mBatchUpdate); n != 2 {
		t.Errorf("spreadsheets.batchUpdate sent %d times, want 2 (the write, the fence)", n)
	}
	if n := f.emu.Count(mBatchGet); n != 2 {
		t.Errorf("batchGet sent %d times, want 2 (locate; then the tab and the entry)", n)
	}
}

// A write whose answer is lost and which did not land is fenced: the fence (a sheet with the
// write's entry ID) makes sure it never lands later, and the edit is written again, once.
// Then a write that is answered deletes both the entry and the fence, and Close deletes the
// last entry: no journal sheet outlives the store.
func TestApplyLostAnswerFencedThenWrittenAgain(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "mk", Title: "mk", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(3)}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "read", "done")}, Actor: "ann"})
	loadThenReset(t, f, s)
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, Times: 1})
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m1", "new", "done")})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if n := f.emu.Count(mBatchUpdate); n != 3 {
		t.Errorf("spreadsheets.batchUpdate sent %d times, want 3 (the lost write, the fence, the write again)", n)
	}
	if got := cellAt(f.emu.Cells(f.id, "Inbox"), 1, 4); got != "done" {
		t.Errorf("m1 status %q, want done", got)
	}
	if n := len(journalSheets(f)); n != 1 {
		t.Errorf("%d journal sheets after the call, want 1 (its last entry: the write after the fence deleted the fence)", n)
	}
	if res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m2", "new", "read")}); err != nil || len(res.Applied) != 1 {
		t.Fatalf("second Apply: %v %+v", err, res)
	}
	if got := journalSheets(f); len(got) != 1 {
		t.Errorf("journal sheets %v after the next write, want its own only", got)
	}
	if err := s.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := journalSheets(f); len(got) != 0 {
		t.Errorf("journal sheets %v after Close, want none", got)
	}
}

// journalSheets lists the titles of the journal sheets in the fixture's workbook.
func journalSheets(f *fixture) []string {
	var out []string
	for _, sh := range f.emu.Workbook(f.id).Sheets {
		if strings.HasPrefix(sh.Title, "_triage_journal_") {
			out = append(out, sh.Title)
		}
	}
	return out
}

// Every Apply's stamp is distinct, and still the (clock's) time, which ParseTime reads: two
// Applies of one store in the same instant (a fixed clock) stamp two rows apart.
func TestApplyStampIsPerApply(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "st", Title: "st", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: auditRows(3)}}})
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "read", "done")}, Actor: "ann", Now: func() time.Time { return now }})
	for _, id := range []string{"m1", "m2"} {
		if res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", id, "new", "done")}); err != nil || len(res.Applied) != 1 {
			t.Fatalf("%s: %v %+v", id, err, res)
		}
	}
	rows := f.emu.Cells(f.id, "Inbox")
	stamps := map[string]bool{cellAt(rows, 1, 7): true, cellAt(rows, 2, 7): true}
	if len(stamps) != 2 {
		t.Errorf("stamps %v not distinct", stamps)
	}
	for st := range stamps {
		tm, ok := model.ParseTime(st, time.UTC)
		if !ok || tm.Sub(now) < 0 || tm.Sub(now) > time.Second {
			t.Errorf("stamp %q reads as %v, %v; want about %v", st, tm, ok, now)
		}
	}
}

// A request has a deadline (DESIGN §4), and a write whose deadline passes may still have been
// applied: an unknown outcome, never a failure. The emulator applies the write and holds its
// answer until the client gives up (whatever the machine's speed, the deadline always passes
// first); the fence then finds the write's entry, and the edit is applied once.
func TestApplyDeadlineIsAnUnknownOutcome(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "dl", Title: "dl", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(3)}}})
	t.Cleanup(f.emu.ReleaseHeld)
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}, Retry: sheets.RetryPolicy{RequestTimeout: time.Second, MaxAttempts: 10}})
	loadThenReset(t, f, s)
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Hold: true})
	res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m2", "new", "done")})
	if err != nil || len(res.Applied) != 1 || !res.OK() {
		t.Fatalf("%v %+v, want m2 applied", err, res)
	}
	if got := cellAt(f.emu.Cells(f.id, "Inbox"), 2, 4); got != "done" {
		t.Errorf("m2 status %q, want done", got)
	}
	if n := f.emu.Count(mBatchUpdate); n != 2 {
		t.Errorf("%d writes, want 2 (the held write, its fence): the write is never sent twice", n)
	}
}

// A cell put back keeps its type: a worker's claimedAt written as a date serial (a number)
// that triage's write hit on the wrong row comes back as that number, not as its text (which
// the sheet would no longer sort or format as a date).
func TestRestoreKeepsANumberANumber(t *testing.T) {
	rows := [][]any{
		{"id", "type", "status", "claimedBy", "claimedAt", "updatedAt"},
		{"j1", "send", "claimed", "w1", 40000.0, ""},  // stale: requeued
		{"j2", "send", "claimed", "w2", 46357.25, ""}, // a live claim, as a serial date
	}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "typed", Title: "typed", Sheets: []*emulator.Sheet{{Title: "Jobs", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{queueTab("Jobs")}})
	wb := f.load(t, s)
	tab := wb.Tabs[0]
	ed, ok := model.Requeue(tab, &tab.Records[tab.Index("j1")], time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if !ok {
		t.Fatal("j1 is not stale")
	}
	var once sync.Once
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == mBatchUpdate {
			// j2 moves to where j1 was, just before the write.
			once.Do(func() { must(t, f.emu.SortRows("typed", "Jobs", 0, true)) })
		}
	})
	res, err := s.Apply(ctx(t), []model.Edit{ed})
	f.emu.SetHook(nil)
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("%v %s", err, res.Summary())
	}
	cells := f.emu.Cells("typed", "Jobs")
	for _, r := range cells[1:] {
		switch r[0] {
		case "j2":
			if v, ok := r[4].(float64); !ok || v != 46357.25 || r[2] != "claimed" || r[3] != "w2" {
				t.Errorf("j2 = %#v, want its claim back with claimedAt the number 46357.25", r)
			}
		case "j1":
			if r[2] != "pending" || len(r) > 4 && r[4] != nil {
				t.Errorf("j1 = %#v, want requeued", r)
			}
		}
	}
	if n := f.emu.Count(mBatchUpdate); n < 2 {
		t.Errorf("%d writes: the write was not repaired (did it hit j2?)", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
