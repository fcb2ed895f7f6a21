package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/serve"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/tui"
)

// On a database, serve's hub is fed by the change notices (changeNotices → HubOptions.Changes):
// another connection's UPDATE (one after another) reaches every session without waiting for the refresh
// interval, which is an hour here, so only the notice can explain the push. The test waits on
// the sessions' pushes, bounded by its own context only.
func TestServeHubPushesAnotherPersonsChange(t *testing.T) {
	url, conn := migratedDB(t, "INSERT INTO inbox (id, status) VALUES ('m1', 'new')")
	st := openDB(t, url, postgres.Options{})
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changes, err := changeNotices(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	hub := serve.NewHub(ctx, serve.HubOptions{Store: st, Refresh: time.Hour, Initial: wb, Changes: changes})
	done := make(chan struct{})
	go func() { hub.Run(ctx); close(done) }()
	var sessions []*serve.Session
	for _, name := range []string{"alice", "bob"} {
		s := hub.Session(serve.User{Name: name, Access: model.AccessTriager, Key: "SHA256:" + name})
		defer s.Close()
		// Each session starts with the hub's cache: the row as it was.
		if got := inboxStatus(t, waitPush(t, s.Updates)); got != "new" {
			t.Fatalf("%s's first workbook: status %q, want new", name, got)
		}
		sessions = append(sessions, s)
	}

	// Change after change: each is read, not answered by the store's own change check
	// (Store.Changed), whose watch may not have heard of it yet.
	for n := range 10 {
		want := fmt.Sprint("s", n)
		if _, err := conn.Exec(t.Context(), "UPDATE inbox SET status = $1 WHERE id = 'm1'", want); err != nil {
			t.Fatal(err)
		}
		for i, s := range sessions {
			if got := inboxStatus(t, waitPush(t, s.Updates)); got != want {
				t.Fatalf("change %d, session %d: pushed status %q, want %q", n, i, got, want)
			}
		}
	}
	cancel()
	<-done
}

// waitPush is the next workbook pushed to a session, bounded by the test's context only.
func waitPush(t *testing.T, ch <-chan *tui.Prepared) *tui.Prepared {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatal("the session's updates closed")
		}
		return p
	case <-t.Context().Done():
		t.Fatal("no push")
	}
	return nil
}

// inboxStatus is m1's status in a pushed workbook.
func inboxStatus(t *testing.T, p *tui.Prepared) string {
	t.Helper()
	wb := p.Workbook()
	if wb == nil {
		t.Fatalf("the push carries no workbook: %v", p.Err())
	}
	r := wb.Tab(model.RoleInbox).Records
	if len(r) != 1 {
		t.Fatalf("pushed %+v", r)
	}
	return r[0].Status
}

// BenchmarkServeHubNotifyLatency: another connection's UPDATE to the hub's push of the read it
// caused to a session (the notice, changeNotices, one Load of 1,000 open inbox rows,
// tui.Prepare, the push), with the refresh interval an hour.
func BenchmarkServeHubNotifyLatency(b *testing.B) {
	url := pgtest.DB(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := postgres.Migrate(ctx, url); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "INSERT INTO inbox (id, status, message) SELECT 'm' || i, 'new', 'hello ' || i FROM generate_series(1, 1000) i"); err != nil {
		b.Fatal(err)
	}
	st, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	wb, err := st.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	changes, err := changeNotices(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	hub := serve.NewHub(ctx, serve.HubOptions{Store: st, Refresh: time.Hour, Initial: wb, Changes: changes})
	go hub.Run(ctx)
	s := hub.Session(serve.User{Name: "alice", Access: model.AccessTriager, Key: "SHA256:alice"})
	defer s.Close()
	<-s.Updates // the cache
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		want := fmt.Sprint("s", i)
		start := time.Now()
		if _, err := conn.Exec(ctx, "UPDATE inbox SET status = $1 WHERE id = 'm1'", want); err != nil {
			b.Fatal(err)
		}
		for {
			p := <-s.Updates
			tb := p.Workbook().Tab(model.RoleInbox)
			if tb.Records[tb.Index("m1")].Status == want {
				break
			}
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/push")
}

// A lost watch is watched again: when the server ends the listening connections, the
// change made meanwhile and the ones after still reach the hub's sessions (the test waits on
// the pushes, bounded by its own context only).
func TestServeHubWatchesAgainAfterALostConnection(t *testing.T) {
	url, conn := migratedDB(t, "INSERT INTO inbox (id, status) VALUES ('m1', 'new')")
	st := openDB(t, url, postgres.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changes, err := changeNotices(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	hub := serve.NewHub(ctx, serve.HubOptions{Store: st, Refresh: time.Hour, Changes: changes})
	s := hub.Session(serve.User{Name: "alice", Access: model.AccessTriager, Key: "SHA256:alice"})
	defer s.Close()
	go hub.Run(ctx)
	if got := inboxStatus(t, waitPush(t, s.Updates)); got != "new" {
		t.Fatalf("first push: %q", got)
	}
	var ended int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`).Scan(&ended); err != nil || ended == 0 {
		t.Fatalf("ended %d listening connections: %v", ended, err)
	}
	for _, want := range []string{"missed", "after"} {
		if _, err := conn.Exec(t.Context(), "UPDATE inbox SET status = $1 WHERE id = 'm1'", want); err != nil {
			t.Fatal(err)
		}
		// Pushes from before the change (the read for what was missed) may come first.
		for inboxStatus(t, waitPush(t, s.Updates)) != want {
		}
	}
}

// A serve session on a database searches history as the local TUI does: the store its TUI is
// given says a settled status needs a search and answers it from the database, for anyone who
// may look (a viewer too).
func TestServeSessionSearchesHistory(t *testing.T) {
	url, _ := migratedDB(t, `INSERT INTO failed_calls (key, status, source, url) VALUES
		('k1', 'dead', 'crm', 'https://crm.example/a'), ('k2', 'delivered', 'crm', 'https://crm.example/b'),
		('k3', 'delivered', 'crm', 'https://crm.example/c')`)
	st := openDB(t, url, postgres.Options{})
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hub := serve.NewHub(t.Context(), serve.HubOptions{Store: st, Refresh: time.Hour, Initial: wb})
	s := hub.Session(serve.User{Name: "vic", Access: model.AccessViewer, Key: "SHA256:vic"})
	defer s.Close()
	hs, ok := s.Options(tui.Options{}).Store.(tui.HistorySearcher)
	if !ok {
		t.Fatal("a session's store doesn't search history")
	}
	tab := wb.Tab(model.RoleDeadLetter).Config.Name
	q := model.HistorySearch{Statuses: []string{"delivered"}, Limit: 100}
	if !hs.NeedsHistory(tab, q) {
		t.Fatal("status:delivered on a database: NeedsHistory said no")
	}
	got, err := hs.SearchHistory(t.Context(), tab, q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got.Records {
		ids = append(ids, r.ID)
	}
	if len(ids) != 2 || ids[0] == "k1" || ids[1] == "k1" {
		t.Errorf("history rows %v, want k2 and k3", ids)
	}
}
