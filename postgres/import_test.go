package postgres_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// Import carries a sheet's tabs into the tables: the same records load from both (IDs, keys,
// cells), a row without an identity is reported with why, the sheet is left as it was, and
// running it again adds nothing.
func TestImportCarriesTheSheet(t *testing.T) {
	sheet := sheetWith(t, true, map[model.Role][][]string{
		model.RoleInbox: {{"2026-02-03T09:00:00Z", "No ID", "", "", "new", "", "", ""}},
		model.RoleQueue: {{"j1", "dup", "", "pending", "", "", "", "", "", "", ""}},
	})
	from, err := sheet.store.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := pgDB(t)
	st := openStore(t, url, postgres.Options{Tabs: tabs(), History: true})
	for run := 1; run <= 2; run++ {
		for _, r := range model.Roles {
			var calls int
			rep, err := st.Import(t.Context(), from.Tab(r), func(done, total int) { calls++ })
			if err != nil {
				t.Fatal(err)
			}
			wantSkipped := map[model.Role]int{model.RoleInbox: 1, model.RoleQueue: 2}[r]
			carried := len(from.Tab(r).Records) - wantSkipped
			wantAdded, wantPresent := carried, 0
			if run == 2 {
				wantAdded, wantPresent = 0, carried
			}
			if rep.Added != wantAdded || rep.Present != wantPresent || len(rep.Skipped) != wantSkipped || calls != 1 {
				t.Fatalf("run %d %s: %+v (progress told %d times)", run, r, rep, calls)
			}
			for _, sk := range rep.Skipped {
				if sk.Row == 0 || !strings.Contains(sk.Why, "ID") {
					t.Errorf("skipped %+v", sk)
				}
			}
		}
	}
	to, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range model.Roles {
		var want []model.Record
		for _, rec := range from.Tab(r).Records {
			if rec.ID != "" {
				want = append(want, rec)
			}
		}
		got := to.Tab(r).Records
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", r, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Status != want[i].Status {
				t.Errorf("%s row %d: %s/%s, want %s/%s", r, i, got[i].ID, got[i].Status, want[i].ID, want[i].Status)
			}
			if r != model.RoleDeadLetter && !slices.Equal(got[i].Cells, want[i].Cells) {
				t.Errorf("%s %s: cells %q, want %q", r, got[i].ID, got[i].Cells, want[i].Cells)
			}
		}
	}
	// The keyless dead letter keeps the key a replay would have minted from the sheet.
	if k := to.Tab(model.RoleDeadLetter).Records[2]; k.KeyOrigin != model.KeyCell || k.ID != from.Tab(model.RoleDeadLetter).Records[2].ID {
		t.Errorf("minted key: %+v", k)
	}
}
