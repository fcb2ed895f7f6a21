package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/sheets"
)

func newInitCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create missing tabs and header cells; never deletes",
		Long: `Create the tabs the config names that the spreadsheet lacks, and the header cells
missing from existing tabs. Structure is only ever added where no data is: a header is
never written over a column that holds data, and nothing is deleted.`,
		Example: `  triage init --spreadsheet 1AbC...`,
		Args:    noArgs,
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
	st, _, err := openStore(ctx, s, e)
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
