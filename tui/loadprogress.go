// A load's progress: the store reports how far it has read a tab (model.ReportLoadProgress)
// on the loading goroutine; the start screen and the status line during a refresh draw it.

package tui

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
)

// loadProgress is how far a load has read: rows of the tab so far, of about total (0: not
// known).
type loadProgress struct {
	tab         string
	rows, total int
}

// progressFeed carries one load's progress from the loading goroutine to the UI without ever
// blocking the loader: the newest report waits in a slot (older ones nobody took are
// dropped) and a one-place channel wakes the listener (listen), a Cmd the root re-arms after
// each message. Reports closer than a hundredth of the tab apart are not even passed on, so
// a store may report every row.
type progressFeed struct {
	mu     sync.Mutex
	latest loadProgress
	sent   loadProgress  // the last report passed on
	wake   chan struct{} // a report is waiting
	done   chan struct{} // closed when the load returns: the listener ends
}

func newProgressFeed() *progressFeed {
	return &progressFeed{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// progressStep is how many rows a report must move on from the last one passed on: a
// hundredth of the tab (a few a second on a slow network), 1,000 rows when the total isn't
// known.
func progressStep(total int) int {
	if total <= 0 {
		return 1000
	}
	return max(1, total/100)
}

// report is the load's model.LoadProgressFunc. It never blocks.
func (f *progressFeed) report(tab string, rows, total int) {
	f.mu.Lock()
	s := f.sent
	if tab == s.tab && total == s.total && rows != total && rows-s.rows < progressStep(total) {
		f.mu.Unlock()
		return
	}
	f.latest = loadProgress{tab: tab, rows: rows, total: total}
	f.sent = f.latest
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // one is waiting already: it will carry the newest
	}
}

// loadProgressMsg is a load's newest progress.
type loadProgressMsg struct {
	feed *progressFeed
	p    loadProgress
}

// listen waits, off the UI goroutine, for the next report of the load, or its end (then it
// answers nothing).
func (f *progressFeed) listen() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-f.wake:
		case <-f.done:
			return nil
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		return loadProgressMsg{feed: f, p: f.latest}
	}
}

// onProgress takes a report of the load in flight and listens for the next; a report of an
// older load is dropped (its listener ends with it).
func (ld *loadState) onProgress(msg loadProgressMsg) tea.Cmd {
	if msg.feed != ld.feed || !ld.loading {
		return nil
	}
	ld.progress = msg.p
	return msg.feed.listen()
}

// progressLine is the status line's word on a load that has reported progress ("reading
// Inbox [███░░] 12000/100000 rows"), "" otherwise.
func (ld *loadState) progressLine() string {
	p := ld.progress
	if !ld.loading || p.tab == "" {
		return ""
	}
	return "reading " + cellLine(p.tab) + " " + progressBar(p.rows, p.total, 10) + " " + rowsRead(p)
}

// startLines is the start screen's progress: the bar over the width, the rows and the tab.
func (ld *loadState) startLines(w int) []string {
	p := ld.progress
	if !ld.loading || p.tab == "" {
		return nil
	}
	bar := progressBar(p.rows, p.total, max(10, min(50, w-30)))
	return []string{"", fitStyled("  "+bar+" "+rowsRead(p)+" · "+cellLine(p.tab), w)}
}

// rowsRead says how many rows are read, of how many when known.
func rowsRead(p loadProgress) string {
	if p.total <= 0 {
		return itoa(p.rows) + " " + words.Plural(p.rows, "row", "rows")
	}
	return itoa(p.rows) + "/" + itoa(p.total) + " rows"
}

// progressBar draws done of total as a bar of w cells between brackets, the project's one
// bar (the replay's progress view draws it too). An unknown total draws an empty bar.
func progressBar(done, total, w int) string {
	filled := 0
	if total > 0 {
		filled = min(w, max(0, done*w/total))
	}
	return "[" + strings.Repeat("█", filled) + strings.Repeat("░", w-filled) + "]"
}
