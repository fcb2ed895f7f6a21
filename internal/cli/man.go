package cli

import (
	"fmt"

	mcobra "github.com/muesli/mango-cobra"
	"github.com/muesli/roff"
	"github.com/spf13/cobra"
)

// newManCmd prints the man page (section 1) on stdout: `triage man > triage.1`.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man",
		Short: "Print the man page",
		Long:  "Print triage's man page (roff, section 1) on stdout.",
		Example: `  triage man > ~/.local/share/man/man1/triage.1
  triage man | man -l -`,
		Args:                  noArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			page, err := mcobra.NewManPage(1, cmd.Root())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), page.Build(roff.NewDocument()))
			return err
		},
	}
}
