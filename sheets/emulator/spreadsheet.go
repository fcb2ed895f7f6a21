package emulator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ---- response shapes (a subset of the v4 Spreadsheet resource) ----

type ssProps struct {
	Title      string `json:"title"`
	Locale     string `json:"locale"`
	AutoRecalc string `json:"autoRecalc"`
	TimeZone   string `json:"timeZone"`
}

type gridProps struct {
	RowCount    int `json:"rowCount"`
	ColumnCount int `json:"columnCount"`
}

type sheetProps struct {
	SheetID        int64     `json:"sheetId"`
	Title          string    `json:"title"`
	Index          int       `json:"index"`
	SheetType      string    `json:"sheetType"`
	GridProperties gridProps `json:"gridProperties"`
	Hidden         bool      `json:"hidden,omitempty"`
}

type extValue struct {
	StringValue  *string  `json:"stringValue,omitempty"`
	NumberValue  *float64 `json:"numberValue,omitempty"`
	BoolValue    *bool    `json:"boolValue,omitempty"`
	FormulaValue *string  `json:"formulaValue,omitempty"`
}

type condValue struct {
	UserEnteredValue string `json:"userEnteredValue"`
}

type validation struct {
	Condition struct {
		Type   string      `json:"type"`
		Values []condValue `json:"values,omitempty"`
	} `json:"condition"`
	Strict       bool `json:"strict,omitempty"`
	ShowCustomUI bool `json:"showCustomUi,omitempty"`
}

type cellData struct {
	UserEnteredValue *extValue   `json:"userEnteredValue,omitempty"`
	EffectiveValue   *extValue   `json:"effectiveValue,omitempty"`
	FormattedValue   string      `json:"formattedValue,omitempty"`
	DataValidation   *validation `json:"dataValidation,omitempty"`
}

type rowData struct {
	Values []cellData `json:"values,omitempty"`
}

type dimProps struct {
	HiddenByUser bool `json:"hiddenByUser,omitempty"`
	PixelSize    int  `json:"pixelSize"`
}

type gridData struct {
	StartRow       int        `json:"startRow,omitempty"`
	StartColumn    int        `json:"startColumn,omitempty"`
	RowData        []rowData  `json:"rowData,omitempty"`
	RowMetadata    []dimProps `json:"rowMetadata,omitempty"`
	ColumnMetadata []dimProps `json:"columnMetadata,omitempty"`
}

type sheetOut struct {
	Properties      sheetProps `json:"properties"`
	Data            []gridData `json:"data,omitempty"`
	ProtectedRanges []protOut  `json:"protectedRanges,omitempty"`
}

type spreadsheetOut struct {
	SpreadsheetID  string     `json:"spreadsheetId"`
	Properties     ssProps    `json:"properties"`
	Sheets         []sheetOut `json:"sheets"`
	SpreadsheetURL string     `json:"spreadsheetUrl"`
	// DeveloperMetadata is the spreadsheet-level metadata (metadata.go).
	DeveloperMetadata []devMetaOut `json:"developerMetadata,omitempty"`
}

func (b *book) props(i int) sheetProps {
	s := b.sheets[i]
	return sheetProps{SheetID: s.id, Title: s.title, Index: i, SheetType: "GRID",
		GridProperties: gridProps{RowCount: s.rowCount, ColumnCount: s.colCount}, Hidden: s.tabHidden}
}

// sheetOut is the Sheet resource of tab i, without data.
func (b *book) sheetOut(i int) sheetOut {
	so := sheetOut{Properties: b.props(i)}
	for _, p := range b.sheets[i].protected {
		so.ProtectedRanges = append(so.ProtectedRanges, protectedOut(b.sheets[i], p))
	}
	return so
}

func extOf(v any) *extValue {
	switch x := v.(type) {
	case string:
		return &extValue{StringValue: &x}
	case float64:
		return &extValue{NumberValue: &x}
	case bool:
		return &extValue{BoolValue: &x}
	}
	return nil
}

func (s *sheet) cellData(r, c int) cellData {
	var cd cellData
	v := s.get(r, c)
	if !v.empty() {
		if v.f {
			f := v.v.(string)
			cd.UserEnteredValue = &extValue{FormulaValue: &f}
			// Its value is what values.get renders for it, so both APIs agree on what the
			// cell holds; a value the emulator doesn't compute is refused before this (see
			// spreadsheet's formula check).
			cd.EffectiveValue = extOf(render(v, "UNFORMATTED_VALUE"))
		} else {
			cd.UserEnteredValue = extOf(v.v)
			cd.EffectiveValue = extOf(v.v)
		}
		cd.FormattedValue = render(v, "FORMATTED_VALUE").(string)
	}
	if vals, ok := s.valid[c]; ok && r >= 1 {
		dv := &validation{ShowCustomUI: true}
		dv.Condition.Type = "ONE_OF_LIST"
		for _, x := range vals {
			dv.Condition.Values = append(dv.Condition.Values, condValue{x})
		}
		cd.DataValidation = dv
	}
	return cd
}

// grid builds the GridData of a block, trimming trailing empty cells and
// rows (a cell with a validation rule is not empty). Without cells it has
// only the row and column metadata.
func (s *sheet) grid(x rect, cells bool) gridData {
	g := gridData{StartRow: x.r0, StartColumn: x.c0}
	for r := x.r0; r < x.r1; r++ {
		g.RowMetadata = append(g.RowMetadata, dimProps{PixelSize: 21})
	}
	for c := x.c0; c < x.c1; c++ {
		g.ColumnMetadata = append(g.ColumnMetadata, dimProps{HiddenByUser: s.hidden[c], PixelSize: 100})
	}
	lastRow := len(s.rows)
	if len(s.valid) > 0 {
		lastRow = x.r1
	}
	if !cells {
		lastRow = 0
	}
	for r := x.r0; r < min(x.r1, lastRow); r++ {
		var rd rowData
		n := 0
		for c := x.c0; c < x.c1; c++ {
			cd := s.cellData(r, c)
			rd.Values = append(rd.Values, cd)
			if cd != (cellData{}) {
				n = len(rd.Values)
			}
		}
		rd.Values = rd.Values[:n]
		if n == 0 {
			rd.Values = nil
		}
		g.RowData = append(g.RowData, rd)
	}
	n := len(g.RowData)
	for n > 0 && g.RowData[n-1].Values == nil {
		n--
	}
	g.RowData = g.RowData[:n]
	return g
}

// spreadsheet builds the Spreadsheet resource; withData adds GridData
// (with cells when cells is set) for the whole sheets or for ranges.
//
// valueOpt is the render option whose values the answer holds ("" for none: the cells'
// effective and formatted values aren't asked for): a formula cell whose value the emulator
// doesn't compute is refused (501) when the answer would hold it.
func (b *book) spreadsheet(withData, cells bool, ranges []string, valueOpt string) (*spreadsheetOut, *apiError) {
	out := &spreadsheetOut{
		SpreadsheetID:     b.id,
		Properties:        ssProps{Title: b.title, Locale: b.locale, AutoRecalc: "ON_CHANGE", TimeZone: b.tz},
		Sheets:            []sheetOut{},
		SpreadsheetURL:    "https://docs.google.com/spreadsheets/d/" + b.id + "/edit",
		DeveloperMetadata: b.metadataOut(),
	}
	if len(ranges) == 0 {
		for i, s := range b.sheets {
			so := b.sheetOut(i)
			if withData {
				x := rect{0, s.rowCount, 0, s.colCount}
				if cells && valueOpt != "" {
					if err := formulaIn(s, x, valueOpt); err != nil {
						return nil, err
					}
				}
				so.Data = []gridData{s.grid(x, cells)}
			}
			out.Sheets = append(out.Sheets, so)
		}
		return out, nil
	}
	// With ranges, only the sheets they name, each with one GridData per
	// range.
	data := map[*sheet][]gridData{}
	for _, rng := range ranges {
		sh, r, err := b.resolve(rng)
		if err != nil {
			return nil, err
		}
		x, err := readRect(sh, r)
		if err != nil {
			return nil, err
		}
		g := gridData{}
		if withData {
			if cells && valueOpt != "" {
				if err := formulaIn(sh, x, valueOpt); err != nil {
					return nil, err
				}
			}
			g = sh.grid(x, cells)
		}
		data[sh] = append(data[sh], g)
	}
	for i, s := range b.sheets {
		d, ok := data[s]
		if !ok {
			continue
		}
		so := b.sheetOut(i)
		if withData {
			so.Data = d
		}
		out.Sheets = append(out.Sheets, so)
	}
	return out, nil
}

// gridWanted says what of the grid an answer holds: its GridData, its cells, and the render
// option of the cells' values ("" when neither their formattedValue nor their effectiveValue
// is asked for). Without a field mask, includeGridData says all or nothing; a mask (its paths
// under prefix) decides alone.
func gridWanted(includeGridData bool, mask *maskNode, prefix ...string) (withData, cells bool, valueOpt string) {
	if mask == nil {
		if includeGridData {
			return true, true, "FORMATTED_VALUE"
		}
		return false, false, ""
	}
	at := func(path ...string) bool { return mask.reaches(append(slices.Clone(prefix), path...)...) }
	withData, cells = at("sheets", "data"), at("sheets", "data", "rowData")
	switch {
	case at("sheets", "data", "rowData", "values", "formattedValue"):
		valueOpt = "FORMATTED_VALUE"
	case at("sheets", "data", "rowData", "values", "effectiveValue"):
		valueOpt = "UNFORMATTED_VALUE"
	}
	return withData, cells, valueOpt
}

func (e *Emulator) getSpreadsheet(b *book, c *call) (any, *apiError) {
	// A field mask overrides includeGridData.
	withData, cells, valueOpt := gridWanted(queryBool(c.query, "includeGridData"), c.fields)
	out, err := b.spreadsheet(withData, cells, c.query["ranges"], valueOpt)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ---- create ----

type gridPropsIn struct {
	RowCount    int `json:"rowCount"`
	ColumnCount int `json:"columnCount"`
}

type sheetPropsIn struct {
	SheetID        *int64       `json:"sheetId"`
	Title          string       `json:"title"`
	Index          *int         `json:"index"`
	GridProperties *gridPropsIn `json:"gridProperties"`
	Hidden         bool         `json:"hidden"`
}

type extValueIn struct {
	StringValue  *string  `json:"stringValue"`
	NumberValue  *float64 `json:"numberValue"`
	BoolValue    *bool    `json:"boolValue"`
	FormulaValue *string  `json:"formulaValue"`
}

func (x *extValueIn) cell() cell {
	switch {
	case x == nil:
		return cell{}
	case x.FormulaValue != nil && *x.FormulaValue != "":
		return cell{v: *x.FormulaValue, f: strings.HasPrefix(*x.FormulaValue, "=")}
	case x.StringValue != nil && *x.StringValue != "":
		return cell{v: *x.StringValue}
	case x.NumberValue != nil:
		return cell{v: *x.NumberValue}
	case x.BoolValue != nil:
		return cell{v: *x.BoolValue}
	}
	return cell{}
}

// create makes a new spreadsheet. Each tab's size, from its
// gridProperties and as far as its data reaches, is checked against the
// workbook limit before its cells are stored.
func (e *Emulator) create(c *call) (any, *apiError) {
	var in struct {
		Properties struct {
			Title    string `json:"title"`
			TimeZone string `json:"timeZone"`
			Locale   string `json:"locale"`
		} `json:"properties"`
		Sheets []struct {
			Properties sheetPropsIn `json:"properties"`
			Data       []struct {
				StartRow    int `json:"startRow"`
				StartColumn int `json:"startColumn"`
				RowData     []struct {
					Values []struct {
						UserEnteredValue *extValueIn `json:"userEnteredValue"`
					} `json:"values"`
				} `json:"rowData"`
			} `json:"data"`
		} `json:"sheets"`
	}
	if err := decodeLoose(c.body, &in); err != nil {
		return nil, err
	}
	b := &book{id: newSpreadsheetID(), title: in.Properties.Title, tz: in.Properties.TimeZone, locale: in.Properties.Locale,
		version: 1, created: e.now()}
	b.modified = b.created
	for e.books[b.id] != nil {
		b.id = newSpreadsheetID()
	}
	if b.title == "" {
		b.title = "Untitled spreadsheet"
	}
	if b.tz == "" {
		b.tz = defaultTZ
	}
	if b.locale == "" {
		b.locale = defaultLoc
	}
	for i, s := range in.Sheets {
		props, err := b.addSheet(s.Properties, i == 0)
		if err != nil {
			return nil, badRequest("Invalid sheets[%d]: %s", i, err.msg)
		}
		sh := b.sheets[props.Index]
		rows, cols := sh.rowCount, sh.colCount
		for j, d := range s.Data {
			if d.StartRow < 0 || d.StartColumn < 0 || d.StartRow > maxRows || d.StartColumn > maxColumns {
				return nil, badRequest("Invalid sheets[%d].data[%d]: startRow %d, startColumn %d is not a cell of a sheet", i, j, d.StartRow, d.StartColumn)
			}
			rows = max(rows, d.StartRow+len(d.RowData))
			for _, rd := range d.RowData {
				cols = max(cols, d.StartColumn+len(rd.Values))
			}
		}
		if err := b.fits(sh, rows, cols); err != nil {
			return nil, badRequest("Invalid sheets[%d]: %s", i, err.msg)
		}
		for _, d := range s.Data {
			for r, rd := range d.RowData {
				for col, v := range rd.Values {
					cv := v.UserEnteredValue.cell()
					if s, ok := cv.v.(string); ok && len(s) > MaxCellChars && utf8.RuneCountInString(s) > MaxCellChars {
						return nil, badRequest("Your input contains more than the maximum of %d characters in a single cell.", MaxCellChars)
					}
					if !cv.empty() {
						sh.set(d.StartRow+r, d.StartColumn+col, cv)
					}
				}
			}
		}
	}
	if len(b.sheets) == 0 {
		b.addSheet(sheetPropsIn{}, true)
	}
	if !b.anyVisible() {
		return nil, allHiddenError()
	}
	if err := b.check(); err != nil {
		return nil, errf(500, "%s: it would create a workbook that does not load: %v", errUnloadable, err)
	}
	e.books[b.id] = b
	out, _ := b.spreadsheet(false, false, nil, "")
	return out, nil
}

// decodeLoose decodes a body ignoring fields the emulator does not model.
func decodeLoose(body []byte, v any) *apiError {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("Invalid JSON payload received. %s", err.Error())
	}
	return nil
}

// ---- spreadsheets.batchUpdate ----

// addSheet adds a sheet; first makes an id-less sheet get id 0 (as the
// first sheet of a new spreadsheet does). Everything is checked before the
// book changes; the grid's size is checked before anything is allocated.
func (b *book) addSheet(p sheetPropsIn, first bool) (sheetProps, *apiError) {
	title := p.Title
	if title == "" {
		for n := len(b.sheets) + 1; ; n++ {
			title = "Sheet" + strconv.Itoa(n)
			if b.sheetByTitle(title) == nil {
				break
			}
		}
	}
	if err := checkTitle(title); err != nil {
		return sheetProps{}, err
	}
	if b.sheetByTitle(title) != nil {
		return sheetProps{}, badRequest("A sheet with the name \"%s\" already exists. Please enter another name.", title)
	}
	rows, cols := defaultRows, defaultColumns
	if g := p.GridProperties; g != nil {
		if g.RowCount < 0 || g.ColumnCount < 0 {
			return sheetProps{}, badRequest("Invalid value at 'properties.grid_properties': rowCount (%d) and columnCount (%d) must not be negative", g.RowCount, g.ColumnCount)
		}
		if g.RowCount > 0 {
			rows = g.RowCount
		}
		if g.ColumnCount > 0 {
			cols = g.ColumnCount
		}
	}
	if err := b.fits(nil, rows, cols); err != nil {
		return sheetProps{}, err
	}
	at := len(b.sheets)
	if p.Index != nil {
		if *p.Index < 0 {
			return sheetProps{}, badRequest("Invalid index: %d (it must not be negative)", *p.Index)
		}
		at = min(at, *p.Index)
	}
	var id int64
	switch {
	case p.SheetID != nil:
		id = *p.SheetID
		if id < 0 {
			return sheetProps{}, badRequest("Invalid sheetId: %d", id)
		}
		if s, _ := b.sheetByID(id); s != nil {
			return sheetProps{}, badRequest("Sheet with id %d already exists.", id)
		}
	case first:
		if s, _ := b.sheetByID(0); s == nil {
			break
		}
		fallthrough
	default:
		for {
			id = rand.Int64N(2_000_000_000) + 1
			if s, _ := b.sheetByID(id); s == nil {
				break
			}
		}
	}
	sh := &sheet{title: title, id: id, rowCount: rows, colCount: cols, hidden: map[int]bool{}, valid: map[int][]string{}, tabHidden: p.Hidden}
	b.sheets = slices.Insert(b.sheets, at, sh)
	return b.props(at), nil
}

type dimRange struct {
	SheetID    int64  `json:"sheetId"`
	Dimension  string `json:"dimension"`
	StartIndex *int   `json:"startIndex"`
	EndIndex   *int   `json:"endIndex"`
}

type gridRange struct {
	SheetID          int64 `json:"sheetId"`
	StartRowIndex    *int  `json:"startRowIndex"`
	EndRowIndex      *int  `json:"endRowIndex"`
	StartColumnIndex *int  `json:"startColumnIndex"`
	EndColumnIndex   *int  `json:"endColumnIndex"`
}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// span resolves a dimension range against a sheet: [start, end), start
// within the grid. With inGrid the end must be in the grid too (deleting or
// changing rows and columns that exist); without it the range only gives a
// position and a count (inserting).
func (b *book) span(d dimRange, inGrid bool) (*sheet, bool, int, int, *apiError) {
	sh, _ := b.sheetByID(d.SheetID)
	if sh == nil {
		return nil, false, 0, 0, badRequest("No grid with id: %d", d.SheetID)
	}
	var rows bool
	switch d.Dimension {
	case "ROWS":
		rows = true
	case "COLUMNS":
	default:
		return nil, false, 0, 0, badRequest("range.dimension must be ROWS or COLUMNS, not %q", d.Dimension)
	}
	size, unit := sh.colCount, "columns"
	if rows {
		size, unit = sh.rowCount, "rows"
	}
	start, end := deref(d.StartIndex, 0), deref(d.EndIndex, size)
	switch {
	case start < 0:
		return nil, false, 0, 0, badRequest("range.startIndex (%d) must not be negative", start)
	case end <= start:
		return nil, false, 0, 0, badRequest("range.startIndex (%d) must be less than range.endIndex (%d)", start, end)
	case start > size || (start == size && inGrid):
		return nil, false, 0, 0, badRequest("range.startIndex (%d) is past the end of the grid (%d %s)", start, size, unit)
	case inGrid && end > size:
		return nil, false, 0, 0, badRequest("range.endIndex (%d) is past the end of the grid (%d %s)", end, size, unit)
	}
	return sh, rows, start, end, nil
}

// checkRect refuses a block that is not inside the grid of sh, with the
// messages Google uses for a GridRange. Indexes may come straight from a
// request (any int, MaxInt64 included): a start outside the grid is named
// as such before any index is turned into a number to show, so no message
// holds an index that overflowed (R-9223372036854775808), and the R1C1 form
// is built only from indexes the grid can hold.
func checkRect(sh *sheet, x rect) *apiError {
	switch {
	case x.r0 < 0 || x.r0 > sh.rowCount:
		return badRequest("Invalid range: row index %d must be between 0 and %d (%s)", x.r0, sh.rowCount, gridRows(sh))
	case x.c0 < 0 || x.c0 > sh.colCount:
		return badRequest("Invalid range: column index %d must be between 0 and %d (%s)", x.c0, sh.colCount, gridCols(sh))
	case x.r1 < x.r0 || x.c1 < x.c0:
		return badRequest("Invalid range: rows [%d, %d), columns [%d, %d)", x.r0, x.r1, x.c0, x.c1)
	case x.r1 > maxRows:
		return badRequest("Invalid range: end row index %d must be between %d and %d (%s)", x.r1, x.r0, sh.rowCount, gridRows(sh))
	case x.c1 > maxColumns:
		return badRequest("Invalid range: end column index %d must be between %d and %d (%s)", x.c1, x.c0, sh.colCount, gridCols(sh))
	case x.r1 > sh.rowCount || x.c1 > sh.colCount:
		// Every index is now at most maxRows or maxColumns: r0+1 can't overflow.
		return badRequest("Range ('%s'!R%dC%d:R%dC%d) exceeds grid limits. Max rows: %d, max columns: %d",
			strings.ReplaceAll(sh.title, "'", "''"), x.r0+1, x.c0+1, x.r1, x.c1, sh.rowCount, sh.colCount)
	}
	return nil
}

// gridRows and gridCols name a tab's rows or columns in an index error.
func gridRows(sh *sheet) string {
	return "the rows of '" + strings.ReplaceAll(sh.title, "'", "''") + "'"
}

func gridCols(sh *sheet) string {
	return "the columns of '" + strings.ReplaceAll(sh.title, "'", "''") + "'"
}

// gridSpan resolves a GridRange of a request: a missing bound is the
// grid's edge (Google's rule); every bound must lie in the grid. Each index
// is checked as it was sent, in Google's words ("GridRange.startRowIndex[N]
// must be between 0 and M"), before any is used: a start past the grid, an
// end before its start, and an end no grid can reach (past maxRows or
// maxColumns: MaxInt64 from the client, say) are named with the bounds the
// grid allows; an end within those limits but past this grid's edge is
// Google's "exceeds grid limits" (checkRect).
func (b *book) gridSpan(g gridRange) (*sheet, rect, *apiError) {
	sh, _ := b.sheetByID(g.SheetID)
	if sh == nil {
		return nil, rect{}, badRequest("No grid with id: %d", g.SheetID)
	}
	x := rect{deref(g.StartRowIndex, 0), deref(g.EndRowIndex, sh.rowCount), deref(g.StartColumnIndex, 0), deref(g.EndColumnIndex, sh.colCount)}
	bad := func(field string, v, lo, hi int, what string) *apiError {
		return badRequest("GridRange.%s[%d] must be between %d and %d (%s)", field, v, lo, hi, what)
	}
	switch {
	case x.r0 < 0 || x.r0 > sh.rowCount:
		return nil, rect{}, bad("startRowIndex", x.r0, 0, sh.rowCount, gridRows(sh))
	case x.r1 < x.r0 || x.r1 > maxRows:
		return nil, rect{}, bad("endRowIndex", x.r1, x.r0, sh.rowCount, gridRows(sh))
	case x.c0 < 0 || x.c0 > sh.colCount:
		return nil, rect{}, bad("startColumnIndex", x.c0, 0, sh.colCount, gridCols(sh))
	case x.c1 < x.c0 || x.c1 > maxColumns:
		return nil, rect{}, bad("endColumnIndex", x.c1, x.c0, sh.colCount, gridCols(sh))
	}
	if err := checkRect(sh, x); err != nil {
		return nil, rect{}, err
	}
	return sh, x, nil
}

func shiftCols(m map[int]bool, at, n int) map[int]bool {
	out := map[int]bool{}
	for c, v := range m {
		switch {
		case c < at:
			out[c] = v
		case n > 0:
			out[c+n] = v
		case c >= at-n: // deleting [at, at-n)
			out[c+n] = v
		}
	}
	return out
}

func shiftValid(m map[int][]string, at, n int) map[int][]string {
	out := map[int][]string{}
	for c, v := range m {
		switch {
		case c < at:
			out[c] = v
		case n > 0:
			out[c+n] = v
		case c >= at-n:
			out[c+n] = v
		}
	}
	return out
}

// insertDimension inserts empty rows or columns. The count comes from the
// request and may be absurd (2e9): the workbook limit is checked before
// anything is allocated, and rows past the data cost nothing (rows are
// stored only as far as the data goes).
func (b *book) insertDimension(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Range             dimRange `json:"range"`
		InheritFromBefore bool     `json:"inheritFromBefore"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	if in.Range.EndIndex == nil {
		return nil, badRequest("range.endIndex is required")
	}
	sh, rows, start, end, err := b.span(in.Range, false)
	if err != nil {
		return nil, err
	}
	if start == 0 && in.InheritFromBefore {
		return nil, badRequest("Cannot inherit from before when inserting at index 0")
	}
	n := end - start
	if rows {
		if err := b.grows(sh, n, 0); err != nil {
			return nil, err
		}
		insertRows(sh, start, n)
		return map[string]any{}, nil
	}
	if err := b.grows(sh, 0, n); err != nil {
		return nil, err
	}
	insertCols(sh, start, n)
	return map[string]any{}, nil
}

// insertCols inserts n empty columns before column index at (0 <= at <=
// colCount), moving the cells, hidden flags, validations and protected
// ranges right of it. Callers check n against the workbook limit first.
func insertCols(sh *sheet, at, n int) {
	for i, row := range sh.rows {
		if at < len(row) {
			sh.rows[i] = slices.Insert(row, at, make([]cell, n)...)
		}
	}
	sh.colCount += n
	sh.hidden = shiftCols(sh.hidden, at, n)
	sh.valid = shiftValid(sh.valid, at, n)
	shiftProtected(sh, false, at, n, sh.colCount)
}

// deleteCols removes columns [start, end) (within the grid), moving what is
// right of them left.
func deleteCols(sh *sheet, start, end int) {
	for i, row := range sh.rows {
		if start < len(row) {
			sh.rows[i] = slices.Delete(row, start, min(end, len(row)))
		}
	}
	sh.colCount -= end - start
	sh.hidden = shiftCols(sh.hidden, start, -(end - start))
	sh.valid = shiftValid(sh.valid, start, -(end - start))
	shiftProtected(sh, false, start, -(end - start), sh.colCount)
}

func (b *book) deleteDimension(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Range dimRange `json:"range"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	sh, rows, start, end, err := b.span(in.Range, true)
	if err != nil {
		return nil, err
	}
	if rows {
		if start == 0 && end == sh.rowCount {
			return nil, badRequest("You can't delete all the rows on the sheet.")
		}
		deleteRows(sh, start, end)
		return map[string]any{}, nil
	}
	if start == 0 && end == sh.colCount {
		return nil, badRequest("You can't delete all the columns on the sheet.")
	}
	deleteCols(sh, start, end)
	return map[string]any{}, nil
}

// deleteRows removes rows [start, end) (within the grid), moving the rows
// and protected ranges below them up.
func deleteRows(sh *sheet, start, end int) {
	if start < len(sh.rows) {
		sh.rows = slices.Delete(sh.rows, start, min(end, len(sh.rows)))
	}
	sh.rowCount -= end - start
	shiftProtected(sh, true, start, -(end - start), sh.rowCount)
}

// compareCells orders cells as a Sheets sort does: numbers, then text
// (ignoring case), then booleans. Empty cells are handled by the caller.
func compareCells(a, b cell) int {
	rank := func(c cell) int {
		switch c.v.(type) {
		case float64:
			return 0
		case string:
			return 1
		}
		return 2
	}
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	switch x := a.v.(type) {
	case float64:
		y := b.v.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(strings.ToLower(x), strings.ToLower(b.v.(string)))
	case bool:
		y := b.v.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}

type sortSpec struct {
	col  int
	desc bool
}

// sortBlock sorts rows [r0, r1) of sh by specs, moving only the cells of
// columns [c0, c1) (c1 < 0: whole rows). Empty keys sort last in either
// order; the sort is stable. It allocates for the stored cells only: past
// the data every cell is empty and stays so.
func sortBlock(sh *sheet, r0, r1, c0, c1 int, specs []sortSpec) {
	r1 = min(r1, len(sh.rows))
	if r0 >= r1 {
		return
	}
	width := 0
	for r := r0; r < r1; r++ {
		width = max(width, len(sh.rows[r]))
	}
	if c1 >= 0 {
		width = min(width, c1)
	}
	if width <= c0 {
		return
	}
	type item struct{ cells []cell }
	items := make([]item, r1-r0)
	for i := range items {
		items[i].cells = make([]cell, width-c0)
		for c := c0; c < width; c++ {
			items[i].cells[c-c0] = sh.get(r0+i, c)
		}
	}
	key := func(it item, col int) cell {
		if col-c0 < 0 || col-c0 >= len(it.cells) {
			return cell{}
		}
		return it.cells[col-c0]
	}
	sort.SliceStable(items, func(i, j int) bool {
		for _, s := range specs {
			a, b := key(items[i], s.col), key(items[j], s.col)
			switch {
			case a.empty() && b.empty():
				continue
			case a.empty():
				return false
			case b.empty():
				return true
			}
			d := compareCells(a, b)
			if s.desc {
				d = -d
			}
			if d != 0 {
				return d < 0
			}
		}
		return false
	})
	for i, it := range items {
		for c := c0; c < width; c++ {
			sh.set(r0+i, c, it.cells[c-c0])
		}
	}
}

func (b *book) sortRange(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Range     gridRange `json:"range"`
		SortSpecs []struct {
			DimensionIndex *int   `json:"dimensionIndex"`
			SortOrder      string `json:"sortOrder"`
		} `json:"sortSpecs"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	sh, x, err := b.gridSpan(in.Range)
	if err != nil {
		return nil, err
	}
	var specs []sortSpec
	for i, s := range in.SortSpecs {
		col := deref(s.DimensionIndex, 0)
		if col < 0 || col >= sh.colCount {
			return nil, badRequest("sortSpecs[%d].dimensionIndex %d is outside the grid", i, col)
		}
		var desc bool
		switch s.SortOrder {
		case "", "ASCENDING", "SORT_ORDER_UNSPECIFIED":
		case "DESCENDING":
			desc = true
		default:
			return nil, enumError(fmt.Sprintf("sort_specs[%d].sort_order", i), "SortOrder", s.SortOrder)
		}
		specs = append(specs, sortSpec{col, desc})
	}
	if len(specs) == 0 {
		specs = []sortSpec{{x.c0, false}}
	}
	sortBlock(sh, x.r0, x.r1, x.c0, x.c1, specs)
	return map[string]any{}, nil
}

func (b *book) updateDimensionProperties(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Range      dimRange `json:"range"`
		Properties struct {
			HiddenByUser bool `json:"hiddenByUser"`
		} `json:"properties"`
		Fields string `json:"fields"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	if in.Fields == "" {
		return nil, badRequest("At least one field must be updated, but 'fields' is empty.")
	}
	sh, rows, start, end, err := b.span(in.Range, true)
	if err != nil {
		return nil, err
	}
	if rows || !(in.Fields == "*" || strings.Contains(in.Fields, "hiddenByUser")) {
		return map[string]any{}, nil // row properties and pixel sizes are not modelled
	}
	for c := start; c < end; c++ {
		if in.Properties.HiddenByUser {
			sh.hidden[c] = true
		} else {
			delete(sh.hidden, c)
		}
	}
	return map[string]any{}, nil
}

// setDataValidation sets or clears a ONE_OF_LIST rule on the columns of a
// range (the model keeps one rule per column, for rows 2 and below). The
// range must lie in the grid: a rule on column -1 would be saved under no
// column letter and the file would not load again.
func (b *book) setDataValidation(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Range gridRange `json:"range"`
		Rule  *struct {
			Condition struct {
				Type   string      `json:"type"`
				Values []condValue `json:"values"`
			} `json:"condition"`
		} `json:"rule"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	sh, x, err := b.gridSpan(in.Range)
	if err != nil {
		return nil, err
	}
	if in.Rule != nil && in.Rule.Condition.Type != "ONE_OF_LIST" {
		return nil, errf(501, "emulator: only ONE_OF_LIST validation rules are emulated, not %q", in.Rule.Condition.Type)
	}
	for c := x.c0; c < x.c1; c++ {
		if in.Rule == nil {
			delete(sh.valid, c)
			continue
		}
		var vals []string
		for _, v := range in.Rule.Condition.Values {
			vals = append(vals, v.UserEnteredValue)
		}
		sh.valid[c] = vals
	}
	return map[string]any{}, nil
}

// updateSheetProperties renames, resizes, moves, hides or shows a tab. A
// new size is checked against the workbook limit before anything changes;
// shrinking drops the rows, columns, hidden flags, validations and
// protected ranges past the new edge. Hiding the last visible tab is
// refused.
func (b *book) updateSheetProperties(raw json.RawMessage) (any, *apiError) {
	var in struct {
		Properties sheetPropsIn `json:"properties"`
		Fields     string       `json:"fields"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	if in.Fields == "" {
		return nil, badRequest("At least one field must be updated, but 'fields' is empty.")
	}
	id := int64(0)
	if in.Properties.SheetID != nil {
		id = *in.Properties.SheetID
	}
	sh, idx := b.sheetByID(id)
	if sh == nil {
		return nil, badRequest("No grid with id: %d", id)
	}
	if err := checkSheetPropsMask(in.Fields); err != nil {
		return nil, err
	}
	has := fieldMask(in.Fields)
	if p := unmodelledProps(raw, has); p != "" {
		return nil, errf(501, "emulator: updateSheetProperties of %s is not emulated", p)
	}
	// Validate everything, then change.
	title := sh.title
	if has("title") {
		title = in.Properties.Title
		if err := b.checkRename(sh, title); err != nil {
			return nil, err
		}
	}
	rows, cols := sh.rowCount, sh.colCount
	if g := in.Properties.GridProperties; g != nil {
		var err *apiError
		if rows, cols, err = b.resize(sh, g, has); err != nil {
			return nil, err
		}
	}
	hidden := sh.tabHidden
	if has("hidden") {
		hidden = in.Properties.Hidden
		if hidden && !sh.tabHidden && b.visibleTabs() == 1 {
			return nil, allHiddenError()
		}
	}
	at := idx
	if has("index") && in.Properties.Index != nil {
		if *in.Properties.Index < 0 {
			return nil, badRequest("Invalid index: %d (it must not be negative)", *in.Properties.Index)
		}
		at = min(*in.Properties.Index, len(b.sheets)-1)
	}

	sh.title = title
	sh.tabHidden = hidden
	if rows < sh.rowCount {
		deleteRows(sh, rows, sh.rowCount)
	}
	sh.rowCount = rows
	if cols < sh.colCount {
		deleteCols(sh, cols, sh.colCount)
	}
	sh.colCount = cols
	if at != idx {
		b.sheets = slices.Delete(b.sheets, idx, idx+1)
		b.sheets = slices.Insert(b.sheets, at, sh)
	}
	return map[string]any{}, nil
}

// fieldMask reads an update's "fields": whether it names field f (or a parent of it, or "*").
// A path may be written with dots or slashes (gridProperties/rowCount), as Google takes both.
func fieldMask(fields string) func(string) bool {
	return func(f string) bool {
		if fields == "*" {
			return true
		}
		for _, x := range maskPaths(fields) {
			if x == f || strings.HasPrefix(f, x+".") {
				return true
			}
		}
		return false
	}
}

// maskPaths are a field mask's paths, each in the dotted form.
func maskPaths(fields string) []string {
	var out []string
	for _, x := range strings.Split(fields, ",") {
		if x = strings.TrimSpace(strings.ReplaceAll(x, "/", ".")); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// sheetPropsEmulated are the SheetProperties fields updateSheetProperties does here;
// sheetPropsNotEmulated the ones Google has that it doesn't (a mask naming one is refused
// with 501, never answered 200 with nothing done).
var (
	sheetPropsEmulated    = []string{"title", "index", "hidden", "gridProperties", "gridProperties.rowCount", "gridProperties.columnCount"}
	sheetPropsNotEmulated = []string{"sheetId", "sheetType", "tabColor", "tabColorStyle", "rightToLeft", "dataSourceSheetProperties",
		"gridProperties.frozenRowCount", "gridProperties.frozenColumnCount", "gridProperties.hideGridlines",
		"gridProperties.rowGroupControlAfter", "gridProperties.columnGroupControlAfter"}
)

// unmodelledProps names a field the emulator doesn't update that an updateSheetProperties
// request sets to something other than its default, under a mask that covers it without
// naming it ("*", "gridProperties"): "" when there is none. Applied, such a field would change
// nothing here where Google changes the sheet.
func unmodelledProps(raw json.RawMessage, has func(string) bool) string {
	var in struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	var grid map[string]json.RawMessage
	_ = json.Unmarshal(in.Properties["gridProperties"], &grid)
	set := func(v json.RawMessage) bool {
		switch strings.TrimSpace(string(v)) {
		case "", "null", "0", "false", "{}", `""`:
			return false
		}
		return true
	}
	for _, p := range sheetPropsNotEmulated {
		if p == "sheetId" || p == "sheetType" || !has(p) {
			continue // the sheet's ID names the sheet; its type is GRID either way
		}
		v := in.Properties[p]
		if g, ok := strings.CutPrefix(p, "gridProperties."); ok {
			v = grid[g]
		}
		if set(v) {
			return p
		}
	}
	return ""
}

// checkSheetPropsMask refuses an updateSheetProperties mask naming a field this emulator
// doesn't update (501) or none Google knows (400).
func checkSheetPropsMask(fields string) *apiError {
	if strings.TrimSpace(fields) == "*" {
		return nil
	}
	for _, p := range maskPaths(fields) {
		switch {
		case slices.Contains(sheetPropsEmulated, p):
		case slices.Contains(sheetPropsNotEmulated, p) || strings.HasPrefix(p, "tabColor") || strings.HasPrefix(p, "dataSourceSheetProperties."):
			return errf(501, "emulator: updateSheetProperties of %s is not emulated", p)
		default:
			return badRequest("Invalid requests[0].updateSheetProperties: Invalid field mask path: %q", p)
		}
	}
	return nil
}

// checkRename refuses a title that is not one or that another tab has.
func (b *book) checkRename(sh *sheet, title string) *apiError {
	if err := checkTitle(title); err != nil {
		return err
	}
	if o := b.sheetByTitle(title); o != nil && o != sh {
		return badRequest("A sheet with the name \"%s\" already exists. Please enter another name.", title)
	}
	return nil
}

// resize is the grid size an update asks for, checked against the workbook limit. 0 is what
// the Go client sends for an unset count (omitempty): it leaves the size alone.
func (b *book) resize(sh *sheet, g *gridPropsIn, has func(string) bool) (rows, cols int, err *apiError) {
	rows, cols = sh.rowCount, sh.colCount
	if has("gridProperties.rowCount") {
		if g.RowCount < 0 {
			return 0, 0, badRequest("Invalid value at 'properties.grid_properties.row_count': %d must not be negative", g.RowCount)
		}
		if g.RowCount > 0 {
			rows = g.RowCount
		}
	}
	if has("gridProperties.columnCount") {
		if g.ColumnCount < 0 {
			return 0, 0, badRequest("Invalid value at 'properties.grid_properties.column_count': %d must not be negative", g.ColumnCount)
		}
		if g.ColumnCount > 0 {
			cols = g.ColumnCount
		}
	}
	if err := b.fits(sh, rows, cols); err != nil {
		return 0, 0, err
	}
	return rows, cols, nil
}

// visibleTabs counts the tabs that are not hidden.
func (b *book) visibleTabs() int {
	n := 0
	for _, s := range b.sheets {
		if !s.tabHidden {
			n++
		}
	}
	return n
}

func (b *book) deleteSheet(raw json.RawMessage) (any, *apiError) {
	var in struct {
		SheetID int64 `json:"sheetId"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	sh, idx := b.sheetByID(in.SheetID)
	if sh == nil {
		return nil, badRequest("No sheet with id: %d", in.SheetID)
	}
	if len(b.sheets) == 1 {
		return nil, badRequest("You can't remove all the sheets in a document.")
	}
	b.sheets = slices.Delete(b.sheets, idx, idx+1)
	if !b.anyVisible() {
		return nil, badRequest("You can't remove all the visible sheets in a document.")
	}
	return map[string]any{}, nil
}

// appendDimension adds rows or columns at the end of a tab: only the grid's
// size changes, checked against the workbook limit first.
func (b *book) appendDimension(raw json.RawMessage) (any, *apiError) {
	var in struct {
		SheetID   int64  `json:"sheetId"`
		Dimension string `json:"dimension"`
		Length    int    `json:"length"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	sh, _ := b.sheetByID(in.SheetID)
	if sh == nil {
		return nil, badRequest("No grid with id: %d", in.SheetID)
	}
	if in.Length <= 0 {
		return nil, badRequest("length must be positive")
	}
	switch in.Dimension {
	case "ROWS":
		if err := b.grows(sh, in.Length, 0); err != nil {
			return nil, err
		}
		sh.rowCount += in.Length
	case "COLUMNS":
		if err := b.grows(sh, 0, in.Length); err != nil {
			return nil, err
		}
		sh.colCount += in.Length
	default:
		return nil, badRequest("dimension must be ROWS or COLUMNS, not %q", in.Dimension)
	}
	return map[string]any{}, nil
}

// batchUpdate applies the requests in order to b, the copy handle commits
// only if all of them succeed (Google's atomicity).
func (e *Emulator) batchUpdate(b *book, c *call) (any, *apiError) {
	var in struct {
		Requests                     []map[string]json.RawMessage `json:"requests"`
		IncludeSpreadsheetInResponse bool                         `json:"includeSpreadsheetInResponse"`
		ResponseRanges               []string                     `json:"responseRanges"`
		ResponseIncludeGridData      bool                         `json:"responseIncludeGridData"`
	}
	if err := decodeLoose(c.body, &in); err != nil {
		return nil, err
	}
	replies := []any{}
	for i, req := range in.Requests {
		if len(req) != 1 {
			return nil, badRequest("Invalid requests[%d]: exactly one kind of request must be set, found %d", i, len(req))
		}
		for kind, raw := range req {
			var reply any
			var err *apiError
			switch kind {
			case "addSheet":
				var p struct {
					Properties sheetPropsIn `json:"properties"`
				}
				if err = decodeLoose(raw, &p); err == nil {
					var props sheetProps
					if props, err = b.addSheet(p.Properties, false); err == nil {
						reply = map[string]any{"addSheet": map[string]any{"properties": props}}
					}
				}
			case "deleteSheet":
				reply, err = b.deleteSheet(raw)
			case "updateSheetProperties":
				reply, err = b.updateSheetProperties(raw)
			case "insertDimension":
				reply, err = b.insertDimension(raw)
			case "deleteDimension":
				reply, err = b.deleteDimension(raw)
			case "appendDimension":
				reply, err = b.appendDimension(raw)
			case "updateDimensionProperties":
				reply, err = b.updateDimensionProperties(raw)
			case "sortRange":
				reply, err = b.sortRange(raw)
			case "setDataValidation":
				reply, err = b.setDataValidation(raw)
			case "updateCells":
				reply, err = b.updateCells(raw)
			case "appendCells":
				reply, err = b.appendCells(raw)
			case "copyPaste":
				reply, err = b.copyPaste(raw)
			case "addProtectedRange":
				reply, err = b.addProtectedRange(raw)
			case "createDeveloperMetadata":
				reply, err = b.createDeveloperMetadata(raw)
			case "deleteDeveloperMetadata":
				reply, err = b.deleteDeveloperMetadata(raw)
			default:
				err = errf(501, "emulator: request kind %q is not emulated", kind)
			}
			if err != nil {
				err.msg = fmt.Sprintf("Invalid requests[%d].%s: %s", i, kind, err.msg)
				return nil, err
			}
			replies = append(replies, reply)
		}
	}
	out := map[string]any{"spreadsheetId": b.id, "replies": replies}
	if in.IncludeSpreadsheetInResponse {
		// As in spreadsheets.get, a field mask overrides the flag ("this parameter is
		// ignored if a field mask was set").
		withData, cells, valueOpt := gridWanted(in.ResponseIncludeGridData, c.fields, "updatedSpreadsheet")
		ss, err := b.spreadsheet(withData, cells, in.ResponseRanges, valueOpt)
		if err != nil {
			return nil, err
		}
		out["updatedSpreadsheet"] = ss
	}
	return out, nil
}
