package cli

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

// TestReplayProgressLine: not a terminal, one whole line every progressEvery rows and one at
// the end; on a terminal, the line redrawn in place.
func TestReplayProgressLine(t *testing.T) {
	var buf lockedWriter
	clock := time.Unix(0, 0)
	var cmu sync.Mutex
	now := func() time.Time { cmu.Lock(); defer cmu.Unlock(); return clock }
	p := newProgressLine(&buf, false, nil, now)
	total := 120
	for i := 1; i <= total; i++ {
		cmu.Lock()
		clock = clock.Add(100 * time.Millisecond)
		cmu.Unlock()
		p.event(replayEvent(i, total))
	}
	p.finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 { // at 50, 100 and the end
		t.Fatalf("lines %q", lines)
	}
	if !strings.HasPrefix(lines[0], "replay: 50/120 delivered 50") || !strings.Contains(lines[0], "10.0 rows/s") || !strings.Contains(lines[0], "ETA 7s") {
		t.Errorf("line %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "replay: 120/120") || strings.Contains(lines[2], "ETA") {
		t.Errorf("last line %q", lines[2])
	}

	// On a terminal: redrawn in place with \r on a tick when something changed, padded over a
	// longer previous line, and the final line with a newline at the end. The test drives the
	// ticks, and waits for each redraw's write (no clock of its own decides: a redraw that
	// never comes is the test's -timeout, whose goroutine dump shows where it hangs).
	tty := &lockedWriter{writes: make(chan struct{}, 16)}
	drawn := func() { <-tty.writes }
	tick := make(chan time.Time)
	var stopped atomic.Bool
	p = startProgressLine(tty, true, func() int { return 100 }, now, tick, func() { stopped.Store(true) })
	p.event(replayEvent(1, 2))
	tick <- time.Time{}
	drawn()
	if s, want := tty.String(), "\rreplay: 1/2 delivered 1"; s != want {
		t.Fatalf("after the first tick: %q, want %q", s, want)
	}
	// Nothing changed: nothing drawn. (The second send returns once the first tick is
	// handled; the second sees no change either, as no event comes before the check below.)
	tick <- time.Time{}
	tick <- time.Time{}
	if s := tty.String(); s != "\rreplay: 1/2 delivered 1" {
		t.Fatalf("redrawn without a change: %q", s)
	}
	halted := replayEvent(1, 2)
	halted.Halted = &model.Halt{Cause: "systemic", Source: "crm", Detail: "401"}
	p.event(halted)
	tick <- time.Time{}
	drawn()
	p.event(replayEvent(2, 2))
	p.finish()
	long := "replay: 1/2 delivered 1 · HALTED (systemic, source crm): 401"
	pad := strings.Repeat(" ", len([]rune(long))-len("replay: 2/2 delivered 2"))
	want := "\rreplay: 1/2 delivered 1" + "\r" + long + "\rreplay: 2/2 delivered 2" + pad + "\n"
	if s := tty.String(); s != want {
		t.Errorf("tty output\n%q, want\n%q", s, want)
	}
	if !stopped.Load() {
		t.Error("the redraw ticker was not stopped")
	}
}

// TestReplayProgressLineFitsTheTerminal: on a terminal, every redraw of the progress line
// fits in the terminal's width (stderr's; 80 when unknown), one column to spare: a line that
// wraps leaves a piece behind at each "\r". Counts give way first ("…"), then the halt's
// detail, then the rate; the done/total count stays.
func TestReplayProgressLineFitsTheTerminal(t *testing.T) {
	ev := model.ReplayEvent{Done: 1234, Total: 5000, Counts: map[model.RowState]int{}}
	for i, st := range []model.RowState{model.StateDelivered, model.StateDuplicate, model.StateRejected,
		model.StateSystemic, model.StateRetryable, model.StateDeferred} {
		ev.Counts[st] = 1000 + i
	}
	halted := ev
	halted.Halted = &model.Halt{Cause: "3 retryable in a row", Source: "contact-form",
		Detail: strings.Repeat("the destination looks down or overloaded; ", 10)}
	for _, cols := range []int{0, 80, 60, 40} {
		for _, e := range []model.ReplayEvent{ev, halted} {
			clock := time.Unix(0, 0)
			now := func() time.Time { return clock }
			tty := &lockedWriter{writes: make(chan struct{}, 16)}
			tick := make(chan time.Time)
			p := startProgressLine(tty, true, func() int { return cols }, now, tick, func() {})
			clock = clock.Add(10 * time.Second)
			p.event(e)
			tick <- time.Time{}
			<-tty.writes // the redraw the tick asked for (a missing one hangs until go test's -timeout)
			p.finish()
			want := cols - 1
			if cols == 0 {
				want = 79
			}
			out := tty.String()
			for _, seg := range strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:] {
				if w := ansi.StringWidth(seg); w > want {
					t.Errorf("%d columns: a redraw is %d wide, over %d: %q", cols, w, want, seg)
				}
				if !strings.HasPrefix(seg, "replay: 1234/5000") {
					t.Errorf("%d columns: the count is gone: %q", cols, seg)
				}
				if e.Halted != nil && cols >= 60 && !strings.Contains(seg, "HALTED") {
					t.Errorf("%d columns: the halt is gone: %q", cols, seg)
				}
			}
			if !strings.HasSuffix(out, "\n") {
				t.Errorf("no newline after the last line: %q", out)
			}
		}
	}
	// Not a terminal: whole lines (a log has no width).
	var buf lockedWriter
	p := newProgressLine(&buf, false, func() int { return 40 }, func() time.Time { return time.Unix(0, 0) })
	p.event(halted)
	p.finish()
	if !strings.Contains(buf.String(), halted.Halted.Detail[:200]) {
		t.Errorf("a log line was cut: %q", buf.String())
	}
}

type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
	// writes, when set, gets a token per Write (dropped when full).
	writes chan struct{}
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writes != nil {
		select {
		case w.writes <- struct{}{}:
		default:
		}
	}
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func replayEvent(done, total int) model.ReplayEvent {
	return model.ReplayEvent{Done: done, Total: total, Counts: map[model.RowState]int{model.StateDelivered: done}}
}

// What the line says at a width, exactly: whole when it fits; then the last counts give way
// to "…", then the rate and ETA; the done/total count stays.
func TestReplayProgressLineAtAWidth(t *testing.T) {
	start := time.Unix(0, 0)
	p := &progressLine{start: start, now: func() time.Time { return start.Add(3 * time.Second) }}
	ev := model.ReplayEvent{Done: 37, Total: 120, Counts: map[model.RowState]int{
		model.StateDelivered: 30, model.StateDuplicate: 2, model.StateRejected: 1, model.StateRetryable: 4}}
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, "replay: 37/120 delivered 30 duplicate 2 rejected 1 retryable 4 · 12.3 rows/s · ETA 7s"},
		{85, "replay: 37/120 delivered 30 duplicate 2 rejected 1 retryable 4 · 12.3 rows/s · ETA 7s"},
		{80, "replay: 37/120 delivered 30 duplicate 2 rejected 1 … · 12.3 rows/s · ETA 7s"},
		{40, "replay: 37/120 … · 12.3 rows/s · ETA 7s"},
		{20, "replay: 37/120 …"},
	} {
		if got := p.renderFit(ev, c.width); got != c.want {
			t.Errorf("width %d:\n got %q\nwant %q", c.width, got, c.want)
		}
	}
	if got := p.render(ev); got != p.renderFit(ev, 0) {
		t.Errorf("render %q is not the line at any width", got)
	}
}

// A dumb terminal (TERM=dumb, a serial console: a terminal whose width can't be read) gets
// the line fitted to 80 columns, one to spare, and nothing but text, spaces, "\r" and the
// final "\n": no escape sequence, even where a destination's halt detail or a source's name
// carries one. A log (not a terminal) gets no "\r" at all.
func TestReplayProgressLineOnADumbTerminal(t *testing.T) {
	halted := replayEvent(3, 400)
	halted.Halted = &model.Halt{Cause: "systemic", Source: "crm\x1b[31m", Detail: "401 \x1b]0;pwned\x07 " + strings.Repeat("unauthorised ", 20)}
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	tty := &lockedWriter{writes: make(chan struct{}, 16)}
	tick := make(chan time.Time)
	p := startProgressLine(tty, true, func() int { return 0 }, now, tick, func() {})
	clock = clock.Add(time.Second)
	p.event(replayEvent(1, 400))
	tick <- time.Time{}
	<-tty.writes
	p.event(halted)
	tick <- time.Time{}
	<-tty.writes
	p.finish()
	out := tty.String()
	for _, r := range out {
		if (r < 0x20 && r != '\r' && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("a control character %U reached the terminal: %q", r, out)
		}
	}
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("want one newline, at the end: %q", out)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:] {
		if w := ansi.StringWidth(seg); w > progressColumns-1 {
			t.Errorf("a redraw is %d wide, over %d: %q", w, progressColumns-1, seg)
		}
	}

	var log lockedWriter
	p = newProgressLine(&log, false, func() int { return 0 }, now)
	p.event(replayEvent(1, 400))
	p.event(halted)
	p.finish()
	if s := log.String(); strings.Contains(s, "\r") || strings.Contains(s, "\x1b") || !strings.Contains(s, "HALTED (systemic, source crm") {
		t.Errorf("log output %q", s)
	}
}
