package serve

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// probe runs a TUI under teatest and keeps its latest screen (plain text), read by the test
// under a lock instead of parsing the renderer's output stream.
type probe struct {
	tea.Model
	mu     *sync.Mutex
	screen *string
}

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := p.Model.Update(msg)
	s := ansi.Strip(m.View().Content)
	p.mu.Lock()
	*p.screen = s
	p.mu.Unlock()
	return probe{m, p.mu, p.screen}, cmd
}

// tuiSession is a real TUI program over a hub session, as the server's factory builds it.
type tuiSession struct {
	s      *Session
	tm     *teatest.TestModel
	mu     sync.Mutex
	screen string
}

func startTUI(t *testing.T, h *Hub, u User) *tuiSession {
	t.Helper()
	ts := &tuiSession{s: h.Session(u)}
	m := tui.New(ts.s.Options(tui.Options{SpreadsheetID: sheetID, Refresh: h.refresh}))
	ts.tm = teatest.NewTestModel(t, probe{m, &ts.mu, &ts.screen}, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor), tea.WithEnvironment([]string{"TERM=xterm-256color"})))
	t.Cleanup(func() {
		_ = ts.tm.Quit()
		ts.s.Close()
	})
	ts.wait(t, "Acme Support")
	return ts
}

// wait waits until the session's screen holds every one of what.
func (ts *tuiSession) wait(t *testing.T, what ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ts.mu.Lock()
		s := ts.screen
		ts.mu.Unlock()
		ok := true
		for _, w := range what {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q not on screen within 10s:\n%s", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One session or eight, idling for the same time with the hub refreshing: the Sheets API sees
// the same requests (± one refresh). Both hubs run over the same wall-clock window, so the
// machine's load can't make one of them tick more than the other.
func TestIdleRequestsDoNotGrowWithSessions(t *testing.T) {
	const refresh = 50 * time.Millisecond
	one, eight := newFixture(t, refresh, 8), newFixture(t, refresh, 8)
	one.run(t)
	eight.run(t)
	startTUI(t, one.hub, alice)
	for i := range 8 {
		startTUI(t, eight.hub, []User{alice, tom, vera}[i%3])
	}
	one.emu.ResetCounts()
	eight.emu.ResetCounts()
	time.Sleep(time.Second)
	a, b := one.emu.Counts(), eight.emu.Counts()
	n1, n8 := one.total(), eight.total()
	t.Logf("1 session: %v; 8 sessions: %v", a, b)
	// A refresh is two requests (spreadsheets.get and values.batchGet).
	if d := n8 - n1; d > 2 || d < -2 {
		t.Errorf("1 session made %d requests, 8 sessions %d: more than one refresh apart", n1, n8)
	}
	if a[mBatchGet] < 5 {
		t.Errorf("only %d refreshes in 1s at %v: the loop isn't running", a[mBatchGet], refresh)
	}
	if b[mBatchUpdate]+a[mBatchUpdate] != 0 {
		t.Error("idle sessions wrote")
	}
}

// Two people's TUIs: a status set in one shows in the other's table without a keypress.
func TestChangeShowsInOtherTUI(t *testing.T) {
	f := newFixture(t, time.Hour, 3)
	f.run(t)
	a := startTUI(t, f.hub, tom)
	b := startTUI(t, f.hub, vera)
	b.wait(t, "vera · viewer", "RO")
	a.wait(t, "tom · triager", "RW")
	if _, err := a.s.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-2", "new", "spam")}); err != nil {
		t.Fatal(err)
	}
	b.wait(t, "spam")
}
