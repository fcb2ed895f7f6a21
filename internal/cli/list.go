package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// newListCmd is `triage list`: it prints a tab's rows, sanitised, as a table or one JSON document.
func newListCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print a tab's rows as a table or JSON",
		Long: `Print the rows of one tab (inbox, dead-letter or queue), sanitised, as a table on stdout,
or as one JSON document with --json. --status (exact) and --filter narrow the rows; the filter
language is the TUI's (/ in the TUI): field:value terms, free text, "quoted phrases", a|b,
!negation. A field the tab doesn't have is a usage error that lists the tab's fields.

On a terminal the table fits its width ($COLUMNS, when set, says how wide): long text
(messages, URLs, errors) is cut first, with …, but while it would be hard to read, the least
useful columns are hidden instead (the row number first, then a row's problems, e-mail, the
worker, attempts, URLs, times, names), and names and IDs are cut; a line on stderr says what
was cut or hidden: nothing is lost, -o wide shows every cell whole. Piped, the table is what
it always was (cells over 60 characters cut), unless -o says otherwise.

-o table: the table fitted to the terminal, the default there (piped, to $COLUMNS, else 80
columns).

-o wide: every column and every cell whole, however wide the lines get.

-o tsv, for scripts: a header line, then one line per row, tab-separated, never cut. In a cell
a backslash is written \\, a tab \t, a newline \n, a carriage return \r, any other control or
bidi character \u and its four hex digits (\u202e), and a byte that isn't UTF-8 \x and its two
(\xff), so each cell reads back exactly. Times
are RFC 3339, as in --json.`,
		Example: `  triage list --tab Inbox --status new
  triage list --tab deadletter --filter 'source:crm !status:delivered'
  triage list --tab deadletter --filter 'source:crm|billing kind:503|timeout'
  triage list --tab Inbox -o wide | less -S
  triage list --tab Inbox -o tsv | cut -f2,7
  triage list --tab queue --json | jq '.rows[].id'`,
		Args: noArgs,
	}
	fs := cmd.Flags()
	tab := fs.String("tab", "", "tab name or role (inbox, deadletter, queue)")
	completeTabs(cmd, g, e)
	status := fs.String("status", "", "only rows with this status")
	filter := fs.String("filter", "", "filter query, as in the TUI, e.g. 'source:crm !status:done'")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	output := fs.StringP("output", "o", "", "the table's form: "+listFormatNames()+" (see above)")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		out := make([]string, len(listFormats))
		for i, f := range listFormats {
			out[i] = string(f.name) + "\t" + f.about
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	g.register(fs, gConnect)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format, err := listFormatOf(*output, cmd.Flags().Changed("output"), *asJSON)
		if err != nil {
			return err
		}
		return runList(cmd.Context(), g, e, *tab, *status, *filter, format)
	}
	return cmd
}

// listFormat is the form `list` prints its rows in (-o, --json).
type listFormat string

const (
	// listAuto is no -o: fitted on a terminal, the piped table elsewhere.
	listAuto listFormat = ""
	// listFitted is the table cut to the terminal's width (-o table).
	listFitted listFormat = "table"
	// listWide is the table with every cell whole (-o wide).
	listWide listFormat = "wide"
	// listTSV is tab-separated, escaped cells for scripts (-o tsv).
	listTSV listFormat = "tsv"
	// listJSON is the one JSON document (--json).
	listJSON listFormat = "json"
)

// listFormats are the values -o takes, with what each prints (shell completion shows it).
var listFormats = []struct {
	name  listFormat
	about string
}{
	{listFitted, "the table fitted to the terminal's width (the default on a terminal)"},
	{listWide, "every cell whole, however wide the lines get"},
	{listTSV, "tab-separated cells, escaped, with a header line, for scripts"},
}

// listFormatNames is "table, wide or tsv".
func listFormatNames() string {
	names := make([]string, len(listFormats))
	for i, f := range listFormats {
		names[i] = string(f.name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// listFormatOf is the form -o (given says whether it was) and --json ask for, or the usage
// error that says what -o takes.
func listFormatOf(output string, given, asJSON bool) (listFormat, error) {
	if !given {
		if asJSON {
			return listJSON, nil
		}
		return listAuto, nil
	}
	if asJSON {
		return "", usageErr("list: -o and --json both choose what list prints: give one (-o takes %s)", listFormatNames())
	}
	for _, f := range listFormats {
		if output == string(f.name) {
			return f.name, nil
		}
	}
	return "", usageErr("list: -o %q is not a form list prints: use %s, or --json for one JSON document", output, listFormatNames())
}

func runList(ctx context.Context, g *globals, e *env, tab, status, filter string, format listFormat) error {
	st, t, err := openTab(ctx, g, e, tab)
	if err != nil {
		return err
	}
	want := strings.ToLower(strings.TrimSpace(status))
	if status != "" && !t.HasStatus(want) {
		return usageErr("list: --status %q is not a status of %q (statuses: %s)", status, t.Config.Name, strings.Join(t.Statuses, ", "))
	}
	m := model.ParseFilter(filter).Bind(t)
	if p := m.Problem(); p != "" {
		// A script that mistypes a field must not get a silently wrong list.
		return usageErr("list: --filter: %s (tab %q); to search text with a colon, quote it: \"%s:…\"", p, t.Config.Name, m.Unknown()[0])
	}
	if p := m.DateProblem(); p != "" {
		// A date the script mistyped matches nothing: an empty list that looks like an answer.
		return usageErr("list: --filter: %s (tab %q)", p, t.Config.Name)
	}
	t, err = listHistory(ctx, st, t, m, want, e)
	if err != nil {
		return err
	}
	var recs []*model.Record
	for i := range t.Records {
		r := &t.Records[i]
		// --status is the exact status (the filter's status: matches a prefix).
		if (status == "" || r.Status == want) && m.Match(r, model.Haystack(r)) {
			recs = append(recs, r)
		}
	}
	width, terminal := e.stdoutWidth()
	if format == listAuto && terminal {
		format = listFitted
	}
	var fitted listFit
	switch format {
	case listJSON:
		return writeListJSON(e.stdout, t, recs)
	case listTSV:
		err = writeListTSV(e.stdout, t, recs)
	case listWide:
		err = writeListWide(e.stdout, t, recs)
	case listFitted:
		fitted, err = writeListFitted(e.stdout, t, recs, width)
	default:
		err = writeListTable(e.stdout, t, recs)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s of %d in %q\n", words.Count(len(recs), "row", "rows"), len(t.Records), t.Config.Name)
	if note := fitted.note(); note != "" {
		fmt.Fprintln(e.stderr, note)
	}
	return nil
}

// openTab resolves the settings, connects, loads and finds one tab: the start of every
// command that works on a tab's rows.
func openTab(ctx context.Context, g *globals, e *env, name string) (store, *model.Table, error) {
	st, t, _, err := openTabFor(ctx, g, e, name, false, nil)
	return st, t, err
}

// openTabToWrite is openTab for a command that writes the rows ids of the tab: other
// processes' unfinished writes are settled first (loadTabToWrite), and what that did is
// returned; on a database the rows named are read whether settled or open (rowsLoader).
func openTabToWrite(ctx context.Context, g *globals, e *env, name string, ids []string) (store, *model.Table, model.ApplyResult, error) {
	return openTabFor(ctx, g, e, name, true, ids)
}

// openTabFor is openTab, settling first when the command is to write (write).
func openTabFor(ctx context.Context, g *globals, e *env, name string, write bool, ids []string) (store, *model.Table, model.ApplyResult, error) {
	var settled model.ApplyResult
	s, err := resolve(g, e)
	if err != nil {
		return nil, nil, settled, err
	}
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return nil, nil, settled, err
	}
	if name == "" {
		// No tab asked for: the message lists the tabs the sheet has.
		wb, err := loadWorkbook(ctx, st)
		if err != nil {
			return nil, nil, settled, err
		}
		_, err = findTab(wb, name)
		return nil, nil, settled, err
	}
	// The one tab, read once: a command that writes next plans its write from this read
	// (sheets.Store.LoadTab).
	var wb *model.Workbook
	if write {
		wb, settled, err = loadTabToWrite(ctx, st, name, ids)
	} else if wb, err = st.LoadTab(ctx, name); err != nil {
		err = &exitError{code: exitUsage, err: err}
	}
	if err != nil {
		closeStore(st)
		return nil, nil, settled, err
	}
	t, err := findTab(wb, name)
	return st, t, settled, err
}

// listColumns picks the columns `list` shows besides row, ID and status.
func listColumns(t *model.Table) []int {
	var fields []model.Field
	switch t.Config.Role {
	case model.RoleInbox:
		fields = []model.Field{model.FTimestamp, model.FName, model.FEmail, model.FMessage}
	case model.RoleDeadLetter:
		fields = []model.Field{model.FSource, model.FURL, model.FAttempts, model.FError}
	case model.RoleQueue:
		fields = []model.Field{model.FType, model.FClaimedBy, model.FClaimedAt, model.FLastError}
	}
	var out []int
	for _, f := range fields {
		if i := t.Header.Col(f); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// clip cuts s to n characters, the last of them "…" when it had to cut.
func clip(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// listOutBuffer is the buffer between `list` and stdout: rows are written as they are
// formatted, and reach the sanitising writer (and the terminal) in chunks this size.
const listOutBuffer = 64 << 10

// writeListTable prints rows as a table: the columns are as wide as their widest cell
// (counted in characters) plus two spaces; the last column and a row's problems are not
// padded. Every cell is sanitised to one line first (invariant 9), so the widths are those of
// what is shown. It lays out exactly as text/tabwriter did (minwidth 2, padding 2, blanks),
// problems included: a row's problems are one more cell, so the column before them is
// padded to the widest of that column in the run of consecutive rows that have problems.
// Two passes over the rows, the first for the widths, the second to write, each line into a
// buffer as it is made: no cell is kept, and plain cells cost no allocation.
func writeListTable(w io.Writer, t *model.Table, recs []*model.Record) error {
	return writeAligned(w, newListTable(t), recs)
}

// writeListWide is -o wide: the table of writeListTable with every cell whole (none cut at 60
// characters), its columns as wide as their widest cell in terminal cells, so wide
// characters and emoji line up on a terminal.
func writeListWide(w io.Writer, t *model.Table, recs []*model.Record) error {
	lt := newListTable(t)
	lt.whole = true
	return writeAligned(w, lt, recs)
}

// writeAligned is writeListTable's layout of lt's cells.
func writeAligned(w io.Writer, lt *listTable, recs []*model.Record) error {
	n := len(lt.header)
	widths := make([]int, n) // of every column but the last, over every line
	for i, h := range lt.header[:n-1] {
		widths[i] = lt.width([]byte(h))
	}
	lastWidths := make([]int, len(recs)) // the last column's, for the rows with problems
	var cell []byte
	for ri, r := range recs {
		for i := range n {
			cell = lt.appendCell(cell[:0], r, i)
			switch {
			case i < n-1:
				widths[i] = max(widths[i], lt.width(cell))
			case len(r.Problems) > 0:
				lastWidths[ri] = lt.width(cell)
			}
		}
	}
	// a run of consecutive rows with problems shares the widest of its last cells
	for start := 0; start < len(recs); {
		if len(recs[start].Problems) == 0 {
			start++
			continue
		}
		end, width := start, 0
		for ; end < len(recs) && len(recs[end].Problems) > 0; end++ {
			width = max(width, lastWidths[end])
		}
		for i := start; i < end; i++ {
			lastWidths[i] = width
		}
		start = end
	}

	bw := bufio.NewWriterSize(w, listOutBuffer)
	line := make([]byte, 0, 256)
	for i, h := range lt.header {
		start := len(line)
		line = append(line, h...)
		if i < n-1 {
			line = lt.pad(line, start, widths[i])
		}
	}
	line = append(line, '\n')
	for ri, r := range recs {
		for i := range n {
			start := len(line)
			line = lt.appendCell(line, r, i)
			switch {
			case i < n-1:
				line = lt.pad(line, start, widths[i])
			case len(r.Problems) > 0:
				line = lt.pad(line, start, lastWidths[ri])
				line = append(line, "! "...)
				line = append(line, model.SanitizeLine(strings.Join(r.Problems, "; "))...)
			}
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

// listTable is what `list` needs to print a tab's cells as table cells.
type listTable struct {
	t       *model.Table
	header  []string // ROW, ID, STATUS and the columns' headers, sanitised
	cols    []int    // the columns after STATUS
	timeCol int
	// whole keeps every cell whole (-o wide, and the fitted table before it cuts) and
	// measures it in terminal cells; else cells are cut at 40 (ID), 20 (status) or 60
	// characters and measured in characters, as the piped table always was.
	whole bool
}

func newListTable(t *model.Table) *listTable {
	lt := &listTable{t: t, cols: listColumns(t), timeCol: t.Header.Col(model.FTimestamp), header: []string{"ROW", "ID", "STATUS"}}
	if t.Config.Role == model.RoleQueue {
		lt.timeCol = t.Header.Col(model.FClaimedAt)
	}
	for _, c := range lt.cols {
		lt.header = append(lt.header, strings.ToUpper(model.SanitizeLine(t.Header.Headers[c])))
	}
	return lt
}

// appendCell appends cell i of r's line as shown: sanitised to one line and clipped (unless
// lt.whole).
func (lt *listTable) appendCell(dst []byte, r *model.Record, i int) []byte {
	switch i {
	case 0:
		return strconv.AppendInt(dst, int64(r.Row), 10)
	case 1:
		return append(dst, lt.clip(model.SanitizeLine(r.ID), 40)...)
	case 2:
		return append(dst, lt.clip(model.SanitizeLine(r.Status), 20)...)
	}
	c := lt.cols[i-3]
	if c == lt.timeCol && !r.Time.IsZero() {
		start := len(dst)
		dst = r.Time.In(lt.t.Location).AppendFormat(dst, listTimeLayout)
		if ts := dst[start:]; len(ts) > 60 || !printableASCII(ts) { // a zone with an odd name
			return append(dst[:start], lt.clip(model.SanitizeLine(string(ts)), 60)...)
		}
		return dst
	}
	v := ""
	if c < len(r.Cells) {
		v = r.Cells[c]
	}
	return append(dst, lt.clip(model.SanitizeLine(v), 60)...)
}

// clip is clip(s, n), or s whole when the table keeps cells whole.
func (lt *listTable) clip(s string, n int) string {
	if lt.whole {
		return s
	}
	return clip(s, n)
}

// width is how wide a sanitised cell is: in terminal cells when the table keeps cells whole,
// else in characters (the piped table's measure, kept so its output stays as it was).
func (lt *listTable) width(cell []byte) int {
	switch {
	case !lt.whole:
		return utf8.RuneCount(cell)
	case printableASCII(cell):
		return len(cell)
	}
	return cellWidth(string(cell))
}

// pad appends the blanks that make the cell that starts at line[start:] width+2 wide (as
// lt.width measures).
func (lt *listTable) pad(line []byte, start, width int) []byte {
	for n := width + 2 - lt.width(line[start:]); n > 0; n-- {
		line = append(line, ' ')
	}
	return line
}

// printableASCII reports whether b is printable ASCII only: one byte, one character, one cell.
func printableASCII[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// writeListJSON writes rows as one indented JSON document, {"tab", "role", "rows": [{"row",
// "id", "status", "time", "fields", "problems"}]}, the document writeJSON would write for
// it (fields by header, in sorted order; time and problems only when there are any), but row
// by row into a buffer and escaped as it is written (appendJSONString): no document in memory
// and no second pass over it (docs/BENCHMARKS.md, load). It is the one encoder besides
// writeJSON, held byte for byte equal to it by TestListStreamedOutputMatchesBefore and
// FuzzListJSONMatchesWriteJSON (list_test.go).
func writeListJSON(w io.Writer, t *model.Table, recs []*model.Record) error {
	// The fields of a row: every named column, by header in sorted order (a header that
	// repeats names its last column, as a map would have it), each key encoded once.
	type field struct {
		key []byte // `\n        "header": `
		col int
	}
	byName := map[string]int{}
	for i, h := range t.Header.Headers {
		if h != "" {
			byName[h] = i
		}
	}
	fields := make([]field, 0, len(byName))
	for _, h := range slices.Sorted(maps.Keys(byName)) {
		key := appendJSONString([]byte("\n        "), h)
		fields = append(fields, field{key: append(key, ": "...), col: byName[h]})
	}

	bw := bufio.NewWriterSize(w, listOutBuffer)
	b := make([]byte, 0, 1024)
	b = append(b, "{\n  \"tab\": "...)
	b = appendJSONString(b, t.Config.Name)
	b = append(b, ",\n  \"role\": "...)
	b = appendJSONString(b, string(t.Config.Role))
	b = append(b, ",\n  \"rows\": ["...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"row\": "...)
		b = strconv.AppendInt(b, int64(r.Row), 10)
		b = append(b, ",\n      \"id\": "...)
		b = appendJSONString(b, r.ID)
		b = append(b, ",\n      \"status\": "...)
		b = appendJSONString(b, r.Status)
		if !r.Time.IsZero() {
			b = append(b, ",\n      \"time\": "...)
			b = appendJSONString(b, model.FormatTime(r.Time))
		}
		b = append(b, ",\n      \"fields\": {"...)
		for j, f := range fields {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, f.key...)
			v := ""
			if f.col < len(r.Cells) {
				v = r.Cells[f.col]
			}
			b = appendJSONString(b, v)
		}
		if len(fields) > 0 {
			b = append(b, "\n      "...)
		}
		b = append(b, '}')
		if len(r.Problems) > 0 {
			b = append(b, ",\n      \"problems\": ["...)
			for j, p := range r.Problems {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, "\n        "...)
				b = appendJSONString(b, p)
			}
			b = append(b, "\n      ]"...)
		}
		b = append(b, "\n    }"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	if len(recs) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "]\n}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// listHistoryLimit caps the rows `list` reads from a database's history: the newest ones.
const listHistoryLimit = 100_000

// listHistory is the tab to list from: t as loaded, or, on a store that loads only the open
// work (a database), the rows of history the filter's status and date terms (and --status)
// ask for, searched in SQL with bound parameters (tui.HistorySearcher), as the TUI does.
// It says on stderr when history was searched and when the cap cut it.
func listHistory(ctx context.Context, st store, t *model.Table, m model.Matcher, status string, e *env) (*model.Table, error) {
	hs, ok := st.(tui.HistorySearcher)
	if !ok {
		return t, nil
	}
	q := m.History()
	if status != "" {
		q.Statuses = []string{status}
	}
	q.Limit = listHistoryLimit
	if q.IsZero() || !hs.NeedsHistory(t.Config.Name, q) {
		return t, nil
	}
	h, err := hs.SearchHistory(ctx, t.Config.Name, q)
	if err != nil {
		return nil, fmt.Errorf("list: search the history of %q: %w", t.Config.Name, err)
	}
	note := fmt.Sprintf("history of %q searched in the database (the open work is not all there is)", t.Config.Name)
	if len(h.Records) >= listHistoryLimit {
		note += fmt.Sprintf("; the newest %d rows only: narrow it with after:/before:", listHistoryLimit)
	}
	fmt.Fprintln(e.stderr, note)
	return h, nil
}
