package tui

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
)

// bigInboxRows generates an Inbox of n messages shaped like real ones.
func bigInboxRows(n int) [][]any {
	first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Radia", "Leslie", "Frances", "John"}
	last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Perlman", "Lamport"}
	topics := []string{"pricing", "a bug in the export", "the API rate limit", "an invoice", "partnership", "the contact form", "GDPR", "a refund"}
	statuses := []string{"", "new", "read", "replied", "done", "spam"}
	rows := make([][]any, 0, n+1)
	rows = append(rows, []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"})
	base := 45000.0 // a serial date in 2023
	for i := 0; i < n; i++ {
		f, l := first[i%len(first)], last[(i/len(first))%len(last)]
		rows = append(rows, []any{
			base + float64(i)/200,
			f + " " + l,
			fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(f), strings.ToLower(l), i%97),
			fmt.Sprintf("Hello, I have a question about %s (ticket %d). Could someone get back to me this week?\nThanks, %s", topics[i%len(topics)], i, f),
			statuses[(i*7)%len(statuses)],
			fmt.Sprintf("%08x-%04x", i*2654435761%4294967296, i%65536),
		})
	}
	return rows
}

var bigWorkbooks sync.Map // n → *model.Workbook

// bigWorkbook is an Inbox-only workbook of n rows, decoded once per size per test binary.
func bigWorkbook(tb testing.TB, n int) *model.Workbook {
	if wb, ok := bigWorkbooks.Load(n); ok {
		return wb.(*model.Workbook)
	}
	wb := &model.Workbook{
		SpreadsheetID: "big", Title: "Big inbox", Location: time.UTC,
		Tabs:   []*model.Table{mustDecode(tb, model.RoleInbox, bigInboxRows(n))},
		Loaded: testNow,
	}
	bigWorkbooks.Store(n, wb)
	return wb
}

// benchCursorMove measures one cursor move as the program does it: Update of a key, then
// View. j and k alternate so the cursor never pins at the bottom.
func benchCursorMove(b *testing.B, n int) {
	m := newLoaded(b, bigWorkbook(b, n), 80, 24)
	keys(m, "j", "j", "j", "j", "j")
	jk := [2]tea.KeyPressMsg{press("j"), press("k")} // j and k alternate
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msg := jk[i%2]
		m.Update(msg)
		_ = m.View()
	}
}

func BenchmarkCursorMove1k(b *testing.B)   { benchCursorMove(b, 1_000) }
func BenchmarkCursorMove100k(b *testing.B) { benchCursorMove(b, 100_000) }

// BenchmarkBubblesTableCursorMove100k is the baseline: bubbles/table holding the same rows
// (pre-rendered strings, which flatters it), same size, same key, same View per move.
func BenchmarkBubblesTableCursorMove100k(b *testing.B) {
	wb := bigWorkbook(b, 100_000)
	d := prepare(wb.Tabs[0])
	ws := layout(d.cols, d.natural, 80)
	var cols []table.Column
	for i, c := range d.cols {
		cols = append(cols, table.Column{Title: c.title, Width: ws[i]})
	}
	rows := make([]table.Row, len(d.order))
	for i, ri := range d.order {
		r := &d.table.Records[ri]
		row := make(table.Row, len(d.cols))
		for ci := range d.cols {
			row[ci] = cellText(d.table, r, &d.cols[ci], testNow)
		}
		rows[i] = row
	}
	tb := table.New(table.WithColumns(cols), table.WithRows(rows), table.WithHeight(19), table.WithWidth(80), table.WithFocused(true))
	tb.MoveDown(5)
	jk := [2]tea.KeyPressMsg{press("j"), press("k")} // j and k alternate
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msg := jk[i%2]
		tb, _ = tb.Update(msg)
		_ = tb.View()
	}
}

// BenchmarkFilterKeystroke100k: one more character typed into a live filter at 100,000 rows,
// Update + View. "narrow" extends a free-text term every row matches (so narrowing scans all
// 100k previous results: its worst case); "fullscan" extends a negated status term, which
// matches more as it grows, so it can't narrow and re-scans the table; "status" extends a
// status prefix, which narrows (before status matched by prefix it was a full scan).
func BenchmarkFilterKeystroke100k(b *testing.B) {
	for _, c := range []struct{ name, prefix, next string }{
		{"narrow", "example.co", "m"},
		{"fullscan", "!status:ne", "w"},
		{"status", "status:ne", "w"},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := newLoaded(b, bigWorkbook(b, 100_000), 80, 24)
			keys(m, "/")
			typeText(m, c.prefix)
			next, back := press(c.next), press("backspace")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(next)
				_ = m.View()
				b.StopTimer()
				m.Update(back)
				b.StartTimer()
			}
			b.StopTimer()
			m.Update(next)
			if len(m.tabs.current().visible) == 0 {
				b.Fatal("the filter matched nothing; the benchmark would measure nothing")
			}
		})
	}
}

// BenchmarkFirstFilterKeystroke100k is the first character typed after a load: nothing to
// narrow from, so a full scan.
func BenchmarkFirstFilterKeystroke100k(b *testing.B) {
	wb := bigWorkbook(b, 100_000)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := newLoaded(b, wb, 80, 24)
		keys(m, "/")
		b.StartTimer()
		typeText(m, "a")
		_ = m.View()
	}
}

// BenchmarkHeap100k reports the heap a 100,000-row inbox costs once loaded into the model
// (decoded table + display order + ID index + widths), and after the first filter (the
// haystack cache).
func BenchmarkHeap100k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, loadedMS, filtered runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		wb := &model.Workbook{Title: "heap", Tabs: []*model.Table{mustDecode(b, model.RoleInbox, bigInboxRows(100_000))}, Loaded: testNow}
		m := newLoaded(b, wb, 80, 24)
		runtime.GC()
		runtime.ReadMemStats(&loadedMS)
		keys(m, "/", "a")
		runtime.GC()
		runtime.ReadMemStats(&filtered)
		runtime.KeepAlive(m)
		b.ReportMetric(float64(loadedMS.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-loaded")
		b.ReportMetric(float64(filtered.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-filtered")
		b.ReportMetric(float64(loadedMS.HeapAlloc-before.HeapAlloc)/100_000, "B/row")
	}
}

// BenchmarkBytesPerCursorMove runs the real program (cell-diffing renderer, truecolor) at
// 80x24 and reports the bytes one cursor move puts on the wire: what a slow SSH link pays.
func BenchmarkBytesPerCursorMove(b *testing.B) {
	out := testbed.NewByteCounter()
	m := New(Options{SpreadsheetID: "big", Now: fixedNow}) // no store: the workbook is sent below
	p := tea.NewProgram(m,
		tea.WithInput(nil),
		tea.WithOutput(out),
		tea.WithWindowSize(80, 24),
		tea.WithColorProfile(colorprofile.TrueColor),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}),
		tea.WithoutSignals(),
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(); err != nil {
			b.Error(err)
		}
	}()
	wb := bigWorkbook(b, 100_000)
	p.Send(loaded(m, wb))
	out.BytesPerMove(b, 25*time.Millisecond, func(k string) { p.Send(press(k)) })
	p.Quit()
	<-done
}

// BenchmarkSort100k: sorting a 100,000-row inbox by a column through the sort picker's
// action (Update) and drawing the screen (View), with a filter active: the sort, the
// re-filter of the new order and the cursor kept on its record. "first" sorts a column for
// the first time since the load (its keys built and sorted); "flip" picks the sorted column
// again (the other direction, from the kept order).
func BenchmarkSort100k(b *testing.B) {
	for _, mode := range []string{"first", "flip"} {
		for _, col := range []string{"NAME", "AGE", "STATUS", "MESSAGE"} {
			b.Run(mode+"/"+col, func(b *testing.B) {
				m := newLoaded(b, bigWorkbook(b, 100_000), 80, 24)
				keys(m, "/")
				typeText(m, "example")
				keys(m, "enter", "j", "j")
				ts := m.tabs.current()
				m.onAction(sortAction{tab: "Inbox", by: col})
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode == "first" {
						ts.data.sorted = nil
					}
					m.onAction(sortAction{tab: "Inbox", by: col})
					_ = m.View()
				}
			})
		}
	}
}
