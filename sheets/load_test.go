package sheets_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

func quotedNamesWorkbook() *emulator.Workbook {
	return &emulator.Workbook{
		SpreadsheetID: "quoted",
		Title:         "Quoted names",
		TimeZone:      "Europe/Paris",
		Sheets: []*emulator.Sheet{
			{Title: "Sheet1", SheetID: 0, Rows: [][]any{{"unrelated"}}},
			{Title: "it's", SheetID: 11, Hidden: []int{5}, Rows: inboxRows(3)},
			{Title: "failed calls", SheetID: 22, Rows: [][]any{
				{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"},
				{45500.25, "crm", "https://crm.example/hook", `{"id":"evt-1"}`, "503", 2.0, "POST", "k-1", "dead"},
				{45500.5, "crm", "https://crm.example/hook", `{"id":"evt-2"}`, "", 1.0, "POST", "", ""},
			}},
		},
	}
}

// Load reads any number of tabs in exactly two requests, with quoted tab names.
func TestLoadTwoRequestsQuotedNames(t *testing.T) {
	f := newFixture(t, quotedNamesWorkbook())
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("it's", "new", "done"), deadTab("failed calls")}})
	wb := f.load(t, s)
	f.wantCount(t, mGet, 1)
	f.wantCount(t, mBatchGet, 1)
	f.wantTotal(t, "load", 2)
	for _, r := range f.emu.Requests() {
		if r.Method != mBatchGet {
			continue
		}
		q, _ := url.ParseQuery(r.RawQuery)
		if got := q["ranges"]; len(got) != 2 || got[0] != "'it''s'" || got[1] != "'failed calls'" {
			t.Errorf("batchGet ranges = %q", got)
		}
		if q.Get("valueRenderOption") != "UNFORMATTED_VALUE" || q.Get("dateTimeRenderOption") != "SERIAL_NUMBER" {
			t.Errorf("batchGet render options: %s", r.RawQuery)
		}
	}
	if len(wb.Missing) != 0 || len(wb.Broken) != 0 || len(wb.Tabs) != 2 {
		t.Fatalf("missing %v broken %v tabs %d", wb.Missing, wb.Broken, len(wb.Tabs))
	}
	if wb.Title != "Quoted names" || wb.Location.String() != "Europe/Paris" {
		t.Errorf("title %q location %v", wb.Title, wb.Location)
	}
	in := wb.TabNamed("it's")
	if in == nil || len(in.Records) != 3 || in.Records[0].ID != "m1" || in.SheetID != 11 {
		t.Fatalf("inbox: %+v", in)
	}
	if len(in.Hidden) != 6 || !in.Hidden[5] || in.Hidden[0] {
		t.Errorf("hidden = %v, want the ID column (5) hidden", in.Hidden)
	}
	if in.Records[0].Time.Location().String() != "Europe/Paris" {
		t.Errorf("timestamp read in %v, want the spreadsheet's zone", in.Records[0].Time.Location())
	}
	dl := wb.TabNamed("failed calls")
	if dl == nil || len(dl.Records) != 2 || dl.SheetID != 22 {
		t.Fatalf("dead letters: %+v", dl)
	}
	if dl.Records[0].ID != "k-1" || dl.Records[1].KeyOrigin != model.KeyMinted {
		t.Errorf("dead-letter identities: %q %v", dl.Records[0].ID, dl.Records[1].KeyOrigin)
	}
	if got := dl.Get(&dl.Records[0], model.FAttempts); got != "2" {
		t.Errorf("attempts read as %q, want 2 (UNFORMATTED_VALUE)", got)
	}
}

// The two requests of a load are sent concurrently (once the first load knows which tabs
// exist).
func TestLoadConcurrent(t *testing.T) {
	f := newFixture(t, quotedNamesWorkbook())
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("it's", "new"), deadTab("failed calls")}})
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	f.reset()
	// Every request waits an hour: both are received while the other still waits, whatever
	// the machine's speed, only if they were sent together. Then the load is cancelled.
	f.emu.SetLatency(time.Hour)
	c, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Load(c)
		done <- err
	}()
	both := testbed.Until(t, func() bool { return f.emu.Count(mGet) == 1 && f.emu.Count(mBatchGet) == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled load succeeded")
	}
	if !both {
		t.Errorf("the load's requests were not sent together: %v while the first waited", f.emu.Counts())
	}
}

// A Status dropdown becomes the status list; it costs one request, on the first load only.
func TestLoadDropdownOnce(t *testing.T) {
	rows := [][]any{{"ID", "Name", "State", "Message"}, {"a", "Ann", "Open", "hi"}}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "dd", Title: "dd", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: rows, Validations: map[string][]string{"C": {" Open ", "Waiting", "Closed", "closed"}}},
		{Title: "Jobs", Rows: [][]any{{"id", "status"}, {"j1", "pending"}}},
	}})
	jobs := queueTab("Jobs")
	jobs.Statuses = nil // no configured list: asks for a dropdown, finds none, keeps the defaults
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab(""), jobs}})
	wb := f.load(t, s)
	if got := f.emu.Count(mGet); got != 2 {
		t.Errorf("first load: spreadsheets.get sent %d times, want 2 (metadata + dropdowns)", got)
	}
	f.wantTotal(t, "first load", 3)
	var ddq url.Values
	for _, r := range f.emu.Requests() {
		q, _ := url.ParseQuery(r.RawQuery)
		if r.Method == mGet && len(q["ranges"]) > 0 {
			ddq = q
		}
	}
	if got := ddq["ranges"]; len(got) != 2 || got[0] != "'Inbox'!2:2" || got[1] != "'Jobs'!2:2" {
		t.Errorf("dropdown ranges = %q (one request for both tabs, row 2: sent before the header is read)", got)
	}
	want := []string{"Open", "Waiting", "Closed"} // the dropdown's spelling: writes must pass its validation
	if got := wb.Tab(model.RoleInbox).Statuses; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("inbox statuses = %q, want %q", got, want)
	}
	if got := wb.Tab(model.RoleQueue).Statuses; strings.Join(got, ",") != strings.Join(model.DefaultStatuses(model.RoleQueue), ",") {
		t.Errorf("queue statuses = %q, want the defaults", got)
	}

	f.reset()
	wb = f.load(t, s)
	f.wantTotal(t, "second load", 2) // dropdowns cached
	if got := wb.Tab(model.RoleInbox).Statuses; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("second load: inbox statuses = %q, want %q", got, want)
	}
}

// A configured status list wins over the dropdown and costs nothing.
func TestLoadConfiguredStatusesSkipDropdown(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "cfg", Title: "cfg", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(2), Validations: map[string][]string{"E": {"x", "y"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	wb := f.load(t, s)
	f.wantTotal(t, "load", 2)
	if got := wb.Tab(model.RoleInbox).Statuses; strings.Join(got, ",") != "new,done" {
		t.Errorf("statuses = %q", got)
	}
}

// A missing tab costs no request (the sheet list says it is missing) and is reported, not
// fatal.
func TestLoadMissingTab(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "mt", Title: "mt", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(2)},
		{Title: "Jobs", Rows: [][]any{{"id", "status"}, {"j1", "claimed"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), deadTab("failed_calls"), queueTab("Jobs")}})
	wb := f.load(t, s)
	if got := f.emu.Count(mBatchGet); got != 1 {
		t.Errorf("batchGet sent %d times, want 1 (without the missing tab)", got)
	}
	f.wantTotal(t, "load", 2)
	if len(wb.Missing) != 1 || wb.Missing[0].Name != "failed_calls" {
		t.Errorf("missing = %+v, want failed_calls", wb.Missing)
	}
	if len(wb.Tabs) != 2 || wb.Tabs[0].Config.Name != "Inbox" || wb.Tabs[1].Config.Name != "Jobs" {
		t.Fatalf("tabs = %d", len(wb.Tabs))
	}
	if len(wb.Tab(model.RoleInbox).Records) != 2 || len(wb.Tab(model.RoleQueue).Records) != 1 {
		t.Errorf("records not loaded for the existing tabs")
	}

	// Every configured tab missing: the sheet list alone.
	f.reset()
	s = f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("failed_calls")}})
	wb, err := s.Load(ctx(t))
	if err != nil || len(wb.Missing) != 1 || len(wb.Tabs) != 0 {
		t.Fatalf("all missing: %v %+v", err, wb)
	}
	if got := f.total(); got != 1 {
		t.Errorf("all-missing load sent %d requests, want 1", got)
	}
}

// A tab without a required header is Broken, with a message naming tab, header and what
// was found; the other tabs load.
func TestLoadMissingHeader(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "mh", Title: "mh", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{{"Timestamp", "Name", "Email", "Message", "Status"}, {1.0, "a", "b", "c", "new"}}},
		{Title: "Jobs", Rows: [][]any{{"id", "status"}, {"j1", "pending"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), queueTab("")}})
	wb := f.load(t, s)
	if len(wb.Broken) != 1 {
		t.Fatalf("broken = %+v", wb.Broken)
	}
	var mh *model.MissingHeaderError
	if !errors.As(wb.Broken[0].Err, &mh) {
		t.Fatalf("broken error %T, want *model.MissingHeaderError", wb.Broken[0].Err)
	}
	msg := wb.Broken[0].Err.Error()
	for _, want := range []string{`"Inbox"`, `"ID"`, `"Timestamp"`, `"Status"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q doesn't mention %s", msg, want)
		}
	}
	if len(wb.Tabs) != 1 || wb.Tabs[0].Config.Role != model.RoleQueue {
		t.Errorf("the Jobs tab should still load")
	}
}

// Google's 403 and 404 error bodies become errors that say what to do.
func TestFriendlyErrors(t *testing.T) {
	f := newFixture(t, quotedNamesWorkbook())
	tabs := []model.TabConfig{inboxTab("it's", "new")}

	f.emu.InjectFault(emulator.Fault{Status: 403, Times: 2})
	s := f.store(sheets.Options{Tabs: tabs, Identity: googleauth.Identity{Kind: googleauth.KindServiceAccount, Email: "bot@proj.iam.gserviceaccount.com"}})
	_, err := s.Load(ctx(t))
	if !errors.Is(err, sheets.ErrNotShared) {
		t.Fatalf("403: err = %v, want ErrNotShared", err)
	}
	for _, want := range []string{"bot@proj.iam.gserviceaccount.com", "Share", "Editor", "--readonly"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("403 message %q lacks %q", err, want)
		}
	}
	var se *sheets.Error
	if !errors.As(err, &se) || se.Code != 403 || se.Attempts != 1 {
		t.Errorf("403: %+v (a 403 is not retried)", se)
	}

	f.emu.ClearFaults()
	f.reset()
	s = f.store(sheets.Options{SpreadsheetID: "no-such-sheet", Tabs: tabs})
	_, err = s.Load(ctx(t))
	if !errors.Is(err, sheets.ErrNotFound) {
		t.Fatalf("404: err = %v, want ErrNotFound", err)
	}
	for _, want := range []string{`"no-such-sheet"`, "--spreadsheet", "TRIAGE_SPREADSHEET", "/d/"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("404 message %q lacks %q", err, want)
		}
	}
	if got := f.emu.Count(mGet); got != 1 {
		t.Errorf("404 retried: %d gets", got)
	}
	if len(f.sleep.Waits()) != 0 {
		t.Errorf("slept %v for non-retryable errors", f.sleep.Waits())
	}
}

// A storm of 429s is ridden out with full-jitter backoff, quickly in tests.
func TestRetry429Storm(t *testing.T) {
	f := newFixture(t, quotedNamesWorkbook())
	f.emu.InjectFault(emulator.Fault{Method: mBatchGet, Status: 429, Times: 3})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("it's", "new")}})
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatalf("load after 3 429s: %v", err)
	}
	if len(wb.Tabs) != 1 || len(wb.Tabs[0].Records) != 3 {
		t.Fatalf("bad workbook after retries")
	}
	if got := f.emu.Count(mBatchGet); got != 4 {
		t.Errorf("batchGet sent %d times, want 4 (3 refused + 1)", got)
	}
	waits := f.sleep.Waits()
	if len(waits) != 3 {
		t.Fatalf("slept %d times, want 3", len(waits))
	}
	ceil := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	for i, w := range waits {
		if w < 0 || w > ceil[i] {
			t.Errorf("wait %d = %v, want within [0, %v]", i+1, w, ceil[i])
		}
	}
}

// Retries are bounded; the final error says what happened; other 4xx are never retried.
func TestRetryBounded(t *testing.T) {
	f := newFixture(t, quotedNamesWorkbook())
	f.emu.InjectFault(emulator.Fault{Method: mGet, Status: 503, Times: 10})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("it's", "new")}, Retry: sheets.RetryPolicy{MaxAttempts: 3}})
	_, err := s.Load(ctx(t))
	var se *sheets.Error
	if !errors.As(err, &se) || se.Code != 503 || se.Attempts != 3 {
		t.Fatalf("err = %v (%+v), want a 503 after 3 attempts", err, se)
	}
	f.wantCount(t, mGet, 3)
	f.emu.ClearFaults()
	f.reset()
	f.emu.InjectFault(emulator.Fault{Method: mGet, Status: 400, Times: 1})
	if _, err := s.Load(ctx(t)); err == nil {
		t.Fatal("400 not reported")
	}
	if got := f.emu.Count(mGet); got != 1 {
		t.Errorf("a 400 was retried: %d gets", got)
	}
}

func TestBackoffCeilings(t *testing.T) {
	p := sheets.RetryPolicy{}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := p.Backoff(500); got != 10*time.Second {
		t.Errorf("Backoff(500) = %v (overflow?)", got)
	}
}

// No network: the error says the API can't be reached, and wraps ErrUnreachable. A refused
// connection on a Load's first requests is retried once, after a short wait, not ridden out
// like a 503 (a person at a jump host waits for the message); a later write still retries
// with the full policy.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/"
	ln.Close()
	svc, err := sheetsapi.NewService(ctx(t), option.WithEndpoint(endpoint), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSleep{}
	s := sheets.New(ctx(t), svc, sheets.Options{SpreadsheetID: "x", Tabs: []model.TabConfig{inboxTab("", "new")}, Retry: sheets.RetryPolicy{Sleep: fs.Sleep}})
	_, err = s.Load(ctx(t))
	if !errors.Is(err, sheets.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, want := range []string{endpoint, "HTTPS_PROXY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	waits := fs.Waits()
	if len(waits) > 1 {
		t.Errorf("load slept %d times (%v), want at most 1", len(waits), waits)
	}
	for _, w := range waits {
		if w > 250*time.Millisecond {
			t.Errorf("load waited %v before retrying a refused connection, want at most 250ms", w)
		}
	}
	_, err = s.Apply(ctx(t), []model.Edit{{Tab: "Inbox", ID: "m1", Set: map[model.Field]string{model.FStatus: "done"}}})
	if !errors.Is(err, sheets.ErrUnreachable) {
		t.Errorf("apply: err = %v, want ErrUnreachable", err)
	}
	if n := len(fs.Waits()) - len(waits); n != sheets.DefaultMaxAttempts-1 {
		t.Errorf("apply slept %d times, want %d (full retries)", n, sheets.DefaultMaxAttempts-1)
	}
}

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
