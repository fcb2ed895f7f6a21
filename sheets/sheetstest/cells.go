package sheetstest

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// gridRangeIn is a GridRange of a request: half-open, 0-based; a missing
// bound is unbounded (Google's rule).
type gridRangeIn struct {
	SheetID          int64 `json:"sheetId"`
	StartRowIndex    *int  `json:"startRowIndex"`
	EndRowIndex      *int  `json:"endRowIndex"`
	StartColumnIndex *int  `json:"startColumnIndex"`
	EndColumnIndex   *int  `json:"endColumnIndex"`
}

type gridCoordIn struct {
	SheetID     int64 `json:"sheetId"`
	RowIndex    int   `json:"rowIndex"`
	ColumnIndex int   `json:"columnIndex"`
}

type cellDataIn struct {
	UserEnteredValue *extValueIn `json:"userEnteredValue"`
}

type rowDataIn struct {
	Values []cellDataIn `json:"values"`
}

// updateCells is the batchUpdate request that writes cells by grid
// position. It has no valueInputOption: a stringValue is stored as text,
// never parsed (what RAW does for values.update), and only a formulaValue
// makes a formula. Only the userEnteredValue field is emulated; other
// fields in the mask (formats, notes) are accepted and change nothing.
//
// As in Google: `fields` is required; with `start`, only the cells rows
// cover are touched; with `range`, cells of the range that rows do not
// cover are cleared (of the masked fields); a write outside the grid is an
// error (updateCells never grows the grid, unlike values:append).
func (b *book) updateCells(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Rows   []rowDataIn  `json:"rows"`
		Fields string       `json:"fields"`
		Start  *gridCoordIn `json:"start"`
		Range  *gridRangeIn `json:"range"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Fields) == "" {
		return nil, badRequest("At least one field must be specified in 'fields'.")
	}
	values := false
	for _, f := range strings.Split(in.Fields, ",") {
		switch f = strings.TrimSpace(f); {
		case f == "*" || f == "userEnteredValue" || strings.HasPrefix(f, "userEnteredValue."):
			values = true
		case f == "":
			return nil, badRequest("Invalid field mask %q", in.Fields)
		}
	}
	if (in.Start == nil) == (in.Range == nil) {
		return nil, badRequest("Exactly one of start or range must be set.")
	}
	var sheetID int64
	var r0, c0, r1, c1 int
	bounded := false
	if in.Start != nil {
		sheetID, r0, c0 = in.Start.SheetID, in.Start.RowIndex, in.Start.ColumnIndex
	} else {
		sheetID = in.Range.SheetID
		r0, c0 = deref(in.Range.StartRowIndex, 0), deref(in.Range.StartColumnIndex, 0)
		bounded = true
	}
	sh, _ := b.sheetByID(sheetID)
	if sh == nil {
		return nil, badRequest("No grid with id: %d", sheetID)
	}
	if bounded {
		r1, c1 = deref(in.Range.EndRowIndex, sh.rowCount), deref(in.Range.EndColumnIndex, sh.colCount)
	} else {
		r1, c1 = r0+len(in.Rows), c0
		for _, row := range in.Rows {
			c1 = max(c1, c0+len(row.Values))
		}
	}
	if r0 < 0 || c0 < 0 || r1 < r0 || c1 < c0 {
		return nil, badRequest("Invalid range: rows [%d, %d), columns [%d, %d)", r0, r1, c0, c1)
	}
	if r1 > sh.rowCount || c1 > sh.colCount {
		return nil, badRequest("Range (%s!R%dC%d:R%dC%d) exceeds grid limits. Max rows: %d, max columns: %d",
			QuoteSheet(sh.title), r0+1, c0+1, r1, c1, sh.rowCount, sh.colCount)
	}
	if bounded && (len(in.Rows) > r1-r0 || rowsWider(in.Rows, c1-c0)) {
		return nil, badRequest("Attempting to write row: %d, beyond the last requested row of: %d", r0+len(in.Rows), r1)
	}
	// Validate every cell before changing any.
	for i, row := range in.Rows {
		for j, cd := range row.Values {
			if v := cd.UserEnteredValue; v != nil {
				for _, s := range []*string{v.StringValue, v.FormulaValue} {
					if s != nil && len(*s) > MaxCellChars && utf8.RuneCountInString(*s) > MaxCellChars {
						return nil, badRequest("Your input contains more than the maximum of %d characters in a single cell.", MaxCellChars)
					}
				}
				if v.NumberValue != nil && (*v.NumberValue != *v.NumberValue) {
					return nil, badRequest("Invalid rows[%d].values[%d]: number is NaN", i, j)
				}
			}
		}
	}
	if !values {
		return map[string]any{}, nil
	}
	for r := r0; r < r1; r++ {
		var row []cellDataIn
		if r-r0 < len(in.Rows) {
			row = in.Rows[r-r0].Values
		}
		for c := c0; c < c1; c++ {
			if c-c0 < len(row) {
				sh.set(r, c, row[c-c0].UserEnteredValue.cell())
			} else if bounded {
				sh.set(r, c, cell{})
			}
		}
	}
	return map[string]any{}, nil
}

func rowsWider(rows []rowDataIn, w int) bool {
	for _, r := range rows {
		if len(r.Values) > w {
			return true
		}
	}
	return false
}
