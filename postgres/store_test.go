package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// By default Load returns the open work: no delivered or discarded call, no done job, no
// done or spam message; History returns every row.
func TestLoadOpenWorkByDefault(t *testing.T) {
	url, conn := pgDB(t)
	for _, r := range model.Roles {
		insert(t, conn, r, seed()[r])
	}
	insert(t, conn, model.RoleInbox, [][]string{{"", "", "", "", "Done", "m4", "", ""}, {"", "", "", "", "spam", "m5", "", ""}})
	insert(t, conn, model.RoleDeadLetter, [][]string{{"", "s", "u", "{}", "", "", "", "k7", "delivered", "", "", ""}, {"", "s", "u", "{}", "", "", "", "k8", " discarded", "", "", ""}})
	insert(t, conn, model.RoleQueue, [][]string{{"j9", "", "", "done", "", "", "", "", "", "", ""}})
	for _, history := range []bool{false, true} {
		st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs(), History: history})
		if err != nil {
			t.Fatal(err)
		}
		wb, err := st.Load(t.Context())
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range model.Roles {
			n := len(seed()[r])
			if history {
				n += map[model.Role]int{model.RoleInbox: 2, model.RoleDeadLetter: 2, model.RoleQueue: 1}[r]
			}
			if got := len(wb.Tab(r).Records); got != n {
				t.Errorf("history %v: %s has %d records, want %d", history, r, got, n)
			}
		}
	}
}

// The sink is INSERT … ON CONFLICT (key) DO NOTHING: a producer that hands a call over again
// (its first answer lost) leaves one row, whose state (a replay may have moved it on) stays.
func TestDeadLetterTwiceIsOneRow(t *testing.T) {
	b := pgBackend(t, false)
	l := model.DeadLetter{Source: "stripe", URL: "https://example.com/hook", Payload: `{"n":1}`, Key: "k1", Error: "again"}
	if err := b.store.DeadLetter(t.Context(), []model.DeadLetter{l, {Source: "s", URL: "https://x", Payload: "{}", Key: "new"}}); err != nil {
		t.Fatal(err)
	}
	wb, err := b.store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	if len(dl.Records) != 4 {
		t.Fatalf("%d rows, want 4 (3 seeded, 1 new)", len(dl.Records))
	}
	if row := b.row(t, model.RoleDeadLetter, "k1"); row[model.FError] != "500" {
		t.Fatalf("the recorded call changed: %v", row)
	}
	for _, r := range dl.Records {
		if len(r.Problems) > 0 {
			t.Errorf("row %d: %v", r.Row, r.Problems)
		}
	}
}

// dropper is a dialer whose connections drop when the client sends COMMIT: before sending it
// (the transaction never commits) or after (it commits; the answer is lost). Only the first
// COMMIT is dropped.
type dropper struct {
	after bool
	fired atomic.Bool
}

func (d *dropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, d: d}, nil
}

type dropConn struct {
	net.Conn
	d       *dropper
	dropped atomic.Bool
}

func (c *dropConn) Write(p []byte) (int, error) {
	if len(p) > 0 && p[0] == 'Q' && bytes.Contains(bytes.ToLower(p), []byte("commit")) && c.d.fired.CompareAndSwap(false, true) {
		c.dropped.Store(true)
		if c.d.after {
			n, err := c.Conn.Write(p)
			c.Conn.Close()
			if err != nil {
				return n, err
			}
			return n, nil
		}
		c.Conn.Close()
		return 0, errors.New("connection dropped before COMMIT was sent")
	}
	return c.Conn.Write(p)
}

func (c *dropConn) Read(p []byte) (int, error) {
	if c.dropped.Load() {
		return 0, errors.New("connection dropped: the answer is lost")
	}
	return c.Conn.Read(p)
}

// Invariant 1: a write whose answer is lost is settled, never guessed: one that committed is
// reported applied (and is in the table); one that didn't is an error (and is not).
func TestLostCommitAnswerIsSettled(t *testing.T) {
	for _, after := range []bool{true, false} {
		name := map[bool]string{true: "committed", false: "never sent"}[after]
		t.Run(name, func(t *testing.T) {
			url, conn := pgDB(t)
			insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])
			d := &dropper{after: after}
			st, err := postgres.OpenDialing(t.Context(), url, postgres.Options{Tabs: tabs()}, d.dial)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			res, err := st.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m1",
				Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
			if !d.fired.Load() {
				t.Fatal("the commit was not dropped")
			}
			var status string
			if err := conn.QueryRow(t.Context(), "SELECT status FROM inbox WHERE id = 'm1'").Scan(&status); err != nil {
				t.Fatal(err)
			}
			if after {
				if err != nil || len(res.Applied) != 1 || status != "done" {
					t.Fatalf("committed write: %+v, %v, status %q", res, err, status)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "nothing was written (checked)") || len(res.Applied) != 0 || status != "new" {
				t.Fatalf("lost write: %+v, %v, status %q", res, err, status)
			}
		})
	}
}

// A load tells the context's progress func how far it is: every thousand rows, then the
// tab's total.
func TestLoadReportsProgress(t *testing.T) {
	url, conn := pgDB(t)
	var rows [][]string
	for i := range 2500 {
		rows = append(rows, []string{"", "", "", "", "new", fmt.Sprint("m", i), "", ""})
	}
	insert(t, conn, model.RoleInbox, rows)
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	var got []string
	ctx := model.WithLoadProgress(t.Context(), func(tab string, rows, total int) {
		got = append(got, fmt.Sprint(tab, " ", rows, "/", total))
	})
	if _, err := st.Load(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"Inbox 1000/0", "Inbox 2000/0", "Inbox 2500/2500", "failed_calls 0/0", "Jobs 0/0"}
	if !slices.Equal(got, want) {
		t.Fatalf("reported %q, want %q", got, want)
	}
}

// Two writers locking two rows in opposite orders deadlock; the server rolls one back whole,
// and that Apply runs again instead of failing: each edit ends applied or an exact conflict,
// and neither caller sees an error.
func TestDeadlockVictimRunsAgain(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])
	a := openStore(t, url, postgres.Options{Tabs: tabs(), Actor: "a"})
	b := openStore(t, url, postgres.Options{Tabs: tabs(), Actor: "b"})
	edit := func(id, to string) model.Edit {
		return model.Edit{Tab: "Inbox", ID: id, Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: to}}
	}
	type answer struct {
		res model.ApplyResult
		err error
	}
	bDone := make(chan answer, 1)
	writes := 0
	a.SetBeforeWrite(func() {
		writes++
		if writes != 2 {
			return
		}
		// a holds m1's lock; b takes m2's, then waits for m1.
		go func() {
			res, err := b.Apply(t.Context(), []model.Edit{edit("m2", "spam"), edit("m1", "spam")})
			bDone <- answer{res, err}
		}()
		for {
			var waiting int
			if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").Scan(&waiting); err != nil {
				t.Error(err)
				return
			}
			if waiting > 0 {
				return // now a asks for m2: a deadlock
			}
			runtime.Gosched()
		}
	})
	resA, errA := a.Apply(t.Context(), []model.Edit{edit("m1", "done"), edit("m2", "done")})
	ansB := <-bDone
	if errA != nil || ansB.err != nil {
		t.Fatalf("a: %v; b: %v", errA, ansB.err)
	}
	for _, r := range []model.ApplyResult{resA, ansB.res} {
		if len(r.Applied)+len(r.Conflicts) != 2 || len(r.Missing) != 0 {
			t.Fatalf("result %+v", r)
		}
	}
	if len(resA.Applied)+len(ansB.res.Applied) != 2 {
		t.Fatalf("%d and %d applied: each row is written once", len(resA.Applied), len(ansB.res.Applied))
	}
	// Whoever won m1 and m2, each row holds its winner's status and stamp.
	for _, id := range []string{"m1", "m2"} {
		var status, by string
		if err := conn.QueryRow(t.Context(), "SELECT status, triaged_by FROM inbox WHERE id = $1", id).Scan(&status, &by); err != nil {
			t.Fatal(err)
		}
		if (status != "done" || by != "a") && (status != "spam" || by != "b") {
			t.Errorf("%s: %s by %s", id, status, by)
		}
	}
}
