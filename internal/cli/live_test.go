package cli

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// On a database, the TUI is fed live: another person's change is pushed as a fresh workbook,
// with no polling (the test waits on the feed, bounded by its own context only), and the feed
// closes with its context.
func TestLiveUpdatesPushAnotherPersonsChange(t *testing.T) {
	url := pgtest.DB(t)
	if _, err := postgres.Migrate(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "INSERT INTO inbox (id, status) VALUES ('m1', 'new')"); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(t.Context())
	updates, err := liveUpdates(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "UPDATE inbox SET status = 'read' WHERE id = 'm1'"); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-updates:
		wb := p.Workbook()
		if wb == nil {
			t.Fatal("the push carries no workbook")
		}
		if r := wb.Tab(model.RoleInbox).Records; len(r) != 1 || r[0].Status != "read" {
			t.Fatalf("pushed %+v", r)
		}
	case <-t.Context().Done():
		t.Fatal("no push")
	}
	cancel()
	for range updates {
	}
}
