package emulator

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

// MaxWorkbookCells is Google's limit on the size of a spreadsheet: the sum
// over its tabs of rowCount × columnCount, empty cells included. A request
// that would pass it (inserting or appending rows or columns, resizing or
// adding a tab, a values write that grows the grid, creating a spreadsheet)
// is answered 400 INVALID_ARGUMENT "This action would increase the number
// of cells in the workbook above the limit of 10000000 cells." and changes
// nothing. A workbook file above it does not load.
const MaxWorkbookCells = 10_000_000

// cellLimitError is Google's answer to a request that would pass
// MaxWorkbookCells.
func cellLimitError() *apiError {
	return badRequest("This action would increase the number of cells in the workbook above the limit of %d cells.", MaxWorkbookCells)
}

// columnLimitError answers a request that would give a tab more columns
// than the Sheets UI can address (ZZZ). It is worded like the cell limit.
func columnLimitError() *apiError {
	return badRequest("This action would increase the number of columns in the sheet above the limit of %d columns.", maxColumns)
}

// gridCells is rows × cols, saturated at MaxWorkbookCells+1 so that absurd
// sizes from a request (2e9, MaxInt64) can neither overflow nor pass.
func gridCells(rows, cols int) int64 {
	const over = MaxWorkbookCells + 1
	if rows <= 0 || cols <= 0 {
		return 0
	}
	if rows > MaxWorkbookCells || cols > MaxWorkbookCells {
		return over
	}
	return min(int64(rows)*int64(cols), over)
}

// fits reports whether the book stays within Google's limits if sheet sh
// becomes rows × cols (sh nil: a new tab of that size is added). It looks at
// sizes only, so it is checked before anything is allocated for them.
func (b *book) fits(sh *sheet, rows, cols int) *apiError {
	if cols > maxColumns {
		return columnLimitError()
	}
	total := gridCells(rows, cols)
	for _, s := range b.sheets {
		if s != sh {
			total += gridCells(s.rowCount, s.colCount)
		}
	}
	if total > MaxWorkbookCells {
		return cellLimitError()
	}
	return nil
}

// grows is fits for a tab that gains addRows rows and addCols columns
// (each >= 0, possibly absurd: the sum is never formed when it could
// overflow).
func (b *book) grows(sh *sheet, addRows, addCols int) *apiError {
	if addRows > MaxWorkbookCells || addCols > MaxWorkbookCells {
		if addCols > maxColumns {
			return columnLimitError()
		}
		return cellLimitError()
	}
	return b.fits(sh, sh.rowCount+addRows, sh.colCount+addCols)
}

// fitsAll is fits for several tabs resized at once (a values:batchUpdate
// writing to several tabs): sizes maps a tab to its new rows × cols.
func (b *book) fitsAll(sizes map[*sheet][2]int) *apiError {
	total := int64(0)
	for _, s := range b.sheets {
		rows, cols := s.rowCount, s.colCount
		if sz, ok := sizes[s]; ok {
			rows, cols = sz[0], sz[1]
		}
		if cols > maxColumns {
			return columnLimitError()
		}
		total += gridCells(rows, cols)
	}
	if total > MaxWorkbookCells {
		return cellLimitError()
	}
	return nil
}

// checkTitle refuses a tab title the workbook format could not load again.
func checkTitle(title string) *apiError {
	if strings.TrimSpace(title) == "" {
		return badRequest("Sheet names cannot be blank.")
	}
	return nil
}

// check reports the first broken invariant of the book: anything newBook
// would refuse in its export. Every request is validated before it changes
// anything, so a failure here is an emulator bug; it runs after every
// write, on the copy the write was applied to, so such a bug answers an
// error instead of keeping (and persisting) a workbook that no longer
// loads. It costs one pass over the stored cells.
func (b *book) check() error {
	if len(b.sheets) == 0 {
		return errors.New("no sheets")
	}
	titles := map[string]bool{}
	ids := map[int64]bool{}
	total := int64(0)
	for i, s := range b.sheets {
		where := fmt.Sprintf("sheets[%d] %q", i, s.title)
		if strings.TrimSpace(s.title) == "" {
			return fmt.Errorf("sheets[%d]: empty title", i)
		}
		key := strings.ToLower(s.title)
		if titles[key] {
			return fmt.Errorf("%s: title used twice", where)
		}
		titles[key] = true
		if s.id < 0 || ids[s.id] {
			return fmt.Errorf("%s: bad or duplicate sheetId %d", where, s.id)
		}
		ids[s.id] = true
		if s.rowCount < 1 || s.colCount < 1 || s.rowCount > maxRows || s.colCount > maxColumns {
			return fmt.Errorf("%s: grid %dx%d", where, s.rowCount, s.colCount)
		}
		total += gridCells(s.rowCount, s.colCount)
		if last := s.lastRow(); last >= s.rowCount {
			return fmt.Errorf("%s: data on row %d, outside its %d rows", where, last+1, s.rowCount)
		}
		if err := s.checkCells(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for c := range s.hidden {
			if c < 0 || c >= s.colCount {
				return fmt.Errorf("%s: hidden column %d outside the grid", where, c)
			}
		}
		for c := range s.valid {
			if c < 0 || c >= s.colCount {
				return fmt.Errorf("%s: validation on column %d outside the grid", where, c)
			}
		}
	}
	if total > MaxWorkbookCells {
		return fmt.Errorf("%d cells, above the limit of %d", total, MaxWorkbookCells)
	}
	if !b.anyVisible() {
		return errors.New("every tab is hidden")
	}
	return b.checkProtectedAll()
}

// checkCells reports a stored cell outside the grid, longer than the cell limit, or marked a
// formula without starting with "=".
func (s *sheet) checkCells() error {
	for r, row := range s.rows {
		for c, v := range row {
			if v.empty() {
				continue
			}
			if c >= s.colCount {
				return fmt.Errorf("data in column %s, outside its %d columns", a1notation.ColumnLetter(c), s.colCount)
			}
			str, isStr := v.v.(string)
			if isStr && len(str) > MaxCellChars && utf8.RuneCountInString(str) > MaxCellChars {
				return fmt.Errorf("cell %s%d holds more than %d characters", a1notation.ColumnLetter(c), r+1, MaxCellChars)
			}
			if v.f && (!isStr || !strings.HasPrefix(str, "=")) {
				return fmt.Errorf("formula cell %s%d does not start with \"=\"", a1notation.ColumnLetter(c), r+1)
			}
		}
	}
	return nil
}
