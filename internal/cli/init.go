package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
)

func newInitCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create missing tabs and header cells (or a database's tables); never deletes",
		Long: `Create the tabs the config names that the spreadsheet lacks, and the header cells
missing from existing tabs. Structure is only ever added where no data is: a header is
never written over a column that holds data, and nothing is deleted.

With a database (--database-url, TRIAGE_DATABASE_URL or [store] url), create its tables or
migrate them to this triage's schema; running it again does nothing. A database a newer
triage migrated is refused, unchanged.`,
		Example: `  triage init --spreadsheet 1AbC...
  triage init --database-url "$DATABASE_URL"`,
		Args: noArgs,
	}
	g.register(cmd.Flags(), gConnect)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runInit(cmd.Context(), g, e) }
	return cmd
}

func runInit(ctx context.Context, g *globals, e *env) error {
	s, err := resolve(g, e)
	if err != nil {
		return err
	}
	if s.databaseURL != "" {
		return initDatabase(ctx, s, e)
	}
	st, _, err := connectStore(ctx, s, e, nil)
	if err != nil {
		return err
	}
	rep, err := st.EnsureSchema(ctx)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("init: %w", err)}
	}
	printInit(e, rep)
	return nil
}

// printInit prints what init did, and the unlabeled data columns it left alone (the
// operator's to name), on stdout.
func printInit(e *env, rep sheets.InitReport) {
	fmt.Fprintln(e.stdout, rep.String())
}

// initDatabase creates or migrates the database's tables (postgres.Migrate) and says what it
// did, the URL redacted.
func initDatabase(ctx context.Context, s *settings, e *env) error {
	if s.readonly {
		return usageErr("init: the store is open read-only (--readonly or readonly = true); init creates tables")
	}
	rep, err := postgres.Migrate(ctx, s.databaseURL)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("init: %w", err)}
	}
	where := config.RedactURL(s.databaseURL)
	if len(rep.Applied) == 0 {
		fmt.Fprintf(e.stdout, "%s: the schema is at version %d, this triage's; nothing to do\n", where, rep.To)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: schema version %d → %d (applied %s)\n", where, rep.From, rep.To, strings.Join(rep.Applied, ", "))
	return nil
}
