package replay_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// TestProbeOpensOnFirstSuccess: until a source has answered a request of the run with
// success, its requests go out one at a time, whatever its first answers were (a retryable
// 503, a rejection, a Retry-After beyond the cap); the first success opens it to the run's
// bound, which later requests then fill (each held until the bound is reached) and never
// exceed.
func TestProbeOpensOnFirstSuccess(t *testing.T) {
	const bound, rows = 5, 20
	for _, tc := range []struct {
		name   string
		before receiver.Fault // the answer to each request before the first success
		n      int            // how many requests get it
		counts map[model.RowState]int
	}{
		{"success first", receiver.Fault{}, 0, map[model.RowState]int{model.StateDelivered: rows}},
		{"retryable first", receiver.Fault{Mode: receiver.Unavailable}, 3, map[model.RowState]int{model.StateDelivered: rows}},
		{"rejected first", receiver.Fault{Mode: receiver.Status, Status: 410}, 2,
			map[model.RowState]int{model.StateDelivered: rows - 2, model.StateRejected: 2}},
		{"deferred first", receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: "60"}, 2,
			map[model.RowState]int{model.StateDelivered: rows - 2, model.StateDeferred: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := receiver.New()
			var seen atomic.Int32
			// The answers up to the first success are slow, so that requests sent beside them
			// would be seen (the check does not depend on it: one request at a time passes
			// however fast the answers are).
			rcv.Rule = func(string, int) (receiver.Fault, bool) {
				switch n := int(seen.Add(1)); {
				case n <= tc.n:
					f := tc.before
					f.Latency = 10 * time.Millisecond
					return f, true
				case n == tc.n+1:
					return receiver.Fault{Latency: 10 * time.Millisecond}, true
				}
				return receiver.Fault{}, false
			}
			peak, cancel := testbed.NewPeak(bound, rcv)
			defer cancel()
			probe := &probeCheck{first: rcv, then: peak}
			srv := serve(t, probe)
			// Five attempts a row: three 503s can't use up one row's attempts.
			src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 5}
			st := newMemStore(dlConfig, keyRows(rows, "crm", srv.URL+"/hook"))
			tab := st.table(t)
			sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{Concurrency: bound})
			if sum.Halted != nil {
				t.Fatalf("halted: %+v", sum.Halted)
			}
			for _, s := range []model.RowState{model.StateDelivered, model.StateRejected, model.StateDeferred, model.StateRetryable, model.StateNotAttempted} {
				if sum.Counts[s] != tc.counts[s] {
					t.Errorf("counts %v, want %v", sum.Counts, tc.counts)
					break
				}
			}
			if n, over := probe.Probes(); n != tc.n+1 || over != 0 {
				t.Errorf("%d requests before the first success was answered, %d of them with another unanswered; want %d, one at a time", n, over, tc.n+1)
			}
			if p := max(peak.Max(), rcv.MaxConcurrent()); p > bound {
				t.Errorf("%d requests in flight at once, want at most %d", p, bound)
			}
			if !peak.Reached() {
				t.Errorf("never %d requests in flight at once after the first success (peak %d)", bound, peak.Max())
			}
		})
	}
}

// TestHaltIsRunWide (invariant 7): of two sources replayed together, one answering 401 (a
// wrong secret) gets one call, and its halt stops the other source too. The healthy source's
// first call is held at its destination until the halt: it was sent before the halt and is
// answered, delivered and written back after it; nothing else of either source is sent, and
// every other row is not attempted, saying the halt is why. Each source's probe admits one
// request until that source answers with success, so at the halt the healthy source has
// exactly one in flight, and its success after the halt admits nothing.
func TestHaltIsRunWide(t *testing.T) {
	const rows = 20
	good := receiver.New()
	goodGate := testbed.NewGate()
	goodSrv := serve(t, goodGate.Wrap(good))
	bad := receiver.New()
	bad.Default = receiver.Fault{Mode: receiver.Unauthorized}
	badGate := testbed.NewGate()
	badSrv := serve(t, badGate.Wrap(bad))
	goodGate.Hold()
	badGate.Hold()
	defer goodGate.Release()
	defer badGate.Release()

	var all []row
	for i := range rows {
		g := row{source: "good", url: goodSrv.URL + "/hook", payload: payload(i), key: "g-" + strconv.Itoa(i), attempts: "1", status: "dead"}
		b := row{source: "bad", url: badSrv.URL + "/hook", payload: payload(i), key: "b-" + strconv.Itoa(i), attempts: "1", status: "dead"}
		all = append(all, g, b)
	}
	st := newMemStore(dlConfig, all)
	tab := st.table(t)
	c := fastClient(&replay.Source{Name: "good", URLPrefixes: []string{goodSrv.URL}},
		&replay.Source{Name: "bad", URLPrefixes: []string{badSrv.URL}, Headers: map[string]string{"Authorization": "env:BAD_TOKEN"}})
	c.Getenv = func(string) string { return "Bearer wrong" }

	halted := make(chan struct{})
	var once sync.Once
	go func() {
		// Both sources' first calls are at their doors: let the 401 through; once the run
		// has halted, let the healthy call finish.
		<-goodGate.Arrived()
		<-badGate.Arrived()
		badGate.Release()
		<-halted
		goodGate.Release()
	}()
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 20,
		Progress: func(e model.ReplayEvent) {
			if e.Halted != nil {
				once.Do(func() { close(halted) })
			}
		}})

	if sum.Halted == nil || sum.Halted.Cause != "systemic" || sum.Halted.Source != "bad" {
		t.Fatalf("halt %+v", sum.Halted)
	}
	goodSent, badSent := attemptsByKey(good), attemptsByKey(bad)
	if len(good.Attempts()) != 1 || len(bad.Attempts()) != 1 {
		t.Fatalf("requests: good %v, bad %v; want one each (the healthy one already in flight at the halt)", keysOf(goodSent), keysOf(badSent))
	}
	want := map[model.RowState]int{model.StateDelivered: 1, model.StateSystemic: 1, model.StateNotAttempted: 2*rows - 2}
	for s, n := range want {
		if sum.Counts[s] != n {
			t.Errorf("counts %v, want %v", sum.Counts, want)
			break
		}
	}
	if len(sum.NotAttempted) != 2*rows-2 || sum.ExitCode() != 3 {
		t.Errorf("%d not attempted, exit %d; want %d, 3", len(sum.NotAttempted), sum.ExitCode(), 2*rows-2)
	}
	for _, r := range sum.Rows {
		_, g := goodSent[r.Key]
		_, b := badSent[r.Key]
		status, _ := st.cell(r.Key, model.FStatus)
		switch {
		case g:
			if r.State != model.StateDelivered || status != "delivered" {
				t.Errorf("row %d (%s), in flight at the halt: %s, status %q; want delivered and written back", r.Row, r.Key, r.State, status)
			}
		case b:
			if r.State != model.StateSystemic || status != "dead" {
				t.Errorf("row %d (%s), the 401: %s, status %q; want systemic, still dead", r.Row, r.Key, r.State, status)
			}
		default:
			attempts, _ := st.cell(r.Key, model.FAttempts)
			if r.State != model.StateNotAttempted || r.Detail != "not sent: the run halted before this row" || status != "dead" || attempts != "1" {
				t.Errorf("row %d (%s): %s %q, status %q attempts %q; want not attempted because of the halt, untouched",
					r.Row, r.Key, r.State, r.Detail, status, attempts)
			}
		}
	}
	if eff := good.Effects(); len(eff) != 1 {
		t.Errorf("good's effects %v, want the one call", eff)
	}
}
