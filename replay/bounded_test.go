package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// clockedDestination is a reference receiver behind a real server where every request costs
// a minute of the run's clock: each moves clk on by a minute as it arrives. at is the clock
// as each request arrived (before it moved it on), in order of arrival.
type clockedDestination struct {
	rcv *receiver.Receiver
	clk *testbed.Clock
	url string

	mu sync.Mutex
	at []time.Time
}

func newClockedDestination(t *testing.T, clk *testbed.Clock) *clockedDestination {
	d := &clockedDestination{rcv: receiver.New(), clk: clk}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.at = append(d.at, clk.Now())
		clk.Add(time.Minute)
		d.mu.Unlock()
		d.rcv.ServeHTTP(w, r)
	}))
	d.url = srv.URL
	return d
}

func (d *clockedDestination) arrivals() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.at)
}

// TestMaxTimeStopsStartingSendsMidRun: a run of 40 rows, a real receiver behind a real
// server, the emulated sheet through the real store, and a run clock (Client.Now) that each
// request moves on by a minute. The run is given 20 minutes and its source a 4-minute timeout,
// so it stops starting sends at 15 minutes (the timeout plus a minute for the write-back):
// one request at a time that is exactly 15 sends; with 4 in flight, the ones in flight when
// the clock passed the stop point (3 at most) finish too, and nothing starts after. Every
// row sent is written back, no key goes twice, the others are reported not started and stay
// as they were; the next run sends exactly them.
func TestMaxTimeStopsStartingSendsMidRun(t *testing.T) {
	const n = 40
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", conc), func(t *testing.T) {
			clk := testbed.NewClock()
			dest := newClockedDestination(t, clk)
			rows := keyRows(n, "crm", dest.url+"/hook")
			f := newSheetFixture(t, rows)
			tab := f.load(t)
			src := &replay.Source{Name: "crm", URLPrefixes: []string{dest.url}, Timeout: 4 * time.Minute}
			c := fastClient(src)
			c.Now = clk.Now
			if m := replay.StopMargin(tab, records(tab), c.Sources); m != 5*time.Minute {
				t.Fatalf("stop margin %v, want 5m (the source's 4m timeout and 1m for the write-back)", m)
			}
			start := clk.Now()
			stopAt := start.Add(15 * time.Minute)
			sum := replay.Run(context.Background(), c, f.store, tab, records(tab), replay.RunOptions{Concurrency: conc, Deadline: start.Add(20 * time.Minute)})

			at := dest.arrivals()
			before := 0 // requests that arrived before the clock reached the stop point
			for _, a := range at {
				if a.Before(stopAt) {
					before++
				}
			}
			if before != 15 {
				t.Errorf("%d requests arrived before the stop point, want 15 (one a minute for 15 minutes)", before)
			}
			// A request arriving after the stop point was in flight when the clock passed it:
			// at most conc-1 others besides the one that moved it there.
			if late := len(at) - before; late > conc-1 {
				t.Errorf("%d requests arrived after the stop point, want at most %d (those already in flight): sends started after it", late, conc-1)
			}
			if !sum.TimeUp || sum.Cancelled || sum.Halted != nil {
				t.Errorf("time up %v, cancelled %v, halted %v; want only time up", sum.TimeUp, sum.Cancelled, sum.Halted)
			}
			if len(sum.WriteErrors) != 0 || len(sum.WriteConflicts) != 0 {
				t.Fatalf("write errors %v, conflicts %v", sum.WriteErrors, sum.WriteConflicts)
			}
			byKey := attemptsByKey(dest.rcv)
			for k, as := range byKey {
				if len(as) != 1 {
					t.Errorf("key %s sent %d times", k, len(as))
				}
			}
			if len(byKey) != len(at) || sum.Counts[model.StateDelivered] != len(at) {
				t.Errorf("%d keys received, %d requests, %d delivered: want them equal", len(byKey), len(at), sum.Counts[model.StateDelivered])
			}
			if len(sum.NotAttempted) != n-len(at) || sum.Counts[model.StateNotAttempted] != n-len(at) {
				t.Errorf("%d not attempted (counts %v), want %d", len(sum.NotAttempted), sum.Counts, n-len(at))
			}
			notStarted := map[string]bool{}
			for _, id := range sum.NotAttempted {
				notStarted[id] = true
			}
			for _, r := range sum.Rows {
				if r.State == model.StateNotAttempted && !strings.Contains(r.Detail, "time was nearly up") {
					t.Errorf("row %d: detail %q does not say the time was up", r.Row, r.Detail)
				}
			}
			for i := range n {
				k := fmt.Sprintf("k-%d", i)
				got := []string{f.cell(i, cStatus), f.cell(i, cAttempts), f.cell(i, cKey)}
				switch {
				case len(byKey[k]) == 1:
					// Sent, so written back: in flight at the stop point or not.
					if want := []string{"delivered", "2", k}; !slices.Equal(got, want) || f.cell(i, cReplayedAt) == "" {
						t.Errorf("row %d (sent): %q, replayed_at %q; want %q and a time", i+2, got, f.cell(i, cReplayedAt), want)
					}
					if notStarted[k] {
						t.Errorf("row %d was sent and is reported not started", i+2)
					}
				default:
					if want := []string{"dead", "1", k}; !slices.Equal(got, want) || f.cell(i, cReplayedAt) != "" {
						t.Errorf("row %d (not sent): %q, replayed_at %q; want %q and none", i+2, got, f.cell(i, cReplayedAt), want)
					}
					if !notStarted[k] {
						t.Errorf("row %d was not sent and is not reported not started", i+2)
					}
				}
			}

			// The next run (unbounded) sends exactly what was left, each once.
			sum = replay.Run(context.Background(), c, f.store, f.load(t), records(f.load(t)), replay.RunOptions{Concurrency: conc})
			if sum.TimeUp || sum.Counts[model.StateDelivered] != n-len(at) || sum.Counts[model.StateSkipped] != len(at) {
				t.Errorf("next run: time up %v, counts %v; want %d delivered, %d skipped", sum.TimeUp, sum.Counts, n-len(at), len(at))
			}
			eff := dest.rcv.Effects()
			for i := range n {
				if k := fmt.Sprintf("k-%d", i); eff[k] != 1 {
					t.Errorf("key %s acted on %d times after both runs, want 1", k, eff[k])
				}
			}
		})
	}
}

// TestMaxTimeEndsWaitsAtTheStopPoint: a run whose rows wait for their source's rate (one a
// minute) ends at the stop point, not at the end of a wait that would outlast it; a row whose
// retries are cut short by it is not retried, and says why. On a fake clock (synctest).
func TestMaxTimeEndsWaitsAtTheStopPoint(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rcv := receiver.New()
			src := &replay.Source{Name: "crm", URLPrefixes: []string{memURL}, RatePerMinute: 1, Timeout: 10 * time.Second}
			st := newMemStore(dlConfig, keyRows(10, "crm", memURL+"/x"))
			tab := st.table(t)
			start := time.Now()
			// Margin 1m10s: no send starts from 3m50s on; the fifth would go at 4m.
			sum := replay.Run(context.Background(), memClient(rcv, src), st, tab, records(tab), replay.RunOptions{Deadline: start.Add(5 * time.Minute)})
			if el := time.Since(start); el != 3*time.Minute+50*time.Second {
				t.Errorf("the run took %v, want 3m50s (its stop point)", el)
			}
			if n := len(rcv.Attempts()); n != 4 {
				t.Errorf("%d requests, want 4 (at 0, 1m, 2m, 3m)", n)
			}
			if !sum.TimeUp || len(sum.NotAttempted) != 6 || sum.Counts[model.StateDelivered] != 4 || sum.ExitCode() != replay.ExitNotDone {
				t.Errorf("time up %v, not attempted %v, counts %v, exit %d", sum.TimeUp, sum.NotAttempted, sum.Counts, sum.ExitCode())
			}
		})
	})
	t.Run("retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rcv, c := downClient(5) // 503 to every attempt; waits 0.5s, 1s, 2s between them
			c.Sources["crm"].Timeout = time.Second
			st := newMemStore(dlConfig, keyRows(1, "crm", memURL+"/x"))
			tab := st.table(t)
			start := time.Now()
			// Margin 1m1s: the stop point is at 2s, inside the wait after the third attempt.
			sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Deadline: start.Add(63 * time.Second)})
			if el := time.Since(start); el != 2*time.Second {
				t.Errorf("the run took %v, want 2s (its stop point)", el)
			}
			if n := len(rcv.Attempts()); n != 3 {
				t.Errorf("%d attempts, want 3", n)
			}
			if len(sum.Rows) != 1 || sum.Rows[0].State != model.StateRetryable || !strings.Contains(sum.Rows[0].Detail, "not retried: the run's time was nearly up") {
				t.Fatalf("rows %+v", sum.Rows)
			}
			if !sum.TimeUp || len(sum.NotAttempted) != 0 || sum.Halted != nil {
				t.Errorf("time up %v, not attempted %v, halted %v", sum.TimeUp, sum.NotAttempted, sum.Halted)
			}
			if got, _ := st.cell("k-0", model.FAttempts); got != "4" {
				t.Errorf("attempts cell %q, want 4 (1 before, 3 now): the cut row is written back", got)
			}
		})
	})
	t.Run("no time at all", func(t *testing.T) {
		rcv := receiver.New()
		src := &replay.Source{Name: "crm", URLPrefixes: []string{memURL}}
		st := newMemStore(dlConfig, keyRows(3, "crm", memURL+"/x"))
		tab := st.table(t)
		c := memClient(rcv, src)
		clk := testbed.NewClock()
		c.Now = clk.Now
		// 1m of 1m20s: nothing may start, so nothing is leased, checked or written either.
		sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Deadline: clk.Now().Add(time.Minute)})
		if len(rcv.Attempts()) != 0 || st.applyCount() != 0 || !sum.TimeUp || len(sum.NotAttempted) != 3 {
			t.Errorf("%d requests, %d applies, time up %v, not attempted %v", len(rcv.Attempts()), st.applyCount(), sum.TimeUp, sum.NotAttempted)
		}
	})
}

// TestStopMargin: the longest request timeout of the sources the rows name, plus a minute;
// the default timeout when none is configured.
func TestStopMargin(t *testing.T) {
	rows := append(keyRows(2, "fast", memURL+"/x"), keyRows(2, "slow", memURL+"/y")...)
	rows[3].key, rows[1].key = "s-1", "f-1"
	rows = append(rows, row{source: "ghost", url: memURL + "/z", payload: "{}", key: "g", status: "dead"})
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	sources := map[string]*replay.Source{
		"fast": {Name: "fast", Timeout: 5 * time.Second},
		"slow": {Name: "slow", Timeout: 45 * time.Second},
	}
	recs := records(tab)
	for _, tc := range []struct {
		recs []*model.Record
		want time.Duration
	}{
		{recs, 45*time.Second + time.Minute},
		{recs[:2], 5*time.Second + time.Minute},
		{recs[4:], replay.DefaultTimeout + time.Minute}, // a source not configured sends nothing
		{nil, replay.DefaultTimeout + time.Minute},
	} {
		if got := replay.StopMargin(tab, tc.recs, sources); got != tc.want {
			t.Errorf("StopMargin of %d rows = %v, want %v", len(tc.recs), got, tc.want)
		}
	}
}

// TestLimitTakesTheOldestFirst: --limit 4 with --source crm takes the 4 oldest crm rows the
// run would send (rows skipped by rule, other sources' rows and refused rows don't count),
// sends them oldest first, and reports the other eligible crm rows left out, oldest first:
// ties by sheet order, an undated row after every dated one. A dry run shows the same.
func TestLimitTakesTheOldestFirst(t *testing.T) {
	rcv, srv, _ := destination(t)
	u := srv.URL + "/hook"
	ts := func(h int) string { return fmt.Sprintf("2026-01-01T%02d:00:00Z", h) }
	rows := []row{
		{ts: ts(9), source: "crm", url: u, payload: `{"n":0}`, key: "c-09", status: "dead"},
		{ts: ts(3), source: "crm", url: u, payload: `{"n":1}`, key: "c-03", status: "delivered"}, // skipped by rule
		{ts: ts(5), source: "crm", url: u, payload: `{"n":2}`, key: "c-05a", status: "dead"},
		{ts: ts(1), source: "billing", url: u, payload: `{"n":3}`, key: "b-01", status: "dead"}, // another source
		{ts: "not a date", source: "crm", url: u, payload: `{"n":4}`, key: "c-undated", status: "dead"},
		{ts: ts(7), source: "crm", url: u, payload: `{"n":5}`, key: "c-07", status: ""},
		{ts: ts(2), source: "crm", url: "http://elsewhere.example/x", payload: `{"n":6}`, key: "c-02", status: "dead"}, // refused
		{ts: ts(5), source: "crm", url: u, payload: `{"n":7}`, key: "c-05b", status: "dead"},
		{ts: ts(4), source: "crm", url: u, payload: `{"n":8}`, key: "c-04", status: "dead"},
		{ts: ts(8), source: "crm", url: u, payload: `{"n":9}`, key: "c-08", status: "dead"},
	}
	wantSent := []string{"c-04", "c-05a", "c-05b", "c-07"}
	wantLeft := []string{"c-08", "c-09", "c-undated"}
	f := newSheetFixture(t, rows)
	// One crm row in progress at a time, so the requests arrive in the order they are sent.
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Concurrency: 1}, &replay.Source{Name: "billing", URLPrefixes: []string{srv.URL}})
	left := func(sum model.ReplaySummary) []string {
		var ids []string
		for _, r := range sum.LeftOut {
			ids = append(ids, r.ID)
			if !strings.Contains(r.Reason, "left out by the limit of 4 rows") {
				t.Errorf("left-out reason %q", r.Reason)
			}
		}
		return ids
	}

	tab := f.load(t)
	sel := replay.Select(tab, nil, true, "crm")
	dry := replay.Run(context.Background(), c, f.store, tab, sel.Records, replay.RunOptions{DryRun: true, Limit: 4})
	var would []string
	for _, p := range dry.DryRun {
		would = append(would, p.Key)
	}
	if !slices.Equal(would, wantSent) || !slices.Equal(left(dry), wantLeft) || len(rcv.Attempts()) != 0 {
		t.Errorf("dry run: would send %v, left out %v, %d requests; want %v, %v, none", would, left(dry), len(rcv.Attempts()), wantSent, wantLeft)
	}
	if dry.ExitCode() != replay.ExitNotDone {
		t.Errorf("dry run exit %d, want 1: rows are left", dry.ExitCode())
	}

	sum := replay.Run(context.Background(), c, f.store, tab, sel.Records, replay.RunOptions{Limit: 4})
	var sent []string
	for _, a := range rcv.Attempts() {
		sent = append(sent, a.Key)
	}
	if !slices.Equal(sent, wantSent) {
		t.Errorf("sent %v, want %v (the 4 oldest crm rows, oldest first)", sent, wantSent)
	}
	if !slices.Equal(left(sum), wantLeft) {
		t.Errorf("left out %v, want %v", left(sum), wantLeft)
	}
	if sum.Counts[model.StateDelivered] != 4 || sum.Counts[model.StateSkipped] != 1 || sum.Counts[model.StateRefused] != 1 || sum.ExitCode() != replay.ExitNotDone {
		t.Errorf("counts %v, exit %d", sum.Counts, sum.ExitCode())
	}
	for i, r := range rows {
		if slices.Contains(wantLeft, r.key) && (f.cell(i, cStatus) != r.status || f.cell(i, cReplayedAt) != "") {
			t.Errorf("row %d (%s), left out, was written: status %q", i+2, r.key, f.cell(i, cStatus))
		}
	}

	// Run again under the same limit: the next slice, and then nothing is left.
	tab = f.load(t)
	sum = replay.Run(context.Background(), c, f.store, tab, replay.Select(tab, nil, true, "crm").Records, replay.RunOptions{Limit: 4})
	if sum.Counts[model.StateDelivered] != 3 || len(sum.LeftOut) != 0 {
		t.Errorf("second run: counts %v, left out %v; want the 3 left, none left out", sum.Counts, left(sum))
	}
	if eff := rcv.Effects(); len(eff) != 7 || eff["b-01"] != 0 {
		t.Errorf("effects %v: want each crm row once, billing never", eff)
	}
}
