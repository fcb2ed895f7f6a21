package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// The invariants of docs/DESIGN.md §3 that a store keeps, each a subtest of Exercise run
// against a fresh backend.

// testLoadReadsTheSameWorkbook: a store decodes the seed as model decodes a tab's rows (the
// sheet's rows as read): the same records (IDs, statuses, row numbers, cells, key origins,
// problems, times) in the same order, so every store reads the same workbook.
func testLoadReadsTheSameWorkbook(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	wb, err := b.Store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range model.Roles {
		tab := wb.Tab(r)
		if tab == nil || len(tab.Records) != len(Seed()[r]) {
			t.Fatalf("%s: %v", r, tab)
		}
		rows := [][]any{toAny(SchemaHeaders(r))}
		for _, row := range Seed()[r] {
			rows = append(rows, toAny(row))
		}
		want, err := model.Decode(model.DefaultTabConfig(r), rows, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Records {
			x, y := want.Records[i], tab.Records[i]
			if x.ID != y.ID || x.Status != y.Status || x.Row != y.Row || x.KeyOrigin != y.KeyOrigin ||
				!slices.Equal(x.Cells, y.Cells) || !slices.Equal(x.Problems, y.Problems) || !x.Time.Equal(y.Time) {
				t.Errorf("%s record %d: %s %+v, want %+v", r, i, b.Name, y, x)
			}
		}
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Invariant 1: an edit writes only if the cells it expected still hold what the person saw;
// the conflict names the cell, what was seen and what is there now, and nothing is written.
func testConflictIsExactAndWritesNothing(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	b.Set(t, model.RoleInbox, "m1", model.FStatus, "read")
	res, err := b.Store.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m1",
		Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || len(res.Applied) != 0 {
		t.Fatalf("result %+v", res)
	}
	c := res.Conflicts[0]
	if c.Field != model.FStatus || c.Saw != "new" || c.Now != "read" || c.Row != 2 || c.Reason != "" {
		t.Fatalf("conflict %+v", c)
	}
	if row := b.Row(t, model.RoleInbox, "m1"); row[model.FStatus] != "read" || row[model.FTriagedBy] != "" {
		t.Fatalf("the row changed: %v", row)
	}
}

// Invariant 1: another person's change between the store's read and its write makes the
// write a conflict, and theirs stays.
func testChangeBetweenReadAndWriteIsAConflict(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	b.Between(func() { b.Set(t, model.RoleQueue, "j1", model.FStatus, "claimed") })
	res, err := b.Store.Apply(t.Context(), []model.Edit{{Tab: "Jobs", ID: "j1",
		Expect: map[model.Field]string{model.FStatus: "pending"}, Set: map[model.Field]string{model.FStatus: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Now != "claimed" || res.Conflicts[0].Saw != "pending" {
		t.Fatalf("result %+v", res)
	}
	if row := b.Row(t, model.RoleQueue, "j1"); row[model.FStatus] != "claimed" {
		t.Fatalf("the other person's value was overwritten: %v", row)
	}
}

// Invariant 1: a write lands on its row only; every other row is as it was; the audit columns
// are stamped on the written row.
func testWriteLandsOnItsRowOnly(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	before := map[string]map[model.Field]string{}
	for _, id := range []string{"m1", "m3"} {
		before[id] = b.Row(t, model.RoleInbox, id)
	}
	res, err := b.Store.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m2",
		Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1 || res.Applied[0].Row != 3 || !res.OK() {
		t.Fatalf("result %+v", res)
	}
	row := b.Row(t, model.RoleInbox, "m2")
	if row[model.FStatus] != "done" || row[model.FTriagedBy] != "tester" || row[model.FTriagedAt] != "2026-03-01T12:00:00Z" {
		t.Fatalf("m2 %v", row)
	}
	// Invariant 2: text stays text (the message "=1+1" is not a formula's result).
	if row[model.FMessage] != "=1+1" {
		t.Fatalf("message %q", row[model.FMessage])
	}
	for id, want := range before {
		if got := b.Row(t, model.RoleInbox, id); !EqualRows(got, want) {
			t.Fatalf("%s changed: %v, was %v", id, got, want)
		}
	}
}

// An ID that is gone is Missing; an edit that changes nothing is applied with nothing written
// (no audit stamp); edits of one row in one call apply in order.
func testMissingUnchangedAndInOrder(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	res, err := b.Store.Apply(t.Context(), []model.Edit{
		{Tab: "Inbox", ID: "nope", Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}},
		{Tab: "Inbox", ID: "m3", Expect: map[model.Field]string{model.FStatus: "read"}, Set: map[model.Field]string{model.FStatus: "read"}},
		{Tab: "Jobs", ID: "j3", Expect: map[model.Field]string{model.FStatus: "error"}, Set: map[model.Field]string{model.FStatus: "pending"}},
		{Tab: "Jobs", ID: "j3", Expect: map[model.Field]string{model.FStatus: "pending"}, Set: map[model.Field]string{model.FLastError: ""}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != 1 || res.Missing[0].ID != "nope" || len(res.Applied) != 3 || len(res.Conflicts) != 0 {
		t.Fatalf("result %+v", res)
	}
	if row := b.Row(t, model.RoleInbox, "m3"); row[model.FTriagedAt] != "" {
		t.Fatalf("an edit that changed nothing was stamped: %v", row)
	}
	if row := b.Row(t, model.RoleQueue, "j3"); row[model.FStatus] != "pending" || row[model.FLastError] != "" {
		t.Fatalf("j3 %v", row)
	}
}

// Invariant 3: a key that holds a value is never written; an empty key cell takes the minted
// key, and the row keeps its identity.
func testKeyNeverChanges(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	wb, err := b.Store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	minted := dl.Records[2]
	if minted.KeyOrigin != model.KeyMinted {
		t.Fatalf("row 3's key: %v", minted.KeyOrigin)
	}
	res, err := b.Store.Apply(t.Context(), []model.Edit{
		{Tab: "failed_calls", ID: "k1", Expect: map[model.Field]string{model.FKey: "k1"}, Set: map[model.Field]string{model.FKey: "other"}},
		{Tab: "failed_calls", ID: minted.ID, Expect: map[model.Field]string{model.FKey: ""}, Set: map[model.Field]string{model.FKey: minted.ID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Edit.ID != "k1" || res.Conflicts[0].Field != model.FKey || len(res.Applied) != 1 {
		t.Fatalf("result %+v", res)
	}
	if row := b.Row(t, model.RoleDeadLetter, "k1"); row[model.FKey] != "k1" {
		t.Fatalf("k1's key changed: %v", row)
	}
	if row := b.Row(t, model.RoleDeadLetter, minted.ID); row[model.FKey] != minted.ID {
		t.Fatalf("the minted key was not saved: %v", row)
	}
}

// Invariant 11: a read-only store writes nothing.
func testReadOnlyWritesNothing(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	ro := b.OpenReadOnly(t)
	if !ro.ReadOnly() {
		t.Fatal("not read-only")
	}
	_, err := ro.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m1",
		Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
	if !errors.Is(err, b.ErrReadOnly) {
		t.Fatalf("err %v", err)
	}
	if err := ro.DeadLetter(t.Context(), []model.DeadLetter{{Source: "s", URL: "https://x", Payload: "{}", Key: "z"}}); !errors.Is(err, b.ErrReadOnly) {
		t.Fatalf("dead letter: %v", err)
	}
	if row := b.Row(t, model.RoleInbox, "m1"); row[model.FStatus] != "new" {
		t.Fatalf("written: %v", row)
	}
}

// A dead letter is recorded with status dead and its key, and reads back as the seed's rows do.
func testDeadLetterRecordsTheCall(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	l := model.DeadLetter{Timestamp: Now, Source: "stripe", URL: "https://example.com/hook", Method: "POST", Payload: `{"n":9}`, Error: "HTTP 503", Attempts: 4, Key: "k9"}
	if err := b.Store.DeadLetter(t.Context(), []model.DeadLetter{l}); err != nil {
		t.Fatal(err)
	}
	row := b.Row(t, model.RoleDeadLetter, "k9")
	want := map[model.Field]string{model.FTimestamp: "2026-03-01T12:00:00Z", model.FSource: "stripe", model.FURL: l.URL, model.FPayload: l.Payload,
		model.FError: l.Error, model.FAttempts: "4", model.FMethod: "POST", model.FKey: "k9", model.FStatus: "dead"}
	for f, v := range want {
		if row[f] != v {
			t.Errorf("%s = %q, want %q", f, row[f], v)
		}
	}
}

// testActorPerCall: one store serving several people (`triage serve`) records the person each
// Apply's context names (model.WithActor), and the store's own actor without one; the same
// for both stores, so serve's audit column says who did it on a database too.
func testActorPerCall(t *testing.T, open func(t *testing.T) Backend) {
	b := open(t)
	for _, c := range []struct{ id, who, want string }{{"m1", "alice", "alice"}, {"m2", "", "tester"}} {
		res, err := b.Store.Apply(model.WithActor(t.Context(), c.who), []model.Edit{{Tab: "Inbox", ID: c.id,
			Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
		if err != nil || len(res.Applied) != 1 {
			t.Fatalf("%s: %v %+v", c.id, err, res)
		}
		if got := b.Row(t, model.RoleInbox, c.id)[model.FTriagedBy]; got != c.want {
			t.Errorf("%s triaged_by %q, want %q", c.id, got, c.want)
		}
	}
}
