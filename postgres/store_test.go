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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	b := pgBackend(t)
	l := model.DeadLetter{Source: "stripe", URL: "https://example.com/hook", Payload: `{"n":1}`, Key: "k1", Error: "again"}
	if err := b.Store.DeadLetter(t.Context(), []model.DeadLetter{l, {Source: "s", URL: "https://x", Payload: "{}", Key: "new"}}); err != nil {
		t.Fatal(err)
	}
	wb, err := b.Store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	if len(dl.Records) != 4 {
		t.Fatalf("%d rows, want 4 (3 seeded, 1 new)", len(dl.Records))
	}
	if row := b.Row(t, model.RoleDeadLetter, "k1"); row[model.FError] != "500" {
		t.Fatalf("the recorded call changed: %v", row)
	}
	for _, r := range dl.Records {
		if len(r.Problems) > 0 {
			t.Errorf("row %d: %v", r.Row, r.Problems)
		}
	}
}

// A producer may hand over many calls at once: 10,000 in one DeadLetter (a VALUES list of 9
// parameters a letter would pass the protocol's 65,535 at 7,282) are one statement, recorded
// in the order given; a key given twice is one row, a letter without a key gets none, and a
// NUL in a payload comes back as it went in.
func TestDeadLetterOfTenThousand(t *testing.T) {
	b := pgBackend(t)
	var letters []model.DeadLetter
	for i := range 10_000 {
		letters = append(letters, model.DeadLetter{Source: "crm", URL: "https://example.com/hook", Payload: fmt.Sprintf(`{"n":%d}`, i), Key: fmt.Sprintf("c%d", i), Error: "503"})
	}
	letters[5].Key = "c4"
	letters[6].Key = ""
	letters[7].Payload = "{\"note\":\"a\x00b\"}"
	if err := b.Store.DeadLetter(t.Context(), letters); err != nil {
		t.Fatal(err)
	}
	wb, err := b.Store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	if len(dl.Records) != 3+9_999 {
		t.Fatalf("%d rows, want 3 seeded and 9,999 (c4 twice is one)", len(dl.Records))
	}
	got := dl.Records[3:]
	if dl.Get(&got[0], model.FKey) != "c0" || dl.Get(&got[9_998], model.FKey) != "c9999" {
		t.Fatalf("not in the order given: first %q, last %q", dl.Get(&got[0], model.FKey), dl.Get(&got[9_998], model.FKey))
	}
	if k := dl.Get(&got[5], model.FKey); k != "" || dl.Get(&got[5], model.FPayload) != `{"n":6}` {
		t.Fatalf("the letter without a key: key %q, payload %q", k, dl.Get(&got[5], model.FPayload))
	}
	if p := dl.Get(&got[6], model.FPayload); p != letters[7].Payload {
		t.Fatalf("payload with a NUL: %q", p)
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

// A script locking two rows in the other order than an Apply's deadlocks with it; the server
// rolls one back whole. When that is the Apply's transaction, it runs again instead of failing:
// each edit ends applied or an exact conflict, the caller sees no error, and each row holds
// one writer's whole change.
func TestDeadlockVictimRunsAgain(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])
	begins := &counter{match: "begin"}
	a := openTracedStore(t, url, postgres.Options{Tabs: tabs(), Actor: "a"}, begins)
	script, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer script.Close(context.Background())
	edit := func(id string) model.Edit {
		return model.Edit{Tab: "Inbox", ID: id, Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}
	}
	scriptDone := make(chan error, 1)
	once := false
	a.SetBeforeWrite(func() {
		if once {
			return
		}
		once = true
		// The script holds m2; the Apply's write locks m1, then waits for m2; the script then
		// asks for m1: a deadlock.
		if _, err := script.Exec(t.Context(), "BEGIN; UPDATE inbox SET status = 'spam', triaged_by = 'script' WHERE id = 'm2'"); err != nil {
			t.Error(err)
			return
		}
		go func() {
			for {
				var waiting int
				if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").Scan(&waiting); err != nil {
					scriptDone <- err
					return
				}
				if waiting > 0 {
					break
				}
				runtime.Gosched()
			}
			_, err := script.Exec(t.Context(), "UPDATE inbox SET status = 'spam', triaged_by = 'script' WHERE id = 'm1'")
			if err != nil {
				_, _ = script.Exec(context.Background(), "ROLLBACK")
				scriptDone <- err
				return
			}
			_, err = script.Exec(t.Context(), "COMMIT")
			scriptDone <- err
		}()
	})
	res, errA := a.Apply(t.Context(), []model.Edit{edit("m1"), edit("m2")})
	errScript := <-scriptDone
	if errA != nil {
		t.Fatalf("the Apply failed: %v", errA)
	}
	var pgErr *pgconn.PgError
	scriptVictim := errors.As(errScript, &pgErr) && pgErr.Code == "40P01"
	if errScript != nil && !scriptVictim {
		t.Fatal(errScript)
	}
	// One of the two was the deadlock's victim: the script (its error), or the Apply (run again).
	if applyVictim := begins.n.Load() > 1; applyVictim == scriptVictim {
		t.Fatalf("no deadlock, or both rolled back: the Apply began %d transactions, the script: %v", begins.n.Load(), errScript)
	}
	if len(res.Applied)+len(res.Conflicts) != 2 || len(res.Missing) != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, id := range []string{"m1", "m2"} {
		var status, by string
		if err := conn.QueryRow(t.Context(), "SELECT status, triaged_by FROM inbox WHERE id = $1", id).Scan(&status, &by); err != nil {
			t.Fatal(err)
		}
		if (status != "done" || by != "a") && (status != "spam" || by != "script") {
			t.Errorf("%s: %s by %s", id, status, by)
		}
	}
}

// Two triage writers editing the same rows, their edits in opposite orders, never deadlock:
// every write locks its rows in one order (table, then primary key). Each Apply is one
// transaction (none rolled back and run again), each row written by one of them.
func TestOppositeOrdersDontDeadlock(t *testing.T) {
	url, conn := pgDB(t)
	var rows [][]string
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("m%02d", i)
		ids = append(ids, id)
		rows = append(rows, []string{"2026-03-01T10:00:00Z", "N", "n@example.com", "hi", "new", id, "", ""})
	}
	insert(t, conn, model.RoleInbox, rows)
	begins := &counter{match: "begin"}
	stores := []*postgres.Store{
		openTracedStore(t, url, postgres.Options{Tabs: tabs(), Actor: "a"}, begins),
		openTracedStore(t, url, postgres.Options{Tabs: tabs(), Actor: "b"}, begins),
	}
	const rounds = 20
	errs := make(chan error, 2*rounds)
	applied := atomic.Int64{}
	for round := range rounds {
		done := make(chan struct{}, 2)
		for w, st := range stores {
			order := slices.Clone(ids)
			if w == 1 {
				slices.Reverse(order)
			}
			go func() {
				defer func() { done <- struct{}{} }()
				edits := make([]model.Edit, len(order))
				for i, id := range order {
					edits[i] = model.Edit{Tab: "Inbox", ID: id, Set: map[model.Field]string{model.FStatus: fmt.Sprintf("r%d-%d", round, w)}}
				}
				res, err := st.Apply(t.Context(), edits)
				if err != nil {
					errs <- err
					return
				}
				if len(res.Applied) != len(ids) {
					errs <- fmt.Errorf("round %d writer %d: %+v", round, w, res)
				}
				applied.Add(int64(len(res.Applied)))
			}()
		}
		<-done
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := begins.n.Load(); n != 2*rounds {
		t.Errorf("%d transactions for %d Applies: a deadlock's victim ran again", n, 2*rounds)
	}
}

// counter counts the statements whose SQL starts with match, in any case (every one: ""),
// sent alone or in a batch.
type counter struct {
	match string
	n     atomic.Int64
}

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(strings.ToLower(d.SQL), c.match) {
		c.n.Add(1)
	}
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *counter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if strings.HasPrefix(strings.ToLower(d.SQL), c.match) {
		c.n.Add(1)
	}
}

func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// EachPage reads every row of a table once, in row order, a page at a time, settled rows
// too, and goes on past a page that ends in an empty row (one Load leaves out).
func TestEachPageReadsEveryRowOnce(t *testing.T) {
	url, conn := pgDB(t)
	var rows [][]string
	for i := range 25 {
		status := "dead"
		if i%2 == 0 {
			status = "delivered"
		}
		rows = append(rows, []string{"2026-02-02T09:00:00Z", "crm", "https://example.com/hook", fmt.Sprintf(`{"n":%d}`, i), "", "1", "POST", fmt.Sprintf("k%d", i), status, "", "", ""})
	}
	rows[9] = make([]string, 12) // row_no 10: the end of the first page, empty
	insert(t, conn, model.RoleDeadLetter, rows)
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	var got []string
	pages := 0
	if err := st.EachPage(t.Context(), "failed_calls", 10, func(tab *model.Table) error {
		pages++
		for _, r := range tab.Records {
			got = append(got, r.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 25 {
		if i != 9 {
			want = append(want, fmt.Sprintf("k%d", i))
		}
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("%d pages, rows %v; want 3 pages, %v", pages, got, want)
	}
}
