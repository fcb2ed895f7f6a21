package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

func newRequeueStaleCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "requeue-stale",
		Short: "Put stale claims of a job queue back to pending",
		Long: `Put the claims of a queue tab that are older than a threshold (the tab's stale_after,
30m unless configured, or --older-than) back to pending, so another worker takes them.
Each row is found by its ID; --dry-run lists the stale claims and changes nothing. On a
database it is one statement, deciding staleness by the same rule.`,
		Example: `  triage requeue-stale --dry-run
  triage requeue-stale --tab Jobs --older-than 2h --json`,
		Args: noArgs,
	}
	fs := cmd.Flags()
	tab := fs.String("tab", "", "name of the queue tab (default: the configured queue tab)")
	completeTabs(cmd, g, e)
	older := fs.Duration("older-than", 0, "stale threshold, a positive duration such as 30m or 2h (default: the tab's stale_after, 30m)")
	dry := fs.Bool("dry-run", false, "list the stale claims, change nothing")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	g.register(fs, gAll)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		if fs.Changed("older-than") && *older <= 0 {
			// Zero or negative would make every claim stale (or silently fall back to the
			// default): either way not what was asked for.
			return usageErr("requeue-stale: --older-than %s: want a positive duration such as 30m or 2h (leave it out for the tab's stale_after)", *older)
		}
		name := *tab
		if name == "" {
			name = string(model.RoleQueue)
		}
		s, err := resolve(g, e)
		if err != nil {
			return err
		}
		st, _, err := openStore(ctx, s, e)
		if err != nil {
			return err
		}
		defer closeStore(st)
		if db, ok := st.(*postgres.Store); ok && !*dry {
			return requeueDatabase(ctx, e, db, name, *older, *asJSON)
		}
		return requeueRead(ctx, e, st, name, *older, *dry, *asJSON)
	}
	return cmd
}

// requeueRead is requeue-stale on the sheet (and a dry run anywhere): the tab read once, each
// stale claim (model.Requeue) written back as a conditional edit.
func requeueRead(ctx context.Context, e *env, st store, name string, older time.Duration, dry, asJSON bool) error {
	// The one tab, read once: the write plans from this read (sheets.Store.LoadTab); before
	// a write, what a killed triage left unfinished is settled first.
	var wb *model.Workbook
	var settled model.ApplyResult
	var err error
	if dry {
		if wb, err = st.LoadTab(ctx, name); err != nil {
			err = &exitError{code: exitUsage, err: err}
		}
	} else {
		wb, settled, err = loadTabToWrite(ctx, st, name, nil)
	}
	if err != nil {
		return err
	}
	t, err := findTab(wb, name)
	if err != nil {
		return err
	}
	if t.Config.Role != model.RoleQueue {
		return usageErr("requeue-stale: %q is not a queue tab", t.Config.Name)
	}
	if older > 0 {
		t.Config.StaleAfter = older
	}
	now := time.Now()
	doc := newEditDoc(t.Config.Name, columnNames(t))
	doc.DryRun = dry
	doc.addApply(e, settled)
	var edits []model.Edit
	stuck := 0
	notes := map[string]string{}
	for i := range t.Records {
		r := &t.Records[i]
		ed, ok := model.Requeue(t, r, now)
		if !ok {
			continue
		}
		if r.ID == "" {
			// A stale claim that can't be written (no ID, or one shared with another row) is
			// still stale: say so, and count it as not done.
			why := "stale claim not requeued: " + strings.Join(r.Problems, "; ")
			fmt.Fprintf(e.stderr, "row %d: %s\n", r.Row, model.SanitizeLine(why))
			doc.Unchanged = append(doc.Unchanged, editDocNote{Row: r.Row, Reason: why})
			stuck++
			continue
		}
		notes[r.ID] = fmt.Sprintf("claimed by %s %s ago", first(t.Get(r, model.FClaimedBy), "?"), model.Age(now.Sub(r.Time)))
		edits = append(edits, ed)
		if dry {
			doc.Changed = append(doc.Changed, editDocRow{ID: r.ID, Row: r.Row, Set: doc.setFields(ed), Note: notes[r.ID]})
		}
	}
	finish := func() error {
		nd := doc.notDone()
		if nd > 0 || len(doc.Damaged) > 0 {
			doc.ExitCode = exitPartial
		}
		if err := doc.print(e, asJSON); err != nil {
			return err
		}
		switch {
		case nd == stuck && stuck > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("%s can't be requeued until their ID cells are fixed%s", words.Count(stuck, "stale claim", "stale claims"), doc.damagedNote())}
		case nd > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("%s not requeued%s", words.Count(nd, "claim", "claims"), doc.damagedNote())}
		case len(doc.Damaged) > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("every stale claim requeued, but %s", doc.damagedNote()[2:])}
		}
		return nil
	}
	if len(edits) == 0 {
		if stuck == 0 {
			fmt.Fprintf(e.stderr, "no claims older than %s in %q\n", model.ShortDuration(t.Config.StaleAfter), t.Config.Name)
		}
		return finish()
	}
	if dry {
		fmt.Fprintf(e.stderr, "dry run: %s would go back to pending\n", words.Count(len(edits), "claim", "claims"))
		return finish()
	}
	res, err := st.Apply(ctx, edits)
	if err != nil {
		return doc.failedWrite(e, edits, err, asJSON)
	}
	doc.addApply(e, res)
	for i := range doc.Changed {
		doc.Changed[i].Note = notes[doc.Changed[i].ID]
	}
	fmt.Fprintf(e.stderr, "requeued %s\n", words.Count(len(res.Applied), "claim", "claims"))
	return finish()
}

// requeueDatabase is requeue-stale on a database: one statement (postgres.Store.RequeueStale,
// staleness decided as model.Requeue decides it) and no read before it, with the output the
// sheet's path prints: which rows went back to pending, claimed by whom, how long ago.
func requeueDatabase(ctx context.Context, e *env, db *postgres.Store, name string, older time.Duration, asJSON bool) error {
	tc, err := tabConfig(db.Tabs(), name)
	if err != nil {
		return err
	}
	if tc.Role != model.RoleQueue {
		return usageErr("requeue-stale: %q is not a queue tab", tc.Name)
	}
	th := tc.StaleAfter
	if older > 0 {
		th = older
	}
	if th <= 0 {
		th = 30 * time.Minute // model.Table.Stale's default
	}
	back, err := db.RequeueStale(ctx, th)
	doc := newEditDoc(tc.Name, schemaColumnNames(tc.Role))
	if err != nil {
		// One statement, no rows named before it: which claims it would have returned is
		// not known, so the document lists none, with the error and the exit code.
		return doc.failedWrite(e, nil, err, asJSON)
	}
	if len(back) == 0 {
		fmt.Fprintf(e.stderr, "no claims older than %s in %q\n", model.ShortDuration(th), tc.Name)
		return doc.print(e, asJSON)
	}
	for _, r := range back {
		set := model.Edit{Set: map[model.Field]string{model.FStatus: model.StatusPending, model.FClaimedBy: "", model.FClaimedAt: "", model.FUpdatedAt: r.UpdatedAt}}
		doc.Changed = append(doc.Changed, editDocRow{ID: r.ID, Row: r.Row, Set: doc.setFields(set),
			Note: fmt.Sprintf("claimed by %s %s ago", first(r.ClaimedBy, "?"), model.Age(r.Age))})
	}
	fmt.Fprintf(e.stderr, "requeued %s\n", words.Count(len(back), "claim", "claims"))
	return doc.print(e, asJSON)
}

// tabConfig is the configured tab a command names (by name, any case, else by role), without
// reading it.
func tabConfig(tabs []model.TabConfig, name string) (model.TabConfig, error) {
	role := model.Role(strings.ToLower(strings.TrimSpace(name)))
	for _, match := range []func(model.TabConfig) bool{
		func(tc model.TabConfig) bool { return strings.EqualFold(tc.Name, name) },
		func(tc model.TabConfig) bool { return tc.Role == role },
	} {
		for _, tc := range tabs {
			if match(tc) {
				return tc, nil
			}
		}
	}
	names := make([]string, len(tabs))
	for i, tc := range tabs {
		names[i] = tc.Name
	}
	return model.TabConfig{}, usageErr("no tab %q (tabs: %s)", name, joinQuoted(names))
}
