package cli

import (
	"bufio"
	"fmt"
	"io"
	"math"
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
	want    int  // the width it still reads at, between min and natural
	flex    bool // long text (a message, a URL, an error): cut first, down to its want
	keep    int  // columns are hidden lowest keep first; the highest is hidden last of all
}

// essentialKeep is the keep of the columns hidden only when nothing else is left to hide:
// the ID, the status and the tab's main text.
const essentialKeep = 80

// fitColumns gives each column its width so that the columns, listGap apart, fit in width
// cells; 0 hides a column. When every column's natural width fits, that is all. Else, as in
// the TUI, long text is cut first, but not below its want (the width at which it still reads)
// while there is a less useful column to hide: columns are hidden, lowest keep first, until
// the long text at its want and every other column at its min fit. Only then is long text cut
// below its want, down to its min; when even the minimums don't fit, the essential columns
// go too, lowest keep first, rather than show columns a character or two wide, and the last
// column standing is cut to width, whatever its min. The room left over is handed out one
// cell at a time to the narrowest column that can take it: the long text up to its want,
// then the other columns up to theirs (short IDs and names whole), then to their whole
// width (statuses, times and row numbers always have theirs: their min is their width),
// then the long text, sharing what is left.
func fitColumns(cols []fitCol, width int) []int {
	width = max(width, 1)
	widths := make([]int, len(cols))
	total := listGap * (len(cols) - 1)
	for _, c := range cols {
		total += c.natural
	}
	if total <= width {
		for i, c := range cols {
			widths[i] = c.natural
		}
		return widths
	}
	shown := make([]bool, len(cols))
	for i := range shown {
		shown[i] = true
	}
	// hide is the shown column with the lowest keep, below below (-1: none).
	hide := func(below int) int {
		h := -1
		for i, c := range cols {
			if shown[i] && c.keep < below && (h < 0 || c.keep < cols[h].keep) {
				h = i
			}
		}
		return h
	}
	spare := 0
	for {
		n, mins, wants, last := 0, 0, 0, -1
		for i, c := range cols {
			if !shown[i] {
				continue
			}
			n, mins, last = n+1, mins+c.min, i
			if c.flex {
				wants += c.want
			} else {
				wants += c.min
			}
		}
		if n == 0 {
			return widths
		}
		gaps := listGap * (n - 1)
		if h := hide(essentialKeep); wants+gaps > width && h >= 0 {
			shown[h] = false
			continue
		}
		if mins+gaps <= width {
			spare = width - mins - gaps
			break
		}
		if n == 1 {
			widths[last] = min(cols[last].natural, width)
			return widths
		}
		shown[hide(math.MaxInt)] = false
	}
	for i, c := range cols {
		if shown[i] {
			widths[i] = c.min
		}
	}
	want := func(c fitCol) int { return c.want }
	natural := func(c fitCol) int { return c.natural }
	spare = growColumns(widths, cols, shown, true, want, spare)
	spare = growColumns(widths, cols, shown, false, want, spare)
	spare = growColumns(widths, cols, shown, false, natural, spare)
	growColumns(widths, cols, shown, true, natural, spare)
	return widths
}

// growColumns hands spare cells one at a time to the narrowest shown column that is long
// text (flex) or not, up to upTo of it, and returns the cells it could not place.
func growColumns(widths []int, cols []fitCol, shown []bool, flex bool, upTo func(fitCol) int, spare int) int {
	for spare > 0 {
		narrowest := -1
		for i, c := range cols {
			if shown[i] && c.flex == flex && widths[i] < upTo(c) && (narrowest < 0 || widths[i] < widths[narrowest]) {
				narrowest = i
			}
		}
		if narrowest < 0 {
			break
		}
		widths[narrowest]++
		spare--
	}
	return spare
}

// colSpec is how a column of the fitted table gives way on a narrow terminal.
type colSpec struct {
	min  int  // the narrowest it is cut to (0: never cut, hidden instead)
	want int  // as wide as it is comfortable to read (0: its natural width)
	max  int  // its natural width at most (0: the terminal's)
	flex bool // long text, cut first
	keep int  // the columns with the lowest keep are hidden first
}

// The row number is hidden first (the ID is what the commands take), then a row's problems
// (long text, but most rows have none, and a command on such a row says what is wrong).
var (
	rowSpec      = colSpec{keep: 10}
	problemsSpec = colSpec{min: 10, want: 20, flex: true, keep: 35}
)

// listColSpec is the colSpec of the column of field f. After the row number and problems,
// what the TUI also hides first goes first: e-mail, the worker, attempts, URLs, times; the
// ID, the status and the tab's main text (message, error) go last. Wants and minimums are
// near the TUI's.
func listColSpec(f model.Field) colSpec {
	switch f {
	case model.FID:
		return colSpec{min: 8, want: 14, max: 40, keep: 100}
	case model.FStatus:
		return colSpec{min: 9, max: 20, keep: 90}
	case model.FMessage, model.FError, model.FLastError:
		return colSpec{min: 10, want: 24, flex: true, keep: essentialKeep}
	case model.FName, model.FSource, model.FType:
		return colSpec{min: 8, want: 16, max: 30, keep: 60}
	case model.FTimestamp, model.FClaimedAt:
		return colSpec{max: 60, keep: 50}
	case model.FURL:
		return colSpec{min: 10, want: 20, flex: true, keep: 50}
	case model.FEmail:
		return colSpec{min: 10, want: 24, max: 40, keep: 40}
	case model.FClaimedBy:
		return colSpec{min: 8, want: 14, max: 30, keep: 40}
	case model.FAttempts:
		return colSpec{max: 8, keep: 40}
	}
	return colSpec{min: 8, want: 16, max: 30, keep: 30}
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
		cols[i] = fitCol{natural: min(cellWidth(titles[i]), caps[i]), min: sp.min, want: sp.want, flex: sp.flex, keep: sp.keep}
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
		c := &cols[i]
		if c.min == 0 || c.min > c.natural {
			c.min = c.natural
		}
		if c.want == 0 || c.want > c.natural {
			c.want = c.natural
		}
		c.want = max(c.want, c.min)
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
// controls, invisible breaks: model.Unsafe) as \u and four hex digits (\u202e; \U and eight
// past U+FFFF), and each byte that isn't UTF-8 as \x and two (\xff); the rest as it is. So a cell holds no tab or newline to break
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
