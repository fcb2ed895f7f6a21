package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// hostileText is cell text a sheet holds and PostgreSQL's text can't, or that an escape could
// confuse: NUL (the demo's "Bell Ringer" message holds one), the codec's own escape character
// alone and doubled and before a "0", every other C0 control, bidi overrides, a 50,000-character
// payload.
var hostileText = []string{
	"Bell\x00Ringer", "\x00", "tail\x00", "\x10", "\x100", "\x10\x10", "a\x10\x00b",
	"\x01\x02\x03\x07\x08\x0b\x0c\x0e\x1b[2J\x1f\x7f", "\u202eevil\u202c", strings.Repeat("\x00é", 25000),
}

// Every cell reaches the database and comes back byte for byte, by every path that writes one
// (migrate's import, a conditional write, the dead-letter sink) and every path that reads one
// (a load, a write's locating read, a lease of the row's key): a batch is never refused for a
// NUL, and a write that expects a NUL-holding cell finds it.
func TestHostileCellsCarriedExactly(t *testing.T) {
	var inbox, dead [][]string
	for i, v := range hostileText {
		id := "h" + itoa(i)
		inbox = append(inbox, []string{"2026-02-03T09:00:00Z", v, "x@example.com", v, "new", id, "", ""})
		dead = append(dead, []string{"2026-02-03T09:00:00Z", "crm", "https://crm.example/in", v, v, "1", "POST", "k" + itoa(i) + "\x00", "dead", "", "", ""})
	}
	sheet := sheetWith(t, true, map[model.Role][][]string{model.RoleInbox: inbox, model.RoleDeadLetter: dead})
	from, err := sheet.store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := pgDB(t)
	st := openStore(t, url, postgres.Options{Tabs: tabs(), History: true, Actor: "tester", Now: clock})
	for _, r := range []model.Role{model.RoleInbox, model.RoleDeadLetter} {
		rep, err := st.Import(t.Context(), from.Tab(r), nil)
		if err != nil {
			t.Fatalf("import %s: %v", r, err)
		}
		if len(rep.Skipped) != 0 {
			t.Errorf("import %s skipped %+v", r, rep.Skipped)
		}
	}
	to, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []model.Role{model.RoleInbox, model.RoleDeadLetter} {
		want, got := from.Tab(r), to.Tab(r)
		if len(got.Records) != len(want.Records) {
			t.Fatalf("%s: %d rows on the database, %d on the sheet", r, len(got.Records), len(want.Records))
		}
		for i := range want.Records {
			w, g := &want.Records[i], &got.Records[i]
			for _, f := range []model.Field{model.FName, model.FMessage, model.FPayload, model.FError, model.FKey} {
				if !want.Header.Has(f) {
					continue
				}
				if f == model.FKey && want.Get(w, f) == "" {
					continue // a row without a key: migrate stores the one it has now
				}
				if a, b := want.Get(w, f), got.Get(g, f); a != b {
					t.Errorf("%s row %s %s: the database reads %q, the sheet %q", r, w.ID, f, clip(b), clip(a))
				}
			}
			if w.ID != g.ID {
				t.Errorf("%s: identity %q on the sheet, %q on the database", r, w.ID, g.ID)
			}
		}
	}

	// A conditional write expecting a NUL-holding cell, and writing one.
	tab := to.Tab(model.RoleInbox)
	rec := &tab.Records[tab.Index("h0")]
	res, err := st.Apply(t.Context(), []model.Edit{{Tab: tab.Config.Name, ID: "h0",
		Expect: map[model.Field]string{model.FMessage: tab.Get(rec, model.FMessage)},
		Set:    map[model.Field]string{model.FStatus: "done", model.FName: "Bell\x00Ringer, answered"}}})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("a write expecting a NUL cell: %+v %v", res, err)
	}
	// A dead letter whose payload and error hold NULs, and a replay lease of a NUL key.
	if err := st.DeadLetter(t.Context(), []model.DeadLetter{{Timestamp: time.Date(2026, 2, 4, 0, 0, 0, 0, time.UTC), Source: "crm",
		URL: "https://crm.example/in", Payload: `{"note":"a\u0000b"}` + "\x00", Error: "503\x00", Attempts: 1, Key: "sink\x00key"}}); err != nil {
		t.Fatalf("a dead letter with NULs: %v", err)
	}
	l, err := st.Lease(t.Context(), "failed_calls", []string{"k0\x00", "sink\x00key"})
	if err != nil || len(l.Taken) != 2 || l.Taken[0] != "k0\x00" {
		t.Fatalf("lease of NUL keys: %+v %v", l, err)
	}
	if err := st.Release(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	again, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := again.Tab(model.RoleInbox)
	if got := in.Get(&in.Records[in.Index("h0")], model.FName); got != "Bell\x00Ringer, answered" {
		t.Errorf("written NUL name reads %q", got)
	}
	dl := again.Tab(model.RoleDeadLetter)
	i := dl.Index("sink\x00key")
	if i < 0 {
		t.Fatalf("the dead letter with a NUL key is not found by it")
	}
	if got := dl.Get(&dl.Records[i], model.FPayload); got != `{"note":"a\u0000b"}`+"\x00" {
		t.Errorf("dead letter payload reads %q", got)
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
