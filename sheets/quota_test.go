package sheets_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// quotaStore is a store over an emulator that allows perMinute reads and perMinute writes a
// minute, connected as triage connects (ConnectWithDrive) through pacer, on one fake clock.
func quotaStore(t *testing.T, perMinute int, pacer *sheets.Pacer, wb *emulator.Workbook) (*sheets.Store, *emulator.Emulator, *testbed.Clock) {
	t.Helper()
	clk := testbed.NewClock()
	emu := emulator.New()
	emu.AddWorkbook(wb)
	emu.SetClock(clk.Now)
	emu.SetQuotaPerMinute(perMinute)
	srv := testbed.Serve(t, emu)
	pacer.Now, pacer.Sleep = clk.Now, clk.Sleep
	conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: srv.URL, Pacer: pacer})
	if err != nil {
		t.Fatal(err)
	}
	st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: testbed.AllTabs(), HTTPClient: conn.HTTP, Now: clk.Now,
		Retry: sheets.RetryPolicy{Sleep: clk.Sleep}})
	return st, emu, clk
}

func quotaInbox(n int) *emulator.Workbook {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := range n {
		rows = append(rows, []any{"2026-03-01T10:00:00Z", "N", "n@example.com", "hi", "new", fmt.Sprintf("m%d", i)})
	}
	return &emulator.Workbook{SpreadsheetID: "q", Title: "q", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}}
}

// With Google's quota at 10 requests a minute, 30 writes one after another each finish: every
// quota answer is waited out (until the next quota minute: the fake clock moves on) and the
// write sent again, never given up on, and each wait is told first, naming the quota.
func TestQuotaAnswersAreWaitedOut(t *testing.T) {
	var told []sheets.QuotaWait
	pacer := &sheets.Pacer{PerMinute: -1, OnWait: func(w sheets.QuotaWait) { told = append(told, w) }}
	st, emu, clk := quotaStore(t, 10, pacer, quotaInbox(30))
	ctx := sheets.WithQuotaBudget(t.Context(), 30*time.Minute)
	wb, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range wb.Tab(model.RoleInbox).Records {
		res, err := st.Apply(ctx, []model.Edit{{Tab: "Inbox", ID: r.ID, Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
		if err != nil || len(res.Applied) != 1 {
			t.Fatalf("write %d: %+v, %v", i, res, err)
		}
	}
	if len(told) == 0 || !told[0].Answered || !strings.HasPrefix(told[0].String(), "Sheets quota reached (reads per minute per user): waiting ") {
		t.Fatalf("waits told: %v", told)
	}
	if clk.Slept() < 2*time.Minute {
		t.Errorf("slept %v for 30 writes at 10 a minute", clk.Slept())
	}
	for _, r := range emu.Cells("q", "Inbox")[1:] {
		if r[4] != "done" {
			t.Fatalf("row %v not written", r)
		}
	}
}

// Paced under the quota, the same writes meet no quota answer at all: each waits its turn
// before it is sent.
func TestPacingStaysUnderTheQuota(t *testing.T) {
	var answered atomic.Int64
	pacer := &sheets.Pacer{PerMinute: 10, OnWait: func(w sheets.QuotaWait) {
		if w.Answered {
			answered.Add(1)
		}
	}}
	st, _, clk := quotaStore(t, 10, pacer, quotaInbox(30))
	ctx := t.Context()
	wb, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range wb.Tab(model.RoleInbox).Records {
		if _, err := st.Apply(ctx, []model.Edit{{Tab: "Inbox", ID: r.ID, Set: map[model.Field]string{model.FStatus: "done"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := answered.Load(); n != 0 {
		t.Errorf("%d quota answers while paced at the quota", n)
	}
	if clk.Slept() == 0 {
		t.Error("never paced")
	}
}

// A quota answer that would take past the budget is not waited out: the command fails at
// once, saying what happened and what to do, and the request is not sent again by the
// store's own retries either.
func TestQuotaBudgetEnds(t *testing.T) {
	pacer := &sheets.Pacer{PerMinute: -1, Budget: 20 * time.Second}
	st, emu, _ := quotaStore(t, 1, pacer, quotaInbox(3))
	ctx := sheets.WithQuotaBudget(t.Context(), 0)
	if _, err := st.Load(ctx); err == nil {
		// The load is three reads: the second meets the quota of 1 a minute.
		t.Fatal("a load past the budget succeeded")
	} else if !errors.Is(err, sheets.ErrRateLimited) || !strings.Contains(err.Error(), "quota budget") || !strings.Contains(err.Error(), "[quota] budget") {
		t.Fatalf("error: %v", err)
	}
	sent := map[string]int{}
	for _, r := range emu.Requests() {
		sent[r.Method+" "+r.Path+"?"+r.RawQuery]++
	}
	for req, n := range sent {
		if n > 1 {
			t.Errorf("sent %d times: %s", n, req)
		}
	}
}

// A quota answer with Retry-After is waited out for exactly that long.
func TestRetryAfterIsHonoured(t *testing.T) {
	clk := testbed.NewClock()
	emu := emulator.New()
	emu.AddWorkbook(quotaInbox(2))
	var refused atomic.Bool
	srv := testbed.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refused.Swap(true) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`)
			return
		}
		emu.ServeHTTP(w, r)
	}))
	var told []sheets.QuotaWait
	pacer := &sheets.Pacer{PerMinute: -1, Now: clk.Now, Sleep: clk.Sleep, OnWait: func(w sheets.QuotaWait) { told = append(told, w) }}
	conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: srv.URL, Pacer: pacer})
	if err != nil {
		t.Fatal(err)
	}
	st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: "q", Tabs: testbed.AllTabs(), HTTPClient: conn.HTTP, Retry: sheets.RetryPolicy{Sleep: clk.Sleep}})
	if _, err := st.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if clk.Slept() != 7*time.Second || len(told) != 1 || told[0].Wait != 7*time.Second {
		t.Fatalf("slept %v, told %v; want exactly the 7 s Retry-After asked", clk.Slept(), told)
	}
}

// Drive's files.get (the change check) is not paced under the Sheets quota, which doesn't
// count it: at 1 read a minute, three change checks go at once, and Sheets reads still wait.
func TestDriveIsNotPacedUnderTheSheetsQuota(t *testing.T) {
	clk := testbed.NewClock()
	emu := emulator.New()
	emu.AddWorkbook(quotaInbox(1))
	emu.SetClock(clk.Now)
	emu.SetQuotaPerMinute(1)
	pacer := &sheets.Pacer{PerMinute: 1, Now: clk.Now, Sleep: clk.Sleep}
	conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: "http://sheets.test/",
		HTTPClient: &http.Client{Transport: testbed.HandlerTransport{Handler: emu}}, Pacer: pacer})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := conn.Drive.Files.Get("q").Fields("version").Do(); err != nil {
			t.Fatal(err)
		}
	}
	if clk.Slept() != 0 {
		t.Fatalf("change checks waited %v for the Sheets quota", clk.Slept())
	}
	for range 2 {
		if _, err := conn.Sheets.Spreadsheets.Values.Get("q", "Inbox!A1").Do(); err != nil {
			t.Fatal(err)
		}
	}
	if clk.Slept() < 50*time.Second {
		t.Errorf("two Sheets reads at 1 a minute waited %v", clk.Slept())
	}
}
