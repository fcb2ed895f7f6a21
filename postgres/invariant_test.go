package postgres_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// The invariants every store keeps run against the postgres store from TestStoreContract
// (store/storetest); these are the ones only the database can be asked.

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
