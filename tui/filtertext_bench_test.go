package tui

import "testing"

// BenchmarkFirstFilterKeystrokeLazy100k is the first character typed into the filter of a
// 100,000-row inbox loaded as the load Cmd hands it over (no filter text before the first
// screen; `/` starts building it off the UI goroutine), Update + View. "landed": the text
// built by then (it takes BenchmarkPrepareFilterText100k after `/`); "waiting": typed before
// it lands, so the key only records the query and the filter applies when the text lands.
// Backspace (untimed) empties the query between keys, so each one is a first full scan.
func BenchmarkFirstFilterKeystrokeLazy100k(b *testing.B) {
	for _, landed := range []bool{true, false} {
		name := "waiting"
		if landed {
			name = "landed"
		}
		b.Run(name, func(b *testing.B) {
			m := newScreenLoaded(b, bigWorkbook(b, 100_000), 80, 24)
			cmd := send(m, press("/"))
			ts := m.tabs.current()
			if ts.data.building == nil || ts.data.hay != nil {
				b.Fatal("/ didn't start building the filter text")
			}
			if landed {
				send(m, cmd().(hayMsg))
			}
			a, back := press("a"), press("backspace")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(a)
				_ = m.View()
				b.StopTimer()
				if landed == ts.waiting() || len(ts.filter.steps) != map[bool]int{true: 1}[landed] {
					b.Fatalf("landed %v: the filter waits %v, %d steps", landed, ts.waiting(), len(ts.filter.steps))
				}
				m.Update(back)
				b.StartTimer()
			}
		})
	}
}
