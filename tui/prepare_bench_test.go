package tui

import "testing"

// BenchmarkPrepare100k is what the load Cmd derives from a 100,000-row inbox before the first
// screen (preparedMsg: display order, ID index, counts, widths; once also the
// filter text of every row). It runs off the UI goroutine, but the first screen waits for it.
func BenchmarkPrepare100k(b *testing.B) {
	wb := bigWorkbook(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		preparedMsg(0, wb)
	}
}

// BenchmarkPrepareFilterText100k is the filter text of a 100,000-row inbox (model.Haystack
// per row, split across CPUs): what a tab's first filter needs, built off the UI goroutine.
func BenchmarkPrepareFilterText100k(b *testing.B) {
	wb := bigWorkbook(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := &tabData{table: wb.Tabs[0]}
		d.haystacks()
	}
}

// BenchmarkPrepareWithFilterText100k is prepare with the filter text of every row, what the
// load Cmd once did before the first screen (and what a workbook shared by `triage
// serve` still gets once for all its sessions): BenchmarkPrepare100k plus
// BenchmarkPrepareFilterText100k, measured in the same run as both.
func BenchmarkPrepareWithFilterText100k(b *testing.B) {
	wb := bigWorkbook(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prepare(wb.Tabs[0])
	}
}
