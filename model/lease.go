package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A replay lease gives one run at a time the right to send a dead letter: a run leases the
// rows it is about to send (by their effective keys) before the first request leaves, and
// releases them when it ends; another run skips a row leased to a live run, saying whose it
// is. A lease whose run is gone (it ran out, or its process is provably dead) is taken over.

// LeaseFor is how long a replay lease lasts unless its run renews it.
const LeaseFor = 10 * time.Minute

// LeaseHolder is the run holding a row's lease.
type LeaseHolder struct {
	// By names the run's person and host ("ops@jump1").
	By string
	// Since is when the run took its lease; Until when it runs out unless renewed.
	Since, Until time.Time
}

// Leases is what a run was granted by Store.Lease.
type Leases struct {
	// Run is the run's lease token (what Release and Renew name).
	Run string
	// Tab is the tab the rows are in.
	Tab string
	// Taken are the keys leased to this run.
	Taken []string
	// Held are keys another live run holds, with who holds them.
	Held map[string]LeaseHolder
	// Unleased are keys that could not be leased for another reason (the store has room for
	// only so many leases at once), with why.
	Unleased map[string]string
}

// HeldGroup is the rows one other run holds, for a summary line.
type HeldGroup struct {
	Holder LeaseHolder
	IDs    []string
}

// String is the summary line: "60 rows are being replayed by ops@jump1 since 12:03; skipped".
func (g HeldGroup) String() string {
	verb := "rows are"
	if len(g.IDs) == 1 {
		verb = "row is"
	}
	return fmt.Sprintf("%d %s being replayed by %s since %s; skipped", len(g.IDs), verb, SanitizeLine(g.Holder.By), g.Holder.Since.Local().Format("15:04"))
}

// Reason is what a skipped row says.
func (h LeaseHolder) Reason() string {
	return fmt.Sprintf("being replayed by %s since %s (its lease runs to %s unless that run renews it); skipped",
		SanitizeLine(h.By), h.Since.Local().Format("15:04:05"), h.Until.Local().Format("15:04:05"))
}

// GroupHeld groups held keys by their run, the largest group first.
func GroupHeld(held map[string]LeaseHolder) []HeldGroup {
	by := map[LeaseHolder][]string{}
	for id, h := range held {
		by[h] = append(by[h], id)
	}
	var out []HeldGroup
	for h, ids := range by {
		slices.Sort(ids)
		out = append(out, HeldGroup{Holder: h, IDs: ids})
	}
	slices.SortFunc(out, func(a, b HeldGroup) int {
		if len(a.IDs) != len(b.IDs) {
			return len(b.IDs) - len(a.IDs)
		}
		return strings.Compare(a.Holder.By, b.Holder.By)
	})
	return out
}
