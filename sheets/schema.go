package sheets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/triage-dev/triage/internal/a1"
	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// InitReport says what EnsureSchema changed, and what it left alone that the operator should
// look at. CreatedTabs and AddedHeaders are empty when nothing was needed.
type InitReport struct {
	// CreatedTabs are the configured tabs that were added, in configured order.
	CreatedTabs []string
	// AddedHeaders maps a tab to the header cells written to its row 1, left to right.
	AddedHeaders map[string][]string
	// AddedAt maps a tab that already existed to the column letter of its first added header:
	// the added headers sit in new columns inserted from there on.
	AddedAt map[string]string
	// Unlabeled maps a tab to the letters of its columns whose header cell is empty but that
	// hold data further down. Init never adopts such a column (invariant 13: it could be an
	// operator's notes, which a replay would then overwrite as `error`, or send as `key`).
	Unlabeled map[string][]string
}

// Changed reports whether EnsureSchema changed anything.
func (r InitReport) Changed() bool { return len(r.CreatedTabs) > 0 || len(r.AddedHeaders) > 0 }

// String describes the report for the CLI, one line per change, then one line per tab with
// unlabeled data columns (the operator's to name).
func (r InitReport) String() string {
	var b strings.Builder
	if !r.Changed() {
		b.WriteString("nothing to do: every configured tab and header exists\n")
	}
	for _, t := range r.CreatedTabs {
		fmt.Fprintf(&b, "created tab %q\n", t)
	}
	for _, t := range sortedTabs(r.AddedHeaders) {
		q := make([]string, len(r.AddedHeaders[t]))
		for i, h := range r.AddedHeaders[t] {
			q[i] = fmt.Sprintf("%q", h)
		}
		where := ""
		if at := r.AddedAt[t]; at != "" {
			where = " in new columns from " + at
		}
		fmt.Fprintf(&b, "tab %q: added header %s%s\n", t, strings.Join(q, ", "), where)
	}
	for _, t := range sortedTabs(r.Unlabeled) {
		cols := r.Unlabeled[t]
		what := "column " + cols[0] + " holds data but has"
		if len(cols) > 1 {
			what = "columns " + strings.Join(cols, ", ") + " hold data but have"
		}
		fmt.Fprintf(&b, "tab %q: %s no header in row 1; left alone (init never adopts a column with data): give it a header of your own (e.g. \"notes\") so it is shown by name and never mistaken for a triage column\n", t, what)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// sortedTabs returns a report map's tab names in order, so the report reads the same each run.
func sortedTabs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// schemaHeaders returns the headers `triage init` makes sure a tab has, in schema order:
// every schema column except the audit ones (triaged_by / triaged_at are opt-in: an operator
// adds them by hand). A configured header name replaces the default one.
func schemaHeaders(tc model.TabConfig) []model.Column {
	var out []model.Column
	for _, c := range model.SchemaFor(tc.Role).Columns {
		if c.Field == model.FTriagedBy || c.Field == model.FTriagedAt {
			continue
		}
		if o, ok := tc.Columns[c.Field]; ok && strings.TrimSpace(o) != "" {
			c.Header = o
		}
		out = append(out, c)
	}
	return out
}

// EnsureSchema creates the configured tabs the spreadsheet lacks and adds the missing header
// cells of each tab's schema. Invariant 13: structure is only ever added where no data is.
// The header row and every data row are read fresh here, never taken from an earlier load; a
// column whose header cell is empty but that holds data is never adopted (it is reported in
// InitReport.Unlabeled); and the missing headers go into new, empty columns inserted right
// after the last column that holds anything, in the same atomic spreadsheets.batchUpdate that
// writes them. The Sheets API has no conditional write, so writing into columns that were
// empty when we read them could still land on data typed in the instant between the read
// and the write; cells that the same atomic request has just created can't hold any. At
// worst, such data moves right by the inserted columns: nothing is ever overwritten, deleted,
// renamed or moved out of the tab, and running init twice changes nothing the second time.
//
// Requests: one spreadsheets.get, one values:batchGet of the configured tabs that exist,
// then, only if something is missing, one spreadsheets:batchUpdate (new tabs with their
// header rows, new columns with their header cells; applied all together or not at all). A
// read-only store returns ErrReadOnly and sends nothing.
func (s *Store) EnsureSchema(ctx context.Context) (InitReport, error) {
	const op = "init"
	report := InitReport{AddedHeaders: map[string][]string{}, AddedAt: map[string]string{}, Unlabeled: map[string][]string{}}
	if s.readOnly {
		return InitReport{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	meta, err := s.getMeta(ctx, op, &budget{})
	if err != nil {
		return InitReport{}, err
	}

	plans, existing := s.initTabs(meta)
	usedIDs := takenSheetIDs(meta)
	if err := s.readWholeTabs(ctx, op, existing); err != nil {
		return InitReport{}, err
	}

	var requests []*sheetsapi.Request
	var changed []model.TabConfig // the tabs the requests complete
	for _, p := range plans {
		reqs := p.schemaRequests(usedIDs, &report)
		if len(reqs) == 0 {
			continue
		}
		requests = append(requests, reqs...)
		tc := p.tc
		tc.Name = p.title
		changed = append(changed, tc)
	}
	if len(requests) > 0 {
		if err := s.writeSchema(ctx, op, requests, changed); err != nil {
			return InitReport{Unlabeled: report.Unlabeled}, fmt.Errorf("%w (init's changes are applied all together or not at all; run `triage init` again: it adds only what is still missing)", err)
		}
	}
	report.dropEmpty()
	return report, nil
}

// initTab is EnsureSchema's view of one configured tab. The sheet and rows are kept with
// the configuration so that what is added is decided from the tab as it is now, not from an
// earlier load.
type initTab struct {
	tc    model.TabConfig
	title string
	sheet *sheetsapi.Sheet // nil: to be created
	rows  [][]any          // the whole tab as it is now: header and data
}

// initTabs pairs each configured tab with its sheet, once per tab whatever its spelling in
// the configuration, so that a tab named twice is neither created nor completed twice.
// existing are the plans whose tab is already there: only those have rows to read.
func (s *Store) initTabs(meta *sheetsapi.Spreadsheet) (plans, existing []*initTab) {
	seen := map[string]bool{}
	for _, tc := range s.tabs {
		if seen[tabKey(tc.Name)] {
			continue
		}
		seen[tabKey(tc.Name)] = true
		p := &initTab{tc: tc, title: tc.Name, sheet: findSheet(meta, tc.Name)}
		if p.sheet != nil {
			p.title = p.sheet.Properties.Title
			existing = append(existing, p)
		}
		plans = append(plans, p)
	}
	return plans, existing
}

// takenSheetIDs collects the sheet IDs in use, so that a tab init creates gets one of its
// own (see newSheetID).
func takenSheetIDs(meta *sheetsapi.Spreadsheet) map[int64]bool {
	usedIDs := map[int64]bool{}
	for _, sh := range meta.Sheets {
		if sh.Properties != nil {
			usedIDs[sh.Properties.SheetId] = true
		}
	}
	return usedIDs
}

// readWholeTabs fills the rows of the existing tabs in one values:batchGet, fresh, because
// invariant 13 allows structure only where no data is now.
func (s *Store) readWholeTabs(ctx context.Context, op string, existing []*initTab) error {
	if len(existing) == 0 {
		return nil
	}
	// Whole tabs, not only row 1: whether a column holds data is decided by every row.
	ranges := make([]string, len(existing))
	for i, p := range existing {
		ranges[i] = quoteTab(p.title)
	}
	vrs, err := s.batchGet(ctx, op, &budget{}, ranges)
	if err != nil {
		return err
	}
	for i, p := range existing {
		if vrs[i] != nil {
			p.rows = vrs[i].Values
		}
	}
	return nil
}

// schemaRequests returns the requests that complete p's tab (none when it lacks nothing),
// and records in report what they add and which columns it leaves alone. The unlabeled
// columns are reported even for a complete tab, since they are the operator's to name
// either way.
func (p *initTab) schemaRequests(usedIDs map[int64]bool, report *InitReport) []*sheetsapi.Request {
	missing := p.missingHeaders()
	used, unlabeled := usedColumns(p.rows)
	if len(unlabeled) > 0 {
		report.Unlabeled[p.title] = columnLetters(unlabeled)
	}
	if len(missing) == 0 {
		return nil
	}
	var requests []*sheetsapi.Request
	var sheetID int64
	if p.sheet == nil {
		sheetID = newSheetID(usedIDs)
		requests = append(requests, addTabRequest(p.title, sheetID, len(missing)))
		report.CreatedTabs = append(report.CreatedTabs, p.title)
	} else {
		sheetID = p.sheet.Properties.SheetId
		requests = append(requests, insertColumnsRequest(p.sheet, used, len(missing)))
	}
	requests = append(requests, headerCellsRequest(sheetID, used, missing))
	report.AddedHeaders[p.title] = missing
	if p.sheet != nil {
		report.AddedAt[p.title] = a1.ColumnLetter(used)
	}
	return requests
}

// missingHeaders returns the schema headers p's tab lacks, matched by field the way a load
// matches them (model.MapHeaders), so that a header in another case or under an alias
// counts as present and is never added a second time.
func (p *initTab) missingHeaders() []string {
	var header []any
	if len(p.rows) > 0 {
		header = p.rows[0]
	}
	names := make([]string, len(header))
	for i, v := range header {
		names[i] = strings.TrimSpace(model.CellString(v))
	}
	hm, _ := model.MapHeaders(p.tc, names) // a missing required header is what we add
	var missing []string
	for _, c := range schemaHeaders(p.tc) {
		if !hm.Has(c.Field) {
			missing = append(missing, c.Header)
		}
	}
	return missing
}

// columnLetters names columns by letter, as the operator sees them in the Sheets UI.
func columnLetters(cols []int) []string {
	letters := make([]string, len(cols))
	for i, c := range cols {
		letters[i] = a1.ColumnLetter(c)
	}
	return letters
}

// addTabRequest creates a missing tab under the ID chosen for it, so that the same atomic
// request can write its header row; it is made wide enough for every header.
func addTabRequest(title string, sheetID int64, headers int) *sheetsapi.Request {
	props := &sheetsapi.SheetProperties{Title: title, SheetId: sheetID,
		GridProperties: &sheetsapi.GridProperties{RowCount: 1000, ColumnCount: int64(max(26, headers))}}
	return &sheetsapi.Request{AddSheet: &sheetsapi.AddSheetRequest{Properties: props}}
}

// insertColumnsRequest makes new, empty columns for the missing headers right after the
// last used one: cells the same atomic request creates can't hold data typed in since the
// read, so the headers never land on any (invariant 13).
func insertColumnsRequest(sh *sheetsapi.Sheet, used, n int) *sheetsapi.Request {
	cols := int64(0)
	if gp := sh.Properties.GridProperties; gp != nil {
		cols = gp.ColumnCount
	}
	// Google refuses an insert at the grid's end unless it inherits from the column
	// before; elsewhere the new columns look like the empty ones to their right.
	return &sheetsapi.Request{InsertDimension: &sheetsapi.InsertDimensionRequest{
		Range: &sheetsapi.DimensionRange{SheetId: sh.Properties.SheetId, Dimension: "COLUMNS",
			StartIndex: int64(used), EndIndex: int64(used + n), ForceSendFields: []string{"SheetId", "StartIndex"}},
		InheritFromBefore: used > 0 && int64(used) >= cols,
	}}
}

// headerCellsRequest writes the missing headers into row 1 from column used on: cells the
// same batch has just created (new columns, or a new tab), so they can't hold anything yet.
func headerCellsRequest(sheetID int64, used int, missing []string) *sheetsapi.Request {
	cells := make([]*sheetsapi.CellData, len(missing))
	for i, h := range missing {
		v := h
		cells[i] = &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
	}
	return &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
		Start: &sheetsapi.GridCoordinate{SheetId: sheetID, RowIndex: 0, ColumnIndex: int64(used),
			ForceSendFields: []string{"SheetId", "RowIndex", "ColumnIndex"}},
		Rows:   []*sheetsapi.RowData{{Values: cells}},
		Fields: "userEnteredValue",
	}}
}

// writeSchema sends init's one batchUpdate. A retry first checks whether an earlier attempt
// landed after all, since resending it would insert the columns, and so the headers, twice.
func (s *Store) writeSchema(ctx context.Context, op string, requests []*sheetsapi.Request, changed []model.TabConfig) error {
	attempt := 0
	return s.call(ctx, op, func(ctx context.Context) error {
		// An attempt that failed on the network or with a 5xx may still have been applied,
		// and inserting columns twice would add every header twice: look before resending.
		if attempt++; attempt > 1 {
			done, err := s.schemaInPlace(ctx, changed)
			if err != nil || done {
				return err
			}
		}
		_, err := s.svc.Spreadsheets.BatchUpdate(s.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: requests}).Context(ctx).Do()
		return err
	})
}

// dropEmpty leaves nil, not an empty map, wherever the report has nothing to say, so that a
// report that found nothing equals the zero InitReport.
func (r *InitReport) dropEmpty() {
	if len(r.AddedHeaders) == 0 {
		r.AddedHeaders = nil
	}
	if len(r.AddedAt) == 0 {
		r.AddedAt = nil
	}
	if len(r.Unlabeled) == 0 {
		r.Unlabeled = nil
	}
}

// usedColumns returns how many columns of rows are in use (one past the rightmost cell that
// holds anything, header or data), and the columns whose header cell is empty although a
// data row below has something in them.
func usedColumns(rows [][]any) (used int, unlabeled []int) {
	hasData := map[int]bool{}
	for i, row := range rows {
		for c, v := range row {
			if model.CellString(v) == "" {
				continue
			}
			used = max(used, c+1)
			if i > 0 {
				hasData[c] = true
			}
		}
	}
	var header []any
	if len(rows) > 0 {
		header = rows[0]
	}
	for c := 0; c < used; c++ {
		if hasData[c] && (c >= len(header) || strings.TrimSpace(model.CellString(header[c])) == "") {
			unlabeled = append(unlabeled, c)
		}
	}
	return used, unlabeled
}

// newSheetID picks an ID for a tab init creates, so the same atomic request can write its
// header row (updateCells needs the sheet's ID). Google takes any unused non-negative ID.
func newSheetID(used map[int64]bool) int64 {
	for {
		id := rand.Int64N(1<<31-1) + 1
		if !used[id] {
			used[id] = true
			return id
		}
	}
}

// schemaInPlace reports whether every tab of tabs exists and has every header init adds: a
// fresh look, used before resending init's write after a failure that may have hidden its
// success. Its requests go straight to the API: the caller's retry loop handles their errors.
func (s *Store) schemaInPlace(ctx context.Context, tabs []model.TabConfig) (bool, error) {
	meta, err := s.svc.Spreadsheets.Get(s.id).Fields("sheets.properties.title").Context(ctx).Do()
	if err != nil {
		return false, err
	}
	ranges := make([]string, len(tabs))
	for i, tc := range tabs {
		sh := findSheet(meta, tc.Name)
		if sh == nil {
			return false, nil
		}
		ranges[i] = quoteTab(sh.Properties.Title) + "!1:1"
	}
	resp, err := s.svc.Spreadsheets.Values.BatchGet(s.id).Ranges(ranges...).Context(ctx).Do()
	if err != nil {
		return false, err
	}
	if len(resp.ValueRanges) != len(tabs) {
		return false, nil
	}
	for i, tc := range tabs {
		var names []string
		if vr := resp.ValueRanges[i]; vr != nil && len(vr.Values) > 0 {
			for _, v := range vr.Values[0] {
				names = append(names, strings.TrimSpace(model.CellString(v)))
			}
		}
		hm, _ := model.MapHeaders(tc, names)
		for _, c := range schemaHeaders(tc) {
			if !hm.Has(c.Field) {
				return false, nil
			}
		}
	}
	return true, nil
}
