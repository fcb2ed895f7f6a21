package emulator

import (
	"fmt"
	"strconv"
	"strings"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

// Limits of the A1 grammar the emulator accepts (the Sheets UI allows at
// most 18,278 columns, "ZZZ"; 10 million cells per spreadsheet).
const (
	maxColumns = 18278
	maxRows    = 10_000_000
)

// Range is a parsed A1 range such as "'failed calls'!A1:F", "Sheet1!A:A",
// "Sheet1!1:2", "A1" or "Inbox" (a whole sheet).
//
// Indexes are 0-based; ends are exclusive and -1 means "to the edge of the
// grid" (an open side, as in "A5:A" or "A:A").
type Range struct {
	// Sheet is the unquoted sheet name; "" means the first sheet.
	Sheet string
	// StartRow and StartCol are the 0-based top-left cell.
	StartRow, StartCol int
	// EndRow and EndCol are exclusive; -1 means unbounded on that side.
	EndRow, EndCol int
	// Single is true when the range was written as one cell ("A1"). As a
	// write target a single cell is an anchor: the values may extend past it.
	Single bool
}

// rangeError is the error every parse failure returns; its message is the
// one Google sends (HTTP 400).
func rangeError(s string) error {
	//lint:ignore ST1005 Google's message, answered as it is
	return fmt.Errorf("Unable to parse range: %s", s)
}

// ParseRange parses A1 notation. Sheet names may be quoted, with
// apostrophes doubled inside the quotes:
//
//	'My Sheet'!A1   'it''s'!A1:B   Sheet1!A5:A   Sheet1!1:2   Sheet1
//
// A string with no "!" is a range of cells on the first sheet when it parses
// as one ("A1:B2"), else a whole sheet of that name. The error message is
// Google's ("Unable to parse range: X").
func ParseRange(s string) (Range, error) {
	r := Range{EndRow: -1, EndCol: -1}
	var cells string
	switch {
	case strings.HasPrefix(s, "'"):
		name, n, ok := unquoteSheet(s)
		if !ok || name == "" {
			return Range{}, rangeError(s)
		}
		r.Sheet = name
		rest := s[n:]
		if rest == "" {
			return r, nil // whole sheet
		}
		if rest[0] != '!' || len(rest) == 1 {
			return Range{}, rangeError(s)
		}
		cells = rest[1:]
	case strings.Contains(s, "!"):
		i := strings.LastIndex(s, "!")
		r.Sheet, cells = s[:i], s[i+1:]
		if strings.TrimSpace(r.Sheet) == "" || cells == "" {
			return Range{}, rangeError(s)
		}
	default:
		if s == "" {
			return Range{}, rangeError(s)
		}
		if parseCells(s, &r) {
			return r, nil
		}
		r = Range{Sheet: s, EndRow: -1, EndCol: -1}
		return r, nil
	}
	if !parseCells(cells, &r) {
		return Range{}, rangeError(s)
	}
	return r, nil
}

// unquoteSheet reads a quoted sheet name at the start of s, returning the
// name and the number of bytes consumed.
func unquoteSheet(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

type endpoint struct {
	col, row       int // 0-based
	hasCol, hasRow bool
}

func parseEndpoint(s string) (endpoint, bool) {
	var p endpoint
	i := 0
	if i < len(s) && s[i] == '$' {
		i++
	}
	j := i
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	if j > i {
		c, ok := ColumnIndex(s[i:j])
		if !ok {
			return p, false
		}
		p.col, p.hasCol = c, true
	}
	i = j
	if i < len(s) && s[i] == '$' {
		if !p.hasCol && i > 0 {
			return p, false
		}
		i++
	}
	j = i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j > i {
		if j-i > 8 {
			return p, false
		}
		n, err := strconv.Atoi(s[i:j])
		if err != nil || n < 1 || n > maxRows {
			return p, false
		}
		p.row, p.hasRow = n-1, true
	}
	if j != len(s) || (!p.hasCol && !p.hasRow) {
		return p, false
	}
	return p, true
}

func isLetter(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') }

// parseCells parses the part after "!" into r (which has open ends).
func parseCells(s string, r *Range) bool {
	a, b, colon := strings.Cut(s, ":")
	p, ok := parseEndpoint(a)
	if !ok {
		return false
	}
	if !colon {
		if !p.hasCol || !p.hasRow {
			return false
		}
		r.StartRow, r.StartCol, r.EndRow, r.EndCol, r.Single = p.row, p.col, p.row+1, p.col+1, true
		return true
	}
	q, ok := parseEndpoint(b)
	if !ok {
		return false
	}
	// A column-only end with a row-only start (or the reverse) names nothing.
	if (p.hasCol && !p.hasRow && q.hasRow && !q.hasCol) || (p.hasRow && !p.hasCol && q.hasCol && !q.hasRow) {
		return false
	}
	sr, er := 0, -1
	switch {
	case p.hasRow && q.hasRow:
		sr, er = min(p.row, q.row), max(p.row, q.row)+1
	case p.hasRow:
		sr = p.row
	case q.hasRow:
		er = q.row + 1
	}
	sc, ec := 0, -1
	switch {
	case p.hasCol && q.hasCol:
		sc, ec = min(p.col, q.col), max(p.col, q.col)+1
	case p.hasCol:
		sc = p.col
	case q.hasCol:
		ec = q.col + 1
	}
	r.StartRow, r.EndRow, r.StartCol, r.EndCol = sr, er, sc, ec
	return true
}

// String formats r as A1 notation, quoting the sheet name when needed.
// Open sides are left open ("Sheet1!A5:A", "Sheet1!A:B", "Sheet1!1:2").
func (r Range) String() string {
	prefix := ""
	if r.Sheet != "" {
		prefix = QuoteSheet(r.Sheet) + "!"
	}
	switch {
	case r.Single:
		return prefix + a1notation.ColumnLetter(r.StartCol) + strconv.Itoa(r.StartRow+1)
	case r.StartRow == 0 && r.StartCol == 0 && r.EndRow < 0 && r.EndCol < 0:
		if r.Sheet == "" {
			return "A:" + a1notation.ColumnLetter(maxColumns-1)
		}
		return QuoteSheet(r.Sheet)
	case r.StartRow == 0 && r.EndRow < 0:
		return prefix + a1notation.ColumnLetter(r.StartCol) + ":" + a1notation.ColumnLetter(r.EndCol-1)
	case r.StartCol == 0 && r.EndCol < 0:
		return prefix + strconv.Itoa(r.StartRow+1) + ":" + strconv.Itoa(r.EndRow)
	}
	end := ""
	if r.EndCol >= 0 {
		end = a1notation.ColumnLetter(r.EndCol - 1)
	}
	if r.EndRow >= 0 {
		end += strconv.Itoa(r.EndRow)
	}
	return prefix + a1notation.ColumnLetter(r.StartCol) + strconv.Itoa(r.StartRow+1) + ":" + end
}

// ColumnIndex parses column letters ("A", "aa", "ZZZ") into a 0-based
// index. It reports false for anything else or beyond column ZZZ.
func ColumnIndex(s string) (int, bool) {
	if s == "" || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c < 'A' || c > 'Z' {
			return 0, false
		}
		n = n*26 + int(c-'A') + 1
	}
	if n > maxColumns {
		return 0, false
	}
	return n - 1, true
}

// QuoteSheet returns a sheet name as it appears in A1 notation: bare when
// it is a plain identifier ("Sheet1", "failed_calls"), else in single quotes
// with apostrophes doubled:
//
//	failed calls → 'failed calls'    it's → 'it''s'
func QuoteSheet(name string) string {
	if !needsQuote(name) {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}

func needsQuote(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return true
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && c != '_' && (c < '0' || c > '9') {
			return true
		}
	}
	// Names that read as a cell ("Q3", "AB12") or R1C1 ("R1C1") are quoted.
	if q, ok := parseEndpoint(name); ok && q.hasCol && q.hasRow {
		return true
	}
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "R") {
		if i := strings.Index(up, "C"); i > 0 {
			if digits(up[1:i]) && digits(up[i+1:]) {
				return true
			}
		}
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
