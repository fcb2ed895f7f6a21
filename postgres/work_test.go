package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// Workers running Store.WorkAll at once, each with its own store (its own connections), run
// every job exactly once, and each job ends as its function said: done, or error with the
// function's text.
func TestWorkAllConcurrentWorkersRunEachJobOnce(t *testing.T) {
	url, conn := pgDB(t)
	const jobs, workers = 200, 6
	var rows [][]string
	for i := range jobs {
		rows = append(rows, []string{fmt.Sprintf("j%03d", i), "t", "{}", "", "", "", "", "", "", "", ""})
	}
	insert(t, conn, model.RoleQueue, rows)
	fails := func(id string) bool { return id[len(id)-1] == '7' }
	var mu sync.Mutex
	ran := map[string][]string{}
	counted := 0
	var wg sync.WaitGroup
	for w := range workers {
		st := openStore(t, url, postgres.Options{Tabs: tabs()})
		name := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			n, err := st.WorkAll(t.Context(), name, func(_ context.Context, job postgres.Job) error {
				mu.Lock()
				ran[job.ID] = append(ran[job.ID], name)
				mu.Unlock()
				runtimeGosched() // let the others overtake this one
				if fails(job.ID) {
					return errors.New("boom " + job.ID)
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			mu.Lock()
			counted += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ran) != jobs || counted != jobs {
		t.Fatalf("%d jobs ran (WorkAll counted %d), want %d", len(ran), counted, jobs)
	}
	for id, by := range ran {
		if len(by) != 1 {
			t.Errorf("%s ran %d times: %v", id, len(by), by)
		}
	}
	r, err := conn.Query(t.Context(), "SELECT id, status, lasterror, claimedby FROM jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var id, status, lastErr, by string
		if err := r.Scan(&id, &status, &lastErr, &by); err != nil {
			t.Fatal(err)
		}
		want, wantErr := "done", ""
		if fails(id) {
			want, wantErr = "error", "boom "+id
		}
		if status != want || lastErr != wantErr || by != ran[id][0] {
			t.Errorf("%s: status %q error %q by %q; ran by %v", id, status, lastErr, by, ran[id])
		}
	}
}

// A job whose claim is requeued as stale while its worker works on it, and taken and finished
// by another worker meanwhile, is not finished by the old worker: its Work says ErrClaimLost,
// the row keeps the new worker's result, and WorkAll carries on with the next job.
func TestWorkLostClaimIsNotFinishedByTheOldWorker(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleQueue, [][]string{
		{"j", "t", "{}", "pending", "", "", "", "", "", "", ""},
		{"k", "t", "{}", "pending", "", "", "", "", "", "", ""},
		{"l", "t", "{}", "pending", "", "", "", "", "", "", ""},
	})
	var clkMu sync.Mutex
	clk := now
	clock := func() time.Time { clkMu.Lock(); defer clkMu.Unlock(); return clk }
	open := func() *postgres.Store {
		st := openStore(t, url, postgres.Options{Tabs: tabs(), Now: clock})
		return st
	}
	old, other := open(), open()
	// stall is the old worker's function on jobs j and k: it stalls past the threshold, its
	// claim is requeued, and another worker takes the job and finishes it before the old one
	// is back with its own (different) result.
	stall := func(ctx context.Context, job postgres.Job) error {
		if job.ID == "l" {
			return nil
		}
		clkMu.Lock()
		clk = clk.Add(31 * time.Minute)
		clkMu.Unlock()
		if back, err := other.RequeueStale(ctx, 30*time.Minute); err != nil || len(back) != 1 || back[0].ID != job.ID || back[0].ClaimedBy != "old" {
			t.Errorf("requeue %s: %+v %v", job.ID, back, err)
		}
		ran, err := other.Work(ctx, "new", func(_ context.Context, again postgres.Job) error {
			if again.ID != job.ID || again.Attempts != 2 {
				t.Errorf("the new worker took %+v, want %s's second attempt", again, job.ID)
			}
			return nil
		})
		if !ran || err != nil {
			t.Errorf("the new worker: ran %v, %v", ran, err)
		}
		return errors.New("the old worker's late result")
	}
	ran, err := old.Work(t.Context(), "old", stall)
	if !ran || !errors.Is(err, postgres.ErrClaimLost) {
		t.Fatalf("the old worker's Work: ran %v, %v; want ErrClaimLost", ran, err)
	}
	n, err := old.WorkAll(t.Context(), "old", stall)
	if n != 2 || err != nil {
		t.Fatalf("WorkAll ran %d jobs: %v; want 2 (k lost, l done)", n, err)
	}
	for id, want := range map[string][3]string{
		"j": {"done", "", "new"},
		"k": {"done", "", "new"},
		"l": {"done", "", "old"},
	} {
		var status, lastErr, by string
		if err := conn.QueryRow(t.Context(), "SELECT status, lasterror, claimedby FROM jobs WHERE id = $1", id).Scan(&status, &lastErr, &by); err != nil {
			t.Fatal(err)
		}
		if status != want[0] || lastErr != want[1] || by != want[2] {
			t.Errorf("%s: status %q error %q by %q, want %v", id, status, lastErr, by, want)
		}
	}
}
