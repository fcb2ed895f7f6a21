package sheets_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// API method names as the emulator counts them.
const (
	mGet               = "spreadsheets.get"
	mBatchUpdate       = "spreadsheets.batchUpdate"
	mBatchGet          = "values.batchGet"
	mValuesBatchUpdate = "values.batchUpdate"
)

// fixture is an emulator behind a real HTTP server and a real sheets/v4 client.
type fixture struct {
	t     testing.TB
	emu   *emulator.Emulator
	srv   *httptest.Server
	svc   *sheetsapi.Service
	id    string
	sleep *fakeSleep
}

// fakeSleep records backoff waits instead of sleeping.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleep) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeSleep) Waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

func newFixture(t testing.TB, wb *emulator.Workbook) *fixture {
	t.Helper()
	var wbs []*emulator.Workbook
	if wb != nil {
		wbs = append(wbs, wb)
	}
	sh := testbed.NewSheets(t, wbs...)
	f := &fixture{t: t, emu: sh.Emu, srv: sh.Server, svc: sh.Service, sleep: &fakeSleep{}}
	if wb != nil {
		f.id = wb.SpreadsheetID
	}
	// Invariant 2, for every write any test makes: checked before each reset and at the end.
	t.Cleanup(func() { f.checkRAW() })
	return f
}

// checkRAW fails the test if any write so far could have made a formula: a values write
// whose valueInputOption was not RAW, or an updateCells carrying a formulaValue (logged as
// "FORMULA"; see emulator.Emulator.ValueInputOptions).
func (f *fixture) checkRAW() {
	f.t.Helper()
	for i, o := range f.emu.ValueInputOptions() {
		if o != "RAW" {
			f.t.Errorf("write #%d was stored as %q, want RAW (invariant 2)", i, o)
		}
	}
}

// reset checks invariant 2 so far, then zeroes the emulator's counters.
func (f *fixture) reset() {
	f.t.Helper()
	f.checkRAW()
	f.emu.ResetCounts()
}

// total is the number of API requests since the last reset.
func (f *fixture) total() int {
	n := 0
	for _, c := range f.emu.Counts() {
		n += c
	}
	return n
}

func (f *fixture) store(opts sheets.Options) *sheets.Store {
	if opts.SpreadsheetID == "" {
		opts.SpreadsheetID = f.id
	}
	if opts.Retry.Sleep == nil {
		opts.Retry.Sleep = f.sleep.Sleep
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient // reads decoded streaming, as Connect's store does
	}
	return sheets.New(context.Background(), f.svc, opts)
}

// openTab adds the workbook id, holding one tab of rows named for tc (in the time zone of
// tz, if given), and loads it through a store reading tc (opts gives the rest), failing the
// test if the load fails.
func (f *fixture) openTab(t testing.TB, id string, tc model.TabConfig, rows [][]any, opts sheets.Options, tz ...string) (*sheets.Store, *model.Workbook) {
	t.Helper()
	wb := &emulator.Workbook{SpreadsheetID: id, Title: id, Sheets: []*emulator.Sheet{{Title: tc.Name, Rows: rows}}}
	if len(tz) > 0 {
		wb.TimeZone = tz[0]
	}
	f.emu.AddWorkbook(wb)
	opts.SpreadsheetID, opts.Tabs = id, []model.TabConfig{tc}
	s := f.store(opts)
	loaded, err := s.Load(ctx(t))
	if err != nil {
		t.Fatalf("%s: load: %v", id, err)
	}
	return s, loaded
}

// roleTab is role's default tab named name ("" keeps the default name), with statuses.
func roleTab(role model.Role, name string, statuses []string) model.TabConfig {
	tc := model.DefaultTabConfig(role)
	if name != "" {
		tc.Name = name
	}
	tc.Statuses = statuses
	return tc
}

func inboxTab(name string, statuses ...string) model.TabConfig {
	return roleTab(model.RoleInbox, name, statuses)
}

func deadTab(name string) model.TabConfig {
	return roleTab(model.RoleDeadLetter, name, model.DefaultStatuses(model.RoleDeadLetter))
}

func queueTab(name string) model.TabConfig {
	return roleTab(model.RoleQueue, name, model.DefaultStatuses(model.RoleQueue))
}

// wantTotal fails the test unless what sent want API requests since the last reset.
func (f *fixture) wantTotal(t testing.TB, what string, want int) {
	t.Helper()
	if got := f.total(); got != want {
		t.Errorf("%s sent %d requests, want %d: %v", what, got, want, f.emu.Counts())
	}
}

// load loads the workbook through s, failing the test if it can't.
func (f *fixture) load(t testing.TB, s *sheets.Store) *model.Workbook {
	t.Helper()
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return wb
}

// wantCount fails the test unless the emulator counted want requests of method since the
// last reset.
func (f *fixture) wantCount(t testing.TB, method string, want int) {
	t.Helper()
	if got := f.emu.Count(method); got != want {
		t.Errorf("%s sent %d times, want %d", method, got, want)
	}
}

var inboxHeader = []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"}

// inboxRows returns a header and n rows with IDs m1..mn.
func inboxRows(n int) [][]any {
	rows := [][]any{inboxHeader}
	for i := 1; i <= n; i++ {
		rows = append(rows, []any{45000.0 + float64(i)/24, "Person " + itoa(i), "p" + itoa(i) + "@example.com", "hello " + itoa(i), "new", "m" + itoa(i)})
	}
	return rows
}

func itoa(i int) string { return strconv.Itoa(i) }

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
