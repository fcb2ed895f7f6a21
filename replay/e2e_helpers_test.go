package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

const e2eTab = "failed_calls"

// sheetFixture is the emulator behind a real server, a real sheets.Store over it, and the
// dead-letter tab loaded through it.
type sheetFixture struct {
	emu   *emulator.Emulator
	store *sheets.Store
	id    string
}

func newSheetFixture(t testing.TB, rows []row) *sheetFixture {
	t.Helper()
	return newSheetFixtureTC(t, dlConfig, rows)
}

// newSheetFixtureTC is newSheetFixture with the store's dead-letter tab configured by tc.
func newSheetFixtureTC(t testing.TB, tc model.TabConfig, rows []row) *sheetFixture {
	t.Helper()
	grid := [][]any{anyRow(dlHeader)}
	for _, r := range rows {
		grid = append(grid, gridRow(r.cells()))
	}
	wb := &emulator.Workbook{SpreadsheetID: "replay-e2e", Title: "Replay", Sheets: []*emulator.Sheet{{Title: e2eTab, Rows: grid, RowCount: len(grid) + 10}}}
	sh := testbed.NewSheets(t, wb)
	st := sh.Store(sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: []model.TabConfig{tc}})
	return &sheetFixture{emu: sh.Emu, store: st, id: wb.SpreadsheetID}
}

// gridRow is a row's cells as the emulator holds them: an empty cell is no value.
func gridRow(cells []string) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		if c != "" {
			out[i] = c
		}
	}
	return out
}

func anyRow(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (f *sheetFixture) load(t testing.TB) *model.Table {
	t.Helper()
	return loadDeadLetters(t, f.store)
}

// loadDeadLetters loads the store's dead-letter tab, failing the test if it can't.
func loadDeadLetters(t testing.TB, st *sheets.Store) *model.Table {
	t.Helper()
	wb, err := st.Load(context.Background())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	if tab == nil {
		t.Fatalf("no dead-letter tab: missing %v broken %v", wb.Missing, wb.Broken)
	}
	return tab
}

// cell returns data row i's (0-based) field as text.
func (f *sheetFixture) cell(i int, col int) string {
	rows := f.emu.Cells(f.id, e2eTab)
	if i+1 >= len(rows) || col >= len(rows[i+1]) {
		return ""
	}
	return model.CellString(rows[i+1][col])
}

// column indexes of dlHeader.
const (
	cError      = 4
	cAttempts   = 5
	cKey        = 7
	cStatus     = 8
	cReplayedAt = 9
)

func sortedMap(m map[string]string) string {
	ks := slices.Collect(maps.Keys(m))
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		v, _ := json.Marshal(m[k])
		fmt.Fprintf(&b, "%s=%s ", k, v)
	}
	return b.String()
}
