package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/tui"
)

// On a database the TUI loads the open work; `status:delivered` reaches into history: the
// TUI asks the store (postgres.Store.SearchHistory, History's bound parameters) and shows
// the delivered rows from the database, marked as history. A write on one of them goes
// through Apply by its ID and lands in the database; the change's notice reloads, the search
// runs again and the row leaves the filter; esc puts the open work back.
func TestTUISearchesHistoryOnADatabase(t *testing.T) {
	url, conn := migratedDB(t)
	add := func(ts, source, key, status string) {
		t.Helper()
		_, err := conn.Exec(t.Context(), `INSERT INTO failed_calls ("timestamp", source, url, payload, error, key, status) VALUES ($1, $2, 'https://x.example/hook', '{}', '503', $3, $4)`, ts, source, key, status)
		if err != nil {
			t.Fatal(err)
		}
	}
	add("2026-01-10T10:00:00Z", "open1", "k-open", "dead")
	for i := 1; i <= 3; i++ {
		add(fmt.Sprintf("2026-01-0%dT10:00:00Z", i), fmt.Sprintf("old%d", i), fmt.Sprintf("k-old-%d", i), "delivered")
	}
	add("2026-01-05T10:00:00Z", "gone1", "k-gone", "discarded")

	var tabs []model.TabConfig
	for _, r := range model.Roles {
		tabs = append(tabs, model.DefaultTabConfig(r))
	}
	st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(wb.Tab(model.RoleDeadLetter).Records); n != 1 {
		t.Fatalf("the load holds the open work only: %d rows", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	updates, err := liveUpdates(ctx, st) // as cmdTUI runs it on a database
	if err != nil {
		t.Fatal(err)
	}
	p := testbed.StartProgram(t, tui.New(tui.Options{Store: st, Initial: wb, Updates: updates, SpreadsheetID: st.SpreadsheetID()}), 140, 30)
	p.WaitScreen(t, "failed_calls 1 dead")
	p.Keys("2")
	p.WaitScreen(t, "open1")
	p.Keys("/")
	p.Type("status:delivered")
	p.Keys("enter")
	p.WaitScreen(t, "old1", "old2", "old3", "history: 3 rows of status:delivered")
	if s := p.Screen(t); strings.Contains(s, "open1") || strings.Contains(s, "gone1") {
		t.Fatalf("only delivered rows:\n%s", s)
	}

	// The newest delivered row is under the cursor: set it to rejected (the picker's third).
	p.Keys("s", "3")
	if !testbed.Until(t, func() bool {
		var status string
		err := conn.QueryRow(context.Background(), "SELECT status FROM failed_calls WHERE key = 'k-old-3'").Scan(&status)
		return err == nil && status == "rejected"
	}) {
		t.Fatalf("the write didn't reach the database; the screen:\n%s", p.Screen(t))
	}
	p.WaitGone(t, "old3")
	p.WaitScreen(t, "history: 2 rows of status:delivered")

	p.Keys("esc")
	p.WaitScreen(t, "open1", "old3") // the open work, with the row now rejected
	if s := p.Screen(t); strings.Contains(s, "history") || strings.Contains(s, "old1") {
		t.Fatalf("esc puts the open work back:\n%s", s)
	}
}
