package cli

import (
	"context"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// On a database, the TUI is fed live: another person's change is pushed as a fresh workbook,
// with no polling (the test waits on the feed, bounded by its own context only), and the feed
// closes with its context.
func TestLiveUpdatesPushAnotherPersonsChange(t *testing.T) {
	url, conn := migratedDB(t, "INSERT INTO inbox (id, status) VALUES ('m1', 'new')")
	st := openDB(t, url, postgres.Options{})
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
