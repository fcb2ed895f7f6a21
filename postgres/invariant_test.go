package postgres_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// The invariants of docs/DESIGN.md §3 that a store keeps, run against both stores with one
// test body each (forEach): the postgres store gives the sheet store's answers.

// TestLoadReadsTheSameWorkbook: both stores decode the seed alike: the same records (IDs,
// statuses, row numbers, cells, key origins, problems) in the same order.
func TestLoadReadsTheSameWorkbook(t *testing.T) {
	var got []*model.Workbook
	forEach(t, func(t *testing.T, b *backend) {
		wb, err := b.store.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range model.Roles {
			if tab := wb.Tab(r); tab == nil || len(tab.Records) != len(seed()[r]) {
				t.Fatalf("%s: %v", r, tab)
			}
		}
		got = append(got, wb)
	})
	if len(got) != 2 {
		return
	}
	for _, r := range model.Roles {
		a, b := got[0].Tab(r), got[1].Tab(r)
		for i := range a.Records {
			x, y := a.Records[i], b.Records[i]
			if x.ID != y.ID || x.Status != y.Status || x.Row != y.Row || x.KeyOrigin != y.KeyOrigin ||
				!slices.Equal(x.Cells, y.Cells) || !slices.Equal(x.Problems, y.Problems) || !x.Time.Equal(y.Time) {
				t.Errorf("%s record %d: sheet %+v, postgres %+v", r, i, x, y)
			}
		}
	}
}

// Invariant 1: an edit writes only if the cells it expected still hold what the person saw;
// the conflict names the cell, what was seen and what is there now, and nothing is written.
func TestConflictIsExactAndWritesNothing(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		b.set(t, model.RoleInbox, "m1", model.FStatus, "read")
		res, err := b.store.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m1",
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
		if row := b.row(t, model.RoleInbox, "m1"); row[model.FStatus] != "read" || row[model.FTriagedBy] != "" {
			t.Fatalf("the row changed: %v", row)
		}
	})
}

// Invariant 1: another person's change between the store's read and its write makes the
// write a conflict, and theirs stays.
func TestChangeBetweenReadAndWriteIsAConflict(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		b.between(func() { b.set(t, model.RoleQueue, "j1", model.FStatus, "claimed") })
		res, err := b.store.Apply(t.Context(), []model.Edit{{Tab: "Jobs", ID: "j1",
			Expect: map[model.Field]string{model.FStatus: "pending"}, Set: map[model.Field]string{model.FStatus: "done"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Conflicts) != 1 || res.Conflicts[0].Now != "claimed" || res.Conflicts[0].Saw != "pending" {
			t.Fatalf("result %+v", res)
		}
		if row := b.row(t, model.RoleQueue, "j1"); row[model.FStatus] != "claimed" {
			t.Fatalf("the other person's value was overwritten: %v", row)
		}
	})
}

// Invariant 1: a write lands on its row only; every other row is as it was; the audit columns
// are stamped on the written row.
func TestWriteLandsOnItsRowOnly(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		before := map[string]map[model.Field]string{}
		for _, id := range []string{"m1", "m3"} {
			before[id] = b.row(t, model.RoleInbox, id)
		}
		res, err := b.store.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m2",
			Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Applied) != 1 || res.Applied[0].Row != 3 || !res.OK() {
			t.Fatalf("result %+v", res)
		}
		row := b.row(t, model.RoleInbox, "m2")
		if row[model.FStatus] != "done" || row[model.FTriagedBy] != "tester" || row[model.FTriagedAt] != "2026-03-01T12:00:00Z" {
			t.Fatalf("m2 %v", row)
		}
		// Invariant 2: text stays text (the message "=1+1" is not a formula's result).
		if row[model.FMessage] != "=1+1" {
			t.Fatalf("message %q", row[model.FMessage])
		}
		for id, want := range before {
			if got := b.row(t, model.RoleInbox, id); !equalMaps(got, want) {
				t.Fatalf("%s changed: %v, was %v", id, got, want)
			}
		}
	})
}

// An ID that is gone is Missing; an edit that changes nothing is applied with nothing written
// (no audit stamp); edits of one row in one call apply in order.
func TestMissingUnchangedAndInOrder(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		res, err := b.store.Apply(t.Context(), []model.Edit{
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
		if row := b.row(t, model.RoleInbox, "m3"); row[model.FTriagedAt] != "" {
			t.Fatalf("an edit that changed nothing was stamped: %v", row)
		}
		if row := b.row(t, model.RoleQueue, "j3"); row[model.FStatus] != "pending" || row[model.FLastError] != "" {
			t.Fatalf("j3 %v", row)
		}
	})
}

// Invariant 3: a key that holds a value is never written; an empty key cell takes the minted
// key, and the row keeps its identity.
func TestKeyNeverChanges(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		wb, err := b.store.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		dl := wb.Tab(model.RoleDeadLetter)
		minted := dl.Records[2]
		if minted.KeyOrigin != model.KeyMinted {
			t.Fatalf("row 3's key: %v", minted.KeyOrigin)
		}
		res, err := b.store.Apply(t.Context(), []model.Edit{
			{Tab: "failed_calls", ID: "k1", Expect: map[model.Field]string{model.FKey: "k1"}, Set: map[model.Field]string{model.FKey: "other"}},
			{Tab: "failed_calls", ID: minted.ID, Expect: map[model.Field]string{model.FKey: ""}, Set: map[model.Field]string{model.FKey: minted.ID}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Conflicts) != 1 || res.Conflicts[0].Edit.ID != "k1" || res.Conflicts[0].Field != model.FKey || len(res.Applied) != 1 {
			t.Fatalf("result %+v", res)
		}
		if row := b.row(t, model.RoleDeadLetter, "k1"); row[model.FKey] != "k1" {
			t.Fatalf("k1's key changed: %v", row)
		}
		if row := b.row(t, model.RoleDeadLetter, minted.ID); row[model.FKey] != minted.ID {
			t.Fatalf("the minted key was not saved: %v", row)
		}
	})
}

// Invariant 11: a read-only store writes nothing.
func TestReadOnlyWritesNothing(t *testing.T) {
	for _, b := range []*backend{sheetBackend(t, true), pgBackend(t, true)} {
		t.Run(b.name, func(t *testing.T) {
			if !b.store.ReadOnly() {
				t.Fatal("not read-only")
			}
			_, err := b.store.Apply(t.Context(), []model.Edit{{Tab: "Inbox", ID: "m1",
				Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
			if !errors.Is(err, b.errReadOnly) {
				t.Fatalf("err %v", err)
			}
			if err := b.store.DeadLetter(t.Context(), []model.DeadLetter{{Source: "s", URL: "https://x", Payload: "{}", Key: "z"}}); !errors.Is(err, b.errReadOnly) {
				t.Fatalf("dead letter: %v", err)
			}
			if row := b.row(t, model.RoleInbox, "m1"); row[model.FStatus] != "new" {
				t.Fatalf("written: %v", row)
			}
		})
	}
}

// A dead letter is recorded with status dead and its key, and reads back as the seed's rows do.
func TestDeadLetterRecordsTheCall(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		l := model.DeadLetter{Timestamp: now, Source: "stripe", URL: "https://example.com/hook", Method: "POST", Payload: `{"n":9}`, Error: "HTTP 503", Attempts: 4, Key: "k9"}
		if err := b.store.DeadLetter(t.Context(), []model.DeadLetter{l}); err != nil {
			t.Fatal(err)
		}
		row := b.row(t, model.RoleDeadLetter, "k9")
		want := map[model.Field]string{model.FTimestamp: "2026-03-01T12:00:00Z", model.FSource: "stripe", model.FURL: l.URL, model.FPayload: l.Payload,
			model.FError: l.Error, model.FAttempts: "4", model.FMethod: "POST", model.FKey: "k9", model.FStatus: "dead"}
		for f, v := range want {
			if row[f] != v {
				t.Errorf("%s = %q, want %q", f, row[f], v)
			}
		}
	})
}

func equalMaps(a, b map[model.Field]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestActorPerCall: one store serving several people (`triage serve`) records the person each
// Apply's context names (model.WithActor), and the store's own actor without one; the same
// for both stores, so serve's audit column says who did it on a database too.
func TestActorPerCall(t *testing.T) {
	forEach(t, func(t *testing.T, b *backend) {
		for _, c := range []struct{ id, who, want string }{{"m1", "alice", "alice"}, {"m2", "", "tester"}} {
			res, err := b.store.Apply(model.WithActor(t.Context(), c.who), []model.Edit{{Tab: "Inbox", ID: c.id,
				Expect: map[model.Field]string{model.FStatus: "new"}, Set: map[model.Field]string{model.FStatus: "done"}}})
			if err != nil || len(res.Applied) != 1 {
				t.Fatalf("%s: %v %+v", c.id, err, res)
			}
			if got := b.row(t, model.RoleInbox, c.id)[model.FTriagedBy]; got != c.want {
				t.Errorf("%s triaged_by %q, want %q", c.id, got, c.want)
			}
		}
	})
}

// Invariant 3 on the database, where a key is unique: an edit writing a key that is already
// another row's is a conflict, and the rest of the call is written. Three ways it can be
// another's: it was when the Apply read (the keys its edits write are read with the rows), an
// earlier edit of the same call gave it to another row, or another writer put it on a row
// between the read and the write (the unique index refuses the statement; the transaction is
// run again and its read sees the key).
func TestKeyAlreadyAnotherRowsIsAConflict(t *testing.T) {
	url, conn := pgDB(t)
	calls := seed()[model.RoleDeadLetter]
	second := slices.Clone(calls[2])
	second[3] = `{"n":4}`
	insert(t, conn, model.RoleDeadLetter, append(calls, second))
	begins := &counter{match: "begin"}
	st := openTracedStore(t, url, postgres.Options{Tabs: tabs(), Actor: "a"}, begins)
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dl := wb.Tab(model.RoleDeadLetter)
	a, b := dl.Records[2].ID, dl.Records[3].ID
	setKey := func(id, key string) model.Edit {
		return model.Edit{Tab: "failed_calls", ID: id, Set: map[model.Field]string{model.FKey: key, model.FStatus: "rejected"}}
	}
	status := model.Edit{Tab: "failed_calls", ID: "k2", Set: map[model.Field]string{model.FStatus: "dead"}}
	keyOf := func(id int) string {
		var k *string
		if err := conn.QueryRow(t.Context(), `SELECT "key" FROM failed_calls WHERE id = $1`, id).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k == nil {
			return "NULL"
		}
		return *k
	}
	check := func(res model.ApplyResult, err error, conflicted string, applied int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Conflicts) != 1 || res.Conflicts[0].Edit.ID != conflicted || res.Conflicts[0].Field != model.FKey ||
			!strings.Contains(res.Conflicts[0].Reason, "already another row's") || len(res.Applied) != applied {
			t.Fatalf("result %+v", res)
		}
	}

	// Already k1's when read.
	res, err := st.Apply(t.Context(), []model.Edit{setKey(a, "k1"), status})
	check(res, err, a, 1)
	if keyOf(3) != "NULL" {
		t.Fatalf("row 3's key: %s", keyOf(3))
	}
	// Given to row 3 by the first edit of the call, refused for row 4.
	res, err = st.Apply(t.Context(), []model.Edit{setKey(a, "kx"), setKey(b, "kx")})
	check(res, err, b, 1)
	if keyOf(3) != "kx" || keyOf(4) != "NULL" {
		t.Fatalf("keys: row 3 %s, row 4 %s", keyOf(3), keyOf(4))
	}
	// Put on a new row by another writer between the read and the write.
	st.SetBeforeWrite(func() {
		st.SetBeforeWrite(nil)
		if _, err := conn.Exec(t.Context(), `INSERT INTO failed_calls (source, payload, "key", status) VALUES ('crm', '{}', 'ky', 'dead')`); err != nil {
			t.Error(err)
		}
	})
	before := begins.n.Load()
	res, err = st.Apply(t.Context(), []model.Edit{setKey(b, "ky"), status})
	check(res, err, b, 1)
	if keyOf(4) != "NULL" {
		t.Fatalf("row 4's key: %s", keyOf(4))
	}
	if n := begins.n.Load() - before; n != 2 {
		t.Errorf("%d transactions: the refused one should have been run again once", n)
	}
}
