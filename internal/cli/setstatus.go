package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/model"
)

func newSetStatusCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set-status ID...",
		Short: "Set the status of rows, found by their ID",
		Long: `Set the status of one or more rows of a tab, each found by its ID (never by a row
number): a row whose cell changed since it was read is a conflict, an ID that is gone is
reported, and nothing is written elsewhere. The status must be one of the tab's statuses.`,
		Example: `  triage set-status --tab Inbox --status done m-1042 m-1043
  triage set-status --tab Inbox --status spam --json m-1044`,
		Args: minArgs(1, "row ID"),
	}
	fs := cmd.Flags()
	tab := fs.String("tab", "", "tab name or role (inbox, deadletter, queue)")
	completeTabs(cmd, g, e)
	completeIDs(cmd, g, e, model.RoleInbox)
	status := fs.String("status", "", "the new status (one of the tab's statuses)")
	completeStatuses(cmd, g, e)
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	g.register(fs, gAll)
	cmd.RunE = func(cmd *cobra.Command, ids []string) error {
		return runSetStatus(cmd.Context(), g, e, *tab, *status, *asJSON, ids)
	}
	return cmd
}

func runSetStatus(ctx context.Context, g *globals, e *env, tab, status string, asJSON bool, ids []string) error {
	want := strings.ToLower(strings.TrimSpace(status))
	if want == "" {
		return usageErr("set-status: --status is required")
	}
	check := func(t *model.Table) error {
		if t.HasStatus(want) {
			return nil
		}
		return usageErr("%q is not a status of %q (statuses: %s)", want, t.Config.Name, strings.Join(t.Statuses, ", "))
	}
	return editCommand(ctx, g, e, tab, ids, asJSON, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
		if r.Status == want {
			return model.Edit{}, fmt.Sprintf("already %s; nothing to change", want), true
		}
		return model.SetStatus(t, r, want), "", false
	})
}
