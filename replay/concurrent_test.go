package replay_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The sheet's twin of postgres' replayers-at-once test: 2-4 runs of `replay --all` (each a
// store of its own, as separate processes are) start together on one failed_calls tab while
// another editor sorts it now and then; the receiver rejects some keys (410, on every
// attempt), acts and then drops the connection on some first attempts, and accepts the rest;
// a third of the rows have no key yet (each is minted and saved before its first send). Then
// a last run, with the sheet and the receiver quiet, sends what is left. It must hold:
//
//   - while the runs overlapped, no key was sent by two of them: each key reached the receiver
//     at most as often as one run tries it;
//   - no payload was ever sent under two keys, and the receiver acted at most once per key;
//   - every row ends as the receiver answered it (rejected, or delivered with its key), the
//     key in its key cell its own;
//   - a run that only skipped rows another run held says whose they were, and ends 0 (or 1
//     for the rows it sent that were rejected).
//
// CI runs 10 cases; TRIAGE_REPLAYERS_CASES sets more, TRIAGE_REPLAYERS_SEED reruns one.
func TestConcurrentReplayersOnTheSheet(t *testing.T) {
	stats := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(10, 4, "TRIAGE_REPLAYERS_CASES"), 0x2e91, "TRIAGE_REPLAYERS_SEED") {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { concurrentReplayersCase(t, seed, rng, stats) })
	}
	testbed.Exercised(t, stats, "held by another run", "rejected", "lost answer", "minted", "sort")
}

func concurrentReplayersCase(t *testing.T, seed int, rng *rand.Rand, stats map[string]int) {
	n := 20 + rng.IntN(40)
	runs := 2 + rng.IntN(3)
	var quiet atomic.Bool
	rejected := map[string]bool{} // by payload
	rejectedKeys := map[string]bool{}
	rcv := receiver.New()
	dropAt := rng.IntN(20)
	// Decided by the key and the seed alone, whatever order the runs' calls arrive in.
	rcv.Rule = func(key string, attempt int) (receiver.Fault, bool) {
		switch {
		case rejectedKeys[key]:
			return receiver.Fault{Mode: receiver.Status, Status: http.StatusGone}, true
		case quiet.Load() || attempt != 1:
			return receiver.Fault{}, false
		}
		h := fnv.New64a()
		fmt.Fprint(h, seed, key)
		if int(h.Sum64()%100) < dropAt {
			return receiver.Fault{Mode: receiver.DropAfterAct}, true
		}
		return receiver.Fault{}, false
	}
	srv := serve(t, rcv)
	grid := [][]any{anyRow(dlHeader)}
	payloads := map[string]row{}
	for i := range n {
		r := row{source: "crm", url: srv.URL + "/crm/hook", payload: fmt.Sprintf(`{"seed":%d,"n":%d}`, seed, i), attempts: "1", status: "dead",
			ts: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}
		if rng.IntN(3) != 0 {
			r.key = fmt.Sprintf("k%d-%d", seed, i)
		} else {
			stats["minted"]++
		}
		if rng.IntN(5) == 0 {
			rejected[r.payload] = true
		}
		payloads[r.payload] = r
		if rejected[r.payload] {
			rejectedKeys[ownKey(r)] = true
		}
		grid = append(grid, anyRow(r.cells()))
	}
	tb := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: stormID, Title: "Runs", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: stormTab, Rows: grid}}})
	var mu sync.Mutex
	mrng := rand.New(rand.NewPCG(uint64(seed), 7))
	tb.Emu.SetHook(func(r emulator.Request) {
		if quiet.Load() || r.Method != "spreadsheets.batchUpdate" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if mrng.IntN(6) == 0 {
			cells := tb.Emu.Cells(stormID, stormTab)
			if err := tb.Emu.SortRows(stormID, stormTab, mrng.IntN(len(cells[0])), mrng.IntN(2) == 0); err != nil {
				t.Error(err)
			}
			stats["sort"]++
		}
	})
	crm := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL + "/crm/"}, MaxAttempts: 2}
	c := fastClient(crm)

	var wg sync.WaitGroup
	sums := make([]model.ReplaySummary, runs)
	start := make(chan struct{})
	for i := range runs {
		st := tb.Store(sheets.Options{SpreadsheetID: stormID, Tabs: []model.TabConfig{dlConfig}, Actor: fmt.Sprintf("run%d", i),
			Retry: sheets.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}})
		tab := loadDeadLetters(t, st)
		opts := replay.RunOptions{Concurrency: 1 + rng.IntN(4), FlushEvery: 5 + i, FlushInterval: time.Hour}
		wg.Go(func() {
			<-start
			sums[i] = replay.Run(context.Background(), c, st, tab, records(tab), opts)
		})
	}
	close(start)
	wg.Wait()
	perKey := map[string]int{}
	for _, a := range rcv.Attempts() {
		if !a.Echo {
			perKey[a.Key]++
		}
	}
	for k, got := range perKey {
		if got > crm.MaxAttempts {
			t.Errorf("key %s reached the receiver %d times while %d runs overlapped: more than one run sent it", k, got, runs)
		}
	}
	for i, s := range sums {
		for _, g := range s.Held {
			stats["held by another run"] += len(g.IDs)
		}
		if s.Halted != nil || s.ExitCode() > 1 {
			t.Errorf("run %d: halted %v, exit %d", i, s.Halted, s.ExitCode())
		}
		for _, d := range s.WriteErrors {
			t.Errorf("run %d: write error %s", i, d)
		}
	}

	// The last run, quiet.
	quiet.Store(true)
	st := tb.Store(sheets.Options{SpreadsheetID: stormID, Tabs: []model.TabConfig{dlConfig}, Actor: "last"})
	tab := loadDeadLetters(t, st)
	last := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
	if last.Halted != nil || len(last.WriteErrors) > 0 || len(last.Held) > 0 {
		t.Errorf("last run: halted %v, write errors %v, held %v", last.Halted, last.WriteErrors, last.Held)
	}

	// Each payload under one key; the receiver acted once per accepted key, never on a rejected one.
	keysOf := map[string]map[string]bool{}
	for _, a := range rcv.Attempts() {
		if a.Echo {
			continue
		}
		if keysOf[string(a.Body)] == nil {
			keysOf[string(a.Body)] = map[string]bool{}
		}
		keysOf[string(a.Body)][a.Key] = true
	}
	for body, keys := range keysOf {
		if len(keys) != 1 {
			t.Errorf("payload %s sent under %d keys", body, len(keys))
		}
	}
	effects := rcv.Effects()
	cells := tb.Emu.Cells(stormID, stormTab)
	rows, _ := stormContent(cells)
	if len(rows) != n {
		t.Errorf("%d rows on the sheet, want %d", len(rows), n)
	}
	for _, r := range rows {
		fx, ok := payloads[r["payload"]]
		if !ok {
			t.Errorf("a row no one made: %v", r)
			continue
		}
		key := ownKey(fx)
		if r["key"] != key {
			t.Errorf("row %s: key cell %q, want %q", fx.payload, r["key"], key)
		}
		switch {
		case rejected[fx.payload]:
			stats["rejected"]++
			if r["status"] != "rejected" || effects[key] != 0 {
				t.Errorf("row %s (rejected): status %q, acted %d times", key, r["status"], effects[key])
			}
		default:
			if r["status"] != "delivered" || effects[key] != 1 {
				t.Errorf("row %s: status %q, acted %d times, want delivered once", key, r["status"], effects[key])
			}
		}
	}
	for _, a := range rcv.Attempts() {
		if a.Mode == receiver.DropAfterAct {
			stats["lost answer"]++
		}
	}
}

// ownKey is the key a row is sent under: its key cell's, else the one minted from it.
func ownKey(r row) string {
	if r.key != "" {
		return r.key
	}
	return r.minted()
}
