package tui

import (
	"runtime"
	"testing"

	"github.com/triage-dev/triage/model"
)

// BenchmarkHeapRefresh100k reports the live heap of a TUI showing a 100,000-row inbox after
// its first load and after 10 refreshes (each a fresh decode, as the store hands it over,
// through the load Cmd), after a GC: flat when a refresh keeps no second copy past the swap.
// "filtered": a filter is set, so each refresh builds the filter text too (reusing the
// unchanged rows' strings); "plain": no filter, no filter text.
func BenchmarkHeapRefresh100k(b *testing.B) {
	rows := bigInboxRows(100_000)
	for _, filtered := range []bool{true, false} {
		name := "plain"
		if filtered {
			name = "filtered"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var base, first, last runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&base)
				decode := func() *model.Workbook {
					return &model.Workbook{Title: "heap", Tabs: []*model.Table{mustDecode(b, model.RoleInbox, rows)}, Loaded: testNow}
				}
				m := newScreenLoaded(b, decode(), 80, 24)
				if filtered {
					send(m, m.tabs.hayCmd(true)().(hayMsg))
					keys(m, "/")
					typeText(m, "example.com")
					keys(m, "enter")
				}
				runtime.GC()
				runtime.ReadMemStats(&first)
				for r := 0; r < 10; r++ {
					wb := decode()
					st := &memStore{wb: func() *model.Workbook { return wb }}
					msg := loadCmd(b.Context(), st, m.load.seq, m.tabs.filtering(), nil)()
					send(m, msg)
				}
				runtime.GC()
				runtime.ReadMemStats(&last)
				if filtered && (m.tabs.current().data.hay == nil || m.tabs.current().waiting()) {
					b.Fatal("the filter isn't applied after the refreshes")
				}
				runtime.KeepAlive(m)
				b.ReportMetric(float64(first.HeapAlloc-base.HeapAlloc)/(1<<20), "MB-1load")
				b.ReportMetric(float64(last.HeapAlloc-base.HeapAlloc)/(1<<20), "MB-10refreshes")
			}
		})
	}
}
