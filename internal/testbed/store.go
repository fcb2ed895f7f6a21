package testbed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/store"
	"github.com/triage-dev/triage/store/storetest"
)

// SheetBackend is the sheet store over the emulator as store/storetest exercises it: a
// spreadsheet holding storetest.Seed under storetest.Tabs, and extra rows after the seed's
// (cells in schema order; nil for none), read and written by a sheets.Store that writes as
// storetest.Actor and stamps with storetest.Clock. Another person's edits are the
// emulator's own cell writes, and a run's leases are told in the emulator's clock, which
// Expire moves past model.LeaseFor.
func SheetBackend(t *testing.T, extra map[model.Role][][]string) storetest.Backend {
	t.Helper()
	const id = "sheet1"
	wb := &emulator.Workbook{SpreadsheetID: id, Title: "triage"}
	for _, r := range model.Roles {
		rows := [][]any{toAny(storetest.SchemaHeaders(r))}
		for _, row := range append(storetest.Seed()[r], extra[r]...) {
			rows = append(rows, toAny(row))
		}
		wb.Sheets = append(wb.Sheets, &emulator.Sheet{Title: model.DefaultTabName(r), Rows: rows})
	}
	sh := NewSheets(t, wb)
	emu := sh.Emu
	var mu sync.Mutex
	shift := time.Duration(0)
	emu.SetClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(shift)
	})
	open := func(actor string, readOnly bool) *sheets.Store {
		return sh.Store(sheets.Options{SpreadsheetID: id, Tabs: storetest.Tabs(), ReadOnly: readOnly, Actor: actor, Now: storetest.Clock})
	}
	find := func(t *testing.T, r model.Role, rowID string) (int, []any, model.HeaderMap) {
		t.Helper()
		cells := emu.Cells(id, model.DefaultTabName(r))
		hdr := make([]string, len(cells[0]))
		for i, v := range cells[0] {
			hdr[i] = model.CellString(v)
		}
		hm, err := model.MapHeaders(model.DefaultTabConfig(r), hdr)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(cells); i++ {
			row := make([]string, len(hdr))
			for c := range row {
				if c < len(cells[i]) {
					row[c] = model.CellString(cells[i][c])
				}
			}
			if model.RowIdentity(model.DefaultTabConfig(r), hm, row) == rowID {
				return i + 1, cells[i], hm
			}
		}
		t.Fatalf("sheet: no %s row %q", r, rowID)
		return 0, nil, hm
	}
	return storetest.Backend{
		Name:         "sheet",
		Reference:    true,
		Store:        open(storetest.Actor, false),
		ErrReadOnly:  sheets.ErrReadOnly,
		OpenReadOnly: func(t *testing.T) store.Store { return open(storetest.Actor, true) },
		Set: func(t *testing.T, r model.Role, rowID string, f model.Field, v string) {
			row, _, hm := find(t, r, rowID)
			if err := emu.SetCell(id, model.DefaultTabName(r), row, hm.Col(f), v); err != nil {
				t.Fatal(err)
			}
		},
		Row: func(t *testing.T, r model.Role, rowID string) map[model.Field]string {
			_, cells, hm := find(t, r, rowID)
			out := map[model.Field]string{}
			for f, c := range hm.Index {
				if c < len(cells) {
					out[f] = model.CellString(cells[c])
				} else {
					out[f] = ""
				}
			}
			return out
		},
		Between: func(f func()) {
			var done bool
			emu.SetHook(func(r emulator.Request) {
				if r.Method == "spreadsheets.batchUpdate" && !done {
					done = true
					f()
				}
			})
		},
		Runner: func(t *testing.T, actor string) store.Leaser { return open(actor, false) },
		DeadRunner: func(t *testing.T, actor string) store.Leaser {
			// The sheet proves a run gone by its PID on this host (sheets' own tests kill
			// one); from here, a run whose own record is gone is the same state to a reader.
			return deadSheetRun{open(actor, false), emu, id}
		},
		Expire: func(t *testing.T) {
			mu.Lock()
			shift += model.LeaseFor + time.Minute
			mu.Unlock()
		},
	}
}

// deadSheetRun is a sheet runner whose run record is gone right after its Lease.
type deadSheetRun struct {
	*sheets.Store
	emu *emulator.Emulator
	id  string
}

// Lease leases keys, then deletes the run's own record, as if its process were gone.
func (d deadSheetRun) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	l, err := d.Store.Lease(ctx, tab, keys)
	for _, m := range d.emu.DeveloperMetadata(d.id) {
		if m.Key == "triage.run" && fmt.Sprintf("%08x", m.MetadataID) == l.Run {
			if derr := d.emu.DeleteDeveloperMetadata(d.id, m.MetadataID); derr != nil {
				return l, derr
			}
		}
	}
	return l, err
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
