package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// verifyPage is how many rows of the database migrate's proof reads at a time.
const verifyPage = 10_000

// verifyMigration is migrate's proof: it reads every row of the database (settled ones too,
// verifyPage rows at a time) and compares each row the sheet has that migrate carries with the database's, through the
// same decoder, cell by cell: text exactly, a time as the instant each store reads (the
// sheet's in its time zone), a dead letter's key as the key a replay sends from the sheet. It
// prints one line per tab ("verified: 58 of 58 rows"), each difference, and returns how many
// rows differ or are missing.
func verifyMigration(ctx context.Context, e *env, url string, cfg *config.Config, sheet *model.Workbook, notCarried map[model.Role]map[int]bool) (int, error) {
	db, err := postgres.Open(ctx, url, postgres.Options{Tabs: cfg.TabConfigs(), History: true, ReadOnly: true})
	if err != nil {
		return 0, &exitError{code: exitUsage, err: err}
	}
	defer db.Close()
	bad := 0
	for _, tc := range cfg.TabConfigs() {
		t := sheet.Tab(tc.Role)
		if t == nil {
			continue
		}
		// The sheet's carried rows by identity; the database is read a page at a time, each
		// of its rows looked up here (a table of 1,000,000 rows is never held whole twice).
		carried := map[string]int{}
		for i := range t.Records {
			r := &t.Records[i]
			if r.ID != "" && !notCarried[tc.Role][r.Row] {
				carried[r.ID] = i
			}
		}
		checked, same := len(carried), 0
		type diff struct {
			row int
			why string
		}
		var diffs []diff
		seen := map[string]bool{}
		err := db.EachPage(ctx, tc.Name, verifyPage, func(d *model.Table) error {
			for j := range d.Records {
				dr := &d.Records[j]
				i, ok := carried[dr.ID]
				if !ok || seen[dr.ID] {
					continue // a row the sheet doesn't have: a producer's, or one written since
				}
				seen[dr.ID] = true
				r := &t.Records[i]
				if why := rowDiff(t, r, d, dr); why != "" {
					diffs = append(diffs, diff{r.Row, fmt.Sprintf("row %d (%s): %s", r.Row, r.ID, why)})
					continue
				}
				same++
			}
			return nil
		})
		if err != nil {
			return 0, &exitError{code: exitUsage, err: fmt.Errorf("verify: %w", err)}
		}
		for id, i := range carried {
			if !seen[id] {
				r := &t.Records[i]
				diffs = append(diffs, diff{r.Row, fmt.Sprintf("row %d (%s): not in the database", r.Row, r.ID)})
			}
		}
		slices.SortFunc(diffs, func(a, b diff) int { return a.row - b.row })
		fmt.Fprintf(e.stdout, "%s → %s: verified: %d of %d rows\n", model.SanitizeLine(t.Config.Name), tableName(tc.Role), same, checked)
		for k, d := range diffs {
			why := d.why
			if k == maxListed {
				fmt.Fprintf(e.stdout, "  ... and %d more\n", len(diffs)-maxListed)
				break
			}
			fmt.Fprintf(e.stdout, "  %s\n", model.SanitizeLine(why))
		}
		bad += len(diffs)
	}
	return bad, nil
}

// rowDiff says how a database row differs from the sheet's ("" if it doesn't).
func rowDiff(t *model.Table, r *model.Record, d *model.Table, dr *model.Record) string {
	var out []string
	for _, c := range model.SchemaFor(t.Config.Role).Columns {
		f := c.Field
		if !t.Header.Has(f) {
			continue
		}
		sv, dv := t.Get(r, f), d.Get(dr, f)
		switch {
		case f == model.FKey && strings.TrimSpace(sv) == "":
			sv = r.ID // the key a replay sends from the sheet, which migrate stores
		case f == model.FID || f == model.FKey:
			sv = strings.TrimSpace(sv) // the identity, which migrate stores (and says so)
		case slices.Contains(timeFieldsOf, f):
			st, okS := model.ParseTime(sv, t.Location)
			dt, okD := model.ParseTime(dv, d.Location)
			if okS && okD && st.Equal(dt) {
				continue
			}
		}
		if sv != dv {
			out = append(out, fmt.Sprintf("%s is %q on the database, %q on the sheet", c.Header, clip(dv, 40), clip(sv, 40)))
		}
	}
	return strings.Join(out, "; ")
}

// timeFieldsOf are the cells compared as instants.
var timeFieldsOf = []model.Field{model.FTimestamp, model.FClaimedAt, model.FUpdatedAt, model.FReplayedAt, model.FTriagedAt}
