package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

// rect is a resolved block of cells: rows [r0,r1), columns [c0,c1).
type rect struct{ r0, r1, c0, c1 int }

// a1 formats a block as Google echoes it ("Sheet1!A1:Z1000"), quoting
// the sheet name when needed.
func a1(title string, x rect) string {
	s := QuoteSheet(title) + "!" + a1notation.ColumnLetter(x.c0) + strconv.Itoa(x.r0+1)
	if x.r1-x.r0 == 1 && x.c1-x.c0 == 1 {
		return s
	}
	return s + ":" + a1notation.ColumnLetter(x.c1-1) + strconv.Itoa(x.r1)
}

// quoted is the sheet!cells form Google uses inside error messages, where
// the sheet name is always quoted.
func quoted(title string, r Range) string {
	r.Sheet = ""
	cells := r.String()
	if r.StartRow == 0 && r.StartCol == 0 && r.EndRow < 0 && r.EndCol < 0 && !r.Single {
		return "'" + strings.ReplaceAll(title, "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(title, "'", "''") + "'!" + cells
}

// resolve finds the sheet and cells a range names; a range without a
// sheet name is on the first visible tab. A missing tab or garbage is
// Google's 400 "Unable to parse range: X".
func (b *book) resolve(s string) (*sheet, Range, *apiError) {
	if !strings.HasPrefix(s, "'") && !strings.Contains(s, "!") {
		if sh := b.sheetByTitle(s); sh != nil {
			return sh, Range{Sheet: sh.title, EndRow: -1, EndCol: -1}, nil
		}
	}
	r, err := ParseRange(s)
	if err != nil {
		return nil, Range{}, badRequest("%s", err.Error())
	}
	sh := b.firstVisible()
	if r.Sheet != "" {
		sh = b.sheetByTitle(r.Sheet)
	}
	if sh == nil {
		return nil, Range{}, badRequest("Unable to parse range: %s", s)
	}
	return sh, r, nil
}

// firstVisible is the tab a range without a sheet name reads and writes.
func (b *book) firstVisible() *sheet {
	for _, s := range b.sheets {
		if !s.tabHidden {
			return s
		}
	}
	return b.sheets[0]
}

// readRect bounds a range to the grid for reading.
func readRect(sh *sheet, r Range) (rect, *apiError) {
	x := rect{r.StartRow, r.EndRow, r.StartCol, r.EndCol}
	if x.r0 >= sh.rowCount || x.c0 >= sh.colCount {
		return x, badRequest("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d", quoted(sh.title, r), sh.rowCount, sh.colCount)
	}
	if x.r1 < 0 || x.r1 > sh.rowCount {
		x.r1 = sh.rowCount
	}
	if x.c1 < 0 || x.c1 > sh.colCount {
		x.c1 = sh.colCount
	}
	return x, nil
}

// render turns a stored cell into its JSON value under a valueRenderOption.
func render(c cell, opt string) any {
	switch v := c.v.(type) {
	case nil:
		return ""
	case string:
		if c.f && opt != "FORMULA" {
			// Callers check formulaShown first: this formula's result is computed.
			if r, ok := formulaResult(v); ok {
				return render(cell{v: r}, opt)
			}
		}
		return v
	case float64:
		if opt == "FORMATTED_VALUE" {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return v
	case bool:
		if opt == "FORMATTED_VALUE" {
			if v {
				return "TRUE"
			}
			return "FALSE"
		}
		return v
	}
	return ""
}

// readValues returns the trimmed values of a block: trailing empty cells
// of each row and trailing empty rows are dropped, interior empty rows are
// [] and interior empty cells "". nil means no data.
func readValues(sh *sheet, x rect, major, opt string) [][]any {
	var out [][]any
	if major == "COLUMNS" {
		for c := x.c0; c < x.c1; c++ {
			var col []any
			last := -1
			for r := x.r0; r < min(x.r1, len(sh.rows)); r++ {
				v := sh.get(r, c)
				if !v.empty() {
					last = r - x.r0
				}
				col = append(col, render(v, opt))
			}
			out = append(out, append([]any{}, col[:last+1]...))
		}
	} else {
		for r := x.r0; r < min(x.r1, len(sh.rows)); r++ {
			row := sh.rows[r]
			n := min(x.c1, len(row))
			for n > x.c0 && row[n-1].empty() {
				n--
			}
			vals := []any{}
			for c := x.c0; c < n; c++ {
				vals = append(vals, render(row[c], opt))
			}
			out = append(out, vals)
		}
	}
	n := len(out)
	for n > 0 && len(out[n-1]) == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return out[:n]
}

// ---- options ----

func enumError(field, typ, v string) *apiError {
	return badRequest(`Invalid value at '%s' (type.googleapis.com/google.apps.sheets.v4.%s), "%s"`, field, typ, v)
}

func renderOption(v, field string) (string, *apiError) {
	switch v {
	case "":
		return "FORMATTED_VALUE", nil
	case "FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA":
		return v, nil
	}
	return "", enumError(field, "ValueRenderOption", v)
}

func majorOption(v, field string) (string, *apiError) {
	switch v {
	case "", "ROWS", "DIMENSION_UNSPECIFIED":
		return "ROWS", nil
	case "COLUMNS":
		return v, nil
	}
	return "", enumError(field, "Dimension", v)
}

func dateTimeOption(v, field string) *apiError {
	switch v {
	case "", "SERIAL_NUMBER", "FORMATTED_STRING":
		return nil
	}
	return enumError(field, "DateTimeRenderOption", v)
}

func inputOption(v, field string) *apiError {
	switch v {
	case "RAW", "USER_ENTERED":
		return nil
	case "":
		return badRequest("'valueInputOption' is required but not specified")
	}
	return enumError(field, "ValueInputOption", v)
}

type readOpts struct{ major, render string }

func readOptions(q map[string][]string) (readOpts, *apiError) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var o readOpts
	var err *apiError
	if o.major, err = majorOption(get("majorDimension"), "major_dimension"); err != nil {
		return o, err
	}
	if o.render, err = renderOption(get("valueRenderOption"), "value_render_option"); err != nil {
		return o, err
	}
	return o, dateTimeOption(get("dateTimeRenderOption"), "date_time_render_option")
}

// ---- reads ----

type valueRange struct {
	Range          string  `json:"range"`
	MajorDimension string  `json:"majorDimension"`
	Values         [][]any `json:"values,omitempty"`
}

func readRange(b *book, rng string, o readOpts) (*valueRange, *apiError) {
	sh, r, err := b.resolve(rng)
	if err != nil {
		return nil, err
	}
	x, err := readRect(sh, r)
	if err != nil {
		return nil, err
	}
	if err := formulaIn(sh, x, o.render); err != nil {
		return nil, err
	}
	return &valueRange{Range: a1(sh.title, x), MajorDimension: o.major, Values: readValues(sh, x, o.major, o.render)}, nil
}

// formulaIn refuses to read the value of a formula cell of x the emulator doesn't compute (see
// formula.go): Google returns what the formula computes, so answering its text as the value
// would be a wrong answer, not an emulation. Its text is read with valueRenderOption=FORMULA.
func formulaIn(sh *sheet, x rect, opt string) *apiError {
	for r := x.r0; r < min(x.r1, len(sh.rows)); r++ {
		for c := x.c0; c < min(x.c1, len(sh.rows[r])); c++ {
			if v := sh.rows[r][c]; v.f && !formulaShown(v, opt) {
				return errf(501, "emulator: the value of the formula in %s (%v) is not computed (Google returns its result; the emulator computes arithmetic on numbers only): read it with valueRenderOption=FORMULA, or write the cell RAW",
					a1(sh.title, rect{r0: r, r1: r + 1, c0: c, c1: c + 1}), v.v)
			}
		}
	}
	return nil
}

func valuesGet(b *book, c *call) (any, *apiError) {
	o, err := readOptions(c.query)
	if err != nil {
		return nil, err
	}
	return readRange(b, c.rng, o)
}

func valuesBatchGet(b *book, c *call) (any, *apiError) {
	o, err := readOptions(c.query)
	if err != nil {
		return nil, err
	}
	out := struct {
		SpreadsheetID string        `json:"spreadsheetId"`
		ValueRanges   []*valueRange `json:"valueRanges,omitempty"`
	}{SpreadsheetID: b.id}
	for _, rng := range c.query["ranges"] {
		vr, err := readRange(b, rng, o)
		if err != nil {
			return nil, err
		}
		out.ValueRanges = append(out.ValueRanges, vr)
	}
	return out, nil
}

// ---- writes ----

type updateValuesResponse struct {
	SpreadsheetID  string      `json:"spreadsheetId"`
	UpdatedRange   string      `json:"updatedRange"`
	UpdatedRows    int         `json:"updatedRows,omitempty"`
	UpdatedColumns int         `json:"updatedColumns,omitempty"`
	UpdatedCells   int         `json:"updatedCells,omitempty"`
	UpdatedData    *valueRange `json:"updatedData,omitempty"`
}

type valueRangeIn struct {
	Range          string  `json:"range"`
	MajorDimension string  `json:"majorDimension"`
	Values         [][]any `json:"values"`
}

// decodeBody decodes a request body strictly (Google rejects unknown
// fields).
func decodeBody(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return badRequest("Invalid JSON payload received. Unknown name %s: Cannot find field.", name)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badRequest("Invalid JSON payload received. Invalid value at '%s' (%s).", te.Field, te.Value)
		}
		return badRequest("Invalid JSON payload received. %s", msg)
	}
	return nil
}

var numberRE = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// Typed text Google turns into a formatted number (en_US forms): dates (2020-01-01, 1/2,
// 1/2/2020, Jan 2, 2 January 2020), times (10:30, 10:30:15 pm), percentages (12%), amounts
// ($5, 5 €) and grouped numbers (2,000,000.01).
var typedNumberREs = []*regexp.Regexp{
	regexp.MustCompile(`^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$`),
	regexp.MustCompile(`^\d{1,2}[-/.]\d{1,2}([-/.]\d{2,4})?([ T]\d{1,2}:\d{2}(:\d{2})?)?$`),
	regexp.MustCompile(`(?i)^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(\s*[ap]\.?m\.?)?$`),
	regexp.MustCompile(`(?i)^(\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(,?\s+\d{2,4})?|(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(st|nd|rd|th)?(,?\s+\d{2,4})?)$`),
	regexp.MustCompile(`^[-+]?(\d+[.,]?\d*|[.,]\d+)\s*%$`),
	regexp.MustCompile(`^[-+]?\s*[$€£¥]\s*[-+]?[\d,]*\.?\d+$|^[-+]?[\d,]*\.?\d+\s*[$€£¥]$`),
	regexp.MustCompile(`^[-+]?\d{1,3}(,\d{3})+(\.\d*)?$`),
}

// typedAsNumber reports whether USER_ENTERED text is one of the forms Google stores as a
// formatted number (see typedNumberREs), which the emulator doesn't model.
func typedAsNumber(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" || t[0] == '\'' || t[0] == '=' || numberRE.MatchString(t) {
		return false // text, a formula or a plain number: modelled
	}
	for _, re := range typedNumberREs {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}

// userEntered parses a string as if typed into the Sheets UI.
func userEntered(s string) cell {
	t := strings.TrimSpace(s)
	switch {
	case s == "":
		return cell{}
	case s[0] == '\'':
		if len(s) == 1 {
			return cell{}
		}
		return cell{v: s[1:]}
	case s[0] == '=' && len(s) > 1:
		return cell{v: s, f: true}
	case numberRE.MatchString(t):
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return cell{v: f}
		}
	case strings.EqualFold(t, "TRUE"):
		return cell{v: true}
	case strings.EqualFold(t, "FALSE"):
		return cell{v: false}
	case (s[0] == '+' || s[0] == '-') && len(s) > 1:
		// The UI turns "+x" and "-x" into a formula (a "- item" list line
		// becomes #ERROR!): the injection hazard RAW avoids.
		return cell{v: "=" + s, f: true}
	}
	return cell{v: s}
}

// toCell converts one value of a write payload; ok=false for null (leave
// the cell alone).
func toCell(v any, input string) (cell, bool) {
	switch x := v.(type) {
	case nil:
		return cell{}, false
	case string:
		if input == "USER_ENTERED" {
			return userEntered(x), true
		}
		if x == "" {
			return cell{}, true
		}
		return cell{v: x}, true
	case float64, bool:
		return cell{v: x}, true
	}
	return cell{}, false
}

// writePlan is a validated write, applied only once every part of a
// request has been validated.
type writePlan struct {
	sh     *sheet
	r0, c0 int
	vals   [][]any
	input  string
	// written holds, once applied, the cells the write set, as row and column indexes of sh,
	// when track is set (values.batchUpdate counts its totals from them).
	track   bool
	written []cellPos
}

// cellPos is a cell of a sheet, by row and column index.
type cellPos struct{ r, c int }

// prepare validates a write of vals (in major order) to the range r of sh.
func prepare(sh *sheet, r Range, vals [][]any, major, input string) (*writePlan, *apiError) {
	if major == "COLUMNS" {
		w := 0
		for _, col := range vals {
			w = max(w, len(col))
		}
		t := make([][]any, w)
		for i := range t {
			t[i] = make([]any, len(vals))
			for j, col := range vals {
				if i < len(col) {
					t[i][j] = col[i]
				}
			}
		}
		vals = t
	}
	for i, row := range vals {
		for j, v := range row {
			switch x := v.(type) {
			case nil, float64, bool:
			case string:
				if len(x) > MaxCellChars && utf8.RuneCountInString(x) > MaxCellChars {
					return nil, badRequest("Your input contains more than the maximum of %d characters in a single cell.", MaxCellChars)
				}
				if input == "USER_ENTERED" && typedAsNumber(x) {
					return nil, errf(501, "emulator: USER_ENTERED %q (values[%d][%d]) is not emulated: Google reads it as a date, time, percentage, amount or grouped number, stored as a formatted number the emulator doesn't model; write it RAW (text) or as a number", x, i, j)
				}
			case map[string]any:
				return nil, badRequest("Invalid values[%d][%d]: struct_value", i, j)
			case []any:
				return nil, badRequest("Invalid values[%d][%d]: list_value", i, j)
			default:
				return nil, badRequest("Invalid values[%d][%d]: %v", i, j, x)
			}
		}
	}
	if !r.Single {
		if r.EndRow >= 0 && r.StartRow+len(vals) > r.EndRow {
			return nil, badRequest("Requested writing within range [%s], but tried writing to row [%d]", quoted(sh.title, r), r.StartRow+len(vals))
		}
		if r.EndCol >= 0 {
			for _, row := range vals {
				if r.StartCol+len(row) > r.EndCol {
					return nil, badRequest("Requested writing within range [%s], but tried writing to column [%s]", quoted(sh.title, r), a1notation.ColumnLetter(r.StartCol+len(row)-1))
				}
			}
		}
	}
	if r.StartRow+len(vals) > maxRows {
		return nil, badRequest("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d", quoted(sh.title, r), sh.rowCount, sh.colCount)
	}
	for _, row := range vals {
		if r.StartCol+len(row) > maxColumns {
			return nil, badRequest("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d", quoted(sh.title, r), sh.rowCount, sh.colCount)
		}
	}
	return &writePlan{sh: sh, r0: r.StartRow, c0: r.StartCol, vals: vals, input: input}, nil
}

// size is the grid p.sh has after the write: a values write grows the grid
// to cover what it writes. It is checked against the workbook limit before
// apply allocates anything for it.
func (p *writePlan) size() (rows, cols int) {
	width := 0
	for _, row := range p.vals {
		width = max(width, len(row))
	}
	return max(p.sh.rowCount, p.r0+max(len(p.vals), 1)), max(p.sh.colCount, p.c0+max(width, 1))
}

// apply performs the write, growing the grid as needed.
func (p *writePlan) apply(id string) *updateValuesResponse {
	rows, cols := map[int]bool{}, map[int]bool{}
	cells, width := 0, 0
	for i, row := range p.vals {
		width = max(width, len(row))
		for j, v := range row {
			cv, ok := toCell(v, p.input)
			if !ok {
				continue
			}
			p.sh.set(p.r0+i, p.c0+j, cv)
			rows[i], cols[j] = true, true
			cells++
			if p.track {
				p.written = append(p.written, cellPos{p.r0 + i, p.c0 + j})
			}
		}
	}
	x := rect{p.r0, p.r0 + max(len(p.vals), 1), p.c0, p.c0 + max(width, 1)}
	p.sh.rowCount = max(p.sh.rowCount, x.r1)
	p.sh.colCount = max(p.sh.colCount, x.c1)
	return &updateValuesResponse{
		SpreadsheetID:  id,
		UpdatedRange:   a1(p.sh.title, x),
		UpdatedRows:    len(rows),
		UpdatedColumns: len(cols),
		UpdatedCells:   cells,
	}
}

// withData adds updatedData when includeValuesInResponse is set.
func withData(resp *updateValuesResponse, p *writePlan, include bool, renderOpt string) {
	if !include {
		return
	}
	x := rect{p.r0, p.r0 + max(len(p.vals), 1), p.c0, p.c0 + 1}
	for _, row := range p.vals {
		x.c1 = max(x.c1, p.c0+len(row))
	}
	resp.UpdatedData = &valueRange{Range: resp.UpdatedRange, MajorDimension: "ROWS", Values: readValues(p.sh, x, "ROWS", renderOpt)}
}

func queryBool(q map[string][]string, k string) bool {
	v := q[k]
	return len(v) > 0 && (v[0] == "true" || v[0] == "1")
}

func queryGet(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func valuesUpdate(b *book, c *call) (any, *apiError) {
	input := queryGet(c.query, "valueInputOption")
	if err := inputOption(input, "value_input_option"); err != nil {
		return nil, err
	}
	respRender, err := renderOption(queryGet(c.query, "responseValueRenderOption"), "response_value_render_option")
	if err != nil {
		return nil, err
	}
	var in valueRangeIn
	if err := decodeBody(c.body, &in); err != nil {
		return nil, err
	}
	major, err := majorOption(in.MajorDimension, "major_dimension")
	if err != nil {
		return nil, err
	}
	sh, r, err := b.resolve(c.rng)
	if err != nil {
		return nil, err
	}
	if in.Range != "" && in.Range != c.rng {
		sh2, r2, err := b.resolve(in.Range)
		if err != nil {
			return nil, err
		}
		if sh2 != sh || r2.StartRow != r.StartRow || r2.StartCol != r.StartCol || r2.EndRow != r.EndRow || r2.EndCol != r.EndCol {
			return nil, badRequest("Requested range [%s] is not the same as the range in the body [%s].", c.rng, in.Range)
		}
	}
	p, err := prepare(sh, r, in.Values, major, input)
	if err != nil {
		return nil, err
	}
	rows, cols := p.size()
	if err := b.fits(p.sh, rows, cols); err != nil {
		return nil, err
	}
	resp := p.apply(b.id)
	withData(resp, p, queryBool(c.query, "includeValuesInResponse"), respRender)
	return resp, nil
}

func valuesAppend(b *book, c *call) (any, *apiError) {
	input := queryGet(c.query, "valueInputOption")
	if err := inputOption(input, "value_input_option"); err != nil {
		return nil, err
	}
	insert := queryGet(c.query, "insertDataOption")
	switch insert {
	case "", "OVERWRITE", "INSERT_ROWS":
	default:
		return nil, enumError("insert_data_option", "InsertDataOption", insert)
	}
	respRender, err := renderOption(queryGet(c.query, "responseValueRenderOption"), "response_value_render_option")
	if err != nil {
		return nil, err
	}
	var in valueRangeIn
	if err := decodeBody(c.body, &in); err != nil {
		return nil, err
	}
	major, err := majorOption(in.MajorDimension, "major_dimension")
	if err != nil {
		return nil, err
	}
	sh, r, err := b.resolve(c.rng)
	if err != nil {
		return nil, err
	}
	target := Range{Sheet: sh.title, StartRow: r.StartRow, StartCol: r.StartCol, Single: true}
	tableRange := ""
	if t, ok := findTable(sh, r); ok {
		tableRange = a1(sh.title, t)
		target.StartRow, target.StartCol = t.r1, t.c0
	}
	p, err := prepare(sh, target, in.Values, major, input)
	if err != nil {
		return nil, err
	}
	rows, cols := p.size()
	if insert == "INSERT_ROWS" {
		rows = max(rows, sh.rowCount+len(p.vals))
	}
	if err := b.fits(sh, rows, cols); err != nil {
		return nil, err
	}
	if n := len(p.vals); insert == "INSERT_ROWS" && n > 0 {
		insertRows(sh, p.r0, n)
	}
	resp := p.apply(b.id)
	withData(resp, p, queryBool(c.query, "includeValuesInResponse"), respRender)
	return struct {
		SpreadsheetID string                `json:"spreadsheetId"`
		TableRange    string                `json:"tableRange,omitempty"`
		Updates       *updateValuesResponse `json:"updates"`
	}{b.id, tableRange, resp}, nil
}

// findTable finds the table values.append writes after, as Google finds it: the last cell
// holding a value in the range (the bottom row's rightmost), grown to its region: the smallest
// rectangle around it with no value in any cell touching it, diagonals included (what a
// spreadsheet calls the current region; it may reach past the range). No value in the range
// means no table: the append writes at the range's first cell. So "Sheet1" holding A1 and C1
// (B1 empty) appends after C1, at C2; "Sheet1!A1" after A1, at A2; "Sheet1!B1" with B empty and
// data beside it in A writes at B1, as Google's answers to these show.
func findTable(sh *sheet, r Range) (rect, bool) {
	r1, c1 := r.EndRow, r.EndCol
	if r.Single {
		r1, c1 = r.StartRow+1, r.StartCol+1
	}
	if r1 < 0 {
		r1 = sh.rowCount
	}
	if c1 < 0 {
		c1 = sh.colCount
	}
	seed := rect{-1, -1, -1, -1}
	for i := min(r1, len(sh.rows)) - 1; i >= r.StartRow && seed.r0 < 0; i-- {
		for j := min(c1, len(sh.rows[i])) - 1; j >= r.StartCol; j-- {
			if !sh.rows[i][j].empty() {
				seed = rect{i, i + 1, j, j + 1}
				break
			}
		}
	}
	if seed.r0 < 0 {
		return rect{}, false
	}
	t := seed
	// Grow while a cell on the ring around the rectangle holds a value, each side as far as it
	// goes before the next: a round costs about the cells it adds plus one scan of each side,
	// and a round that adds nothing ends it.
	for grew := true; grew; {
		grew = false
		for t.r0 > 0 && sh.anyValue(t.r0-1, t.r0, t.c0-1, t.c1+1) {
			t.r0, grew = t.r0-1, true
		}
		for sh.anyValue(t.r1, t.r1+1, t.c0-1, t.c1+1) {
			t.r1, grew = t.r1+1, true
		}
		for t.c0 > 0 && sh.anyValue(t.r0-1, t.r1+1, t.c0-1, t.c0) {
			t.c0, grew = t.c0-1, true
		}
		for sh.anyValue(t.r0-1, t.r1+1, t.c1, t.c1+1) {
			t.c1, grew = t.c1+1, true
		}
	}
	return t, true
}

// anyValue reports whether a cell of rows [r0, r1) and columns [c0, c1) holds a value (indexes
// outside the stored data hold none).
func (s *sheet) anyValue(r0, r1, c0, c1 int) bool {
	for i := max(r0, 0); i < min(r1, len(s.rows)); i++ {
		for j := max(c0, 0); j < min(c1, len(s.rows[i])); j++ {
			if !s.rows[i][j].empty() {
				return true
			}
		}
	}
	return false
}

// insertRows inserts n empty rows before row index at. Rows are stored only
// as far as the data goes, so rows inserted at or past its end cost
// nothing; inserted above data, they cost one empty slot each (the data
// moves down, and so do the protected ranges). Callers check n against the
// workbook limit first.
func insertRows(sh *sheet, at, n int) {
	if at < len(sh.rows) {
		sh.rows = append(sh.rows[:at], append(make([][]cell, n), sh.rows[at:]...)...)
	}
	sh.rowCount += n
	shiftProtected(sh, true, at, n, sh.rowCount)
}

func valuesBatchUpdate(b *book, c *call) (any, *apiError) {
	var in struct {
		ValueInputOption             string         `json:"valueInputOption"`
		Data                         []valueRangeIn `json:"data"`
		IncludeValuesInResponse      bool           `json:"includeValuesInResponse"`
		ResponseValueRenderOption    string         `json:"responseValueRenderOption"`
		ResponseDateTimeRenderOption string         `json:"responseDateTimeRenderOption"`
	}
	if err := decodeBody(c.body, &in); err != nil {
		return nil, err
	}
	if err := inputOption(in.ValueInputOption, "value_input_option"); err != nil {
		return nil, err
	}
	respRender, err := renderOption(in.ResponseValueRenderOption, "response_value_render_option")
	if err != nil {
		return nil, err
	}
	if err := dateTimeOption(in.ResponseDateTimeRenderOption, "response_date_time_render_option"); err != nil {
		return nil, err
	}
	plans := make([]*writePlan, len(in.Data))
	for i, d := range in.Data {
		major, err := majorOption(d.MajorDimension, fmt.Sprintf("data[%d].major_dimension", i))
		if err != nil {
			return nil, err
		}
		sh, r, err := b.resolve(d.Range)
		if err != nil {
			return nil, err
		}
		if plans[i], err = prepare(sh, r, d.Values, major, in.ValueInputOption); err != nil {
			return nil, err
		}
	}
	// The grids all the writes reach, checked together before any is applied.
	sizes := map[*sheet][2]int{}
	for _, p := range plans {
		rows, cols := p.size()
		if sz, ok := sizes[p.sh]; ok {
			rows, cols = max(rows, sz[0]), max(cols, sz[1])
		}
		sizes[p.sh] = [2]int{rows, cols}
	}
	if err := b.fitsAll(sizes); err != nil {
		return nil, err
	}
	out := struct {
		SpreadsheetID       string                  `json:"spreadsheetId"`
		TotalUpdatedRows    int                     `json:"totalUpdatedRows,omitempty"`
		TotalUpdatedColumns int                     `json:"totalUpdatedColumns,omitempty"`
		TotalUpdatedCells   int                     `json:"totalUpdatedCells,omitempty"`
		TotalUpdatedSheets  int                     `json:"totalUpdatedSheets,omitempty"`
		Responses           []*updateValuesResponse `json:"responses,omitempty"`
	}{SpreadsheetID: b.id}
	// The totals count each row, column and cell where at least one cell was updated once,
	// however many of the ranges wrote to it: two one-row writes to A1:D1 and A4:D4 are 2
	// rows, 4 columns and 8 cells, as Google counts them.
	type line struct {
		sh *sheet
		i  int
	}
	type cellOf struct {
		sh  *sheet
		pos cellPos
	}
	rows, cols, cells, touched := map[line]bool{}, map[line]bool{}, map[cellOf]bool{}, map[*sheet]bool{}
	for _, p := range plans {
		p.track = true
		resp := p.apply(b.id)
		withData(resp, p, in.IncludeValuesInResponse, respRender)
		out.Responses = append(out.Responses, resp)
		for _, w := range p.written {
			rows[line{p.sh, w.r}], cols[line{p.sh, w.c}], cells[cellOf{p.sh, w}] = true, true, true
			touched[p.sh] = true
		}
	}
	out.TotalUpdatedRows, out.TotalUpdatedColumns, out.TotalUpdatedCells = len(rows), len(cols), len(cells)
	out.TotalUpdatedSheets = len(touched)
	return out, nil
}

func valuesClear(b *book, c *call) (any, *apiError) {
	var in struct{}
	if err := decodeBody(c.body, &in); err != nil {
		return nil, err
	}
	sh, r, err := b.resolve(c.rng)
	if err != nil {
		return nil, err
	}
	x, err := readRect(sh, r)
	if err != nil {
		return nil, err
	}
	for i := x.r0; i < min(x.r1, len(sh.rows)); i++ {
		row := sh.rows[i]
		for j := x.c0; j < min(x.c1, len(row)); j++ {
			row[j] = cell{}
		}
	}
	return struct {
		SpreadsheetID string `json:"spreadsheetId"`
		ClearedRange  string `json:"clearedRange"`
	}{b.id, a1(sh.title, x)}, nil
}

// valuesBatchClear clears every range of the request, all or none (the caller applies it to
// a copy), and names them as cleared.
func valuesBatchClear(b *book, c *call) (any, *apiError) {
	var in struct {
		Ranges []string `json:"ranges"`
	}
	if err := decodeBody(c.body, &in); err != nil {
		return nil, err
	}
	out := struct {
		SpreadsheetID string   `json:"spreadsheetId"`
		ClearedRanges []string `json:"clearedRanges,omitempty"`
	}{SpreadsheetID: b.id}
	for _, rng := range in.Ranges {
		one := *c
		one.rng, one.body = rng, nil
		res, err := valuesClear(b, &one)
		if err != nil {
			return nil, err
		}
		out.ClearedRanges = append(out.ClearedRanges, res.(struct {
			SpreadsheetID string `json:"spreadsheetId"`
			ClearedRange  string `json:"clearedRange"`
		}).ClearedRange)
	}
	return out, nil
}
