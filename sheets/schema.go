package sheets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// InitReport says what EnsureSchema changed. Both fields are empty when nothing was needed.
type InitReport struct {
	// CreatedTabs are the configured tabs that were added, in configured order.
	CreatedTabs []string
	// AddedHeaders maps a tab to the header cells written to its row 1, left to right.
	AddedHeaders map[string][]string
}

// Changed reports whether EnsureSchema changed anything.
func (r InitReport) Changed() bool { return len(r.CreatedTabs) > 0 || len(r.AddedHeaders) > 0 }

// String describes the report for the CLI, one line per change.
func (r InitReport) String() string {
	if !r.Changed() {
		return "nothing to do: every configured tab and header exists"
	}
	var b strings.Builder
	for _, t := range r.CreatedTabs {
		fmt.Fprintf(&b, "created tab %q\n", t)
	}
	tabs := make([]string, 0, len(r.AddedHeaders))
	for t := range r.AddedHeaders {
		tabs = append(tabs, t)
	}
	sort.Strings(tabs)
	for _, t := range tabs {
		q := make([]string, len(r.AddedHeaders[t]))
		for i, h := range r.AddedHeaders[t] {
			q[i] = fmt.Sprintf("%q", h)
		}
		fmt.Fprintf(&b, "tab %q: added header %s\n", t, strings.Join(q, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
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

// EnsureSchema creates the configured tabs the spreadsheet lacks and writes the missing
// header cells of each tab's schema after its last existing header (RAW). It never deletes,
// renames or moves anything, so running it twice changes nothing the second time. Requests:
// one spreadsheets.get, one values:batchGet of the header rows, then, only if something is
// missing, one spreadsheets:batchUpdate (new tabs, extra columns) and one values:batchUpdate.
// A read-only store returns ErrReadOnly and sends nothing.
func (s *Store) EnsureSchema(ctx context.Context) (InitReport, error) {
	const op = "init"
	report := InitReport{AddedHeaders: map[string][]string{}}
	if s.readOnly {
		return InitReport{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	meta, err := s.getMeta(ctx, op, &budget{})
	if err != nil {
		return InitReport{}, err
	}

	type plan struct {
		tc      model.TabConfig
		title   string
		sheet   *sheetsapi.Sheet // nil: to be created
		header  []any
		missing []string
	}
	var plans []*plan
	seen := map[string]bool{}
	var existing []*plan
	for _, tc := range s.tabs {
		if seen[tabKey(tc.Name)] {
			continue
		}
		seen[tabKey(tc.Name)] = true
		p := &plan{tc: tc, title: tc.Name, sheet: findSheet(meta, tc.Name)}
		if p.sheet != nil {
			p.title = p.sheet.Properties.Title
			existing = append(existing, p)
		}
		plans = append(plans, p)
	}
	if len(existing) > 0 {
		ranges := make([]string, len(existing))
		for i, p := range existing {
			ranges[i] = quoteTab(p.title) + "!1:1"
		}
		vrs, err := s.batchGet(ctx, op, &budget{}, ranges)
		if err != nil {
			return InitReport{}, err
		}
		for i, p := range existing {
			if vrs[i] != nil && len(vrs[i].Values) > 0 {
				p.header = vrs[i].Values[0]
			}
		}
	}

	var structural []*sheetsapi.Request
	var data []*sheetsapi.ValueRange
	for _, p := range plans {
		names := make([]string, len(p.header))
		for i, v := range p.header {
			names[i] = strings.TrimSpace(model.CellString(v))
		}
		hm, _ := model.MapHeaders(p.tc, names) // a missing required header is what we add
		for _, c := range schemaHeaders(p.tc) {
			if !hm.Has(c.Field) {
				p.missing = append(p.missing, c.Header)
			}
		}
		if len(p.missing) == 0 {
			continue
		}
		start := len(p.header) // after the last existing header (trailing blanks are trimmed)
		need := int64(start + len(p.missing))
		if p.sheet == nil {
			props := &sheetsapi.SheetProperties{Title: p.title}
			if need > 26 {
				props.GridProperties = &sheetsapi.GridProperties{RowCount: 1000, ColumnCount: need}
			}
			structural = append(structural, &sheetsapi.Request{AddSheet: &sheetsapi.AddSheetRequest{Properties: props}})
			report.CreatedTabs = append(report.CreatedTabs, p.title)
		} else if gp := p.sheet.Properties.GridProperties; gp != nil && gp.ColumnCount > 0 && gp.ColumnCount < need {
			structural = append(structural, &sheetsapi.Request{AppendDimension: &sheetsapi.AppendDimensionRequest{
				SheetId: p.sheet.Properties.SheetId, Dimension: "COLUMNS", Length: need - gp.ColumnCount}})
		}
		row := make([]any, len(p.missing))
		for i, h := range p.missing {
			row[i] = h
		}
		data = append(data, &sheetsapi.ValueRange{
			Range:  quoteTab(p.title) + "!" + colLetter(start) + "1:" + colLetter(start+len(p.missing)-1) + "1",
			Values: [][]any{row},
		})
		report.AddedHeaders[p.title] = p.missing
	}
	if len(structural) > 0 {
		err := s.call(ctx, op, func(ctx context.Context) error {
			_, err := s.svc.Spreadsheets.BatchUpdate(s.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: structural}).Context(ctx).Do()
			return err
		})
		if err != nil && !retriedAddSheet(err) {
			return InitReport{}, fmt.Errorf("%w (nothing was changed; run `triage init` again)", err)
		}
	}
	if len(data) > 0 {
		err := s.call(ctx, op, func(ctx context.Context) error {
			_, err := s.svc.Spreadsheets.Values.BatchUpdate(s.id, &sheetsapi.BatchUpdateValuesRequest{
				ValueInputOption: valueInput,
				Data:             data,
			}).Context(ctx).Do()
			return err
		})
		if err != nil {
			if len(report.CreatedTabs) > 0 {
				return InitReport{CreatedTabs: report.CreatedTabs}, fmt.Errorf("%w (tabs %s were created but their headers weren't written; run `triage init` again)", err, strings.Join(report.CreatedTabs, ", "))
			}
			return InitReport{}, err
		}
	}
	if len(report.AddedHeaders) == 0 {
		report.AddedHeaders = nil
	}
	return report, nil
}

// retriedAddSheet reports whether a spreadsheets:batchUpdate failed only because an earlier
// attempt of the same call (answered 5xx or lost on the network) had already applied it: the
// batch is atomic, so "already exists" on a retry means every request of it succeeded.
func retriedAddSheet(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Attempts < 2 || e.Code != 400 {
		return false
	}
	return strings.Contains(strings.ToLower(e.Err.Error()), "already exists")
}
