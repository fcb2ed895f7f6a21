package postgres_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// Several workers, each with its own store (its own connections), claim and finish jobs at
// once, in a random interleaving: every job runs exactly once, ends done or error as its
// worker said, and no claim is lost or shared.
func TestClaimConcurrentWorkersRunEachJobOnce(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	url, conn := pgDB(t)
	const jobs, workers = 300, 6
	var rows [][]string
	for i := range jobs {
		rows = append(rows, []string{fmt.Sprintf("j%03d", i), "t", "{}", "pending", "", "", "", "", "0", "", ""})
	}
	insert(t, conn, model.RoleQueue, rows)
	fail := map[string]bool{}
	for _, r := range rows {
		fail[r[0]] = rng.IntN(4) == 0
	}
	var mu sync.Mutex
	ran := map[string][]string{}
	var wg sync.WaitGroup
	var errs []error
	fail1 := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for w := range workers {
		st := openStore(t, url, postgres.Options{Tabs: tabs()})
		name := fmt.Sprintf("w%d", w)
		wrng := rand.New(rand.NewPCG(seed, uint64(w+1)))
		wg.Go(func() {
			for {
				job, ok, err := st.Claim(t.Context(), name)
				if err != nil {
					fail1(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				ran[job.ID] = append(ran[job.ID], name)
				mu.Unlock()
				if job.Attempts != 1 {
					fail1(fmt.Errorf("%s claimed with attempts %d", job.ID, job.Attempts))
				}
				var workErr error
				if fail[job.ID] {
					workErr = errors.New("boom")
				}
				// A random pause of this goroutine lets the others overtake it.
				for range wrng.IntN(3) {
					runtimeGosched()
				}
				if err := st.Finish(t.Context(), name, job, workErr); err != nil {
					fail1(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(ran) != jobs {
		t.Fatalf("%d jobs ran, want %d", len(ran), jobs)
	}
	for id, by := range ran {
		if len(by) != 1 {
			t.Errorf("%s ran %d times: %v", id, len(by), by)
		}
	}
	r, err := conn.Query(t.Context(), "SELECT id, status, lasterror, claimedby, attempts FROM jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var id, status, lastErr, by, attempts string
		if err := r.Scan(&id, &status, &lastErr, &by, &attempts); err != nil {
			t.Fatal(err)
		}
		want, wantErr := "done", ""
		if fail[id] {
			want, wantErr = "error", "boom"
		}
		if status != want || lastErr != wantErr || by != ran[id][0] || attempts != "1" {
			t.Errorf("%s: status %q error %q by %q attempts %q; ran by %v", id, status, lastErr, by, attempts, ran[id])
		}
	}
}

// RequeueStale is one statement: a claim older than the threshold goes back to pending, its
// claim released; the worker that held it can no longer finish it (ErrClaimLost), and the next
// claim counts a second attempt. A fresh claim stays.
func TestRequeueStaleAndTheLostClaim(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleQueue, [][]string{
		{"a", "t", "{}", "pending", "", "", "", "", "", "", ""},
		{"b", "t", "{}", "pending", "", "", "", "", "", "", ""},
	})
	clk := now
	st := openStore(t, url, postgres.Options{Tabs: tabs(), Now: func() time.Time { return clk }})
	a, ok, err := st.Claim(t.Context(), "slow")
	if err != nil || !ok || a.ID != "a" {
		t.Fatal(a, ok, err)
	}
	clk = clk.Add(20 * time.Minute)
	b, ok, err := st.Claim(t.Context(), "quick")
	if err != nil || !ok || b.ID != "b" {
		t.Fatal(b, ok, err)
	}
	clk = clk.Add(15 * time.Minute) // a: 35 minutes old, b: 15
	back, err := st.RequeueStale(t.Context(), 30*time.Minute)
	if err != nil || len(back) != 1 || back[0].ID != "a" || back[0].ClaimedBy != "slow" || back[0].Age != 35*time.Minute {
		t.Fatalf("requeued %+v: %v", back, err)
	}
	if err := st.Finish(t.Context(), "slow", a, nil); !errors.Is(err, postgres.ErrClaimLost) {
		t.Fatalf("finish a lost claim: %v", err)
	}
	again, ok, err := st.Claim(t.Context(), "other")
	if err != nil || !ok || again.ID != "a" || again.Attempts != 2 {
		t.Fatal(again, ok, err)
	}
	if err := st.Finish(t.Context(), "quick", b, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.Claim(t.Context(), "other"); ok || err != nil {
		t.Fatalf("a job left to claim: %v %v", ok, err)
	}
}
