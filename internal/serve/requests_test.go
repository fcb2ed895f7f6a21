package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// tuiSession is a real TUI program over a hub session, as the server's factory builds it.
type tuiSession struct {
	s *Session
	*testbed.Program
}

func startTUI(t *testing.T, h *Hub, u User) *tuiSession {
	t.Helper()
	ts := &tuiSession{s: h.Session(u)}
	// A short refresh of its own, which Session.Options must take away (the hub refreshes
	// for everyone): a session that kept it would read the sheet on its own.
	m := tui.New(ts.s.Options(tui.Options{SpreadsheetID: sheetID, Refresh: 20 * time.Millisecond}))
	ts.Program = testbed.StartProgram(t, m, 80, 24)
	t.Cleanup(func() {
		_ = ts.Quit()
		ts.s.Close()
	})
	ts.WaitScreen(t, "Acme Support")
	return ts
}

// One session or eight, idling while the hub refreshes: the Sheets API sees exactly the hub's
// reads, two requests each (spreadsheets.get and values.batchGet), however many sessions
// watch. The test ticks the hub's refresh itself and waits, after each tick, until every
// session's screen shows what that read brought, so the counts are exact whatever the
// machine's load.
func TestIdleRequestsDoNotGrowWithSessions(t *testing.T) {
	const refreshes = 5
	one, eight := newFixture(t, time.Hour, 8), newFixture(t, time.Hour, 8)
	tick1, tick8 := make(chan time.Time), make(chan time.Time)
	one.hub.ticks, eight.hub.ticks = tick1, tick8
	one.run(t)
	eight.run(t)
	tuis1 := []*tuiSession{startTUI(t, one.hub, alice)}
	var tuis8 []*tuiSession
	for i := range 8 {
		tuis8 = append(tuis8, startTUI(t, eight.hub, []User{alice, tom, vera}[i%3]))
	}
	one.emu.ResetCounts()
	eight.emu.ResetCounts()
	for i := range refreshes {
		// Someone edits the sheet outside triage; only the hub's next read can bring it.
		name := fmt.Sprintf("Renamed %d", i)
		for _, f := range []*fixture{one, eight} {
			if err := f.emu.SetCell(sheetID, "Inbox", 2, 1, name); err != nil {
				t.Fatal(err)
			}
		}
		tick1 <- time.Now()
		tick8 <- time.Now()
		for _, ts := range append(tuis1, tuis8...) {
			ts.WaitScreen(t, name)
		}
	}
	a, b := one.emu.Counts(), eight.emu.Counts()
	t.Logf("1 session: %v; 8 sessions: %v", a, b)
	for _, c := range []struct {
		what   string
		counts map[string]int
		total  int
	}{{"1 session", a, one.total()}, {"8 sessions", b, eight.total()}} {
		if c.counts[mGet] != refreshes || c.counts[mBatchGet] != refreshes || c.total != 2*refreshes {
			t.Errorf("%s: %d refreshes made %v, want %d spreadsheets.get and %d values.batchGet, nothing else",
				c.what, refreshes, c.counts, refreshes, refreshes)
		}
	}
}

// Two people's TUIs: a status set in one shows in the other's table without a keypress.
func TestChangeShowsInOtherTUI(t *testing.T) {
	f := newFixture(t, time.Hour, 3)
	f.run(t)
	a := startTUI(t, f.hub, tom)
	b := startTUI(t, f.hub, vera)
	b.WaitScreen(t, "vera · viewer", "RO")
	a.WaitScreen(t, "tom · triager", "RW")
	if _, err := a.s.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-2", "new", "spam")}); err != nil {
		t.Fatal(err)
	}
	b.WaitScreen(t, "spam")
}
