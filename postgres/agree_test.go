package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/triage-dev/triage/model"
)

// The postgres store's batched Apply (every edit read in one batch, decided in memory in
// order, each row written once) answers as the sheet store does, edit for edit, on random
// calls: edits of the same row one after another (a later one seeing an earlier one's
// values), expectations right and wrong, IDs that are gone, a minted key written, a setting
// that changes nothing, and another person's change between the read and the write. Each
// case runs on a fresh pair of stores; the edits' outcomes (applied on which row, missing, or
// a conflict on which field with what value now) and every row afterwards must be equal.
func TestBatchedApplyAgreesWithTheSheet(t *testing.T) {
	cases := 12
	if s := os.Getenv("TRIAGE_AGREE_CASES"); s != "" {
		cases, _ = strconv.Atoi(s)
	}
	for c := range cases {
		seed := uint64(c + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			bs := backends(t)
			wb, err := bs[0].store.Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			minted := wb.Tab(model.RoleDeadLetter).Records[2].ID
			edits := randomEdits(rng, minted)
			var change *personChange
			if rng.IntN(2) == 0 {
				change = randomChange(rng)
			}
			var outcomes [][]string
			var rows []map[string]map[model.Field]string
			for _, b := range bs {
				if change != nil {
					b.between(func() { b.set(t, change.role, change.id, change.field, change.value) })
				}
				res, err := b.store.Apply(t.Context(), edits)
				if err != nil {
					t.Fatalf("%s: %v", b.name, err)
				}
				outcomes = append(outcomes, describe(edits, res))
				after := map[string]map[model.Field]string{}
				for _, r := range model.Roles {
					for _, id := range seedIDs(r, minted) {
						after[string(r)+"/"+id] = b.row(t, r, id)
					}
				}
				rows = append(rows, after)
			}
			for i := range edits {
				if outcomes[0][i] != outcomes[1][i] {
					t.Errorf("edit %d %+v: sheet %s, postgres %s", i, edits[i], outcomes[0][i], outcomes[1][i])
				}
			}
			for id, sheetRow := range rows[0] {
				if pgRow := rows[1][id]; !equalMaps(sheetRow, pgRow) {
					t.Errorf("%s: sheet %v, postgres %v", id, sheetRow, pgRow)
				}
			}
			if t.Failed() {
				t.Logf("edits: %+v; the other person's change: %+v", edits, change)
			}
		})
	}
}

// personChange is one cell another person writes between a store's read and its write.
type personChange struct {
	role  model.Role
	id    string
	field model.Field
	value string
}

func seedIDs(r model.Role, minted string) []string {
	switch r {
	case model.RoleInbox:
		return []string{"m1", "m2", "m3"}
	case model.RoleDeadLetter:
		return []string{"k1", "k2", minted}
	}
	return []string{"j1", "j2", "j3"}
}

var editable = map[model.Role][]model.Field{
	model.RoleInbox:      {model.FStatus, model.FName},
	model.RoleDeadLetter: {model.FStatus, model.FError, model.FAttempts},
	model.RoleQueue:      {model.FStatus, model.FLastError, model.FAttempts},
}

var values = map[model.Field][]string{
	model.FStatus:    {"new", "read", "done", "dead", "rejected", "pending", "claimed", "error", ""},
	model.FName:      {"Ada", "Bo", "Zed"},
	model.FError:     {"500", "timeout", ""},
	model.FAttempts:  {"0", "1", "3", "4"},
	model.FLastError: {"boom", ""},
}

func randomChange(rng *rand.Rand) *personChange {
	r := model.Roles[rng.IntN(len(model.Roles))]
	ids := seedIDs(r, "")
	id := ids[rng.IntN(2)] // not the dead letter without a key: changing it changes its identity
	f := editable[r][rng.IntN(len(editable[r]))]
	return &personChange{role: r, id: id, field: f, value: values[f][rng.IntN(len(values[f]))]}
}

func randomEdits(rng *rand.Rand, minted string) []model.Edit {
	n := 1 + rng.IntN(12)
	var edits []model.Edit
	for range n {
		r := model.Roles[rng.IntN(len(model.Roles))]
		ids := append(seedIDs(r, minted), "gone")
		e := model.Edit{Tab: model.DefaultTabName(r), ID: ids[rng.IntN(len(ids))], Expect: map[model.Field]string{}, Set: map[model.Field]string{}}
		for range 1 + rng.IntN(2) {
			f := editable[r][rng.IntN(len(editable[r]))]
			e.Set[f] = values[f][rng.IntN(len(values[f]))]
		}
		if rng.IntN(3) > 0 {
			f := editable[r][rng.IntN(len(editable[r]))]
			e.Expect[f] = values[f][rng.IntN(len(values[f]))]
		}
		if r == model.RoleDeadLetter && e.ID == minted && rng.IntN(2) == 0 {
			e.Set[model.FKey] = minted
		}
		edits = append(edits, e)
	}
	return edits
}

// describe is each edit's outcome as both stores must give it.
func describe(edits []model.Edit, res model.ApplyResult) []string {
	out := make([]string, len(edits))
	// Outcomes are matched to edits in order: the same edit may appear twice (the first of
	// two alike is never a conflict where the second is applied).
	seen := func(e model.Edit) int {
		k := fmt.Sprintf("%+v", e)
		for i := range edits {
			if out[i] == "" && fmt.Sprintf("%+v", edits[i]) == k {
				return i
			}
		}
		return -1
	}
	for _, a := range res.Applied {
		if i := seen(a.Edit); i >= 0 {
			out[i] = fmt.Sprintf("applied on row %d", a.Row)
		}
	}
	for _, c := range res.Conflicts {
		if i := seen(c.Edit); i >= 0 {
			out[i] = fmt.Sprintf("conflict on row %d: %s now %q (undecided %v)", c.Row, c.Field, c.Now, c.Undecided)
		}
	}
	for _, e := range res.Missing {
		if i := seen(e); i >= 0 {
			out[i] = "missing"
		}
	}
	return out
}
