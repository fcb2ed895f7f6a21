package sheets_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// statusLog is an HTTP transport that records the status of every answer: a request that
// fails (a 400 for a missing tab) is a request too, and one a load should never send.
type statusLog struct {
	mu     sync.Mutex
	failed []string
}

func (l *statusLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		l.mu.Lock()
		l.failed = append(l.failed, r.Method+" "+r.URL.String()+": "+resp.Status)
		l.mu.Unlock()
	}
	return resp, err
}

func (l *statusLog) Failed() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.failed...)
}

// loggedStore is a store over f's emulator whose client records failed answers in log.
func loggedStore(t *testing.T, f *fixture, opts sheets.Options, log *statusLog) *sheets.Store {
	t.Helper()
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(f.srv.URL+"/"),
		option.WithHTTPClient(&http.Client{Transport: log}))
	if err != nil {
		t.Fatal(err)
	}
	if opts.SpreadsheetID == "" {
		opts.SpreadsheetID = f.id
	}
	opts.Retry.Sleep = f.sleep.Sleep
	return sheets.New(context.Background(), svc, opts)
}

// readOnceBook is a 10,000-row inbox with a Status dropdown and a dead-letter tab; the
// queue tab (Jobs) is configured but missing, as in most workbooks.
func readOnceBook(id string) *emulator.Workbook {
	return &emulator.Workbook{SpreadsheetID: id, Title: id, Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(applyBenchRows), Validations: map[string][]string{"E": {"new", "read", "done"}}},
		{Title: "failed_calls", Rows: [][]any{deadHeader}},
	}}
}

func readOnceTabs() []model.TabConfig {
	return []model.TabConfig{inboxTab(""), deadTab("failed_calls"), queueTab("Jobs")}
}

// A missing optional tab costs no request, on the first load or any later one: the sheet
// list says it is missing.
func TestLoadMissingOptionalTabSendsNoFailingRequest(t *testing.T) {
	f := newFixture(t, readOnceBook("ro-load"))
	log := &statusLog{}
	s := loggedStore(t, f, sheets.Options{Tabs: readOnceTabs()}, log)
	for i := range 3 {
		wb, err := s.Load(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(wb.Missing) != 1 || wb.Missing[0].Name != "Jobs" || len(wb.Tabs) != 2 {
			t.Fatalf("load %d: missing %v, %d tabs", i, wb.Missing, len(wb.Tabs))
		}
		if got := wb.Tab(model.RoleInbox).Statuses; strings.Join(got, ",") != "new,read,done" {
			t.Errorf("load %d: statuses %q, want the dropdown's", i, got)
		}
	}
	if failed := log.Failed(); len(failed) > 0 {
		t.Errorf("loads sent failing requests: %q", failed)
	}
	// 3 the first time (sheet list, then the tabs and the dropdown), 2 after.
	if got, want := f.total(), 3+2+2; got != want {
		t.Errorf("three loads sent %d requests, want %d: %v", got, want, f.emu.Counts())
	}
	if got := f.emu.Count(mBatchGet); got != 3 {
		t.Errorf("three loads sent %d batchGets, want 3", got)
	}
}

// A tab deleted since the last sheet list: the load that notices reads the others again.
func TestLoadTabDeletedSinceLastList(t *testing.T) {
	f := newFixture(t, readOnceBook("ro-deleted"))
	s := f.store(sheets.Options{Tabs: readOnceTabs()})
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	mustDo(t, f.emu.DeleteSheet(f.id, "failed_calls"))
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(wb.Tabs) != 1 || len(wb.Tab(model.RoleInbox).Records) != applyBenchRows || len(wb.Missing) != 2 {
		t.Fatalf("tabs %d missing %v", len(wb.Tabs), wb.Missing)
	}
}

// set-status of 1,000 IDs on a 10,000-row tab, as a command does it (LoadTab, then Apply):
// three requests, one read of the tab, none failing.
func TestLoadTabThenApplyReadsOnce(t *testing.T) {
	f := newFixture(t, readOnceBook("ro-apply"))
	log := &statusLog{}
	s := loggedStore(t, f, sheets.Options{Tabs: readOnceTabs()}, log)
	wb, err := s.LoadTab(ctx(t), "inbox") // by role, as --tab allows
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleInbox)
	if tab == nil || len(tab.Records) != applyBenchRows || strings.Join(tab.Statuses, ",") != "new,read,done" {
		t.Fatalf("LoadTab: %+v", wb)
	}
	if tab.Hidden == nil || tab.SheetID != f.emu.Workbook(f.id).Sheets[0].SheetID {
		t.Errorf("LoadTab: sheet ID %d hidden %v", tab.SheetID, tab.Hidden)
	}
	ids := applyBenchIDs(1000)
	edits := make([]model.Edit, len(ids))
	for i, id := range ids {
		edits[i] = model.SetStatus(tab, &tab.Records[tab.Index(id)], "done")
	}
	res, err := s.Apply(ctx(t), edits)
	if err != nil || len(res.Applied) != len(ids) || !res.OK() {
		t.Fatalf("apply: %v %s", err, res.Summary())
	}
	if got := f.total(); got > 3 {
		t.Errorf("set-status of 1,000 IDs sent %d requests, want at most 3: %v", got, f.emu.Counts())
	}
	if got := f.emu.Count(mBatchGet); got != 1 {
		t.Errorf("the tab was read %d times, want once", got)
	}
	if failed := log.Failed(); len(failed) > 0 {
		t.Errorf("failing requests: %q", failed)
	}
	rows := f.emu.Cells(f.id, "Inbox")
	for _, id := range ids {
		if got := cellAt(rows, tab.Index(id)+1, 4); got != "done" {
			t.Fatalf("%s holds %q, want done", id, got)
		}
	}

	// The kept read is used once: the next Apply reads afresh.
	f.reset()
	back := make([]model.Edit, len(ids))
	for i, e := range edits {
		back[i] = setStatus("Inbox", e.ID, "done", "new")
	}
	if res, err := s.Apply(ctx(t), back); err != nil || len(res.Applied) != len(ids) {
		t.Fatalf("second apply: %v %s", err, res.Summary())
	}
	if got := f.emu.Count(mBatchGet); got != 1 {
		t.Errorf("second apply read %d times, want 1 (a fresh read)", got)
	}
}

// Rows moved between LoadTab's read and the write: the journal shows the write hit other
// rows, every value is put back and the edits land on their own rows (invariant 1).
func TestLoadTabMovedBeforeWrite(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "ro-moved", Title: "ro-moved", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(50)},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	wb, err := s.LoadTab(ctx(t), "Inbox")
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleInbox)
	ids := []string{"m3", "m10", "m42"}
	var edits []model.Edit
	for _, id := range ids {
		edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(id)], "done"))
	}
	// Someone inserts two rows under the header and sorts by name, descending.
	mustDo(t, f.emu.InsertRows(f.id, "Inbox", 2, [][]any{{1.0, "Zed", "z@x", "hi", "new", "x1"}, {2.0, "Yan", "y@x", "hi", "new", "x2"}}))
	mustDo(t, f.emu.SortRows(f.id, "Inbox", 1, true))
	res, err := s.Apply(ctx(t), edits)
	if err != nil || len(res.Applied) != len(ids) || !res.OK() {
		t.Fatalf("apply: %v %s %+v", err, res.Summary(), res.Conflicts)
	}
	rows := f.emu.Cells(f.id, "Inbox")
	for r := 1; r < len(rows); r++ {
		id, status := cellAt(rows, r, 5), cellAt(rows, r, 4)
		want := "new"
		if id == "m3" || id == "m10" || id == "m42" {
			want = "done"
		}
		if status != want {
			t.Errorf("row %d (%s) status %q, want %q", r+1, id, status, want)
		}
	}
	if f.emu.Count(mBatchGet) < 2 {
		t.Errorf("the moved rows were not read again: %v", f.emu.Counts())
	}
}

// A key write after LoadTab (whose sheet list names one tab) still sees a damage sheet: the
// store asks for the whole list before accepting it (invariant 3).
func TestLoadTabKeyWriteSeesDamage(t *testing.T) {
	const damage = "triage: check failed_calls 2026-01-01 00:00:00"
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "ro-damage", Title: "ro-damage", Sheets: []*emulator.Sheet{
		{Title: "failed_calls", Rows: [][]any{deadHeader, {"2025-01-01T00:00:00Z", "crm", "https://crm.example.com/v1/contacts", `{"id":1}`, "x", "1", "POST", "", "dead", ""}}},
		{Title: damage, Rows: [][]any{{"tab", "row"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	wb, err := s.LoadTab(ctx(t), "deadletter")
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	r := &tab.Records[0]
	f.reset()
	_, err = s.Apply(ctx(t), []model.Edit{{Tab: "failed_calls", ID: r.ID, Expect: map[model.Field]string{model.FKey: ""}, Set: map[model.Field]string{model.FKey: r.ID}}})
	if err == nil || !strings.Contains(err.Error(), damage) || f.emu.Count(mBatchUpdate) != 0 {
		t.Errorf("key write on a damaged tab after LoadTab: %v, %d writes; want refused, naming %q", err, f.emu.Count(mBatchUpdate), damage)
	}
}

// LoadTab of a configured tab that doesn't exist reports it missing; an unknown name is an
// error that lists the configured tabs, with nothing sent.
func TestLoadTabMissing(t *testing.T) {
	f := newFixture(t, readOnceBook("ro-missing"))
	s := f.store(sheets.Options{Tabs: readOnceTabs()})
	wb, err := s.LoadTab(ctx(t), "Jobs")
	if err != nil || len(wb.Missing) != 1 || wb.Missing[0].Name != "Jobs" || len(wb.Tabs) != 0 {
		t.Fatalf("missing tab: %v %+v", err, wb)
	}
	f.reset()
	if _, err := s.LoadTab(ctx(t), "nope"); err == nil || !strings.Contains(err.Error(), `"Inbox"`) || f.total() != 0 {
		t.Errorf("unknown tab: %v, %d requests", err, f.total())
	}
}
