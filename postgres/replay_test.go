package postgres_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// The PostgreSQL twin of the sheet store's randomised concurrency test: several triage
// processes (stores of their own, each with its own connections) replay the same dead
// letters at once, while workers claim and finish jobs and people set inbox statuses, the
// receiver losing some first answers after acting (the connection dropped) or answering 503.
// A last replay, as an ops engineer would run after a halt, sends what is left. Then: every
// call acted once at the receiver, no payload was sent under two keys, every row ends
// delivered with the key the receiver saw, every job ran once, and no status write was lost.
// TRIAGE_PG_CONCURRENCY_CASES sets the number of cases, TRIAGE_PG_CONCURRENCY_SEED reruns one.
func TestReplayersAndWorkersAtOnce(t *testing.T) {
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(6, 2, "TRIAGE_PG_CONCURRENCY_CASES"), 19, "TRIAGE_PG_CONCURRENCY_SEED") {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			for k, n := range replayersAndWorkersCase(t, seed, rng) {
				counts[k] += n
			}
		})
	}
	testbed.Exercised(t, counts, "lost answer", "503", "minted key", "held by another run")
}

// replayersAndWorkersCase is one case of TestReplayersAndWorkersAtOnce; it returns what it
// exercised.
func replayersAndWorkersCase(t *testing.T, seed int, rng *rand.Rand) map[string]int {
	exercised := map[string]int{}
	letters, jobs := 20+rng.IntN(60), 20+rng.IntN(60)
	replayers, workers, people := 2+rng.IntN(3), 2+rng.IntN(3), 1+rng.IntN(3)
	dropPct, busyPct := rng.IntN(20), rng.IntN(15)
	rcv := receiver.New()
	var faultMu sync.Mutex
	fault := map[string]receiver.Mode{} // the keys whose first answer was a fault
	// A key's first answer is decided by the key and the seed alone, whatever order the
	// processes' requests arrive in: a seed reruns the same faults.
	var faultsOff atomic.Bool // the last replay's: no faults
	rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
		if n != 1 || faultsOff.Load() {
			return receiver.Fault{}, false
		}
		h := fnv.New64a()
		fmt.Fprint(h, seed, key)
		p := int(h.Sum64() % 100)
		var m receiver.Mode
		switch {
		case p < dropPct:
			m = receiver.DropAfterAct
		case p < dropPct+busyPct:
			m = receiver.Unavailable
		default:
			return receiver.Fault{}, false
		}
		faultMu.Lock()
		fault[key] = m
		faultMu.Unlock()
		return receiver.Fault{Mode: m}, true
	}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	url, conn := pgDB(t)
	var dl [][]string
	for i := range letters {
		key := fmt.Sprintf("k%02d", i)
		if rng.IntN(3) == 0 {
			key = "" // minted: saved before the first send
			exercised["minted key"]++
		}
		dl = append(dl, []string{fmt.Sprintf("2026-02-02T09:%02d:%02dZ", i/60, i%60), "crm", srv.URL + "/hook", fmt.Sprintf(`{"n":%d}`, i), "", "1", "POST", key, "dead", "", "", ""})
	}
	insert(t, conn, model.RoleDeadLetter, dl)
	var jr [][]string
	for i := range jobs {
		jr = append(jr, []string{fmt.Sprintf("j%02d", i), "t", "{}", "pending", "", "", "", "", "", "", ""})
	}
	insert(t, conn, model.RoleQueue, jr)
	insert(t, conn, model.RoleInbox, seed0Inbox())

	open := func() *postgres.Store {
		st := openStore(t, url, postgres.Options{Tabs: tabs()})
		return st
	}
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2}
	replayOnce := func(st *postgres.Store, conc int) model.ReplaySummary {
		wb, err := st.Load(t.Context())
		if err != nil {
			t.Error(err)
			return model.ReplaySummary{}
		}
		tab := wb.Tab(model.RoleDeadLetter)
		recs := make([]*model.Record, len(tab.Records))
		for i := range tab.Records {
			recs[i] = &tab.Records[i]
		}
		c := &replay.Client{Sources: map[string]*replay.Source{"crm": src}, Base: time.Millisecond, Cap: 5 * time.Millisecond, Getenv: func(string) string { return "" }}
		return replay.Run(context.Background(), c, st, tab, recs, replay.RunOptions{Concurrency: conc})
	}
	var wg sync.WaitGroup
	sums := make([]model.ReplaySummary, replayers)
	for p := range sums {
		st, conc := open(), 1+rng.IntN(6)
		wg.Go(func() { sums[p] = replayOnce(st, conc) })
	}
	var mu sync.Mutex
	ran := map[string]int{}
	for w := range workers {
		st := open()
		wg.Go(func() {
			for {
				job, ok, err := st.Claim(t.Context(), fmt.Sprint("w", w))
				if err != nil || !ok {
					if err != nil {
						t.Error(err)
					}
					return
				}
				mu.Lock()
				ran[job.ID]++
				mu.Unlock()
				if err := st.Finish(t.Context(), fmt.Sprint("w", w), job, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	// People set statuses: each row by one person, so every write must land.
	inbox := []string{"m1", "m2", "m3"}
	for p := range people {
		person := open()
		wg.Go(func() {
			for i, id := range inbox {
				if i%people != p {
					continue
				}
				res, err := person.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: id,
					Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
				if err != nil || len(res.Applied) != 1 {
					t.Errorf("%s: %+v %v", id, res, err)
				}
			}
		})
	}
	wg.Wait()
	// One runner per row: while the replayers ran at once, each key was sent by one of them
	// only (a lease per row), so it reached the receiver at most as often as one run tries.
	perKey := map[string]int{}
	for _, a := range rcv.Attempts() {
		perKey[a.Key]++
	}
	for k, n := range perKey {
		if n > src.MaxAttempts {
			t.Errorf("key %s reached the receiver %d times while %d replayers ran: more than one run (of %d tries each) sent it", k, n, replayers, src.MaxAttempts)
		}
	}
	held := 0
	for _, s := range sums {
		for _, g := range s.Held {
			held += len(g.IDs)
		}
	}
	exercised["held by another run"] += held
	// The rerun after a halt: no faults now, what is still dead goes.
	faultsOff.Store(true)
	last := replayOnce(open(), 4)
	if last.Halted != nil {
		t.Fatalf("the last replay halted: %v", last.Halted)
	}
	faultMu.Lock()
	defer faultMu.Unlock()
	for _, m := range fault {
		if m == receiver.DropAfterAct {
			exercised["lost answer"]++
		} else {
			exercised["503"]++
		}
	}

	// Every call acted once, each payload under one key only.
	keysOf := map[string]map[string]bool{}
	for _, a := range rcv.Attempts() {
		if keysOf[string(a.Body)] == nil {
			keysOf[string(a.Body)] = map[string]bool{}
		}
		keysOf[string(a.Body)][a.Key] = true
	}
	if len(keysOf) != letters {
		t.Errorf("%d payloads reached the receiver, want %d", len(keysOf), letters)
	}
	for body, keys := range keysOf {
		if len(keys) != 1 {
			t.Errorf("payload %s sent under %d keys: %v", body, len(keys), keys)
		}
	}
	for k, n := range rcv.Effects() {
		if n != 1 {
			t.Errorf("key %s acted %d times", k, n)
		}
	}
	// Every row delivered, its key saved: the one the receiver saw.
	wb, err := open().Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	if len(tab.Records) != 0 {
		t.Errorf("%d calls still open after every run (the open work excludes delivered)", len(tab.Records))
		for _, r := range tab.Records {
			t.Logf("row %d: %s %q", r.Row, r.Status, tab.Get(&r, model.FError))
		}
	}
	rows, err := conn.Query(t.Context(), "SELECT payload, key FROM failed_calls WHERE status = 'delivered'")
	if err != nil {
		t.Fatal(err)
	}
	saved := 0
	for rows.Next() {
		var payload, key string
		if err := rows.Scan(&payload, &key); err != nil {
			t.Fatal(err)
		}
		saved++
		if !keysOf[payload][key] {
			t.Errorf("payload %s delivered with key %q saved, but the receiver saw %v", payload, key, keysOf[payload])
		}
	}
	if saved != letters {
		t.Errorf("%d rows delivered, want %d", saved, letters)
	}
	if len(ran) != jobs {
		t.Errorf("%d jobs ran, want %d", len(ran), jobs)
	}
	for id, n := range ran {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	var done int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM inbox WHERE id IN ('m1', 'm2', 'm3') AND status = 'done' AND triaged_at <> ''").Scan(&done); err != nil {
		t.Fatal(err)
	}
	if done != len(inbox) {
		t.Errorf("%d status writes landed, want %d", done, len(inbox))
	}
	if t.Failed() {
		t.Logf("seed %d: %d letters, %d jobs, %d replayers, %d workers, %d people, drop %d%%, 503 %d%%", seed, letters, jobs, replayers, workers, people, dropPct, busyPct)
	}
	return exercised
}

// The store is a producer's dead-letter sink, and the replay runner's store.
var (
	_ replay.DeadLetterSink = (*postgres.Store)(nil)
	_ replay.Store          = (*postgres.Store)(nil)
)

// A producer dead-letters into the database with the key it sent; a call handed over twice
// (its first answer lost) is one row; a replay from the database then delivers it under that
// key, and the receiver acts once.
func TestProducerDeadLettersThenReplayDelivers(t *testing.T) {
	rcv := receiver.New()
	rcv.Default = receiver.Fault{Mode: receiver.Unavailable}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	url, _ := pgDB(t)
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2}
	c := &replay.Client{Sources: map[string]*replay.Source{"crm": src}, Base: time.Millisecond, Cap: 5 * time.Millisecond, Getenv: func(string) string { return "" }}
	p := &replay.Producer{Client: c, Sink: st}
	sent := p.Send(t.Context(), replay.Call{Key: "order-7", Source: "crm", URL: srv.URL + "/hook", Body: []byte(`{"order":7}`)})
	if !sent.DeadLettered || sent.Err != nil {
		t.Fatalf("sent %+v", sent)
	}
	// The same letter again, as a producer that never heard the sink's answer would.
	if err := st.DeadLetter(t.Context(), []model.DeadLetter{{Source: "crm", URL: srv.URL + "/hook", Payload: `{"order":7}`, Key: "order-7"}}); err != nil {
		t.Fatal(err)
	}
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	if len(tab.Records) != 1 || tab.Records[0].ID != "order-7" || tab.Get(&tab.Records[0], model.FAttempts) != "2" {
		t.Fatalf("dead letters: %+v", tab.Records)
	}
	rcv.Default = receiver.Fault{}
	sum := replay.Run(t.Context(), c, st, tab, []*model.Record{&tab.Records[0]}, replay.RunOptions{})
	if sum.Counts[model.StateDelivered] != 1 {
		t.Fatalf("replay: %+v", sum.Counts)
	}
	if n := rcv.Effects()["order-7"]; n != 1 {
		t.Fatalf("order-7 acted %d times", n)
	}
}

// seed0Inbox is three new messages for the people of TestReplayersAndWorkersAtOnce.
func seed0Inbox() [][]string {
	return [][]string{
		{"2026-02-01T09:00:00Z", "Ada", "ada@example.com", "hello", "new", "m1", "", ""},
		{"2026-02-01T10:00:00Z", "Bo", "bo@example.com", "=1+1", "new", "m2", "", ""},
		{"2026-02-01T11:00:00Z", "Cy", "cy@example.com", "bye", "new", "m3", "", ""},
	}
}
