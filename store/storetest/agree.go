package storetest

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

// update records the reference store's answers to the random calls (agreeCases) in
// testdata/agree.txt: go test ./sheets -run TestStoreContract/BatchedApplyAgreesWithTheSheet -storetest.update.
var update = flag.Bool("storetest.update", false, "record the reference (sheet) store's answers in store/storetest/testdata/agree.txt")

// agreeRecorded is the sheet store's answers to the random calls, case by case: what every
// store must answer.
//
//go:embed testdata/agree.txt
var agreeRecorded string

// agreeCases is how many random calls a run makes: 12, or TRIAGE_AGREE_CASES (more than are
// recorded: record them from the sheet store first, with -storetest.update).
func agreeCases() int {
	if s := os.Getenv("TRIAGE_AGREE_CASES"); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	return 12
}

// testBatchedApplyAgreesWithTheSheet: the postgres store's batched Apply (every edit read in
// one batch, decided in memory in order, each row written once) answers as the sheet store
// does, edit for edit, on random calls: edits of the same row one after another (a later one
// seeing an earlier one's values), expectations right and wrong, IDs that are gone, a minted
// key written, a setting that changes nothing, and another person's change between the read
// and the write. Each case runs on a fresh backend; the edits' outcomes (applied on which
// row, missing, or a conflict on which field with what value now) and every row afterwards
// must be the sheet store's, as recorded in testdata/agree.txt (Backend.Reference records
// them).
func testBatchedApplyAgreesWithTheSheet(t *testing.T, open func(t *testing.T) Backend) {
	recorded := parseRecorded(agreeRecorded)
	got := map[string]string{}
	var reference bool
	for c := range agreeCases() {
		seed := uint64(c + 1)
		name := fmt.Sprint("seed", seed)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			b := open(t)
			reference = b.Reference
			wb, err := b.Store.Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			minted := wb.Tab(model.RoleDeadLetter).Records[2].ID
			edits := randomEdits(rng, minted)
			var change *personChange
			if rng.IntN(2) == 0 {
				change = randomChange(rng)
			}
			if change != nil {
				b.Between(func() { b.Set(t, change.role, change.id, change.field, change.value) })
			}
			res, err := b.Store.Apply(t.Context(), edits)
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			var out strings.Builder
			for i, o := range describe(edits, res) {
				fmt.Fprintf(&out, "edit %d: %s\n", i, o)
			}
			for _, r := range model.Roles {
				for _, id := range seedIDs(r, minted) {
					row := b.Row(t, r, id)
					fields := make([]string, 0, len(row))
					for f := range row {
						fields = append(fields, string(f))
					}
					slices.Sort(fields)
					fmt.Fprintf(&out, "%s/%s:", r, id)
					for _, f := range fields {
						fmt.Fprintf(&out, " %s=%q", f, row[model.Field(f)])
					}
					out.WriteString("\n")
				}
			}
			got[name] = out.String()
			if *update {
				return
			}
			want, ok := recorded[name]
			if !ok {
				t.Fatalf("no recorded answers for %s: record the sheet store's with -storetest.update", name)
			}
			if got[name] != want {
				t.Errorf("%s answers\n%s\nthe sheet store answered\n%s", b.Name, got[name], want)
				t.Logf("edits: %+v; the other person's change: %+v", edits, change)
			}
		})
	}
	if *update && !t.Failed() {
		if !reference {
			t.Fatal("-storetest.update records the reference store's answers: run it on the sheet store (go test ./sheets)")
		}
		writeRecorded(t, got)
	}
}

// parseRecorded splits testdata/agree.txt into its cases: a line "== NAME" starts each.
func parseRecorded(s string) map[string]string {
	out := map[string]string{}
	for _, block := range strings.Split("\n"+s, "\n== ")[1:] {
		name, body, _ := strings.Cut(block, "\n")
		out[name] = strings.TrimSuffix(body, "\n") + "\n"
	}
	return out
}

// writeRecorded writes the cases got to testdata/agree.txt, beside this file.
func writeRecorded(t *testing.T, got map[string]string) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("can't find store/storetest's source")
	}
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimPrefix(a, "seed"))
		y, _ := strconv.Atoi(strings.TrimPrefix(b, "seed"))
		return x - y
	})
	var buf bytes.Buffer
	buf.WriteString("# The sheet store's answers to store/storetest's random calls (agree.go), recorded with\n# go test ./sheets -run TestStoreContract/BatchedApplyAgreesWithTheSheet -storetest.update\n")
	for _, n := range names {
		fmt.Fprintf(&buf, "== %s\n%s", n, got[n])
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(file), "testdata", "agree.txt"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
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
