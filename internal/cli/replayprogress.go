package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

// This file is `triage replay`'s progress line on stderr, apart from the command (replay.go)
// that starts it: what a run's progress looks like at a terminal's width, on a terminal of
// unknown width or a dumb one (only "\r" and spaces: no escape sequence), and in a log.

// progressLine prints a run's progress on stderr: redrawn in place ("\r") a few times a
// second on a terminal; otherwise one line per progressEvery finished rows, one on a halt and
// one at the end. The run's Progress callback only records the event; a goroutine does the
// writing, so a slow stderr never holds up the run.
type progressLine struct {
	w     io.Writer
	tty   bool
	now   func() time.Time
	start time.Time

	mu      sync.Mutex
	last    model.ReplayEvent
	changed bool
	queued  []string // lines to print (not a terminal)
	bucket  int      // progressEvery buckets already printed
	halted  bool

	wake    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
	tick    <-chan time.Time // redraw on a terminal (nil otherwise)
	stop    func()           // stops tick's source; called before stopped is closed
	width   int              // of the last line drawn in place, in columns
	// columns is the terminal's width, asked before each redraw (it may be resized); 0 when
	// unknown.
	columns func() int
}

// progressColumns is the width the progress line is fitted to on a terminal whose width is
// unknown.
const progressColumns = 80

// progressRedraw is how often the terminal progress line is redrawn.
const progressRedraw = 200 * time.Millisecond

// progressEvery is how many finished rows apart the progress lines are when stderr is not a
// terminal.
const progressEvery = 50

func newProgressLine(w io.Writer, tty bool, columns func() int, now func() time.Time) *progressLine {
	if !tty {
		return startProgressLine(w, false, columns, now, nil, func() {})
	}
	t := time.NewTicker(progressRedraw)
	return startProgressLine(w, true, columns, now, t.C, t.Stop)
}

// startProgressLine starts a progress line whose terminal redraws happen on each receive from
// tick (tests drive it by hand); stop is called when the line is finished. columns is the
// terminal's width (0: unknown).
func startProgressLine(w io.Writer, tty bool, columns func() int, now func() time.Time, tick <-chan time.Time, stop func()) *progressLine {
	p := &progressLine{w: w, tty: tty, now: now, start: now(), wake: make(chan struct{}, 1),
		quit: make(chan struct{}), stopped: make(chan struct{}), tick: tick, stop: stop, columns: columns}
	go p.loop()
	return p
}

// event is the run's Progress callback.
func (p *progressLine) event(ev model.ReplayEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last, p.changed = ev, true
	if p.tty {
		return
	}
	line := ""
	if ev.Halted != nil && !p.halted {
		p.halted = true
		line = p.render(ev)
	} else if b := ev.Done / progressEvery; b > p.bucket && ev.Done < ev.Total {
		p.bucket = b
		line = p.render(ev)
	}
	if line != "" {
		p.queued = append(p.queued, line)
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *progressLine) loop() {
	defer close(p.stopped)
	defer p.stop()
	tick := p.tick
	for {
		select {
		case <-p.wake:
			p.flushQueued()
		case <-tick:
			p.mu.Lock()
			line, ok := "", p.changed
			if ok {
				line, p.changed = p.renderFit(p.last, p.fitWidth()), false
			}
			p.mu.Unlock()
			if ok {
				p.drawInPlace(line)
			}
		case <-p.quit:
			p.flushQueued()
			p.mu.Lock()
			line, started := p.render(p.last), p.last.Total > 0
			if p.tty {
				line = p.renderFit(p.last, p.fitWidth())
			}
			p.mu.Unlock()
			if !started {
				if p.tty && p.width > 0 {
					fmt.Fprintln(p.w)
				}
				return
			}
			if p.tty {
				p.drawInPlace(line)
				fmt.Fprintln(p.w)
			} else {
				fmt.Fprintln(p.w, line)
			}
			return
		}
	}
}

func (p *progressLine) flushQueued() {
	p.mu.Lock()
	lines := p.queued
	p.queued = nil
	p.mu.Unlock()
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
}

// drawInPlace redraws the terminal line, padding over a longer previous one (no escape
// sequences, so it works on any terminal). The line was fitted to the terminal (renderFit):
// a line that wrapped would leave its first part behind on every redraw.
func (p *progressLine) drawInPlace(line string) {
	pad := ""
	n := ansi.StringWidth(line)
	if n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = n
	redrawLine(p.w, line+pad)
}

// fitWidth is how many columns the line drawn in place may take: one less than the
// terminal's width (writing the last column makes some terminals wrap).
func (p *progressLine) fitWidth() int {
	cols := 0
	if p.columns != nil {
		cols = p.columns()
	}
	if cols <= 0 {
		cols = progressColumns
	}
	return max(cols-1, 1)
}

// finish prints the final progress line and stops the printer.
func (p *progressLine) finish() {
	close(p.quit)
	<-p.stopped
}

// render formats an event: "replay: 37/120 delivered 30 duplicate 2 rejected 1 retryable 4 ·
// 12.3 rows/s · ETA 7s", with the halt appended once it has tripped. Call with p.mu held.
func (p *progressLine) render(ev model.ReplayEvent) string {
	return p.renderFit(ev, 0)
}

// renderFit is render within width columns (0: any width), for the line redrawn in place.
// What gives way, in turn: the counts, from the last ("delivered 30 …"), the halt's detail
// (cut, then left out), the rate and ETA, the halt's cause and source; "HALTED" and the
// done/total count stay.
func (p *progressLine) renderFit(ev model.ReplayEvent, width int) string {
	head := fmt.Sprintf("replay: %d/%d", ev.Done, ev.Total)
	var counts []string
	for _, o := range replay.Outcomes {
		if n := ev.Counts[o.State()]; n > 0 {
			counts = append(counts, fmt.Sprintf(" %s %d", o, n))
		}
	}
	var rate string
	el := p.now().Sub(p.start).Seconds()
	if el > 0 && ev.Done > 0 {
		r := float64(ev.Done) / el
		rate = fmt.Sprintf(" · %.1f rows/s", r)
		if left := ev.Total - ev.Done; left > 0 && ev.Halted == nil {
			eta := time.Duration(float64(left) / r * float64(time.Second)).Round(time.Second)
			rate += fmt.Sprintf(" · ETA %s", eta)
		}
	}
	var halt, detail string
	if ev.Halted != nil {
		halt = fmt.Sprintf(" · HALTED (%s, source %s)", ev.Halted.Cause, model.SanitizeLine(ev.Halted.Source))
		detail = ": " + model.SanitizeLine(ev.Halted.Detail)
	}
	full := head + strings.Join(counts, "") + rate + halt + detail
	if width <= 0 || ansi.StringWidth(full) <= width {
		return full
	}
	fits := func(s string) bool { return ansi.StringWidth(s) <= width }
	// The counts that fit, then "…" for the rest.
	tails := []string{rate + halt + detail, rate + halt, halt, ""}
	if halt != "" {
		tails[3] = " · HALTED" // the cause and source are in the summary below it
	}
	for _, t := range tails {
		for n := len(counts); n >= 0; n-- {
			s := head + strings.Join(counts[:n], "")
			if n < len(counts) {
				s += " …"
			}
			if s += t; fits(s) {
				if t == rate+halt && detail != "" {
					// the detail cut to what room is left
					if room := width - ansi.StringWidth(s); room > len(": …") {
						s += ansi.Truncate(detail, room, "…")
					}
				}
				return s
			}
			if n == 0 {
				break
			}
		}
	}
	return ansi.Truncate(head, width, "…")
}
