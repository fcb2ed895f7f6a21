package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// The queue tab: jobs are pending, claimed by a worker, done, or in sticky error.
// A claim older than the tab's stale_after (default 30 minutes) is stale: its worker most
// likely died. Q lists exactly which claims are stale, with their worker and age, and asks
// before sending them back to pending; a claim that is not older than the threshold is never
// listed, and each edit expects the claim's cells unchanged, so a worker that finishes or
// re-claims the row meanwhile wins.

// staleRecount is how often the stale counts in the tab bar are recomputed as time passes.
const staleRecount = 15 * time.Second

// recountStale recomputes the stale claims of every queue tab at now.
func (t *tabSet) recountStale(now time.Time) {
	for _, ts := range t.list {
		if ts.recountStale(now) {
			t.gen++
		}
	}
}

// recountStale counts the stale claims of a queue tab; it reports whether the count changed.
func (ts *tabState) recountStale(now time.Time) bool {
	if ts.data == nil || ts.cfg.Role != model.RoleQueue {
		return false
	}
	t := ts.data.table
	n := 0
	if ts.data.counts[model.StatusClaimed] > 0 {
		for i := range t.Records {
			if t.Stale(&t.Records[i], now) {
				n++
			}
		}
	}
	changed := n != ts.stale
	ts.stale = n
	return changed
}

// requeue lists the stale claims among the marked rows the filter shows (else among all the
// rows it shows) and asks before requeueing them.
func (ch *changes) requeue(sc actionScope) action {
	ts := sc.tabs.current()
	if ts == nil || ts.data == nil {
		return nil
	}
	if why := ch.c.roleRefusal(model.AccessOperator, "requeue stale claims"); why != "" {
		return toastAction{toastInfo, why}
	}
	t := ts.data.table
	if t.Config.Role != model.RoleQueue {
		return toastAction{toastInfo, fmt.Sprintf("%s only on the queue (the %s tab)", cmp.Or(keySays(ch.c.keys.Requeue, "requeues stale claims"), "requeuing stale claims works"), model.DefaultTabName(model.RoleQueue))}
	}
	if why := sc.busy; why != "" {
		return toastAction{toastInfo, why}
	}
	rows := ts.visible
	scope := "shown"
	if ts.nMarked > 0 {
		rows, _ = ts.targets()
		scope = "marked"
	}
	now := ch.c.now()
	th := t.Config.StaleAfter
	if th <= 0 {
		th = 30 * time.Minute
	}
	var edits []model.Edit
	var list []string
	var noID noIDInfo
	var oldest time.Duration
	claimed := 0
	for _, ri := range rows {
		r := &t.Records[ri]
		if r.Status == model.StatusClaimed && !r.Time.IsZero() {
			claimed++
			oldest = max(oldest, now.Sub(r.Time))
		}
		e, ok := model.Requeue(t, r, now)
		if !ok {
			continue
		}
		if r.ID == "" {
			noID.add(t, r)
			continue
		}
		edits = append(edits, e)
		by := t.Get(r, model.FClaimedBy)
		if by == "" {
			by = "(no worker)"
		}
		list = append(list, fmt.Sprintf("%-14s %-14s claimed %s (row %d)", cellLine(r.ID), cellLine(by), ago(now, inZone(r.Time, t.Location)), r.Row))
	}
	if len(edits) == 0 {
		msg := fmt.Sprintf("no stale claims among the %s rows (stale: over %s)", scope, shortDur(th))
		if claimed > 0 {
			msg += fmt.Sprintf("; the oldest claim is %s old", age(now, now.Add(-oldest)))
		}
		if noID.n > 0 {
			msg += "; " + noID.note()
		}
		return toastAction{toastInfo, msg}
	}
	notes := []string{
		strings.TrimSpace(fmt.Sprintf("Claimed more than %s ago; their worker most likely died. They go back to pending; a claim that changes meanwhile is reported, not overwritten. %s", shortDur(th), filterNote(ts.filterQuery()))),
	}
	if noID.n > 0 {
		notes = append(notes, noID.note()+".")
	}
	d := newConfirm(ch.c, fmt.Sprintf("Requeue %d stale %s?", len(edits), words.Plural(len(edits), "claim", "claims")), notes,
		writeOp{kind: writeRequeue, tab: t.Config.Name, edits: edits, status: model.StatusPending})
	d.list = list
	d.listTitle = "ID             WORKER         AGE"
	d.showList = true
	return dialogAction{d}
}

// shortDur renders a threshold the way a person writes it: 30m, 1h30m, 45s.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
