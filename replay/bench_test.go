package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// BenchmarkRun1000 replays 1,000 rows to a receiver answering in 50 ms, with concurrency 10
// and write-back through the real store on the emulator, and, in the same run, a serial loop
// (one Client.Do after another) over a 100-row sample of the same receiver. Metrics: rows/s
// of each, the speedup, and write-back requests.
func BenchmarkRun1000(b *testing.B) {
	const n, sample = 1000, 100
	var rowsPerSec, serialPerSec, writes float64
	iters := 0
	for b.Loop() {
		b.StopTimer()
		rcv := receiver.New()
		rcv.Latency = 50 * time.Millisecond
		srv := serve(b, rcv)
		rows := keyRows(n, "crm", srv.URL+"/hook")
		f := newSheetFixture(b, rows)
		tab := f.load(b)
		src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}
		c := fastClient(src)
		b.StartTimer()

		start := time.Now()
		sum := replay.Run(context.Background(), c, f.store, tab, records(tab), replay.RunOptions{Concurrency: 10})
		el := time.Since(start)

		b.StopTimer()
		if sum.Counts["delivered"] != n {
			b.Fatalf("counts %v", sum.Counts)
		}
		serial := keyRows(sample, "crm", srv.URL+"/serial")
		sstart := time.Now()
		for i, r := range serial {
			res := c.Do(context.Background(), replay.Call{Key: "s-" + r.key, Source: "crm", URL: r.url, Body: []byte(r.payload)})
			if !res.Outcome.Success() {
				b.Fatalf("serial row %d: %v", i, res.Outcome)
			}
		}
		sel := time.Since(sstart)
		b.StartTimer()

		rowsPerSec += float64(n) / el.Seconds()
		serialPerSec += float64(sample) / sel.Seconds()
		writes += float64(sum.WriteRequests)
		iters++
	}
	rowsPerSec /= float64(iters)
	serialPerSec /= float64(iters)
	b.ReportMetric(rowsPerSec, "rows/s")
	b.ReportMetric(serialPerSec, "serial-rows/s")
	b.ReportMetric(rowsPerSec/serialPerSec, "speedup")
	b.ReportMetric(writes/float64(iters), "write-requests")
}

// BenchmarkFaultMix1000 replays the 1,000-row fault mix (30% act-then-drop, 10% 404 after
// acting, 10% 503, 5% 429 with Retry-After: 1; a third of the keys minted) with concurrency 10,
// backoff base 2ms, cap 1s, and write-back through the real store on the emulator. Metrics:
// wall time (ns/op), requests per row, write-back requests.
func BenchmarkFaultMix1000(b *testing.B) {
	const n = 1000
	var attempts, writes float64
	iters := 0
	for b.Loop() {
		b.StopTimer()
		rcv := receiver.New()
		srv := serve(b, rcv)
		rows := mixRows(n, srv.URL+"/hook")
		f := newSheetFixture(b, rows)
		tab := f.load(b)
		_, idx := rowKeys(tab)
		rcv.Rule = faultMixByKey(idx, 0)
		c := fastClient(mixSource(srv.URL))
		c.Cap = time.Second
		b.StartTimer()

		sum := replay.Run(context.Background(), c, f.store, tab, records(tab), replay.RunOptions{Concurrency: 10})

		b.StopTimer()
		if got := sum.Counts["delivered"] + sum.Counts["duplicate"]; got != n || len(rcv.Effects()) != n {
			b.Fatalf("counts %v, effects %d", sum.Counts, len(rcv.Effects()))
		}
		attempts += float64(len(rcv.Attempts())) / n
		writes += float64(sum.WriteRequests)
		iters++
		b.StartTimer()
	}
	b.ReportMetric(attempts/float64(iters), "requests/row")
	b.ReportMetric(writes/float64(iters), "write-requests")
}

// storeOnly hides a store's replay.Leaser: a run through it takes no leases (the reference
// BenchmarkRunLease measures the lease's cost against).
type storeOnly struct{ replay.Store }

// BenchmarkRunLease replays 1,000 rows through the real store on the emulator to a receiver
// answering at once (so the store's work is what the time shows), with the run's leases
// ("lease") and without them ("none", the reference), in the same run: the lease's cost in
// time and in Sheets requests (metric sheets-requests: every request the emulator served
// for the run).
func BenchmarkRunLease(b *testing.B) {
	const n = 1000
	for _, mode := range []string{"lease", "none"} {
		b.Run(mode, func(b *testing.B) {
			var requests float64
			iters := 0
			for b.Loop() {
				b.StopTimer()
				rcv := receiver.New()
				srv := serve(b, rcv)
				f := newSheetFixture(b, keyRows(n, "crm", srv.URL+"/hook"))
				tab := f.load(b)
				c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}})
				var st replay.Store = f.store
				if mode == "none" {
					st = storeOnly{f.store}
				}
				f.emu.ResetCounts()
				b.StartTimer()

				sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 10, FlushInterval: time.Hour})

				b.StopTimer()
				if sum.Counts["delivered"] != n {
					b.Fatalf("counts %v", sum.Counts)
				}
				for _, v := range f.emu.Counts() {
					requests += float64(v)
				}
				iters++
				b.StartTimer()
			}
			b.ReportMetric(requests/float64(iters), "sheets-requests")
		})
	}
}
