package emulator

import (
	"encoding/json"
	"slices"
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
	other            []string    // the names of the cell's other fields, which aren't stored
}

// UnmarshalJSON decodes a cell's userEnteredValue and names its other fields.
func (c *cellDataIn) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = cellDataIn{}
	for k, v := range m {
		if strings.EqualFold(k, "userEnteredValue") || k == "user_entered_value" { // as the rest of a request decodes
			if err := json.Unmarshal(v, &c.UserEnteredValue); err != nil {
				return err
			}
			continue
		}
		if string(v) != "null" {
			c.other = append(c.other, k)
		}
	}
	slices.Sort(c.other)
	return nil
}

type rowDataIn struct {
	Values []cellDataIn `json:"values"`
}

// updateCells is the batchUpdate request that writes cells by grid
// position. It has no valueInputOption: a stringValue is stored as text,
// never parsed (what RAW does for values.update), and only a formulaValue
// makes a formula. Only the userEnteredValue field is emulated; another
// field in the mask (a format, a note) is refused with 501 (see cellFields).
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
	values, err := cellFields(in.Fields, in.Rows)
	if err != nil {
		return nil, err
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
	if err := checkRows(in.Rows); err != nil {
		return nil, err
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

// cellFields reads the `fields` mask of updateCells and appendCells: it is
// required, and says whether the values (userEnteredValue) are written. A
// field of a cell the emulator doesn't store (a note, a format, a data
// validation) is refused with 501 naming it, rather than answered 200 and
// dropped; so is "*" over rows that carry any such field. A name that is no
// field of a cell is a 400, as Google answers it.
func cellFields(fields string, rows []rowDataIn) (values bool, err *apiError) {
	if strings.TrimSpace(fields) == "" {
		return false, badRequest("At least one field must be specified in 'fields'.")
	}
	for _, f := range strings.Split(fields, ",") {
		f = strings.TrimSpace(f)
		top, _, _ := strings.Cut(strings.ReplaceAll(f, "/", "."), ".")
		switch {
		case f == "*":
			if name := unstoredField(rows); name != "" {
				return false, errf(501, "emulator: updateCells and appendCells store only userEnteredValue; a cell's %s is not emulated", name)
			}
			values = true
		case top == "userEnteredValue":
			values = true
		case f == "":
			return false, badRequest("Invalid field mask %q", fields)
		case slices.Contains(unstoredCellFields, top):
			return false, errf(501, "emulator: updateCells and appendCells store only userEnteredValue; fields %q is not emulated", f)
		default:
			return false, badRequest("Invalid requests.fields: %q is not a field of CellData", f)
		}
	}
	return values, nil
}

// unstoredCellFields are the fields of Google's CellData the emulator doesn't store.
var unstoredCellFields = []string{"note", "userEnteredFormat", "effectiveFormat", "effectiveValue",
	"formattedValue", "hyperlink", "textFormatRuns", "dataValidation", "pivotTable", "dataSourceTable",
	"dataSourceFormula", "chipRuns"}

// unstoredField names the first field of a written cell the emulator doesn't store ("" when
// every cell carries at most a userEnteredValue).
func unstoredField(rows []rowDataIn) string {
	for _, row := range rows {
		for _, cd := range row.Values {
			for _, name := range cd.other {
				return name
			}
		}
	}
	return ""
}

// checkRows validates the cells of a write (50,000 characters a cell, no
// NaN) before any is stored.
func checkRows(rows []rowDataIn) *apiError {
	for i, row := range rows {
		for j, cd := range row.Values {
			if v := cd.UserEnteredValue; v != nil {
				for _, s := range []*string{v.StringValue, v.FormulaValue} {
					if s != nil && len(*s) > MaxCellChars && utf8.RuneCountInString(*s) > MaxCellChars {
						return badRequest("Your input contains more than the maximum of %d characters in a single cell.", MaxCellChars)
					}
				}
				if v.NumberValue != nil && (*v.NumberValue != *v.NumberValue) {
					return badRequest("Invalid rows[%d].values[%d]: number is NaN", i, j)
				}
			}
		}
	}
	return nil
}

// appendCells is the batchUpdate request that adds rows of cells after the
// last row with data in a tab ("Appends new cells after the last row with
// data in a sheet, inserting new rows into the sheet if necessary"). The
// last row with data is the last row holding any value, in any column; the
// first appended row is the one after it (row 1 on an empty tab), from
// column A. The grid grows to hold the rows (rows and, for a row wider
// than the grid, columns), within the workbook limit. Cells are decoded as
// updateCells decodes them: a stringValue is text, never parsed; only a
// formulaValue makes a formula. `fields` is required; without
// userEnteredValue in it the rows are added and hold no value. tableId is
// not emulated (501).
func (b *book) appendCells(raw json.RawMessage) (any, *apiError) {
	var in struct {
		SheetID int64       `json:"sheetId"`
		Rows    []rowDataIn `json:"rows"`
		Fields  string      `json:"fields"`
		TableID string      `json:"tableId"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	if in.TableID != "" {
		return nil, errf(501, "emulator: appendCells to a table is not emulated")
	}
	values, err := cellFields(in.Fields, in.Rows)
	if err != nil {
		return nil, err
	}
	sh, _ := b.sheetByID(in.SheetID)
	if sh == nil {
		return nil, badRequest("No grid with id: %d", in.SheetID)
	}
	if err := checkRows(in.Rows); err != nil {
		return nil, err
	}
	if len(in.Rows) == 0 {
		return map[string]any{}, nil
	}
	r0 := sh.lastRow() + 1
	width := 0
	for _, row := range in.Rows {
		width = max(width, len(row.Values))
	}
	// Sizes come from the request and the sheet, both bounded (the body by
	// maxBody, the sheet by the limit): the sums cannot overflow.
	rows, cols := max(sh.rowCount, r0+len(in.Rows)), max(sh.colCount, width)
	if err := b.fits(sh, rows, cols); err != nil {
		return nil, err
	}
	sh.rowCount, sh.colCount = rows, cols
	if !values {
		return map[string]any{}, nil
	}
	for i, row := range in.Rows {
		for j, cd := range row.Values {
			sh.set(r0+i, j, cd.UserEnteredValue.cell())
		}
	}
	return map[string]any{}, nil
}

// copyPaste is the batchUpdate request that copies a block of cells to
// another place, in the same tab or another one. The emulator has no
// formats: PASTE_NORMAL (the default) copies each cell as it is, a formula
// staying a formula with its text unchanged (the emulator computes no
// formula, so relative references are not adjusted); PASTE_VALUES copies
// what each cell holds, a formula becoming its value (what values.get
// renders for it; a formula the emulator doesn't compute, see formula.go,
// is refused with 501). Data
// validation is not copied (the model keeps one rule per column). Empty
// source cells empty the destination cells they land on.
//
// As Google documents: the whole source is pasted from the destination's
// top-left cell, even past the destination's end when the destination is
// smaller; when the destination spans a multiple of the source's height
// (or width), the source is repeated to fill it. A missing end index is
// the grid's edge, so a destination given by its top-left only spans to
// the edge and repeats the source whenever the rows (columns) left are a
// multiple of the source's. Nothing grows: a paste past the destination
// tab's grid is refused (400 "Range (...) exceeds grid limits"). The
// source is read before anything is written, so the two may overlap.
// pasteOrientation TRANSPOSE and the other paste types are not emulated
// (501).
func (b *book) copyPaste(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Source           *gridRange `json:"source"`
		Destination      *gridRange `json:"destination"`
		PasteType        string     `json:"pasteType"`
		PasteOrientation string     `json:"pasteOrientation"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	values, err := pasteMode(in.PasteType, in.PasteOrientation)
	if err != nil {
		return nil, err
	}
	if in.Source == nil {
		return nil, badRequest("source is required")
	}
	if in.Destination == nil {
		return nil, badRequest("destination is required")
	}
	ssh, src, err := b.gridSpan(*in.Source)
	if err != nil {
		return nil, err
	}
	dsh, dst, err := b.gridSpan(*in.Destination)
	if err != nil {
		return nil, err
	}
	h, w := src.r1-src.r0, src.c1-src.c0
	if h == 0 || w == 0 {
		return map[string]any{}, nil
	}
	// How many times the source repeats in each direction.
	kr, kc := 1, 1
	if dh := dst.r1 - dst.r0; dh > h && dh%h == 0 {
		kr = dh / h
	}
	if dw := dst.c1 - dst.c0; dw > w && dw%w == 0 {
		kc = dw / w
	}
	out := rect{dst.r0, dst.r0 + h*kr, dst.c0, dst.c0 + w*kc}
	if err := checkRect(dsh, out); err != nil {
		return nil, err
	}
	// PASTE_VALUES pastes what each formula computes: one whose value the emulator doesn't
	// compute is refused rather than pasted as its text.
	if values {
		if err := formulaIn(ssh, src, "UNFORMATTED_VALUE"); err != nil {
			return nil, err
		}
	}
	// Read the source's stored cells first (the blocks may overlap).
	buf := ssh.copyOut(src, values)
	for i := 0; i < out.r1-out.r0; i++ {
		r := out.r0 + i
		var srow []cell
		if i%h < len(buf) {
			srow = buf[i%h]
		}
		stored := 0
		if r < len(dsh.rows) {
			stored = len(dsh.rows[r])
		}
		if len(srow) == 0 && stored <= out.c0 {
			continue // nothing to write, nothing to clear
		}
		for j := 0; j < out.c1-out.c0; j++ {
			c := out.c0 + j
			var v cell
			if j%w < len(srow) {
				v = srow[j%w]
			}
			dsh.set(r, c, v)
		}
	}
	return map[string]any{}, nil
}

// pasteMode reads a copyPaste's type and orientation: values is set for PASTE_VALUES; the
// types and the orientation not emulated answer 501, unknown ones 400.
func pasteMode(pasteType, orientation string) (values bool, err *apiError) {
	switch pasteType {
	case "", "PASTE_NORMAL":
	case "PASTE_VALUES":
		values = true
	case "PASTE_FORMAT", "PASTE_NO_BORDERS", "PASTE_FORMULA", "PASTE_DATA_VALIDATION", "PASTE_CONDITIONAL_FORMATTING":
		return false, errf(501, "emulator: pasteType %s is not emulated (only PASTE_NORMAL and PASTE_VALUES are)", pasteType)
	default:
		return false, enumError("paste_type", "PasteType", pasteType)
	}
	switch orientation {
	case "", "NORMAL":
	case "TRANSPOSE":
		return false, errf(501, "emulator: pasteOrientation TRANSPOSE is not emulated")
	default:
		return false, enumError("paste_orientation", "PasteOrientation", orientation)
	}
	return values, nil
}

// copyOut copies the stored cells of src, each row without its trailing empty cells; with
// values, a formula cell becomes its value.
func (s *sheet) copyOut(src rect, values bool) [][]cell {
	buf := make([][]cell, max(0, min(src.r1, len(s.rows))-src.r0))
	for i := range buf {
		row := s.rows[src.r0+i]
		n := min(src.c1, len(row)) - src.c0
		for n > 0 && row[src.c0+n-1].empty() {
			n--
		}
		if n <= 0 {
			continue
		}
		buf[i] = make([]cell, n)
		for j := range buf[i] {
			v := row[src.c0+j]
			if values && v.f {
				v = cell{v: render(v, "UNFORMATTED_VALUE")}
			}
			buf[i][j] = v
		}
	}
	return buf
}

func rowsWider(rows []rowDataIn, w int) bool {
	for _, r := range rows {
		if len(r.Values) > w {
			return true
		}
	}
	return false
}
