package tui

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// BenchmarkFirstScreen100k is the "TUI first screen at 100k rows" figure against "a plain
// curl of the same batchGet", in one run, alternately: the TUI's own load of a 100,000-row
// Inbox through the real store on the emulator (connected as triage connects: streaming
// reads, gzip), its preparation and the first View; and the raw GET of the same values the
// load reads, gzip asked for as curl --compressed does, read to the end and thrown away. It
// reports each side's time per op and their ratio (x-curl), which is the claim; the absolute
// times are this machine's.
func BenchmarkFirstScreen100k(b *testing.B) {
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "first", Title: "first", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: bigInboxRows(100_000)}}})
	srv := testbed.Serve(b, emu)
	ctx := context.Background()
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{Endpoint: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	tabs := []model.TabConfig{model.DefaultTabConfig(model.RoleInbox)}
	q := url.Values{"ranges": {"'Inbox'"}, "valueRenderOption": {"UNFORMATTED_VALUE"}, "dateTimeRenderOption": {"SERIAL_NUMBER"}}
	rawURL := srv.URL + "/v4/spreadsheets/first/values:batchGet?" + q.Encode()
	curl := func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req) // the body as sent: gzip, not decoded
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n < 1<<20 {
			b.Fatalf("raw batchGet: %s, %d bytes", resp.Status, n)
		}
	}
	first := func() {
		st := sheets.New(ctx, conn.Sheets, sheets.Options{SpreadsheetID: "first", Tabs: tabs, HTTPClient: conn.HTTP})
		m := New(Options{Store: st, SpreadsheetID: "first", Now: fixedNow})
		send(m, tea.WindowSizeMsg{Width: 100, Height: 30})
		msg := loadCmd(ctx, st, m.load.seq, nil, nil)()
		send(m, msg)
		if v := m.View().Content; !strings.Contains(v, "1/100000") {
			b.Fatalf("the first screen is not the loaded tab:\n%s", v)
		}
	}
	curl()
	first()
	var tuiTime, curlTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		first()
		t1 := time.Now()
		curl()
		tuiTime += t1.Sub(t0)
		curlTime += time.Since(t1)
	}
	b.ReportMetric(float64(tuiTime.Milliseconds())/float64(b.N), "ms-first-screen/op")
	b.ReportMetric(float64(curlTime.Milliseconds())/float64(b.N), "ms-curl/op")
	b.ReportMetric(float64(tuiTime)/float64(curlTime), "x-curl")
}
