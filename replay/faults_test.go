package replay_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// faultMix is the 1,000-row mix: by row index mod 20, 30% act then drop the connection, 10%
// act then answer a 404 page, 10% 503, 5% 429 with Retry-After: 1, the rest fine. Each fault
// hits the first attempt only.
func faultMix(rowOf func(key string) int) func(string, int) (receiver.Fault, bool) {
	return func(key string, n int) (receiver.Fault, bool) {
		if n != 1 {
			return receiver.Fault{}, false
		}
		switch i := rowOf(key) % 20; {
		case i < 6:
			return receiver.Fault{Mode: receiver.DropAfterAct}, true
		case i < 8:
			return receiver.Fault{Mode: receiver.NotFoundAfterAct}, true
		case i < 10:
			return receiver.Fault{Mode: receiver.Unavailable}, true
		case i < 11:
			return receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: "1"}, true
		}
		return receiver.Fault{}, false
	}
}

// mixRows builds n rows of source crm: a third with minted keys, the rest with key cells.
func mixRows(n int, url string) []row {
	rows := keyRows(n, "crm", url)
	for i := range rows {
		rows[i].ts = time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339)
		if i%3 == 1 {
			rows[i].key = ""
		}
	}
	return rows
}

// mixSource is the crm source of the fault mix: 404 overridden to retryable (the endpoint may
// have acted, as with Apps Script).
func mixSource(url string) *replay.Source {
	return &replay.Source{Name: "crm", URLPrefixes: []string{url}, MaxAttempts: 3, Overrides: map[string]replay.Outcome{"404": replay.Retryable}}
}

// rowKeys returns each row's effective key, and the reverse index.
func rowKeys(tab *model.Table) ([]string, map[string]int) {
	keys := make([]string, len(tab.Records))
	idx := map[string]int{}
	for i, r := range tab.Records {
		keys[i] = r.ID
		idx[r.ID] = i
	}
	return keys, idx
}

// faultMixByKey is faultMix by the row index of each key (rowKeys' idx, only read once the
// run starts), a key of no row counting as row unknown.
func faultMixByKey(idx map[string]int, unknown int) func(string, int) (receiver.Fault, bool) {
	return faultMix(func(k string) int {
		if i, ok := idx[k]; ok {
			return i
		}
		return unknown
	})
}

func TestFaultMix1000RowsExactlyOneEffectEach(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 rows over sockets")
	}
	rcv := receiver.New()
	srv := serve(t, rcv)
	rows := mixRows(1000, srv.URL+"/hook")
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	keys, idx := rowKeys(tab)
	rcv.Rule = faultMixByKey(idx, 19)
	c := fastClient(mixSource(srv.URL))
	c.Cap = time.Second // Retry-After: 1 is honoured, not deferred
	start := time.Now()
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 10})
	el := time.Since(start)
	srv.Close()
	if sum.Halted != nil || len(sum.Refused) != 0 || len(sum.NotAttempted) != 0 {
		t.Fatalf("halted %v refused %d not attempted %d", sum.Halted, len(sum.Refused), len(sum.NotAttempted))
	}
	if got := sum.Counts["delivered"] + sum.Counts["duplicate"]; got != 1000 {
		t.Fatalf("counts %v", sum.Counts)
	}
	eff := rcv.Effects()
	if len(eff) != 1000 {
		t.Errorf("%d keys acted, want 1000", len(eff))
	}
	noEffect := 0
	for _, k := range keys {
		switch eff[k] {
		case 1:
		case 0:
			noEffect++
		default:
			t.Errorf("key %s acted %d times", k, eff[k])
		}
	}
	if noEffect != 0 {
		t.Errorf("%d rows without an effect", noEffect)
	}
	attempts := 0
	for k, ats := range attemptsByKey(rcv) {
		i, ok := idx[k]
		if !ok {
			t.Errorf("request with key %q that belongs to no row", k)
			continue
		}
		for _, a := range ats {
			if string(a.Body) != rows[i].payload {
				t.Errorf("row %d: body %q, want the payload unchanged", i, a.Body)
			}
		}
		attempts += len(ats)
	}
	// 55% of rows fail their first attempt: 1,550 requests.
	if attempts != 1550 {
		t.Errorf("%d requests, want 1550", attempts)
	}
	for i := range rows {
		if s := st.rowAt(i)[model.FStatus]; s != "delivered" {
			t.Errorf("row %d status %q", i+2, s)
		}
	}
	t.Logf("1,000 rows, fault mix: %v, %d requests, %d write requests", el.Round(time.Millisecond), attempts, sum.WriteRequests)
}

// killStore is a store that dies at a moment: after kill, every write fails (a process killed
// before its final flush).
type killStore struct {
	*memStore
	dead atomic.Bool
}

func (k *killStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	if k.dead.Load() {
		return model.ApplyResult{}, errors.New("killed")
	}
	return k.memStore.Apply(ctx, edits)
}

// TestKillMidRunThenRunAgain: stop a run part way (a cancel that lets write-backs land, or a
// kill that loses them), reload and run again: every row ends delivered, exactly one effect
// per row, and every request of a row, in either run, carried the row's one key.
func TestKillMidRunThenRunAgain(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := "cancel"
		if kill {
			name = "kill"
		}
		t.Run(name, func(t *testing.T) {
			const n = 200
			rcv := receiver.New()
			rcv.Latency = 3 * time.Millisecond
			srv := serve(t, rcv)
			rows := mixRows(n, srv.URL+"/hook")
			mem := newMemStore(dlConfig, rows)
			st := &killStore{memStore: mem}
			tab := mem.table(t)
			keys, idx := rowKeys(tab)
			rcv.Rule = faultMixByKey(idx, 0)
			c := fastClient(mixSource(srv.URL))
			c.Base, c.Cap = 5*time.Millisecond, 1500*time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			sum1 := replay.Run(ctx, c, st, tab, records(tab), replay.RunOptions{Concurrency: 4, FlushEvery: 10,
				Progress: func(e model.ReplayEvent) {
					if e.Done >= n/3 && ctx.Err() == nil {
						if kill {
							st.dead.Store(true)
						}
						cancel()
					}
				}})
			if !sum1.Cancelled || len(sum1.NotAttempted) == 0 {
				t.Fatalf("first run: cancelled %v, %d not attempted", sum1.Cancelled, len(sum1.NotAttempted))
			}
			if kill != (len(sum1.WriteErrors) > 0) {
				t.Errorf("write errors %v", sum1.WriteErrors)
			}
			sent1 := attemptsByKey(rcv)

			tab2 := mem.table(t)
			keys2, _ := rowKeys(tab2)
			for i := range keys {
				if keys2[i] != keys[i] || (i%3 == 1 && tab2.Records[i].KeyOrigin != model.KeyCell) {
					t.Fatalf("row %d: key %q (%v) after the first run, was %q", i+2, keys2[i], tab2.Records[i].KeyOrigin, keys[i])
				}
			}
			sum2 := replay.Run(context.Background(), c, mem, tab2, records(tab2), replay.RunOptions{Concurrency: 4})
			if sum2.Halted != nil || len(sum2.NotAttempted) != 0 {
				t.Fatalf("second run: halted %v, not attempted %d", sum2.Halted, len(sum2.NotAttempted))
			}
			eff := rcv.Effects()
			sent := attemptsByKey(rcv)
			for i, k := range keys {
				if eff[k] != 1 {
					t.Errorf("row %d (%s): %d effects", i+2, k, eff[k])
				}
				cells := mem.rowAt(i)
				if cells[model.FStatus] != "delivered" || cells[model.FError] != "" {
					t.Errorf("row %d: status %q error %q", i+2, cells[model.FStatus], cells[model.FError])
				}
				if cells[model.FKey] != k {
					t.Errorf("row %d: key cell %q, want %q", i+2, cells[model.FKey], k)
				}
				// attempts = 1 (before) + every request this row ever got, when no
				// write-back was lost.
				if !kill {
					if want := strconv.Itoa(1 + len(sent[k])); cells[model.FAttempts] != want {
						t.Errorf("row %d: attempts %q, receiver saw %d requests", i+2, cells[model.FAttempts], len(sent[k]))
					}
					if sum1Delivered(sum1, k) && len(sent[k]) != len(sent1[k]) {
						t.Errorf("row %d was delivered in run 1 but sent again", i+2)
					}
				}
			}
			if len(sent) != n {
				t.Errorf("%d keys at the receiver, want %d (no key belonging to no row)", len(sent), n)
			}
		})
	}
}

func sum1Delivered(s model.ReplaySummary, id string) bool {
	for _, r := range s.Rows {
		if r.ID == id {
			return r.State.Success()
		}
	}
	return false
}
