package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// listHostileWorkbook has a tab of each role whose cells are what makes a table hard to lay
// out and dangerous to print: escape sequences, bidi controls, C1 controls, NULs, newlines
// and tabs, wide characters, emoji with modifiers and joiners, combining marks, cells far
// past any terminal's width, a repeated ID and a blank one (rows with problems).
func listHostileWorkbook() *emulator.Workbook {
	long := strings.Repeat("a very long message that goes on ", 8)
	return &emulator.Workbook{SpreadsheetID: "s1", Title: "Hostile", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			{46000.5, "Ann", "ann@example.com", "hello, my order is late", "new", "m1"},
			{46000.6, "山田 太郎", "yamada@example.jp", "注文した商品がまだ届いていません。確認してください。", "new", "m2"},
			{46000.7, "Zoë", "zoe@example.com", "👍🏽 thanks 👨‍👩‍👧 the family loves it 🎉", "done", "m3"},
			{46000.8, "Eve\u202e", "e@x", "\x1b]0;pwned\x07c1 \u009b31m \x1b[2J nul\x00 bidi\u2066x\u2069 end", "new\x1b[2J\u0085", "m4\x1b[31m"},
			{46000.9, "Cafe\u0301", "cafe@example.com", "Re\u0301sume\u0301 attached:\nline two\tand a tab \\ backslash", "read", "m5"},
			{46001.0, "Long", "long@example.com", long, "new", "m6"},
			{46001.1, "Dup", "dup@example.com", "same ID as m1", "new", "m1"},
			{46001.2, "NoID", "noid@example.com", "this row has no ID", "new", ""},
		}},
		{Title: "failed_calls", Rows: [][]any{
			{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"},
			{46000.25, "warehouse", "https://warehouse.example.com/api/v2/stock/adjustments?sku=A-1&location=main", `{"sku":"A-1"}`, "rejected by receiver: 422 Unprocessable Entity: quantity must be positive", "2", "POST", "w1", "rejected"},
			{46000.26, "crm\u202e", "http://crm.example.com/\x1b[2Jcontacts", `{"email":"a@example.com"}`, "boom\x00\nsecond line", "1", "POST", "k1", "dead"},
		}},
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt"},
			{"j1", "sync", "{}", "error", "worker-1", "", "upstream said 500 Internal Server Error after 3 retries with backoff", ""},
			{"j2", "mail", "{}", "claimed", "worker-2\u0085", "2025-12-09T12:00:00Z", "", ""},
			{"0f8fad5b-d9cb-469f-a165-70867728950e", "sync", "{}", "pending", "", "", "", ""},
		}},
	}}
}

// listTabs are the tabs of listHostileWorkbook, one of each role.
var listTabs = []string{"Inbox", "failed_calls", "Jobs"}

// TestListPipedOutputUnchanged: with stdout not a terminal and no -o, `list` prints exactly
// what it printed before it learnt to fit a terminal (the golden file was written by that
// version): scripts that read the table keep working.
func TestListPipedOutputUnchanged(t *testing.T) {
	_, url := startEmu(t, listHostileWorkbook())
	c := newCLI(t, url)
	var out strings.Builder
	for _, tab := range listTabs {
		r := c.run("--spreadsheet", "s1", "list", "--tab", tab)
		if r.code != 0 {
			t.Fatalf("list --tab %s: exit %d\n%s", tab, r.code, r.stderr)
		}
		out.WriteString("$ triage list --tab " + tab + "\n" + r.stdout + "-- stderr --\n" + r.stderr)
	}
	golden.RequireEqual(t, out.String())
}

// TestFitColumns: every column at its natural width when that fits. Else the long text is
// cut, but not below its want while a less useful column can be hidden (lowest keep first);
// then below it, down to its minimum; then the essential columns are hidden; the last
// column standing is cut to the width. What is left goes, narrowest first, to the long text
// up to its want, the short columns up to theirs, the short columns whole, the long text
// whole. At every width from 1 to 250 the columns fit.
func TestFitColumns(t *testing.T) {
	// ROW, ID, STATUS, TIME, NAME, MESSAGE, URL
	cols := []fitCol{
		{natural: 3, min: 3, want: 3, keep: 10},
		{natural: 36, min: 8, want: 14, keep: 100},
		{natural: 7, min: 7, want: 7, keep: 90},
		{natural: 20, min: 20, want: 20, keep: 50},
		{natural: 12, min: 8, want: 12, keep: 60},
		{natural: 90, min: 10, want: 30, flex: true, keep: 80},
		{natural: 60, min: 10, want: 24, flex: true, keep: 45},
	}
	for _, tc := range []struct {
		width int
		want  []int
	}{
		// everything whole: 3+36+7+20+12+90+60 and 6 gaps of 2 make 240
		{240, []int{3, 36, 7, 20, 12, 90, 60}},
		{300, []int{3, 36, 7, 20, 12, 90, 60}},
		// the minimums make 78; the 122 over go to the text (its wants), the ID and the name
		// (theirs), the ID (whole), then the text, evenly: the message is cut first
		{200, []int{3, 36, 7, 20, 12, 55, 55}},
		// the text at its wants, the ID and the name share the rest, narrowest first
		{120, []int{3, 12, 7, 20, 12, 30, 24}},
		{112, []int{3, 8, 7, 20, 8, 30, 24}},
		// one cell short of the text's wants: the row number (keep 10) is hidden, and the
		// ID and the name get its room
		{111, []int{0, 10, 7, 20, 10, 30, 24}},
		// then the URL (45): the ID gets the room back, whole up to what is left
		{100, []int{0, 23, 7, 20, 12, 30, 0}},
		// then the time (50)
		{80, []int{0, 25, 7, 0, 12, 30, 0}},
		{60, []int{0, 9, 7, 0, 8, 30, 0}},
		// then the name (60): what is left is essential, and the message is cut below its
		// want, down to its minimum
		{50, []int{0, 9, 7, 0, 0, 30, 0}},
		{40, []int{0, 8, 7, 0, 0, 21, 0}},
		{29, []int{0, 8, 7, 0, 0, 10, 0}},
		// even the minimums don't fit: the message goes, then the status
		{28, []int{0, 19, 7, 0, 0, 0, 0}},
		// the ID alone, cut to the width whatever its minimum: a column that can't fit
		{12, []int{0, 12, 0, 0, 0, 0, 0}},
		{5, []int{0, 5, 0, 0, 0, 0, 0}},
		{1, []int{0, 1, 0, 0, 0, 0, 0}},
	} {
		if got := fitColumns(cols, tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("width %d: %v, want %v", tc.width, got, tc.want)
		}
	}
	for width := 1; width <= 250; width++ {
		got := fitColumns(cols, width)
		total, shown := 0, 0
		for i, w := range got {
			if w > 0 {
				total += w
				shown++
				if w > cols[i].natural {
					t.Errorf("width %d: column %d is %d wide, wider than its widest cell", width, i, w)
				}
				if w < cols[i].min && shown > 1 {
					t.Errorf("width %d: column %d cut to %d, under its minimum %d", width, i, w, cols[i].min)
				}
			}
		}
		if shown == 0 || total+listGap*(shown-1) > width {
			t.Errorf("width %d: %v takes %d cells", width, got, total+listGap*(shown-1))
		}
	}
}

// graphemes splits s into grapheme clusters, as the terminal (and ansi) see them.
func graphemes(s string) []string {
	var out []string
	for s != "" {
		c, _ := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
		out = append(out, c)
		s = s[len(c):]
	}
	return out
}

// TestCutCell: a cell cut to w cells is at most w wide, ends in … exactly when it was cut,
// and what it keeps is whole grapheme clusters from the start: never half a wide character,
// an emoji without its skin tone or joined members, a letter without its accent.
func TestCutCell(t *testing.T) {
	cells := []string{
		"plain ascii text",
		"日本語のテキスト",
		"👍🏽 thanks 👨‍👩‍👧 family 🇯🇵 flag",
		"Re\u0301sume\u0301 cafe\u0301 e\u0301\u0301\u0301",
		"mixed 山田 and e\u0301 and 🎉",
		"z\u0351\u0352\u0353\u0354\u0355\u0356\u0357\u0358\u0359\u035a\u035b\u035c\u035d\u035e\u035f\u0360\u0361\u0362algo",
		model.SanitizeLine(hostile + " after"),
		strings.Repeat("長い", 30000),
		"",
	}
	for _, s := range cells {
		full := ansi.StringWidth(s)
		clusters := graphemes(s)
		for w := 0; w <= 40; w++ {
			got := cutCell(s, w)
			if gw := ansi.StringWidth(got); gw > w {
				t.Errorf("cutCell(%.20q, %d) = %q, %d cells wide", s, w, got, gw)
			}
			if full <= w {
				if got != s {
					t.Errorf("cutCell(%.20q, %d) = %q: it fits, it should be whole", s, w, got)
				}
				continue
			}
			if w > 0 && !strings.HasSuffix(got, "…") {
				t.Errorf("cutCell(%.20q, %d) = %q: cut without …", s, w, got)
			}
			kept := strings.TrimSuffix(got, "…")
			joined := ""
			for _, c := range clusters {
				if len(joined) >= len(kept) {
					break
				}
				joined += c
			}
			if joined != kept {
				t.Errorf("cutCell(%.20q, %d) keeps %q: not whole clusters from the start", s, w, kept)
			}
		}
	}
	if w := boundedWidth(strings.Repeat("長い", 30000), 50); w <= 50 || w > 60 {
		t.Errorf("boundedWidth of a long cell, up to 50: %d", w)
	}
	if w := boundedWidth("日本", 50); w != 4 {
		t.Errorf("boundedWidth(日本) = %d", w)
	}
}

// checkFits fails unless every line of out is at most width cells wide and none ends in a
// blank.
func checkFits(t *testing.T, where, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("%s: line %d is %d cells wide, over %d: %q", where, i+1, w, width, l)
		}
		if strings.TrimRight(l, " ") != l {
			t.Errorf("%s: line %d ends in blanks: %q", where, i+1, l)
		}
	}
}

// TestListFitsTheTerminal: on a terminal `list` fits its width: at 40, 80, 120 and 200
// columns no line is wider, every row is there (one line each), the ID and status columns
// always are, and a line on stderr says what was cut or hidden and that -o wide has it all.
// $COLUMNS overrides the terminal's width.
func TestListFitsTheTerminal(t *testing.T) {
	_, url := startEmu(t, listHostileWorkbook())
	c := newCLI(t, url)
	rows := map[string]int{"Inbox": 8, "failed_calls": 2, "Jobs": 3}
	for _, width := range []int{40, 80, 120, 200} {
		c.width = width
		for _, tab := range listTabs {
			where := fmt.Sprintf("%s at %d", tab, width)
			r := c.run("--spreadsheet", "s1", "list", "--tab", tab)
			if r.code != 0 {
				t.Fatalf("%s: exit %d\n%s", where, r.code, r.stderr)
			}
			checkFits(t, where, r.stdout, width)
			checkNoRawControls(t, where+" stdout", r.stdout)
			checkNoRawControls(t, where+" stderr", r.stderr)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) != rows[tab]+1 || !strings.HasPrefix(lines[0], "ID  ") && !strings.HasPrefix(lines[0], "ROW  ID  ") || !strings.Contains(lines[0], "STATUS") {
				t.Errorf("%s: want a header with ID and STATUS and %d rows:\n%s", where, rows[tab], r.stdout)
			}
			note := strings.Contains(r.stderr, fmt.Sprintf("cut to fit %d columns", width)) && strings.Contains(r.stderr, "-o wide shows every")
			if cut := strings.Contains(r.stdout, "…"); cut != note {
				t.Errorf("%s: cells cut %v, but the note on stderr says %v:\n%s", where, cut, note, r.stderr)
			}
		}
	}

	// 80 columns: the inbox hides the row number, the problems and e-mail, and says so; the
	// message, the status and the times are there.
	c.width = 80
	r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	if !strings.Contains(r.stderr, "ROW, EMAIL and PROBLEMS hidden") || strings.Contains(r.stdout, "EMAIL") || !strings.Contains(r.stdout, "MESSAGE") || !strings.Contains(r.stdout, "2025-12-09 12:00 UTC") {
		t.Errorf("at 80 columns the inbox should hide ROW, EMAIL and PROBLEMS and keep the rest:\n%s%s", r.stdout, r.stderr)
	}
	// The same at 200: nothing hidden, the long message cut.
	c.width = 200
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	if strings.Contains(r.stderr, "hidden") || !strings.Contains(r.stdout, "EMAIL") || !strings.Contains(r.stdout, "a very long message that goes on a very long") {
		t.Errorf("at 200 columns nothing should be hidden:\n%s%s", r.stdout, r.stderr)
	}

	// $COLUMNS says how wide, over what the terminal says.
	c.env["COLUMNS"] = "50"
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	checkFits(t, "COLUMNS=50", r.stdout, 50)
	if !strings.Contains(r.stderr, "cut to fit 50 columns") {
		t.Errorf("COLUMNS=50: %s", r.stderr)
	}
	// ...but not when stdout is no terminal: the piped table is as it was.
	c.width = 0
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	if want := "a very long message that goes on a very long message that g…"; !strings.Contains(r.stdout, want) || strings.Contains(r.stderr, "cut to fit") {
		t.Errorf("piped with COLUMNS=50, the table should be the piped one:\n%s%s", r.stdout, r.stderr)
	}
	// -o table fits when piped too: to $COLUMNS, else 80.
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "-o", "table")
	checkFits(t, "-o table, COLUMNS=50", r.stdout, 50)
	delete(c.env, "COLUMNS")
	r = c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "-o", "table")
	checkFits(t, "-o table piped", r.stdout, 80)
	if !strings.Contains(r.stderr, "cut to fit 80 columns") {
		t.Errorf("-o table piped: %s", r.stderr)
	}
}

// TestListFittedLayoutIsSafe: the fitted table of the hard cases (hostile text in every
// column, invalid UTF-8, wide and combining characters, problems) fits every width from 1 to
// 200 and, through the sanitising writer, carries no raw control.
func TestListFittedLayoutIsSafe(t *testing.T) {
	for name, tab := range listCases(t) {
		recs := listRecords(tab)
		for width := 1; width <= 200; width++ {
			var out bytes.Buffer
			w := newSafeWriter(&out)
			if _, err := writeListFitted(w, tab, recs, width); err != nil {
				t.Fatal(err)
			}
			_ = w.Flush()
			where := fmt.Sprintf("%s at %d", name, width)
			checkFits(t, where, out.String(), width)
			checkNoRawControls(t, where, out.String())
			if n := strings.Count(out.String(), "\n"); n != len(recs)+1 {
				t.Errorf("%s: %d lines for %d rows", where, n, len(recs))
			}
		}
	}
}

// TestListWide: -o wide prints every cell whole (the piped table cuts at 60 characters),
// aligned in terminal cells (a wide character takes two), on a terminal as in a pipe.
func TestListWide(t *testing.T) {
	_, url := startEmu(t, listHostileWorkbook())
	c := newCLI(t, url)
	long := strings.Repeat("a very long message that goes on ", 8)
	for _, width := range []int{0, 80} {
		c.width = width
		r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "-o", "wide")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		checkNoRawControls(t, "-o wide", r.stdout)
		if !strings.Contains(r.stdout, long) || strings.Contains(r.stdout, "…") || strings.Contains(r.stderr, "cut to fit") {
			t.Errorf("width %d: -o wide should print every cell whole:\n%s%s", width, r.stdout, r.stderr)
		}
		// every row's e-mail starts at the cell the EMAIL column does, past 山田 太郎 (five
		// characters, nine cells) and Café (a combining accent: four characters, five runes)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		at := ansi.StringWidth(lines[0][:strings.Index(lines[0], "EMAIL")])
		emails := []string{"ann@example.com", "yamada@example.jp", "zoe@example.com", "e@x", "cafe@example.com", "long@example.com", "dup@example.com", "noid@example.com"}
		if len(lines) != len(emails)+1 {
			t.Fatalf("width %d: %d lines:\n%s", width, len(lines), r.stdout)
		}
		for i, l := range lines[1:] {
			if j := strings.Index(l, emails[i]); j < 0 || ansi.StringWidth(l[:j]) != at {
				t.Errorf("width %d, line %d: the e-mail is not at cell %d, where the EMAIL column starts:\n%s", width, i+2, at, r.stdout)
			}
		}
	}
}

// unescapeTSV reads a -o tsv cell back: the escapes appendTSV writes, and nothing else.
func unescapeTSV(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("a lone backslash at the end of %q", s)
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
			if i+n >= len(s) {
				return "", fmt.Errorf("a short \\%c escape in %q", s[i], s)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", fmt.Errorf("a bad \\%c escape in %q: %v", s[i], s, err)
			}
			if s[i] == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += n
		default:
			return "", fmt.Errorf("an unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}

// parseTSV splits -o tsv output into its header and rows of unescaped cells, each line with
// as many cells as the header.
func parseTSV(t *testing.T, out string) (header []string, rows [][]string) {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("-o tsv does not end in a newline: %q", out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := strings.Split(line, "\t")
		for j, c := range cells {
			v, err := unescapeTSV(c)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			cells[j] = v
		}
		if i == 0 {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			t.Fatalf("line %d has %d cells, the header %d: %q", i+1, len(cells), len(header), line)
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// TestListTSVReadsBack: -o tsv parses back, cell for cell and byte for byte, into the rows
// as the sheet holds them (invalid UTF-8, tabs, newlines, backslashes, controls, bidi
// characters included), with the row's ID and status, its time in RFC 3339 and its problems,
// and the sanitising writer finds nothing in it to replace.
func TestListTSVReadsBack(t *testing.T) {
	for name, tab := range listCases(t) {
		recs := listRecords(tab)
		var raw, safe bytes.Buffer
		if err := writeListTSV(&raw, tab, recs); err != nil {
			t.Fatal(err)
		}
		sw := newSafeWriter(&safe)
		_ = writeListTSV(sw, tab, recs)
		_ = sw.Flush()
		if safe.String() != raw.String() || !safeText(raw.Bytes()) {
			t.Errorf("%s: -o tsv holds something the sanitising writer replaces", name)
		}
		checkNoRawControls(t, name+" tsv", raw.String())
		header, rows := parseTSV(t, raw.String())
		cols := listColumns(tab)
		wantHeader := []string{"ROW", "ID", "STATUS"}
		for _, c := range cols {
			wantHeader = append(wantHeader, strings.ToUpper(tab.Header.Headers[c]))
		}
		wantHeader = append(wantHeader, "PROBLEMS")
		if !slices.Equal(header, wantHeader) {
			t.Errorf("%s: header %q, want %q", name, header, wantHeader)
		}
		if len(rows) != len(recs) {
			t.Fatalf("%s: %d rows, want %d", name, len(rows), len(recs))
		}
		timeCol := tab.Header.Col(model.FTimestamp)
		if tab.Config.Role == model.RoleQueue {
			timeCol = tab.Header.Col(model.FClaimedAt)
		}
		for i, r := range recs {
			want := []string{strconv.Itoa(r.Row), r.ID, r.Status}
			for _, c := range cols {
				if c == timeCol && !r.Time.IsZero() {
					want = append(want, model.FormatTime(r.Time))
				} else {
					want = append(want, cellAt(r, c))
				}
			}
			want = append(want, strings.Join(r.Problems, "; "))
			if !slices.Equal(rows[i], want) {
				t.Errorf("%s row %d: read back %q, want %q", name, r.Row, rows[i], want)
			}
		}
	}
	if got := string(appendTSV(nil, "a\\b\tc\nd\re\x00f\x1b\u0085\u202e\u2028\xff\xfe日 e\u0301")); got != `a\\b\tc\nd\re\u0000f\u001b\u0085\u202e\u2028\xff\xfe日 e`+"\u0301" {
		t.Errorf("appendTSV: %q", got)
	}
}

// TestListOutputsOfHostileCells: hostile cells in every column, in every form list prints
// (the piped table, fitted at 80 columns, -o wide, -o tsv, --json): no escape sequence, bidi
// control or NUL reaches stdout or stderr raw, and every row is there.
func TestListOutputsOfHostileCells(t *testing.T) {
	_, url := startEmu(t, listHostileWorkbook())
	c := newCLI(t, url)
	for _, form := range []struct {
		name  string
		width int
		args  []string
	}{
		{"piped", 0, nil},
		{"fitted", 80, nil},
		{"-o table", 0, []string{"-o", "table"}},
		{"-o wide", 80, []string{"-o", "wide"}},
		{"-o tsv", 80, []string{"-o", "tsv"}},
		{"--json", 80, []string{"--json"}},
	} {
		c.width = form.width
		for _, tab := range listTabs {
			r := c.run(append([]string{"--spreadsheet", "s1", "list", "--tab", tab}, form.args...)...)
			where := form.name + " " + tab
			if r.code != 0 {
				t.Fatalf("%s: exit %d\n%s", where, r.code, r.stderr)
			}
			checkNoRawControls(t, where+" stdout", r.stdout)
			checkNoRawControls(t, where+" stderr", r.stderr)
			for _, bad := range []string{"\x1b", "\x00", "\u202e", "\u2066", "\u009b", "\u0085"} {
				if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
					t.Errorf("%s: a raw %q", where, bad)
				}
			}
		}
	}
	// In -o tsv the hostile cells read back as the sheet holds them.
	r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox", "-o", "tsv")
	_, rows := parseTSV(t, r.stdout)
	if len(rows) != 8 || rows[3][1] != "m4\x1b[31m" || rows[3][6] != "\x1b]0;pwned\x07c1 \u009b31m \x1b[2J nul\x00 bidi\u2066x\u2069 end" || rows[4][6] != "Re\u0301sume\u0301 attached:\nline two\tand a tab \\ backslash" {
		t.Errorf("-o tsv does not read back as the sheet holds the cells: %q", rows)
	}
}

// TestListOutputFlag: -o takes table, wide or tsv; anything else, or -o with --json, is a
// usage error (exit 2) that says what it takes, before anything is read, and nothing on
// stdout. Shell completion offers the three.
func TestListOutputFlag(t *testing.T) {
	c := &cli{t: t, env: map[string]string{}}
	for _, args := range [][]string{
		{"list", "--tab", "inbox", "-o", "csv"},
		{"list", "--tab", "inbox", "--output", "WIDE"},
		{"list", "--tab", "inbox", "-o", ""},
		{"list", "--tab", "inbox", "-o", "wide", "--json"},
	} {
		r := c.run(args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "table, wide or tsv") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := c.run("list", "-o", "csv")
	if want := `triage: list: -o "csv" is not a form list prints: use table, wide or tsv, or --json for one JSON document`; !strings.Contains(r.stderr, want) {
		t.Errorf("the error should name the forms:\n%s", r.stderr)
	}
	r = c.run("__complete", "list", "-o", "")
	for _, want := range []string{"table\t", "wide\t", "tsv\t", ":4"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("completion of -o lacks %q:\n%s", want, r.stdout)
		}
	}
}
