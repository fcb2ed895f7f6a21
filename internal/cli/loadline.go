package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

// loadLine shows the TUI's first load on stderr while it runs, before the TUI takes the
// terminal (which it does only once the sheet is known to load, so a setup problem is a clear
// message and exit code 2): "reading Inbox: 40,000 of 100,000 rows", redrawn in place a few
// times a second, then wiped. On a large tab over a slow network that is the difference
// between a progress line and a terminal that seems to hang. The store's progress callback
// only records the figures; a goroutine draws them, so the load never waits for stderr.
type loadLine struct {
	w    io.Writer
	tick <-chan time.Time
	stop func()

	mu         sync.Mutex
	tab        string
	rows, tot  int
	changed    bool
	drawnWidth int

	quit, done chan struct{}
}

// startLoadLine starts drawing on w at each receive from tick; stop ends tick's source.
func startLoadLine(w io.Writer, tick <-chan time.Time, stop func()) *loadLine {
	l := &loadLine{w: w, tick: tick, stop: stop, quit: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

// report is the load's model.LoadProgressFunc.
func (l *loadLine) report(tab string, rows, total int) {
	l.mu.Lock()
	l.tab, l.rows, l.tot, l.changed = tab, rows, total, true
	l.mu.Unlock()
}

func (l *loadLine) loop() {
	defer close(l.done)
	defer l.stop()
	for {
		select {
		case <-l.tick:
			l.draw()
		case <-l.quit:
			return
		}
	}
}

func (l *loadLine) draw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.changed {
		return
	}
	l.changed = false
	line := fmt.Sprintf("reading %s: %s rows", model.SanitizeLine(l.tab), humanInt(l.rows))
	if l.tot > l.rows {
		line = fmt.Sprintf("reading %s: %s of %s rows", model.SanitizeLine(l.tab), humanInt(l.rows), humanInt(l.tot))
	}
	width := ansi.StringWidth(line)
	redrawLine(l.w, line+strings.Repeat(" ", max(0, l.drawnWidth-width)))
	l.drawnWidth = width
}

// finish stops drawing and wipes the line, so the TUI (or an error) starts on a clean one.
func (l *loadLine) finish() {
	close(l.quit)
	<-l.done
	if l.drawnWidth > 0 {
		redrawLine(l.w, strings.Repeat(" ", l.drawnWidth))
		redrawLine(l.w, "")
	}
}

// humanInt writes n with thousands separators: 100000 → "100,000".
func humanInt(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + humanInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// loadWorkbookShowing is loadWorkbook with its progress on stderr when stderr is a terminal
// (the TUI's first load).
func loadWorkbookShowing(ctx context.Context, st store, e *env) (*model.Workbook, error) {
	if !isTerminal(e.stderr) {
		return loadWorkbook(ctx, st)
	}
	t := time.NewTicker(250 * time.Millisecond)
	l := startLoadLine(e.stderr, t.C, t.Stop)
	wb, err := loadWorkbook(model.WithLoadProgress(ctx, l.report), st)
	l.finish()
	return wb, err
}
