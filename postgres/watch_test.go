package postgres_test

import (
	"runtime"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// Another connection's change is noticed, live: the watcher is told which tab changed, with
// no poll (the test waits on the channel, bounded only by its own context).
func TestWatchNoticesAnotherConnectionsChange(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	changes, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		role model.Role
	}{
		{"UPDATE inbox SET status = 'read' WHERE id = 'm1'", model.RoleInbox},
		{"INSERT INTO jobs (id, status) VALUES ('j9', 'pending')", model.RoleQueue},
		{"DELETE FROM failed_calls", model.RoleDeadLetter},
	} {
		if _, err := conn.Exec(t.Context(), q.sql); err != nil {
			t.Fatal(err)
		}
		select {
		case c, ok := <-changes:
			if !ok {
				t.Fatal("the watch ended")
			}
			if c.Role != q.role {
				t.Fatalf("%s: told %s changed", q.sql, c.Role)
			}
		case <-t.Context().Done():
			t.Fatal("no notice")
		}
	}
}

// A store's own write is a notice too (the TUI of another person sees it), and a watch ends,
// its channel closed, with its context.
func TestWatchSeesWritesAndEnds(t *testing.T) {
	b := pgBackend(t)
	st := b.Store.(*postgres.Store)
	wctx, wcancel := contextWithCancel(t)
	changes, err := st.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m2",
		Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "read"}}})
	if err != nil || len(res.Applied) != 1 {
		t.Fatal(res, err)
	}
	select {
	case c := <-changes:
		if c.Role != model.RoleInbox {
			t.Fatalf("told %s", c.Role)
		}
	case <-t.Context().Done():
		t.Fatal("no notice")
	}
	wcancel()
	for range changes {
	}
}

// Changed (what serve's hub asks before a refresh) answers from change notices: true before
// its watch runs, false after a Load with nothing new, true once another connection changes a
// table, false again after the next Load.
func TestChangedAnswersFromNotices(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleInbox, seed()[model.RoleInbox])
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	changed := func() bool {
		t.Helper()
		c, err := st.Changed(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if !changed() {
		t.Fatal("unknown reads as unchanged")
	}
	if _, err := st.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if changed() {
		t.Fatal("changed with nothing new")
	}
	if _, err := conn.Exec(t.Context(), "UPDATE jobs SET status = 'done'"); err != nil {
		t.Fatal(err)
	}
	// The notice arrives on the watch's own connection: wait for it, bounded by the test.
	for !changed() {
		select {
		case <-t.Context().Done():
			t.Fatal("the change was never noticed")
		default:
			runtime.Gosched()
		}
	}
	wb, err := st.LoadTab(t.Context(), "queue")
	if err != nil || len(wb.Tabs) != 1 || wb.Tabs[0].Config.Role != model.RoleQueue {
		t.Fatalf("LoadTab: %v %v", wb, err)
	}
	if changed() {
		t.Fatal("still changed after a load")
	}
	if _, err := st.LoadTab(t.Context(), "nope"); err == nil {
		t.Fatal("LoadTab of no tab")
	}
}
