package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

func newMigrateCmd(g *globals, e *env) *cobra.Command {
	var to string
	var verifyOnly bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Copy the sheet's three tabs into a PostgreSQL database",
		Long: `Copy the inbox, failed_calls and jobs tabs of the spreadsheet into the database's
tables (run triage init on it first), in batches of 5,000 rows with progress on stderr. IDs and
keys are kept: a dead letter's key is the one a replay would have sent from the sheet
(its key cell, else its payload's key field, else the minted one). Rows already in the
database are left as they are, so running it again adds nothing. A row that can't be
carried (no ID, an ID two rows share, a key it would have to guess) is listed with why, and
the exit code is 1. The sheet is only read: the command opens it read-only.

It ends with the proof: every row carried is read back from the database and compared with
the sheet's, cell by cell, through the same decoder (a time as the same instant, a key as the
one a replay sends): "verified: 58 of 58 rows" per tab, each difference listed, exit 1 if
there is one. --verify runs only that comparison, to check again before switching over.

--to defaults to the configured database ([store] url, TRIAGE_DATABASE_URL).`,
		Example: `  triage init --database-url "$DATABASE_URL"
  triage migrate --spreadsheet 1AbC... --to "$DATABASE_URL"`,
		Args: noArgs,
	}
	g.register(cmd.Flags(), gSpreadsheet|gConfig|gEndpoint|gCredentials)
	cmd.Flags().StringVar(&to, "to", "", "the database to copy into: postgres://USER:PASSWORD@HOST/DB?sslmode=require")
	cmd.Flags().BoolVar(&verifyOnly, "verify", false, "copy nothing: only compare every row of the sheet with the database's")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runMigrate(cmd.Context(), g, e, to, verifyOnly) }
	return cmd
}

func runMigrate(ctx context.Context, g *globals, e *env, to string, verifyOnly bool) error {
	s, err := resolve(g, e)
	if err != nil {
		return err
	}
	to = first(to, s.databaseURL)
	if to == "" {
		return usageErr("migrate: no database: pass --to postgres://USER:PASSWORD@HOST/DB (or set [store] url or TRIAGE_DATABASE_URL)")
	}
	if err := config.CheckStoreURL(to); err != nil {
		return usageErr("migrate: %v", err)
	}
	// The sheet is only read: the store refuses every write.
	s.readonly = true
	sheet, _, err := connectStore(ctx, s, e, nil)
	if err != nil {
		return err
	}
	defer closeStore(sheet)
	s.databaseURL, s.readonly = to, false
	db, err := openDatabase(ctx, s, e)
	if err != nil {
		return err
	}
	defer db.Close()
	wb, err := loadWorkbook(ctx, sheet)
	if err != nil {
		return err
	}
	where := config.RedactURL(to)
	skipped := 0
	notCarried := map[model.Role]map[int]bool{}
	for _, tc := range s.cfg.TabConfigs() {
		t := wb.Tab(tc.Role)
		if t == nil {
			fmt.Fprintf(e.stdout, "%s: not in the spreadsheet (or unusable); nothing to carry\n", tc.Name)
			continue
		}
		carry, guessed := keysDecided(t, s.cfg)
		notCarried[tc.Role] = map[int]bool{}
		for _, g := range guessed {
			notCarried[tc.Role][g.Row] = true
		}
		if verifyOnly {
			continue
		}
		rep, err := db.Import(ctx, carry, func(done, total int) {
			fmt.Fprintf(e.stderr, "%s → %s: %d/%d rows\n", t.Config.Name, tableName(tc.Role), done, total)
		})
		if err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("migrate to %s: %w", where, err)}
		}
		rep.Read += len(guessed)
		rep.Skipped = append(guessed, rep.Skipped...)
		for _, sk := range rep.Skipped {
			notCarried[tc.Role][sk.Row] = true
		}
		printImport(e, t, rep)
		skipped += len(rep.Skipped)
	}
	bad, err := verifyMigration(ctx, e, to, s.cfg, wb, notCarried)
	if err != nil {
		return err
	}
	if bad > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("migrate: %s on the database differ from the sheet (listed above): run migrate again, or fix them, before switching over", words.Count(bad, "row", "rows"))}
	}
	if skipped > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("migrate: %s not carried (listed above); fix them in the sheet and run it again", words.Count(skipped, "row", "rows"))}
	}
	return nil
}

// keysDecided splits a dead-letter tab into the rows whose key migrate can store as replay
// would send it, and those it would have to guess: a row with an empty key cell gets its key
// from its source's key rule ([sources.NAME] key, e.g. the payload's "id"), else a minted
// one, and the database keeps what migrate stores for good. Without the source in the config
// that rule is unknown, so the row is not carried, saying why (a payload must never be sent
// under two keys across the move). Other tabs are carried whole.
func keysDecided(t *model.Table, cfg *config.Config) (*model.Table, []postgres.SkippedRow) {
	if t.Config.Role != model.RoleDeadLetter || !t.Header.Has(model.FKey) {
		return t, nil
	}
	var kept []model.Record
	var guessed []postgres.SkippedRow
	for _, r := range t.Records {
		src := strings.TrimSpace(t.Get(&r, model.FSource))
		if strings.TrimSpace(t.Get(&r, model.FKey)) == "" && r.ID != "" {
			if _, ok := cfg.Sources[src]; !ok {
				guessed = append(guessed, postgres.SkippedRow{Row: r.Row, Why: fmt.Sprintf(
					"its key cell is empty and source %q is not in the config, so the key a replay would send can't be known: run migrate with the config replay runs with (its [sources.%s]), or fill the key cell",
					src, src)})
				continue
			}
		}
		kept = append(kept, r)
	}
	carry := *t
	carry.Records = kept
	return &carry, guessed
}

func tableName(r model.Role) string {
	return map[model.Role]string{model.RoleInbox: "inbox", model.RoleDeadLetter: "failed_calls", model.RoleQueue: "jobs"}[r]
}

// printImport says what became of a tab's rows, each row not carried with why, and the
// sheet's columns the table has no place for.
func printImport(e *env, t *model.Table, rep postgres.ImportReport) {
	fmt.Fprintf(e.stdout, "%s → %s: %d rows: %d added, %d already there, %d not carried\n",
		model.SanitizeLine(t.Config.Name), rep.Table, rep.Read, rep.Added, rep.Present, len(rep.Skipped))
	for _, sk := range rep.Skipped {
		fmt.Fprintf(e.stdout, "  row %d: %s\n", sk.Row, model.SanitizeLine(sk.Why))
	}
	if n := len(rep.Trimmed); n > 0 {
		field := "ID"
		if t.Config.Role == model.RoleDeadLetter {
			field = "key"
		}
		fmt.Fprintf(e.stdout, "  %s carried without the spaces around %s %s cell (the identity is the cell trimmed): %s\n",
			words.Count(n, "row", "rows"), map[bool]string{true: "its", false: "their"}[n == 1], field, rowList(rep.Trimmed))
	}
	var extra []string
	for i, h := range t.Header.Headers {
		mapped := false
		for _, c := range t.Header.Index {
			mapped = mapped || c == i
		}
		if !mapped && strings.TrimSpace(h) != "" {
			extra = append(extra, model.SanitizeLine(h))
		}
	}
	if len(extra) > 0 {
		fmt.Fprintf(e.stdout, "  columns not carried (the table has no place for them): %s\n", joinQuoted(extra))
	}
}

// rowList is row numbers as a person reads them: "20, 31 and 44", the first ten and a count
// of the rest past that.
func rowList(rows []int) string {
	const shown = 10
	parts := make([]string, 0, shown)
	for i, r := range rows {
		if i == shown {
			break
		}
		parts = append(parts, strconv.Itoa(r))
	}
	if len(rows) > shown {
		return strings.Join(parts, ", ") + fmt.Sprintf(" and %d more", len(rows)-shown)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
