package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

// Grid defaults of a new Google sheet.
const (
	defaultRows    = 1000
	defaultColumns = 26
	defaultTZ      = "Etc/UTC"
	defaultLoc     = "en_US"
)

// MaxCellChars is Google's limit on the characters in one cell; a write of
// a longer value fails with 400 "Your input contains more than the maximum
// of 50000 characters in a single cell."
const MaxCellChars = 50000

// Workbook is the JSON workbook format the emulator serves (and the format
// it persists to). Example:
//
//	{"spreadsheetId": "demo", "title": "Demo", "timeZone": "Europe/Paris",
//	 "sheets": [{"title": "Inbox", "sheetId": 0, "hiddenColumns": [5],
//	             "validations": {"E": ["new", "read", "done"]},
//	             "rows": [["Timestamp", "Name"], [45123.5, "Ann"]]}]}
type Workbook struct {
	SpreadsheetID string `json:"spreadsheetId"`
	Title         string `json:"title"`
	// TimeZone is an IANA name; "" means "Etc/UTC".
	TimeZone string `json:"timeZone"`
	// Locale defaults to "en_US".
	Locale string   `json:"locale,omitempty"`
	Sheets []*Sheet `json:"sheets"`
	// DeveloperMetadata is the spreadsheet's own developer metadata (metadata.go).
	DeveloperMetadata []DeveloperMetadata `json:"developerMetadata,omitempty"`
}

// Sheet is one tab of a Workbook.
type Sheet struct {
	Title string `json:"title"`
	// SheetID is the tab's numeric id. Several sheets left at 0 get the
	// lowest unused ids (the first keeps 0).
	SheetID int64 `json:"sheetId"`
	// Hidden lists 0-based column indexes hidden by the user.
	Hidden []int `json:"hiddenColumns,omitempty"`
	// Validations maps a column letter ("E") to a ONE_OF_LIST dropdown that
	// applies to rows 2 and below of that column.
	Validations map[string][]string `json:"validations,omitempty"`
	// Formulas lists the cells (A1, e.g. "C7") whose string value is a
	// formula (written with USER_ENTERED "=..."). Any other string starting
	// with "=" is plain text, as RAW writes store it.
	Formulas []string `json:"formulas,omitempty"`
	// Rows holds the cells, row 1 first: string, float64, bool or nil
	// (empty). Whole numbers of any Go integer type are accepted and stored
	// as float64.
	Rows [][]any `json:"rows"`
	// RowCount and ColumnCount are the grid size; 0 means the default,
	// max(1000, len(Rows)) by max(26, widest row).
	RowCount    int `json:"rowCount,omitempty"`
	ColumnCount int `json:"columnCount,omitempty"`
	// HiddenTab is the tab's own hidden flag (SheetProperties.hidden, set
	// with updateSheetProperties): a workbook keeps at least one tab
	// visible, and a range without a sheet name means the first visible
	// tab.
	HiddenTab bool `json:"hidden,omitempty"`
	// ProtectedRanges are the tab's protected ranges (addProtectedRange).
	ProtectedRanges []ProtectedRange `json:"protectedRanges,omitempty"`
}

// ProtectedRange is a protected block of a tab, as addProtectedRange
// creates it. The emulator keeps and reports it (spreadsheets.get
// sheets.protectedRanges) and moves it with inserted and deleted rows and
// columns, but does not enforce it: every write goes through. Indexes are
// 0-based and half-open, like a GridRange; an end of 0 means the range
// runs to the grid's edge (a missing index, as Google reads a GridRange).
type ProtectedRange struct {
	// ProtectedRangeID is unique in the workbook; 0 in a workbook file gets
	// the lowest unused id.
	ProtectedRangeID int64  `json:"protectedRangeId"`
	StartRowIndex    int    `json:"startRowIndex,omitempty"`
	EndRowIndex      int    `json:"endRowIndex,omitempty"`
	StartColumnIndex int    `json:"startColumnIndex,omitempty"`
	EndColumnIndex   int    `json:"endColumnIndex,omitempty"`
	Description      string `json:"description,omitempty"`
	// WarningOnly: editing shows a warning instead of being refused.
	WarningOnly bool `json:"warningOnly,omitempty"`
	// startRowGiven and startColumnGiven say that the request which protected the range gave
	// its start (0 included): Google's answers list a start it was given, even 0, and leave
	// out one it wasn't.
	startRowGiven, startColumnGiven bool
}

// ParseWorkbook decodes and validates a JSON workbook. Its errors name what
// is wrong (the line and column of a syntax error, the sheet and cell of a
// bad value). Defaults (time zone, grid size, sheet ids) are filled in.
func ParseWorkbook(data []byte) (*Workbook, error) {
	var wb Workbook
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wb); err != nil {
		return nil, describeJSONError(data, dec.InputOffset(), err)
	}
	if dec.More() {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("workbook: line %d column %d: unexpected data after the workbook object", line, col)
	}
	if strings.TrimSpace(wb.SpreadsheetID) == "" {
		return nil, errors.New(`workbook: "spreadsheetId" is missing`)
	}
	b, err := newBook(&wb)
	if err != nil {
		return nil, err
	}
	return b.export(), nil
}

// LoadWorkbook reads and parses a JSON workbook file.
func LoadWorkbook(path string) (*Workbook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	wb, err := ParseWorkbook(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return wb, nil
}

// Validate reports the first problem that would stop the emulator serving
// wb (duplicate or empty titles, duplicate sheet ids, unsupported cell
// values, bad column letters, a grid smaller than its data, more than
// MaxWorkbookCells cells, every tab hidden, a protected range outside its
// grid or with a duplicate id...).
func (wb *Workbook) Validate() error {
	_, err := newBook(wb)
	return err
}

// Save writes wb as indented JSON to path atomically (a temporary file in
// the same directory, then a rename).
func (wb *Workbook) Save(path string) error {
	data, err := marshalWorkbook(wb)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// marshalWorkbook is the file format: indented JSON and a final newline.
func marshalWorkbook(wb *Workbook) ([]byte, error) {
	data, err := json.MarshalIndent(wb, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func writeFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func describeJSONError(data []byte, inputOff int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, max(se.Offset-1, 0))
		return fmt.Errorf("workbook: line %d column %d: %v", line, col, se)
	case errors.As(err, &te):
		line, col := lineCol(data, te.Offset)
		return fmt.Errorf("workbook: line %d column %d: %q: cannot use a JSON %s as %s", line, col, te.Field, te.Value, te.Type)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("workbook: empty or truncated JSON")
	}
	line, col := lineCol(data, inputOff)
	return fmt.Errorf("workbook: line %d column %d: %v", line, col, err)
}

// ---- the internal model ----

// cell is one stored cell: v is nil (empty), string, float64 or bool; f
// marks a formula (v is then its "=..." text).
type cell struct {
	v any
	f bool
}

func (c cell) empty() bool { return c.v == nil }

type sheet struct {
	title              string
	id                 int64
	rows               [][]cell
	rowCount, colCount int
	hidden             map[int]bool     // hidden columns
	valid              map[int][]string // ONE_OF_LIST rule per column, rows 2 and below
	tabHidden          bool             // the tab itself is hidden
	protected          []ProtectedRange
}

type book struct {
	id, title, tz, locale string
	sheets                []*sheet
	// version is the file's Drive version (see Emulator.Version); shownVersion the one
	// files.get reports under a version lag, since shownAt (SetVersionLag).
	version      int64
	shownVersion int64
	shownAt      time.Time
	// created and modified are the file's Drive createdTime and modifiedTime.
	created, modified time.Time
	// meta is the spreadsheet's developer metadata, by ID (metadata.go).
	meta []DeveloperMetadata
}

// normValue converts a Go value to a stored cell value.
func normValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		if x == "" {
			return nil, true
		}
		return x, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return x, true
	case float32:
		return normValue(float64(x))
	case bool:
		return x, true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, false
		}
		return f, true
	}
	return nil, false
}

// newBook validates wb and deep-copies it into the internal model.
func newBook(wb *Workbook) (*book, error) {
	if wb == nil {
		return nil, errors.New("workbook: nil")
	}
	b := &book{id: wb.SpreadsheetID, title: wb.Title, tz: wb.TimeZone, locale: wb.Locale, version: 1}
	if b.tz == "" {
		b.tz = defaultTZ
	}
	if b.locale == "" {
		b.locale = defaultLoc
	}
	if len(wb.Sheets) == 0 {
		return nil, errors.New("workbook: no sheets (a spreadsheet has at least one)")
	}
	ids, protIDs, err := bookIDs(wb)
	if err != nil {
		return nil, err
	}
	titles := map[string]int{}
	zeroTaken := false
	visible := false
	total := int64(0)
	for i, s := range wb.Sheets {
		if strings.TrimSpace(s.Title) == "" {
			return nil, fmt.Errorf("workbook: sheets[%d]: title is empty", i)
		}
		where := fmt.Sprintf("workbook: sheets[%d] %q", i, s.Title)
		key := strings.ToLower(s.Title)
		if j, dup := titles[key]; dup {
			return nil, fmt.Errorf("%s: title is used by sheets[%d] too (titles are unique, ignoring case)", where, j)
		}
		titles[key] = i
		sh := &sheet{title: s.Title, id: s.SheetID, hidden: map[int]bool{}, valid: map[int][]string{}}
		if sh.id == 0 {
			if zeroTaken {
				sh.id = freeID(ids)
				ids[sh.id] = true
			}
			zeroTaken = true
		}
		if err := sh.fill(s); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		for j, p := range s.ProtectedRanges {
			if err := checkProtected(sh, p); err != nil {
				return nil, fmt.Errorf("%s: protectedRanges[%d]: %v", where, j, err)
			}
			if p.ProtectedRangeID == 0 {
				p.ProtectedRangeID = freeID(protIDs)
				protIDs[p.ProtectedRangeID] = true
			}
			sh.protected = append(sh.protected, p)
		}
		visible = visible || !s.HiddenTab
		b.sheets = append(b.sheets, sh)
		total += gridCells(sh.rowCount, sh.colCount)
	}
	if !visible {
		return nil, errors.New("workbook: every tab is hidden (a spreadsheet keeps at least one visible)")
	}
	for i, m := range wb.DeveloperMetadata {
		if m.MetadataID <= 0 || m.Key == "" || slices.ContainsFunc(b.meta, func(o DeveloperMetadata) bool { return o.MetadataID == m.MetadataID }) {
			return nil, fmt.Errorf("workbook: developerMetadata[%d]: needs a positive metadataId of its own and a metadataKey", i)
		}
		if m.Visibility == "" {
			m.Visibility = "DOCUMENT"
		}
		b.meta = append(b.meta, m)
	}
	if total > MaxWorkbookCells {
		return nil, fmt.Errorf("workbook: its tabs' grids hold %d cells in all, more than Google's limit of %d", total, MaxWorkbookCells)
	}
	return b, nil
}

// bookIDs checks the sheet IDs and protected range IDs wb gives (each used once, none
// negative) and returns them, so the ones it leaves out get free ones.
func bookIDs(wb *Workbook) (ids, protIDs map[int64]bool, err error) {
	ids, protIDs = map[int64]bool{}, map[int64]bool{}
	for i, s := range wb.Sheets {
		if s == nil {
			return nil, nil, fmt.Errorf("workbook: sheets[%d] is null", i)
		}
		if s.SheetID != 0 {
			if ids[s.SheetID] {
				return nil, nil, fmt.Errorf("workbook: sheets[%d] %q: sheetId %d is used twice", i, s.Title, s.SheetID)
			}
			if s.SheetID < 0 {
				return nil, nil, fmt.Errorf("workbook: sheets[%d] %q: sheetId %d is negative", i, s.Title, s.SheetID)
			}
			ids[s.SheetID] = true
		}
	}
	for i, s := range wb.Sheets {
		for j, p := range s.ProtectedRanges {
			if p.ProtectedRangeID < 0 || (p.ProtectedRangeID != 0 && protIDs[p.ProtectedRangeID]) {
				return nil, nil, fmt.Errorf("workbook: sheets[%d] %q: protectedRanges[%d]: protectedRangeId %d is negative or used twice", i, s.Title, j, p.ProtectedRangeID)
			}
			protIDs[p.ProtectedRangeID] = true
		}
	}
	return ids, protIDs, nil
}

// fill copies a workbook sheet's cells, grid size, hidden columns, validations, formulas and
// hidden flag into sh, checking each.
func (sh *sheet) fill(s *Sheet) error {
	width, err := sh.fillRows(s.Rows)
	if err != nil {
		return err
	}
	if err := sh.fillGrid(s, width); err != nil {
		return err
	}
	for _, h := range s.Hidden {
		if h < 0 || h >= sh.colCount {
			return fmt.Errorf("hiddenColumns: %d is not a column of the grid (0..%d)", h, sh.colCount-1)
		}
		sh.hidden[h] = true
	}
	for letter, vals := range s.Validations {
		c, ok := ColumnIndex(strings.TrimSpace(letter))
		if !ok {
			return fmt.Errorf("validations: %q is not a column letter", letter)
		}
		if c >= sh.colCount {
			return fmt.Errorf("validations: column %s is outside the grid", letter)
		}
		sh.valid[c] = slices.Clone(vals)
	}
	for _, ref := range s.Formulas {
		r, err := ParseRange(ref)
		if err != nil || !r.Single || r.Sheet != "" {
			return fmt.Errorf("formulas: %q is not a cell like \"C7\"", ref)
		}
		str, ok := sh.get(r.StartRow, r.StartCol).v.(string)
		if !ok || !strings.HasPrefix(str, "=") {
			return fmt.Errorf("formulas: cell %s does not hold text starting with \"=\"", ref)
		}
		sh.rows[r.StartRow][r.StartCol].f = true
	}
	sh.tabHidden = s.HiddenTab
	return nil
}

// fillRows copies the cells, each a string, number, boolean or null within the cell limit,
// and returns the widest row's width.
func (sh *sheet) fillRows(rows [][]any) (width int, err error) {
	sh.rows = make([][]cell, len(rows))
	for r, row := range rows {
		width = max(width, len(row))
		sh.rows[r] = make([]cell, len(row))
		for c, v := range row {
			nv, ok := normValue(v)
			if !ok {
				return 0, fmt.Errorf("cell %s%d: unsupported value %#v (want a string, number, boolean or null)", a1notation.ColumnLetter(c), r+1, v)
			}
			if str, ok := nv.(string); ok && utf8.RuneCountInString(str) > MaxCellChars {
				return 0, fmt.Errorf("cell %s%d: more than %d characters", a1notation.ColumnLetter(c), r+1, MaxCellChars)
			}
			sh.rows[r][c] = cell{v: nv}
		}
	}
	return width, nil
}

// fillGrid sets the grid's size: as given (no smaller than the data), or the defaults.
func (sh *sheet) fillGrid(s *Sheet, width int) error {
	sh.rowCount, sh.colCount = s.RowCount, s.ColumnCount
	switch {
	case sh.rowCount < 0 || sh.colCount < 0:
		return errors.New("negative grid size")
	case sh.rowCount == 0:
		sh.rowCount = max(defaultRows, len(s.Rows))
	case sh.rowCount < len(s.Rows):
		return fmt.Errorf("rowCount %d is smaller than its %d rows of data", sh.rowCount, len(s.Rows))
	}
	switch {
	case sh.colCount == 0:
		sh.colCount = max(defaultColumns, width)
	case sh.colCount < width:
		return fmt.Errorf("columnCount %d is smaller than its widest row (%d cells)", sh.colCount, width)
	}
	if sh.rowCount > maxRows || sh.colCount > maxColumns {
		return fmt.Errorf("grid %dx%d is too large", sh.rowCount, sh.colCount)
	}
	return nil
}

func freeID(used map[int64]bool) int64 {
	for id := int64(1); ; id++ {
		if !used[id] {
			return id
		}
	}
}

func (s *sheet) get(r, c int) cell {
	if r < 0 || r >= len(s.rows) || c < 0 || c >= len(s.rows[r]) {
		return cell{}
	}
	return s.rows[r][c]
}

// set stores a cell, growing the rows slice and the grid as needed.
func (s *sheet) set(r, c int, v cell) {
	if v.empty() && (r >= len(s.rows) || c >= len(s.rows[r])) {
		return
	}
	for len(s.rows) <= r {
		s.rows = append(s.rows, nil)
	}
	row := s.rows[r]
	for len(row) <= c {
		row = append(row, cell{})
	}
	row[c] = v
	s.rows[r] = row
	s.rowCount = max(s.rowCount, r+1)
	s.colCount = max(s.colCount, c+1)
}

// lastRow returns the index of the last row holding data, or -1.
func (s *sheet) lastRow() int {
	for r := len(s.rows) - 1; r >= 0; r-- {
		for _, c := range s.rows[r] {
			if !c.empty() {
				return r
			}
		}
	}
	return -1
}

func (s *sheet) clone() *sheet {
	n := *s
	n.rows = make([][]cell, len(s.rows))
	for i, r := range s.rows {
		n.rows[i] = slices.Clone(r)
	}
	n.hidden = map[int]bool{}
	for k, v := range s.hidden {
		n.hidden[k] = v
	}
	n.valid = map[int][]string{}
	for k, v := range s.valid {
		n.valid[k] = slices.Clone(v)
	}
	n.protected = slices.Clone(s.protected)
	return &n
}

func (b *book) clone() *book {
	n := *b
	n.sheets = make([]*sheet, len(b.sheets))
	for i, s := range b.sheets {
		n.sheets[i] = s.clone()
	}
	n.meta = slices.Clone(b.meta)
	return &n
}

// sheetByTitle finds a tab by title: exactly, else ignoring case (as
// Sheets does).
func (b *book) sheetByTitle(t string) *sheet {
	for _, s := range b.sheets {
		if s.title == t {
			return s
		}
	}
	for _, s := range b.sheets {
		if strings.EqualFold(s.title, t) {
			return s
		}
	}
	return nil
}

func (b *book) sheetByID(id int64) (*sheet, int) {
	for i, s := range b.sheets {
		if s.id == id {
			return s, i
		}
	}
	return nil, -1
}

// export deep-copies the book into the public format, trimming trailing
// empty cells and rows.
func (b *book) export() *Workbook {
	wb := &Workbook{SpreadsheetID: b.id, Title: b.title, TimeZone: b.tz, Locale: b.locale, DeveloperMetadata: slices.Clone(b.meta)}
	for _, s := range b.sheets {
		out := &Sheet{Title: s.title, SheetID: s.id, RowCount: s.rowCount, ColumnCount: s.colCount, Rows: [][]any{},
			HiddenTab: s.tabHidden, ProtectedRanges: slices.Clone(s.protected)}
		for c, h := range s.hidden {
			if h {
				out.Hidden = append(out.Hidden, c)
			}
		}
		sort.Ints(out.Hidden)
		if len(s.valid) > 0 {
			out.Validations = map[string][]string{}
			for c, v := range s.valid {
				out.Validations[a1notation.ColumnLetter(c)] = slices.Clone(v)
			}
		}
		out.Rows = exportRows(s.rows)
		for r, row := range s.rows {
			for c, v := range row {
				if v.f {
					out.Formulas = append(out.Formulas, a1notation.ColumnLetter(c)+strconv.Itoa(r+1))
				}
			}
		}
		wb.Sheets = append(wb.Sheets, out)
	}
	return wb
}

func exportRows(rows [][]cell) [][]any {
	out := [][]any{}
	last := -1
	for r, row := range rows {
		n := len(row)
		for n > 0 && row[n-1].empty() {
			n--
		}
		vals := make([]any, n)
		for c := 0; c < n; c++ {
			vals[c] = row[c].v
		}
		out = append(out, vals)
		if n > 0 {
			last = r
		}
	}
	return out[:last+1]
}
