package emulator

import (
	"fmt"
	"strings"
)

// Direct mutation, for tests that simulate another writer (a person in the
// Sheets UI, a contact form appending rows). These calls are not counted or
// logged, but they do persist (SetPersist). Rows are 1-based like the UI;
// columns are 0-based. Like the API, they refuse what would pass Google's
// limits (MaxWorkbookCells) and change nothing when they fail.

// lookup finds a tab; the caller holds e.mu.
func (e *Emulator) lookup(id, tab string) (*sheet, error) {
	b := e.books[id]
	if b == nil {
		return nil, fmt.Errorf("emulator: no spreadsheet %q", id)
	}
	sh := b.sheetByTitle(tab)
	if sh == nil {
		return nil, fmt.Errorf("emulator: spreadsheet %q has no tab %q", id, tab)
	}
	return sh, nil
}

// mutate applies f to a copy of the tab's workbook and commits the copy
// (checked, persisted) only if f succeeds: a failed call changes nothing.
func (e *Emulator) mutate(id, tab string, f func(b *book, sh *sheet) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.lookup(id, tab); err != nil {
		return err
	}
	work := e.books[id].clone()
	if err := f(work, work.sheetByTitle(tab)); err != nil {
		return err
	}
	return e.commit(work)
}

// DeleteSheet deletes a tab, as a person would from the tab's menu (and as deleteSheet does:
// never the last visible one).
func (e *Emulator) DeleteSheet(id, tab string) error {
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if _, err := b.deleteSheet(fmt.Appendf(nil, `{"sheetId":%d}`, sh.id)); err != nil {
			return fmt.Errorf("emulator: DeleteSheet: %s", err.msg)
		}
		return nil
	})
}

// Cells returns a copy of a tab's rows (trailing empties trimmed; a
// formula cell holds its "=..." text), nil if the tab does not exist.
func (e *Emulator) Cells(id, tab string) [][]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	sh, err := e.lookup(id, tab)
	if err != nil {
		return nil
	}
	return exportRows(sh.rows)
}

// limitErr turns an API limit error into a direct method's error.
func limitErr(method string, err *apiError) error {
	return fmt.Errorf("emulator: %s: %s", method, err.msg)
}

// SetCell stores v (string, number, bool or nil; strings are stored as
// typed, never as formulas) at 1-based row and 0-based col, growing the grid.
func (e *Emulator) SetCell(id, tab string, row, col int, v any) error {
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if row < 1 || col < 0 || row > maxRows || col >= maxColumns {
			return fmt.Errorf("emulator: SetCell: no cell at row %d, column %d", row, col)
		}
		nv, ok := normValue(v)
		if !ok {
			return fmt.Errorf("emulator: SetCell: unsupported value %#v", v)
		}
		if nv == nil {
			if row-1 < len(sh.rows) && col < len(sh.rows[row-1]) {
				sh.rows[row-1][col] = cell{}
			}
			return nil
		}
		if err := b.fits(sh, max(sh.rowCount, row), max(sh.colCount, col+1)); err != nil {
			return limitErr("SetCell", err)
		}
		sh.set(row-1, col, cell{v: nv})
		return nil
	})
}

// InsertRows inserts rows before 1-based row at (at = last row + 1
// appends), shifting the rows below down and growing the grid.
func (e *Emulator) InsertRows(id, tab string, at int, rows [][]any) error {
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if at < 1 || at > sh.rowCount+1 {
			return fmt.Errorf("emulator: InsertRows: row %d is outside 1..%d", at, sh.rowCount+1)
		}
		width := 0
		for _, r := range rows {
			width = max(width, len(r))
		}
		if err := b.grows(sh, len(rows), max(width-sh.colCount, 0)); err != nil {
			return limitErr("InsertRows", err)
		}
		cells := make([][]cell, len(rows))
		for i, r := range rows {
			cells[i] = make([]cell, len(r))
			for j, v := range r {
				nv, ok := normValue(v)
				if !ok {
					return fmt.Errorf("emulator: InsertRows: row %d column %d: unsupported value %#v", i, j, v)
				}
				cells[i][j] = cell{v: nv}
			}
		}
		sh.colCount = max(sh.colCount, width)
		for len(sh.rows) < at-1 {
			sh.rows = append(sh.rows, nil)
		}
		sh.rows = append(sh.rows[:at-1], append(cells, sh.rows[at-1:]...)...)
		sh.rowCount += len(rows)
		shiftProtected(sh, true, at-1, len(rows), sh.rowCount)
		return nil
	})
}

// DeleteRow removes 1-based row, shifting the rows below up.
func (e *Emulator) DeleteRow(id, tab string, row int) error {
	return e.mutate(id, tab, func(_ *book, sh *sheet) error {
		if row < 1 || row > sh.rowCount {
			return fmt.Errorf("emulator: DeleteRow: row %d is outside 1..%d", row, sh.rowCount)
		}
		if sh.rowCount == 1 {
			return fmt.Errorf("emulator: DeleteRow: can't delete all the rows on the sheet")
		}
		deleteRows(sh, row-1, row)
		return nil
	})
}

// InsertColumns inserts n empty columns before 0-based column at (at =
// columnCount appends), as insertDimension COLUMNS does: the cells, hidden
// columns, data validation and protected ranges at and right of it move
// right, and the grid gains n columns (within MaxWorkbookCells).
func (e *Emulator) InsertColumns(id, tab string, at, n int) error {
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if at < 0 || at > sh.colCount {
			return fmt.Errorf("emulator: InsertColumns: column %d is outside 0..%d", at, sh.colCount)
		}
		if n < 1 {
			return fmt.Errorf("emulator: InsertColumns: %d columns (want at least 1)", n)
		}
		if err := b.grows(sh, 0, n); err != nil {
			return limitErr("InsertColumns", err)
		}
		insertCols(sh, at, n)
		return nil
	})
}

// DeleteColumn removes 0-based column col, as deleteDimension COLUMNS
// does: the cells, hidden columns, data validation and protected ranges
// right of it move left, and the grid loses a column.
func (e *Emulator) DeleteColumn(id, tab string, col int) error {
	return e.mutate(id, tab, func(_ *book, sh *sheet) error {
		if col < 0 || col >= sh.colCount {
			return fmt.Errorf("emulator: DeleteColumn: column %d is outside 0..%d", col, sh.colCount-1)
		}
		if sh.colCount == 1 {
			return fmt.Errorf("emulator: DeleteColumn: can't delete all the columns on the sheet")
		}
		deleteCols(sh, col, col+1)
		return nil
	})
}

// SortRows sorts rows 2 and below (row 1 is the header) by the 0-based
// column col, as the Sheets UI does: stable, numbers before text before
// booleans, empty cells last.
func (e *Emulator) SortRows(id, tab string, col int, desc bool) error {
	return e.mutate(id, tab, func(_ *book, sh *sheet) error {
		if col < 0 || col >= sh.colCount {
			return fmt.Errorf("emulator: SortRows: column %d is outside the grid", col)
		}
		sortBlock(sh, 1, sh.rowCount, 0, -1, []sortSpec{{col, desc}})
		return nil
	})
}

// Formula reports whether the cell at 1-based row and 0-based col holds a
// formula (written with USER_ENTERED "=...", or "+..."/"-..." text).
func (e *Emulator) Formula(id, tab string, row, col int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	sh, err := e.lookup(id, tab)
	if err != nil {
		return false
	}
	return sh.get(row-1, col).f
}

// SetFormula stores a formula ("=..." text) at 1-based row and 0-based
// col, as a USER_ENTERED write would.
func (e *Emulator) SetFormula(id, tab string, row, col int, formula string) error {
	if !strings.HasPrefix(formula, "=") || len(formula) < 2 {
		return fmt.Errorf("emulator: SetFormula: %q does not start with \"=\"", formula)
	}
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if row < 1 || col < 0 || row > maxRows || col >= maxColumns {
			return fmt.Errorf("emulator: SetFormula: no cell at row %d, column %d", row, col)
		}
		if err := b.fits(sh, max(sh.rowCount, row), max(sh.colCount, col+1)); err != nil {
			return limitErr("SetFormula", err)
		}
		sh.set(row-1, col, cell{v: formula, f: true})
		return nil
	})
}
