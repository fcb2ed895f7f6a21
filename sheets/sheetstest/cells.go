package sheetstest

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

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
		Range  *gridRange   `json:"range"`
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
	var sh *sheet
	var x rect
	bounded := in.Range != nil
	if bounded {
		var err *apiError
		if sh, x, err = b.gridSpan(*in.Range); err != nil {
			return nil, err
		}
	} else {
		if sh, _ = b.sheetByID(in.Start.SheetID); sh == nil {
			return nil, badRequest("No grid with id: %d", in.Start.SheetID)
		}
		x = rect{in.Start.RowIndex, in.Start.RowIndex, in.Start.ColumnIndex, in.Start.ColumnIndex}
		// The start is checked before the rows are added to it: an absurd
		// index must not overflow into a small one.
		if x.r0 >= 0 && x.c0 >= 0 && x.r0 <= sh.rowCount && x.c0 <= sh.colCount {
			x.r1 += len(in.Rows)
			for _, row := range in.Rows {
				x.c1 = max(x.c1, x.c0+len(row.Values))
			}
		}
		if err := checkRect(sh, x); err != nil {
			return nil, err
		}
	}
	r0, r1, c0, c1 := x.r0, x.r1, x.c0, x.c1
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
		if r-r0 >= len(in.Rows) && r >= len(sh.rows) {
			break // the rest of the range is empty already
		}
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
