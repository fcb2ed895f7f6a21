package cli

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// The forms of `list` besides the piped table (writeListTable) and --json: the table fitted to
// a terminal (-o table, the default there), and tab-separated values for scripts (-o tsv).
// -o wide is writeListWide (list.go). Every cell is sanitised (model.SanitizeLine) or escaped
// (appendTSV) before it is written, and everything still passes the sanitising writer on the
// way out (jsonout.go): no cell reaches the terminal as the sheet holds it.

// listGap is the blank between two columns of the table.
const listGap = 2

// fitCol is a column as fitting sees it, widths in terminal cells.
type fitCol struct {
	natural int  // its widest cell or title (capped: listColSpec's max, the terminal's width)
	min     int  // the narrowest it is cut to before it is hidden (natural: never cut)
	flex    bool // long text (a message, a URL, an error): cut before any other column
	keep    int  // columns are hidden lowest keep first; the highest is hidden last of all
}

// fitColumns gives each column its width so that the columns, listGap apart, fit in width
// cells; 0 hides a column. Every column starts at its natural width; long text is cut first,
// the widest first (so two long columns end up sharing the room), down to its min; then the
// other columns, the same way (a long ID or e-mail before a short one: short IDs, statuses
// and times keep their whole width as long as anything else can give); and when even every
// column at its min doesn't fit, the column with the lowest keep is hidden and the fitting
// starts again without it, rather than showing columns a character or two wide. The last
// column standing is cut to width, whatever its min.
func fitColumns(cols []fitCol, width int) []int {
	width = max(width, 1)
	shown := make([]bool, len(cols))
	for i := range shown {
		shown[i] = true
	}
	widths := make([]int, len(cols))
	for {
		n, total := 0, 0
		for i, c := range cols {
			widths[i] = 0
			if shown[i] {
				widths[i] = c.natural
				total += c.natural
				n++
			}
		}
		if n == 0 {
			return widths
		}
		over := total + listGap*(n-1) - width
		over = shrinkColumns(widths, cols, shown, true, over)
		over = shrinkColumns(widths, cols, shown, false, over)
		if over <= 0 {
			return widths
		}
		if n == 1 {
			for i := range widths {
				if shown[i] {
					widths[i] = min(cols[i].natural, width)
				}
			}
			return widths
		}
		hide := -1
		for i, c := range cols {
			if shown[i] && (hide < 0 || c.keep < cols[hide].keep) {
				hide = i
			}
		}
		shown[hide] = false
	}
}

// shrinkColumns takes over cells from the shown columns that are long text (flex) or not,
// one cell at a time from the widest above its min, and returns what is still over.
func shrinkColumns(widths []int, cols []fitCol, shown []bool, flex bool, over int) int {
	for over > 0 {
		widest := -1
		for i, c := range cols {
			if shown[i] && c.flex == flex && widths[i] > c.min && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		over--
	}
	return over
}

// colSpec is how a column of the fitted table gives way on a narrow terminal.
type colSpec struct {
	min  int  // the narrowest it is cut to (0: never cut, hidden instead)
	max  int  // its natural width at most (0: the terminal's)
	flex bool // long text, cut first
	keep int  // the columns with the lowest keep are hidden first
}

// The row number is hidden first (the ID is what the commands take); a row's problems are
// long text, kept nearly as long as the tab's main text.
var (
	rowSpec      = colSpec{keep: 10}
	problemsSpec = colSpec{min: 10, flex: true, keep: 75}
)

// listColSpec is the colSpec of the column of field f. After the row number, what the TUI
// also hides first goes first: e-mail, the worker, attempts, URLs, times; the ID, the status
// and the tab's main text (message, error) go last.
func listColSpec(f model.Field) colSpec {
	switch f {
	case model.FID:
		return colSpec{min: 8, max: 40, keep: 100}
	case model.FStatus:
		return colSpec{min: 9, max: 20, keep: 90}
	case model.FMessage, model.FError, model.FLastError:
		return colSpec{min: 10, flex: true, keep: 80}
	case model.FName, model.FSource, model.FType:
		return colSpec{min: 8, max: 30, keep: 60}
	case model.FTimestamp, model.FClaimedAt:
		return colSpec{max: 60, keep: 50}
	case model.FURL:
		return colSpec{min: 10, flex: true, keep: 50}
	case model.FEmail:
		return colSpec{min: 10, max: 40, keep: 40}
	case model.FClaimedBy:
		return colSpec{min: 8, max: 30, keep: 40}
	case model.FAttempts:
		return colSpec{max: 8, keep: 40}
	}
	return colSpec{min: 8, max: 30, keep: 30}
}

// listFit is what fitting the table to the terminal did, for the line it prints on stderr.
type listFit struct {
	width  int
	hidden []string // the titles of the columns hidden, in the table's order
	cut    bool     // a cell or title was cut short
}

// note says what fitting left out and where all of it is: "" when nothing was.
func (f listFit) note() string {
	switch {
	case len(f.hidden) > 0:
		return fmt.Sprintf("cut to fit %d columns, %s hidden: -o wide shows every column and every cell whole", f.width, joinAnd(f.hidden))
	case f.cut:
		return fmt.Sprintf("cut to fit %d columns (cells ending in …): -o wide shows every cell whole", f.width)
	}
	return ""
}

// joinAnd is "A", "A and B", "A, B and C".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// writeListFitted is the table fitted to width cells (-o table, and `list` on a terminal):
// the columns of writeListTable and a PROBLEMS column when a row has any, each cell sanitised
// and whole, then cut with "…" to the widths fitColumns gives (never inside a grapheme
// cluster, measured in terminal cells as the TUI measures). No line is wider than width and
// none ends in blanks. Two passes over the rows, as writeListTable: one to measure, one to
// write.
func writeListFitted(w io.Writer, t *model.Table, recs []*model.Record, width int) (listFit, error) {
	lt := newListTable(t)
	lt.whole = true
	titles := append([]string(nil), lt.header...)
	specs := []colSpec{rowSpec, listColSpec(model.FID), listColSpec(model.FStatus)}
	for _, c := range lt.cols {
		specs = append(specs, listColSpec(fieldAt(t, c)))
	}
	problems := -1 // the PROBLEMS column, when a row has problems
	for _, r := range recs {
		if len(r.Problems) > 0 {
			problems = len(titles)
			titles = append(titles, "PROBLEMS")
			specs = append(specs, problemsSpec)
			break
		}
	}
	cellOf := func(dst []byte, r *model.Record, i int) []byte {
		if i == problems {
			return append(dst, model.SanitizeLine(strings.Join(r.Problems, "; "))...)
		}
		return lt.appendCell(dst, r, i)
	}

	cols := make([]fitCol, len(titles))
	caps := make([]int, len(titles))
	for i, sp := range specs {
		caps[i] = width
		if sp.max > 0 {
			caps[i] = min(sp.max, width)
		}
		cols[i] = fitCol{natural: min(cellWidth(titles[i]), caps[i]), min: sp.min, flex: sp.flex, keep: sp.keep}
	}
	var cell []byte
	for _, r := range recs {
		for i := range cols {
			if cols[i].natural >= caps[i] {
				continue
			}
			cell = cellOf(cell[:0], r, i)
			cols[i].natural = max(cols[i].natural, min(boundedCellWidth(cell, caps[i]), caps[i]))
		}
	}
	for i := range cols {
		if cols[i].min == 0 || cols[i].min > cols[i].natural {
			cols[i].min = cols[i].natural
		}
	}
	widths := fitColumns(cols, width)
	fit := listFit{width: width}
	for i, cw := range widths {
		if cw == 0 {
			fit.hidden = append(fit.hidden, titles[i])
		}
	}

	bw := bufio.NewWriterSize(w, listOutBuffer)
	line := make([]byte, 0, 256)
	gap := strings.Repeat(" ", listGap)
	// appendFitted appends a cell cut and padded to cw cells, listGap before it unless first.
	appendFitted := func(line, cell []byte, cw int, first bool) []byte {
		if !first {
			line = append(line, gap...)
		}
		w := boundedCellWidth(cell, cw)
		if w > cw {
			cut := cutCell(string(cell), cw)
			line = append(line, cut...)
			w = cellWidth(cut)
			fit.cut = true
		} else {
			line = append(line, cell...)
		}
		for n := cw - w; n > 0; n-- {
			line = append(line, ' ')
		}
		return line
	}
	endLine := func(line []byte) []byte {
		end := len(line)
		for end > 0 && line[end-1] == ' ' {
			end--
		}
		return append(line[:end], '\n')
	}
	first := true
	for i, cw := range widths {
		if cw > 0 {
			line = appendFitted(line, []byte(titles[i]), cw, first)
			first = false
		}
	}
	line = endLine(line)
	for _, r := range recs {
		first := true
		for i, cw := range widths {
			if cw == 0 {
				continue
			}
			cell = cellOf(cell[:0], r, i)
			line = appendFitted(line, cell, cw, first)
			first = false
		}
		line = endLine(line)
		if len(line) >= listOutBuffer/2 {
			if _, err := bw.Write(line); err != nil {
				return fit, err
			}
			line = line[:0]
		}
	}
	if _, err := bw.Write(line); err != nil {
		return fit, err
	}
	return fit, bw.Flush()
}

// boundedCellWidth is boundedWidth for a cell being formatted: printable ASCII, most cells,
// is measured without a copy.
func boundedCellWidth(cell []byte, max int) int {
	if printableASCII(cell) {
		return len(cell)
	}
	return boundedWidth(string(cell), max)
}

// fieldAt is the field of column c of t ("" for a column triage has no field for).
func fieldAt(t *model.Table, c int) model.Field {
	for f, i := range t.Header.Index {
		if i == c {
			return f
		}
	}
	return ""
}

// writeListTSV is -o tsv, for scripts: a header line (ROW, ID, STATUS, the table's columns
// and PROBLEMS), then one line per row, the cells tab-separated and escaped (appendTSV), not
// cut or fitted. A row's cells are as the sheet holds them but the ID and status (the row's,
// as list --json has them), its time (RFC 3339, as in --json) and its problems (joined by
// "; "). The columns and their order are those of the table for the tab's role, and stay.
func writeListTSV(w io.Writer, t *model.Table, recs []*model.Record) error {
	lt := newListTable(t)
	bw := bufio.NewWriterSize(w, listOutBuffer)
	line := make([]byte, 0, 256)
	line = append(line, "ROW\tID\tSTATUS"...)
	for _, c := range lt.cols {
		line = append(line, '\t')
		line = appendTSV(line, strings.ToUpper(t.Header.Headers[c]))
	}
	line = append(line, "\tPROBLEMS\n"...)
	for _, r := range recs {
		line = strconv.AppendInt(line, int64(r.Row), 10)
		line = append(line, '\t')
		line = appendTSV(line, r.ID)
		line = append(line, '\t')
		line = appendTSV(line, r.Status)
		for _, c := range lt.cols {
			line = append(line, '\t')
			if c == lt.timeCol && !r.Time.IsZero() {
				line = appendTSV(line, model.FormatTime(r.Time))
				continue
			}
			v := ""
			if c < len(r.Cells) {
				v = r.Cells[c]
			}
			line = appendTSV(line, v)
		}
		line = append(line, '\t')
		for i, p := range r.Problems {
			if i > 0 {
				line = append(line, "; "...)
			}
			line = appendTSV(line, p)
		}
		line = append(line, '\n')
		if len(line) >= listOutBuffer/2 {
			if _, err := bw.Write(line); err != nil {
				return err
			}
			line = line[:0]
		}
	}
	if _, err := bw.Write(line); err != nil {
		return err
	}
	return bw.Flush()
}

// appendTSV appends s as a -o tsv cell: a backslash as \\, a tab \t, a newline \n, a carriage
// return \r, every other character the sanitiser replaces (C0 and C1 controls, DEL, bidi
// controls, invisible breaks: model.Unsafe) as \uXXXX (\UXXXXXXXX past U+FFFF), and each byte
// that isn't UTF-8 as \xHH; the rest as it is. So a cell holds no tab or newline to break
// the line, nothing a terminal would act on (the sanitising writer finds nothing to replace),
// and reads back byte for byte.
func appendTSV(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case r == utf8.RuneError && size <= 1:
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
		case model.Unsafe(r) && r > 0xffff:
			dst = append(dst, '\\', 'U')
			for shift := 28; shift >= 0; shift -= 4 {
				dst = append(dst, hex[r>>shift&0xf])
			}
		case model.Unsafe(r):
			dst = append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
