package tui

import (
	"runtime"
	"testing"
	"unsafe"
	"weak"

	"github.com/triage-dev/triage/model"
)

// After a refresh the previous load's rows are garbage: nothing the TUI keeps (the view
// state carried over, the filter's steps, the detail view, the preview) holds them, so a
// refresh never keeps two copies alive longer than the swap.
func TestRefreshLetsTheOldRowsGo(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "j", "space", "p", "/")
	typeText(m, "grace")
	keys(m, "enter", "enter") // keep the filter, open the row's detail
	if m.detail == nil {
		t.Fatal("the detail view didn't open")
	}
	oldTab := m.tabs.current()
	oldTable, oldHay := weak.Make(oldTab.data.table), weak.Make(&oldTab.data.hay[0])
	oldData := weak.Make(oldTab.data)
	oldTab = nil
	send(m, loaded(m, testWorkbook(t)))
	_ = m.View()
	runtime.GC()
	if oldTable.Value() != nil || oldData.Value() != nil || oldHay.Value() != nil {
		t.Errorf("the old load is still reachable after the refresh: table %v, data %v, filter text %v",
			oldTable.Value() != nil, oldData.Value() != nil, oldHay.Value() != nil)
	}
	runtime.KeepAlive(m)
}

// A refresh of a filtered tab builds the new filter text in the load Cmd from the old one:
// an unchanged row shares its string (one copy across the swap), a changed row gets a new
// one that finds its new value.
func TestRefreshReusesTheFilterTextOfUnchangedRows(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "example")
	keys(m, "enter")
	old := m.tabs.current().data
	wb := testWorkbook(t)
	changed := wb.Tabs[0].Records[wb.Tabs[0].Index("msg-004")]
	changed.Cells[3] = "zanzibar"
	wb.Tabs[0].Records[wb.Tabs[0].Index("msg-004")] = changed
	st := &memStore{wb: func() *model.Workbook { return wb }}
	lm := cmdMsgs(t, loadCmd(t.Context(), st, m.load.seq, m.tabs.filtering(), nil))[0].(loadedMsg)
	d := lm.tabs[0]
	shared, fresh := 0, 0
	for i := range d.table.Records {
		r := &d.table.Records[i]
		oi, ok := old.byID[r.ID]
		if !ok || r.ID == "" {
			continue
		}
		if unsafe.StringData(d.hay[i]) == unsafe.StringData(old.hay[oi]) {
			shared++
		} else {
			fresh++
			if r.ID != "msg-004" {
				t.Errorf("row %s didn't change but got a new filter text", r.ID)
			}
		}
		if d.hay[i] != model.Haystack(r) {
			t.Errorf("row %s: the filter text isn't the row's", r.ID)
		}
	}
	if fresh != 1 || shared == 0 {
		t.Errorf("%d rows share their text, %d got a new one; want all but msg-004, 1", shared, fresh)
	}
}

// A write landing while a refresh's load Cmd reads the lent records and filter text copies
// them first: the Cmd sees the rows as they were lent (go test -race: no race).
func TestAWriteDuringARefreshLeavesTheLentRowsAlone(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "example")
	keys(m, "enter")
	ts := m.tabs.current()
	lent := m.tabs.filtering()[ts.name()]
	ri := ts.data.byID["msg-002"]
	before, beforeHay := lent.recs[ri].Cells[3], lent.hay[ri]
	done := make(chan []string)
	go func() { done <- buildHayReusing(lent.recs, lent) }() // what the load Cmd does with it
	ts.setCells(ri, map[model.Field]string{model.FMessage: "zanzibar"})
	<-done
	if lent.recs[ri].Cells[3] != before || lent.hay[ri] != beforeHay {
		t.Error("the write changed the rows lent to the load")
	}
	if ts.data.hay[ri] != model.Haystack(&ts.data.table.Records[ri]) || ts.data.table.Records[ri].Cells[3] != "zanzibar" {
		t.Error("the write didn't land on the tab's own copy")
	}
}
