package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// An Apply costs the same few round trips whatever its number of edits: the rows of every
// edit read in one pipelined batch, every row written by one statement per table and shape in
// a second, and the commit, BEGIN going in the first batch. Counted on the wire, through a proxy, for 1 edit and for 1,000
// (set-status on the inbox; a replay's write-back on dead letters, some of which get their
// key written, which also asks which keys are taken), each on a connection that has prepared
// nothing: no statement costs a round trip of its own to be prepared.
func TestApplyRoundTripsDontGrowWithEdits(t *testing.T) {
	url, conn := pgDB(t)
	var inbox, calls [][]string
	for i := range 1000 {
		inbox = append(inbox, []string{"2026-03-01T10:00:00Z", "N", "n@example.com", "hi", "new", fmt.Sprintf("m%d", i), "", ""})
		key := fmt.Sprintf("k%d", i)
		if i%3 == 0 {
			key = "" // its key is minted at replay and written back
		}
		calls = append(calls, []string{"2026-02-02T09:00:00Z", "crm", "https://example.com/hook", fmt.Sprintf(`{"n":%d}`, i), "503", "1", "POST", key, "dead", "", "", ""})
	}
	insert(t, conn, model.RoleInbox, inbox)
	insert(t, conn, model.RoleDeadLetter, calls)
	wire := &netshape.Shaper{}
	st := openStore(t, pgtest.Through(t, url, wire), postgres.Options{Tabs: tabs(), Actor: "a"})
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	setStatus := func(n int, to string) []model.Edit {
		var edits []model.Edit
		for i := range n {
			edits = append(edits, model.Edit{Tab: "Inbox", ID: fmt.Sprintf("m%d", i), Set: map[model.Field]string{model.FStatus: to}})
		}
		return edits
	}
	writeBack := func(n int, attempts string) []model.Edit {
		var edits []model.Edit
		for _, r := range dl.Records[:n] {
			set := map[model.Field]string{model.FAttempts: attempts, model.FError: "503 again", model.FReplayedAt: "2026-03-01T12:00:00Z"}
			if dl.Get(&r, model.FKey) == "" {
				set[model.FKey] = r.ID
			}
			edits = append(edits, model.Edit{Tab: dl.Config.Name, ID: r.ID, Set: set})
		}
		return edits
	}
	trips := func(edits []model.Edit) int64 {
		before := wire.RoundTrips()
		res, err := st.Apply(context.Background(), edits)
		if err != nil || len(res.Applied) != len(edits) {
			t.Fatalf("%d edits: %d applied, %+v: %v", len(edits), len(res.Applied), res.Conflicts, err)
		}
		return wire.RoundTrips() - before
	}
	cases := []struct {
		name     string
		one, all []model.Edit
	}{
		{"set-status", setStatus(1, "done"), setStatus(1000, "spam")},
		{"write-back", writeBack(1, "3"), writeBack(1000, "4")},
	}
	for _, c := range cases {
		one, all := trips(c.one), trips(c.all)
		t.Logf("%s: %d round trips for 1 edit, %d for 1,000", c.name, one, all)
		if one != all || all > 3 {
			t.Errorf("%s: %d round trips for 1 edit, %d for 1,000; want the same, at most 3 (begin with the read, the write, commit)", c.name, one, all)
		}
	}
}

// An Apply of 1,000 edits of one tab is one UPDATE of its table, so one run of the
// change-notice trigger and one notice to every watcher: a TUI watching the database loads
// once per write-back, not once per row.
func TestOneApplyIsOneNotice(t *testing.T) {
	url, conn := pgDB(t)
	if _, err := conn.Exec(t.Context(), `INSERT INTO inbox (id, "timestamp", name, email, message, status)
SELECT 'm' || g, '2026-03-01T10:00:00Z', 'N', 'n@example.com', 'hi', 'new' FROM generate_series(1, 1000) g`); err != nil {
		t.Fatal(err)
	}
	updates := &counter{match: "with v as"}
	st := openTracedStore(t, url, postgres.Options{Tabs: tabs(), Actor: "a"}, updates)
	changes, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var edits []model.Edit
	for i := 1; i <= 1000; i++ {
		edits = append(edits, model.Edit{Tab: "Inbox", ID: fmt.Sprintf("m%d", i),
			Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}})
	}
	if res, err := st.Apply(t.Context(), edits); err != nil || len(res.Applied) != 1000 {
		t.Fatalf("%d applied: %v", len(res.Applied), err)
	}
	// A change of another table marks the end: notices arrive in commit order.
	if _, err := conn.Exec(t.Context(), "INSERT INTO jobs (id, status) VALUES ('end', 'pending')"); err != nil {
		t.Fatal(err)
	}
	inbox := 0
	for c := range changes {
		if c.Role == model.RoleQueue {
			break
		}
		inbox++
	}
	if inbox != 1 || updates.n.Load() != 1 {
		t.Errorf("an Apply of 1,000 edits: %d notices, %d writing statements; want one of each", inbox, updates.n.Load())
	}
}
