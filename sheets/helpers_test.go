package sheets_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
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
	emu := emulator.New()
	if wb != nil {
		emu.AddWorkbook(wb)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, emu: emu, srv: srv, svc: svc, sleep: &fakeSleep{}}
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

func inboxTab(name string, statuses ...string) model.TabConfig {
	tc := model.DefaultTabConfig(model.RoleInbox)
	if name != "" {
		tc.Name = name
	}
	tc.Statuses = statuses
	return tc
}

func deadTab(name string) model.TabConfig {
	tc := model.DefaultTabConfig(model.RoleDeadLetter)
	if name != "" {
		tc.Name = name
	}
	tc.Statuses = model.DefaultStatuses(model.RoleDeadLetter)
	return tc
}

func queueTab(name string) model.TabConfig {
	tc := model.DefaultTabConfig(model.RoleQueue)
	if name != "" {
		tc.Name = name
	}
	tc.Statuses = model.DefaultStatuses(model.RoleQueue)
	return tc
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
