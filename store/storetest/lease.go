package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// keyRange is the keys k-FROM … k-(TO-1).
func keyRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("k-%02d", i))
	}
	return out
}

// testLeaseContract is the replay lease contract (invariant 14), one body for every store: a
// row is leased to one live run at a time; another run is told who holds it and since when;
// a released, expired or dead run's rows are free again (the dead one's at once), and a late
// release never frees rows another run took over; runners leasing the same rows at the same
// instant split them, none shared.
func testLeaseContract(t *testing.T, open func(t *testing.T) Backend) {
	const tab = "failed_calls"
	lb := open(t)
	ctx := t.Context()
	must := func(l model.Leases, err error) model.Leases {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := lb.Runner(t, "ops"), lb.Runner(t, "cron")
	la := must(a.Lease(ctx, tab, keyRange(0, 5)))
	if len(la.Taken) != 5 {
		t.Fatalf("a free row not leased: %+v", la)
	}
	lb1 := must(b.Lease(ctx, tab, keyRange(3, 6)))
	if !slices.Equal(lb1.Taken, keyRange(5, 6)) || len(lb1.Held) != 2 {
		t.Fatalf("a held row leased again: taken %v, held %v", lb1.Taken, lb1.Held)
	}
	for k, h := range lb1.Held {
		if !strings.HasPrefix(h.By, "ops@") || h.Since.IsZero() || !h.Until.After(h.Since) {
			t.Errorf("%s held by %+v, want ops@host with since and until", k, h)
		}
	}
	if err := a.Renew(ctx, la); err != nil {
		t.Error(err)
	}
	if err := a.Release(ctx, la); err != nil {
		t.Fatal(err)
	}
	if lb2 := must(b.Lease(ctx, tab, keyRange(0, 5))); len(lb2.Taken) != 5 {
		t.Errorf("released rows not free: %+v", lb2)
	} else if err := b.Release(ctx, lb2); err != nil {
		t.Error(err)
	}
	if err := b.Release(ctx, lb1); err != nil {
		t.Error(err)
	}

	// A run whose process is gone: its rows are free at once.
	must(lb.DeadRunner(t, "dead").Lease(ctx, tab, keyRange(10, 13)))
	c := lb.Runner(t, "next")
	lc := must(c.Lease(ctx, tab, keyRange(10, 13)))
	if len(lc.Taken) != 3 {
		t.Errorf("a dead run's rows not taken over: %+v", lc)
	}
	if err := c.Release(ctx, lc); err != nil {
		t.Error(err)
	}

	// A run that stopped renewing: its rows are free once its lease runs out, and its
	// late release leaves the run that took them over holding them.
	slow := lb.Runner(t, "slow")
	ls := must(slow.Lease(ctx, tab, keyRange(20, 22)))
	lb.Expire(t)
	fresh := lb.Runner(t, "fresh")
	if lf := must(fresh.Lease(ctx, tab, keyRange(20, 22))); len(lf.Taken) != 2 {
		t.Errorf("expired rows not taken over: %+v", lf)
	}
	if err := slow.Release(ctx, ls); err != nil {
		t.Error(err)
	}
	if lh := must(lb.Runner(t, "third").Lease(ctx, tab, keyRange(20, 22))); len(lh.Held) != 2 {
		t.Errorf("a late release freed rows another run took over: %+v", lh)
	} else {
		for _, h := range lh.Held {
			if !strings.HasPrefix(h.By, "fresh@") {
				t.Errorf("held by %s, want fresh", h.By)
			}
		}
	}

	// Runners leasing the same rows at once split them.
	keys := keyRange(30, 50)
	const runners = 4
	var wg sync.WaitGroup
	got := make([]model.Leases, runners)
	errs := make([]error, runners)
	stores := make([]store.Leaser, runners)
	for i := range runners {
		stores[i] = lb.Runner(t, fmt.Sprintf("r%d", i))
	}
	for i := range runners {
		wg.Go(func() { got[i], errs[i] = stores[i].Lease(ctx, tab, keys) })
	}
	wg.Wait()
	owner := map[string]int{}
	for i := range runners {
		if errs[i] != nil {
			t.Fatalf("runner %d: %v", i, errs[i])
		}
		for _, k := range got[i].Taken {
			if j, ok := owner[k]; ok {
				t.Errorf("%s leased to runners %d and %d", k, j, i)
			}
			owner[k] = i
		}
		if len(got[i].Taken)+len(got[i].Held) != len(keys) {
			t.Errorf("runner %d: %d taken + %d held of %d", i, len(got[i].Taken), len(got[i].Held), len(keys))
		}
	}
	if len(owner) != len(keys) {
		t.Errorf("%d of %d rows leased to anyone", len(owner), len(keys))
	}
}
