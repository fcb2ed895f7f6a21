// The auto refresh (Options.Refresh): a change check before a full read when the store has
// one, else full reads that come less often while nobody presses a key. An idle TUI costs
// a few hundred bytes a minute, or nothing much.

package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/store"
)

// ChangeChecker is a Store that can tell, cheaply, whether the sheet changed since its last
// load (store.ChangeChecker: sheets.Store asks Drive for the file's version, a few hundred
// bytes where a full read of 100,000 rows is 15 MB; postgres.Store answers from its change
// notices). The auto refresh asks it first and reads only when the answer is yes; an error
// turns the check off for the session (full reads, backing off while idle) and says why once.
type ChangeChecker = store.ChangeChecker

// ChangeCheckModer is what a ChangeChecker may also say: how its refreshes learn of changes
// right now (store.ChangeCheckModer). A mode starting with "full reads" means it has no
// working check (no Drive access, or Drive refused the credential): the TUI then reads and
// backs off while idle as without one, and asks again at each tick, so a check that comes
// back is used. Without it, the first error turns the check off for the session.
type ChangeCheckModer = store.ChangeCheckModer

const (
	// idleAfter without a keypress, the auto refresh without a change check reads less
	// often: each interval doubles, up to idleCap.
	idleAfter = 5 * time.Minute
	idleCap   = 15 * time.Minute
	// checkTimeout bounds one change check: as long as a load, since a store pacing under the
	// Sheets quota may hold the check for a quota minute, and a check given up on would be
	// followed by a full read, which costs the quota more.
	checkTimeout = loadTimeout
)

// autoRefresh decides when the auto refresh reads. Ticks carry the schedule's generation,
// so a tick of a schedule a keypress replaced is dropped.
type autoRefresh struct {
	c        *common
	base     time.Duration // Options.Refresh; 0: no auto refresh
	interval time.Duration // base, doubled while idle (no change check) up to idleCap
	gen      int
	lastKey  time.Time     // the last keypress (the start counts as one)
	last     time.Time     // when it last read or checked
	check    ChangeChecker // nil: the store has none, or it failed (checkOff says why)
	moder    ChangeCheckModer
	checkOff string
	checking bool // a check in flight
}

func newAutoRefresh(c *common, base time.Duration, store Store) autoRefresh {
	a := autoRefresh{c: c, base: base, interval: base, lastKey: c.now(), last: c.now()}
	if a.check, _ = store.(ChangeChecker); a.check != nil {
		a.moder, _ = a.check.(ChangeCheckModer)
	}
	return a
}

// checkOn reports whether the store's change check works now: it has one, it hasn't failed,
// and the store doesn't say it reads in full anyway.
func (a autoRefresh) checkOn() bool {
	if a.check == nil {
		return false
	}
	return a.moder == nil || !strings.HasPrefix(a.moder.ChangeCheckMode(), "full reads")
}

// refreshTickMsg fires when the auto refresh is due; gen is the schedule's (autoRefresh).
type refreshTickMsg struct{ gen int }

// refreshTick is the first schedule's tick.
func refreshTick(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return refreshTickMsg{} })
}

// tick schedules the next auto refresh after the current interval.
func (a *autoRefresh) tick() tea.Cmd {
	gen := a.gen
	return tea.Tick(a.interval, func(time.Time) tea.Msg { return refreshTickMsg{gen: gen} })
}

// keyActivityMsg: a key was pressed (the root tells the auto refresh after handling it).
type keyActivityMsg struct{}

// changedMsg is a change check's answer.
type changedMsg struct {
	changed bool
	err     error
}

// checkCmd asks the store whether the sheet changed, off the UI goroutine.
func (a *autoRefresh) checkCmd(ctx context.Context) tea.Cmd {
	a.checking = true
	check := a.check
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, checkTimeout)
		defer cancel()
		changed, err := check.Changed(ctx)
		return changedMsg{changed: changed, err: err}
	}
}

// autoAction is what the root does for the auto refresh: read the sheet (read), ask the
// store first (check), schedule the next tick (next), say something (note), mark the rows
// on screen as current (fresh: the check found nothing new).
type autoAction struct {
	read, check, fresh bool
	next               tea.Cmd
	note               string
}

func (autoAction) isAction() {}

// Update takes the auto refresh's tick, a keypress and a change check's answer. Its action is
// always an autoAction (the zero one: nothing to do), which the root's onTick carries out.
func (a autoRefresh) Update(msg tea.Msg) (autoRefresh, action) {
	now := a.c.now()
	switch msg := msg.(type) {
	case refreshTickMsg:
		if msg.gen != a.gen || a.base <= 0 {
			return a, autoAction{} // a schedule a keypress replaced
		}
		on := a.checkOn()
		switch {
		case on:
			a.interval = a.base
		case now.Sub(a.lastKey) >= idleAfter:
			a.interval = min(idleCap, a.interval*2)
		}
		a.last = now
		if on {
			return a, autoAction{check: !a.checking, next: a.tick()}
		}
		return a, autoAction{read: true, next: a.tick()}
	case keyActivityMsg:
		a.lastKey = now
		if a.base <= 0 || a.interval <= a.base {
			return a, autoAction{}
		}
		// Back from idle: the usual interval again, and a read now if one is overdue.
		a.interval = a.base
		a.gen++
		act := autoAction{next: a.tick()}
		if now.Sub(a.last) >= a.base {
			a.last, act.read = now, true
		}
		return a, act
	case changedMsg:
		a.checking = false
		switch {
		case msg.err != nil && a.moder != nil && a.checkOn():
			return a, autoAction{read: true} // the store keeps its check on: a failure of this one call
		case msg.err != nil:
			if a.moder == nil {
				a.check = nil // nothing says when it works again
			}
			a.checkOff = msg.err.Error()
			return a, autoAction{read: true, note: "change check off: " + a.checkOff + "; refreshing with full reads"}
		case msg.changed:
			return a, autoAction{read: true}
		}
		return a, autoAction{fresh: true}
	}
	return a, autoAction{}
}

// mode says how the auto refresh reads, short enough for the help's title at 80 columns
// ("refresh 1m: change check"); "" when there is none. Why a change check is off was said
// when it went off.
func (a autoRefresh) mode() string {
	switch {
	case a.base <= 0:
		return ""
	case a.checkOn():
		return "refresh " + shortDuration(a.base) + ": change check"
	case a.checkOff != "" || a.check != nil:
		return "refresh " + shortDuration(a.base) + ": full reads (check off)"
	case a.interval > a.base:
		return "refresh " + shortDuration(a.interval) + " (idle): full reads"
	}
	return "refresh " + shortDuration(a.base) + ": full reads"
}

// shortDuration is d as a person says it: 1m, 90s, 1h30m.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
