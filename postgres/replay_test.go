package postgres_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// The PostgreSQL twin of the sheet store's randomised concurrency test: two triage processes
// (two stores, their own connections) replay the same dead letters at once, while workers
// claim and finish jobs and a person sets inbox statuses. Every call acts once at the
// receiver, no payload is sent under two keys, every row ends delivered with its key saved,
// every job runs once, and no status write is lost.
func TestReplayersAndWorkersAtOnce(t *testing.T) {
	rcv := receiver.New()
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	url, conn := pgDB(t)
	const letters, jobs = 60, 60
	var dl [][]string
	for i := range letters {
		key := fmt.Sprintf("k%02d", i)
		if i%3 == 0 {
			key = "" // minted: saved before the first send
		}
		dl = append(dl, []string{fmt.Sprintf("2026-02-02T09:%02d:00Z", i), "crm", srv.URL + "/hook", fmt.Sprintf(`{"n":%d}`, i), "", "1", "POST", key, "dead", "", "", ""})
	}
	insert(t, conn, model.RoleDeadLetter, dl)
	var jr [][]string
	for i := range jobs {
		jr = append(jr, []string{fmt.Sprintf("j%02d", i), "t", "{}", "pending", "", "", "", "", "", "", ""})
	}
	insert(t, conn, model.RoleQueue, jr)
	insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])

	open := func() *postgres.Store {
		st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2}
	var wg sync.WaitGroup
	sums := make([]model.ReplaySummary, 2)
	for p := range sums {
		st := open()
		wg.Go(func() {
			wb, err := st.Load(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			tab := wb.Tab(model.RoleDeadLetter)
			recs := make([]*model.Record, len(tab.Records))
			for i := range tab.Records {
				recs[i] = &tab.Records[i]
			}
			c := &replay.Client{Sources: map[string]*replay.Source{"crm": src}, Base: time.Millisecond, Cap: 5 * time.Millisecond, Getenv: func(string) string { return "" }}
			sums[p] = replay.Run(context.Background(), c, st, tab, recs, replay.RunOptions{Concurrency: 4})
		})
	}
	var mu sync.Mutex
	ran := map[string]int{}
	for w := range 3 {
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
	person := open()
	wg.Go(func() {
		for _, id := range []string{"m1", "m2"} {
			res, err := person.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: id,
				Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
			if err != nil || len(res.Applied) != 1 {
				t.Errorf("%s: %+v %v", id, res, err)
			}
		}
	})
	wg.Wait()

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
		t.Errorf("%d calls still open after both runs (the open work excludes delivered)", len(tab.Records))
		for _, r := range tab.Records {
			t.Logf("row %d: %s %q", r.Row, r.Status, tab.Get(&r, model.FError))
		}
	}
	var saved int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM failed_calls WHERE status = 'delivered' AND key IS NOT NULL").Scan(&saved); err != nil {
		t.Fatal(err)
	}
	if saved != letters {
		t.Errorf("%d rows delivered with their key, want %d", saved, letters)
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
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM inbox WHERE id IN ('m1', 'm2') AND status = 'done' AND triaged_at <> ''").Scan(&done); err != nil {
		t.Fatal(err)
	}
	if done != 2 {
		t.Errorf("%d status writes landed, want 2", done)
	}
	for p, s := range sums {
		t.Logf("process %d: %v, %d write requests, %d write conflicts", p, s.Counts, s.WriteRequests, len(s.WriteConflicts))
	}
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
	st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
