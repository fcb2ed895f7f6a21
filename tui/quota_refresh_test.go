package tui

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The TUI's refresh loop under Google's quota (4 reads a minute here; each refresh is a
// change check, a tail probe and a read): every refresh ends with the rows appended since
// shown, however long the store waits for the quota, and nothing shows as failed. The
// emulator is served in memory in a synctest bubble, so its quota minutes and the store's
// waits run on one fake clock.
func TestRefreshLoopUnderTheSheetsQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
		for i := range 5 {
			rows = append(rows, []any{45000.0 + float64(i), "N", "n@example.com", "hi", "new", fmt.Sprintf("m%d", i)})
		}
		emu := emulator.New()
		emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "q", Title: "q", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
		emu.SetQuotaPerMinute(4)
		var waits atomic.Int64
		pacer := &sheets.Pacer{PerMinute: -1, OnWait: func(sheets.QuotaWait) { waits.Add(1) }}
		conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: "http://sheets.test/",
			HTTPClient: &http.Client{Transport: testbed.HandlerTransport{Handler: emu}}, Pacer: pacer})
		if err != nil {
			t.Fatal(err)
		}
		st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: "q", Tabs: []model.TabConfig{model.DefaultTabConfig(model.RoleInbox)}, HTTPClient: conn.HTTP}).WithDrive(conn.Drive)
		if _, err := st.Changed(t.Context()); err != nil {
			t.Fatal(err)
		}
		wb, err := st.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		m := New(Options{Store: st, SpreadsheetID: "q", Refresh: time.Minute})
		send(m, tea.WindowSizeMsg{Width: 100, Height: 30})
		send(m, loaded(m, wb))
		// drive runs a Cmd and everything it leads to, on this goroutine (a store call waits
		// on the bubble's clock), leaving out the ticks that only schedule the next refresh.
		drive := func(cmd tea.Cmd) {
			queue := []tea.Cmd{cmd}
			for len(queue) > 0 {
				c := queue[0]
				queue = queue[1:]
				if c == nil || isTick(c) {
					continue
				}
				msg := c()
				if sub, ok := subCmds(msg); ok {
					queue = append(queue, sub...)
					continue
				}
				if msg != nil {
					queue = append(queue, send(m, msg))
				}
			}
		}
		for cycle := range 6 {
			id := fmt.Sprintf("new%d", cycle)
			if err := emu.InsertRows("q", "Inbox", 7+cycle, [][]any{{45100.0, "New", "n@example.com", "hi", "new", id}}); err != nil {
				t.Fatal(err)
			}
			drive(send(m, refreshTickMsg{gen: m.load.auto.gen}))
			if n := len(m.tabs.current().visible); n != 6+cycle {
				t.Fatalf("refresh %d shows %d rows, want %d (the row appended since)", cycle, n, 6+cycle)
			}
			if s := toastTexts(m); strings.Contains(s, "fail") || m.load.err != nil {
				t.Fatalf("refresh %d: %v; toasts %q", cycle, m.load.err, s)
			}
		}
		if waits.Load() == 0 {
			t.Fatal("the quota was never reached: the test proves nothing")
		}
	})
}
