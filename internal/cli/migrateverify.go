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

// verifyMigration is migrate's proof: it reads every row of the database (settled ones too)
// and compares each row the sheet has that migrate carries with the database's, through the
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
	wb, err := db.Load(ctx)
	if err != nil {
		return 0, &exitError{code: exitUsage, err: fmt.Errorf("verify: %w", err)}
	}
	bad := 0
	for _, tc := range cfg.TabConfigs() {
		t, d := sheet.Tab(tc.Role), wb.Tab(tc.Role)
		if t == nil || d == nil {
			continue
		}
		checked, same := 0, 0
		var diffs []string
		for i := range t.Records {
			r := &t.Records[i]
			if r.ID == "" || notCarried[tc.Role][r.Row] {
				continue
			}
			checked++
			j := d.Index(r.ID)
			if j < 0 {
				diffs = append(diffs, fmt.Sprintf("row %d (%s): not in the database", r.Row, r.ID))
				continue
			}
			if why := rowDiff(t, r, d, &d.Records[j]); why != "" {
				diffs = append(diffs, fmt.Sprintf("row %d (%s): %s", r.Row, r.ID, why))
				continue
			}
			same++
		}
		fmt.Fprintf(e.stdout, "%s → %s: verified: %d of %d rows\n", model.SanitizeLine(t.Config.Name), tableName(tc.Role), same, checked)
		for k, why := range diffs {
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
