package sheets_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Eight people writing at once through one store (as `triage serve`'s sessions share the
// server's store and its credential's quota) stay under the quota together: paced at 10 a
// minute against an emulator allowing 10, 8 × 4 writes, each a read and a write, all land and
// Google never answers 429.
func TestSessionsSharingOnePacerStayUnderTheQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		emu := emulator.New()
		emu.AddWorkbook(quotaInbox(32))
		emu.SetQuotaPerMinute(10)
		var answered atomic.Int64
		pacer := &sheets.Pacer{PerMinute: 10, OnWait: func(w sheets.QuotaWait) {
			if w.Answered {
				answered.Add(1)
			}
		}}
		conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: "http://sheets.test/", HTTPClient: &http.Client{Transport: testbed.HandlerTransport{Handler: emu}}, Pacer: pacer})
		if err != nil {
			t.Fatal(err)
		}
		st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: "q", Tabs: testbed.AllTabs(), HTTPClient: conn.HTTP})
		if _, err := st.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for s := range 8 {
			wg.Go(func() {
				for i := range 4 {
					id := fmt.Sprintf("m%d", s*4+i)
					res, err := st.Apply(context.Background(), []model.Edit{{Tab: "Inbox", ID: id, Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
					if err != nil || len(res.Applied) != 1 {
						errs <- fmt.Errorf("%s: %+v, %v", id, res, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := answered.Load(); n != 0 {
			t.Errorf("Google answered 429 %d times to sessions sharing the pacer", n)
		}
		if took := time.Since(start); took < 2*time.Minute {
			t.Errorf("32 writes at 10 a minute took %v: not paced", took)
		}
		for _, r := range emu.Cells("q", "Inbox")[1:] {
			if r[4] != "done" {
				t.Errorf("row %v not written", r)
			}
		}
	})
}
