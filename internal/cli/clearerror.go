package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/model"
)

func newClearErrorCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clear-error ID...",
		Short: "Release rows held by a sticky error",
		Long: `Release rows of a dead-letter or queue tab that a sticky error (rejected in a
dead-letter tab, error in a queue) holds, so that a replay or a worker picks them up again. Rows are found by ID;
automation never does this, only you. The error text stays, as why the row stopped, until
the next attempt writes its own.`,
		Example: `  triage clear-error --tab failed_calls 7f3c9a1e
  triage clear-error --tab Jobs --json j-17 j-18`,
		Args: minArgs(1, "row ID"),
	}
	fs := cmd.Flags()
	tab := fs.String("tab", "", "tab name or role (deadletter or queue)")
	completeTabs(cmd, g, e)
	completeIDs(cmd, g, e, model.RoleDeadLetter)
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	g.register(fs, gAll)
	cmd.RunE = func(cmd *cobra.Command, ids []string) error {
		return runClearError(cmd.Context(), g, e, *tab, *asJSON, ids)
	}
	return cmd
}

func runClearError(ctx context.Context, g *globals, e *env, tab string, asJSON bool, ids []string) error {
	now := time.Now()
	check := func(t *model.Table) error {
		if t.Config.Role == model.RoleInbox {
			return usageErr("clear-error: %q is an inbox; sticky errors live in dead-letter and queue tabs", t.Config.Name)
		}
		return nil
	}
	return editCommand(ctx, g, e, tab, ids, asJSON, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
		ed, ok := model.ClearError(t, r, now)
		if !ok {
			// Already released (dead / pending) is what was asked: running it twice is fine.
			done := r.Status == model.StatusDead || r.Status == model.StatusPending
			return ed, fmt.Sprintf("status is %q, not a sticky error; nothing to clear", r.Status), done
		}
		return ed, "", false
	})
}
