package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
)

// ImportReport says what Import did with a tab's rows.
type ImportReport struct {
	// Role is the tab's role; Table the table it went to.
	Role  model.Role
	Table string
	// Read is the rows of the tab; Added the rows inserted now; Present the rows the table
	// already had (an earlier import, a producer's dead letter).
	Read, Added, Present int
	// Skipped are the rows that could not be carried, each with why.
	Skipped []SkippedRow
	// Trimmed are the rows (numbers) whose ID or key cell had spaces around it: the table
	// holds the identity, which is the cell trimmed (a write finds the row by it on the
	// sheet too), so those spaces are not carried.
	Trimmed []int
}

// SkippedRow is a tab's row Import did not carry.
type SkippedRow struct {
	Row int
	Why string
}

// ImportBatch is how many rows one transaction of Import carries.
const ImportBatch = 5000

// Import carries a loaded tab (the sheet's, decoded by model.Decode) into its table, in
// batches of ImportBatch rows, each one transaction (COPY, then INSERT … ON CONFLICT DO
// NOTHING): IDs and keys are
// kept (a dead letter's effective key becomes its key, so a replay sends the key it would
// have sent from the sheet), a row already there is left as it is, so running it again adds
// nothing. A row without an identity (no ID; an ID or key two rows share) can't be written by
// triage anywhere and is reported in Skipped with its problem. progress, when set, is told
// after each batch. Columns the schema doesn't have are not carried (the report's caller
// names them).
func (s *Store) Import(ctx context.Context, t *model.Table, progress func(done, total int)) (ImportReport, error) {
	tb, ok := tables[t.Config.Role]
	if !ok {
		return ImportReport{}, fmt.Errorf("import: tab %q has role %q, which has no table", t.Config.Name, t.Config.Role)
	}
	rep := ImportReport{Role: t.Config.Role, Table: tb.name, Read: len(t.Records)}
	if s.readOnly {
		return rep, fmt.Errorf("import %s: %w", t.Config.Name, ErrReadOnly)
	}
	var rows [][]any
	for i := range t.Records {
		r := &t.Records[i]
		if r.ID == "" {
			why := "it has no ID"
			if len(r.Problems) > 0 {
				why = strings.Join(r.Problems, "; ")
			}
			rep.Skipped = append(rep.Skipped, SkippedRow{Row: r.Row, Why: why})
			continue
		}
		row := make([]any, len(tb.fields))
		for j, f := range tb.fields {
			v := t.Get(r, f)
			if timeFields[f] {
				v = instantText(v, t.Location)
			}
			row[j] = toDB(v)
		}
		idField := model.FID
		if t.Config.Role == model.RoleDeadLetter {
			idField = model.FKey
		}
		if c := t.Get(r, idField); c != "" && c != strings.TrimSpace(c) {
			rep.Trimmed = append(rep.Trimmed, r.Row)
		}
		row[tb.index(idField)] = toDB(r.ID)
		rows = append(rows, row)
	}
	for start := 0; start < len(rows); start += ImportBatch {
		batch := rows[start:min(start+ImportBatch, len(rows))]
		n, err := s.insertBatch(ctx, tb, batch)
		if err != nil {
			return rep, fmt.Errorf("import %s into %s at %s (rows %d–%d of %d; the %d before are in): %w; run it again to go on, rows already in are not added twice",
				t.Config.Name, tb.name, s.url, start+1, start+len(batch), len(rows), start, err)
		}
		rep.Added += n
		rep.Present += len(batch) - n
		if progress != nil {
			progress(start+len(batch), len(rows))
		}
	}
	return rep, nil
}

// insertBatch inserts rows (cells in schema order), keeping any already there (by ID, or a
// dead letter's key), and says how many it added: one transaction that COPYs the batch into a
// temporary table, then one INSERT … SELECT … ON CONFLICT DO NOTHING.
func (s *Store) insertBatch(ctx context.Context, tb table, rows [][]any) (int, error) {
	cols := make([]string, len(tb.fields))
	names := make([]string, len(tb.fields))
	defs := make([]string, len(tb.fields))
	for i, f := range tb.fields {
		names[i] = string(f)
		cols[i] = pgx.Identifier{string(f)}.Sanitize()
		defs[i] = cols[i] + " text"
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after a commit it is a no-op
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE triage_import ("+strings.Join(defs, ", ")+") ON COMMIT DROP"); err != nil {
		return 0, err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"triage_import"}, names, pgx.CopyFromRows(rows)); err != nil {
		return 0, err
	}
	target := "(id)"
	if tb.name == "failed_calls" {
		target = `("key")`
	}
	list := strings.Join(cols, ", ")
	tag, err := tx.Exec(ctx, "INSERT INTO "+tb.name+" ("+list+") SELECT "+list+" FROM triage_import ON CONFLICT "+target+" DO NOTHING")
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// timeFields are the cells that hold times: a serial number or a zone-less text there is
// read in the spreadsheet's time zone on the sheet, and would be read as UTC on the database.
var timeFields = map[model.Field]bool{model.FTimestamp: true, model.FClaimedAt: true, model.FUpdatedAt: true,
	model.FReplayedAt: true, model.FTriagedAt: true}

// instantText is a time cell as the database must hold it to mean the same instant: a cell
// whose reading depends on the spreadsheet's time zone (loc), a serial number or text
// without a zone, becomes that instant in RFC 3339, UTC; any other cell (a time that names
// its zone, text that is no time) is carried as it is. The sheet's serial numbers have whole
// seconds, and so does the text.
func instantText(v string, loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return v
	}
	here, ok := model.ParseTime(v, loc)
	if !ok {
		return v
	}
	if utc, _ := model.ParseTime(v, time.UTC); utc.Equal(here) {
		return v // the text says its zone: the same instant anywhere
	}
	return here.UTC().Format(time.RFC3339Nano)
}
