package tui

import (
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/triage-dev/triage/model"
)

// In a real program: the start screen shows the store's progress while it reads, the first
// screen comes without the filter text, and `/` then a query filters once the text, built
// in a Cmd, lands.
func TestLoadProgressAndLazyFilterInAProgram(t *testing.T) {
	st := &progressStore{wb: func() *model.Workbook { return testWorkbook(t) }, rows: []int{40000}, total: 100000,
		reported: make(chan struct{}), release: make(chan struct{})}
	m := New(Options{Store: st, SpreadsheetID: "sheet-1", Now: fixedNow})
	tm := teatest.NewTestModel(t, probed{m}, teatest.WithInitialTermSize(80, 24))
	waitScreen(t, tm, "40000/100000 rows · Inbox", "[████████████████████░")
	close(st.release)
	waitScreen(t, tm, "Acme contact form", "1/30")
	waitModel(t, tm, "no filter text before anyone filters", func(m *Model) bool { return m.tabs.current().data.hay == nil })
	tm.Send(press("/"))
	for _, r := range "grace" {
		tm.Send(press(string(r)))
	}
	waitScreen(t, tm, "1/3 of 30")
	tm.Send(press("ctrl+c"))
	if fm := finalModel(t, tm); fm.tabs.current().data.hay == nil {
		t.Error("the filter text never landed")
	}
}
