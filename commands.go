package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/tui"
)

// cmdList prints a tab's rows, sanitised, as a table or one JSON document.
func cmdList(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("list", e)
	tab := fs.String("tab", "", "tab name or role (inbox, deadletter, queue)")
	status := fs.String("status", "", "only rows with this status")
	filter := fs.String("filter", "", "filter query, as in the TUI (`source:crm !status:done`)")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
	}
	_, t, err := openTab(ctx, g, e, *tab)
	if err != nil {
		return err
	}
	q := *filter
	if *status != "" {
		q += " status:" + strings.ToLower(*status)
	}
	m := model.ParseFilter(q).Bind(t)
	var recs []*model.Record
	for i := range t.Records {
		r := &t.Records[i]
		if m.Match(r, model.Haystack(r)) {
			recs = append(recs, r)
		}
	}
	if *asJSON {
		return writeListJSON(e, t, recs)
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	cols := listColumns(t)
	timeCol := t.Header.Col(model.FTimestamp)
	if t.Config.Role == model.RoleQueue {
		timeCol = t.Header.Col(model.FClaimedAt)
	}
	hdr := []string{"ROW", "ID", "STATUS"}
	for _, c := range cols {
		hdr = append(hdr, strings.ToUpper(model.SanitizeLine(t.Header.Headers[c])))
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t"))
	for _, r := range recs {
		line := []string{fmt.Sprint(r.Row), model.SanitizeLine(r.ID), model.SanitizeLine(r.Status)}
		for _, c := range cols {
			v := ""
			if c < len(r.Cells) {
				v = r.Cells[c]
			}
			if c == timeCol && !r.Time.IsZero() {
				v = r.Time.In(t.Location).Format("2006-01-02 15:04")
			}
			line = append(line, clip(model.SanitizeLine(v), 60))
		}
		if len(r.Problems) > 0 {
			line = append(line, "! "+model.SanitizeLine(strings.Join(r.Problems, "; ")))
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s of %d in %q\n", plural(len(recs), "row", "rows"), len(t.Records), t.Config.Name)
	return nil
}

// openTab resolves the settings, connects, loads and finds one tab: the start of every
// command that works on a tab's rows.
func openTab(ctx context.Context, g *globals, e *env, name string) (*sheets.Store, *model.Table, error) {
	s, err := resolve(g, e)
	if err != nil {
		return nil, nil, err
	}
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return nil, nil, err
	}
	wb, err := loadWorkbook(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	t, err := findTab(wb, name)
	return st, t, err
}

// listColumns picks the columns `list` shows besides row, ID and status.
func listColumns(t *model.Table) []int {
	var fields []model.Field
	switch t.Config.Role {
	case model.RoleInbox:
		fields = []model.Field{model.FTimestamp, model.FName, model.FEmail, model.FMessage}
	case model.RoleDeadLetter:
		fields = []model.Field{model.FSource, model.FURL, model.FAttempts, model.FError}
	case model.RoleQueue:
		fields = []model.Field{model.FType, model.FClaimedBy, model.FClaimedAt, model.FLastError}
	}
	var out []int
	for _, f := range fields {
		if i := t.Header.Col(f); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

type listRow struct {
	Row      int               `json:"row"`
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Time     string            `json:"time,omitempty"`
	Fields   map[string]string `json:"fields"`
	Problems []string          `json:"problems,omitempty"`
}

func writeListJSON(e *env, t *model.Table, recs []*model.Record) error {
	out := struct {
		Tab  string    `json:"tab"`
		Role string    `json:"role"`
		Rows []listRow `json:"rows"`
	}{Tab: t.Config.Name, Role: string(t.Config.Role), Rows: []listRow{}}
	for _, r := range recs {
		lr := listRow{Row: r.Row, ID: r.ID, Status: r.Status, Fields: map[string]string{}, Problems: r.Problems}
		if !r.Time.IsZero() {
			lr.Time = model.FormatTime(r.Time)
		}
		for i, h := range t.Header.Headers {
			if h == "" {
				continue
			}
			if i < len(r.Cells) {
				lr.Fields[h] = r.Cells[i]
			} else {
				lr.Fields[h] = ""
			}
		}
		out.Rows = append(out.Rows, lr)
	}
	return writeJSON(e.stdout, out)
}

// editDoc is the JSON document of set-status, clear-error and requeue-stale (--json): every
// ID's fate, agreeing with the exit code. The text output is printed from the same facts.
type editDoc struct {
	Tab    string `json:"tab"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Changed are the rows written (or, in a dry run, that would be).
	Changed []editDocRow `json:"changed"`
	// Unchanged are the rows not written and why: already as asked (done) or refused.
	Unchanged []editDocNote `json:"unchanged"`
	// Conflicts are rows whose cells changed since they were read; nothing was written there.
	Conflicts []string `json:"conflicts"`
	// Missing are IDs no row had at write time (deleted, or their ID changed).
	Missing []string `json:"missing"`
	// Damaged are cells of rows inserted while triage wrote that its write hit and could not
	// put back exactly (model.Damage): someone must look at them.
	Damaged  []string `json:"damaged"`
	ExitCode int      `json:"exit_code"`
}

type editDocRow struct {
	ID  string            `json:"id"`
	Row int               `json:"row"`
	Set map[string]string `json:"set"`
	// Note says more about the row (requeue-stale: who claimed it and how long ago).
	Note string `json:"note,omitempty"`
}

type editDocNote struct {
	ID     string `json:"id"`
	Row    int    `json:"row,omitempty"`
	Reason string `json:"reason"`
	// Done is set when the row already is as asked: not an error.
	Done bool `json:"done"`
}

func newEditDoc(tab string) *editDoc {
	return &editDoc{Tab: tab, Changed: []editDocRow{}, Unchanged: []editDocNote{}, Conflicts: []string{}, Missing: []string{}, Damaged: []string{}}
}

// notDone counts the rows the command was asked to change and didn't (damaged cells of
// other rows are not among them: see failure).
func (d *editDoc) notDone() int {
	n := len(d.Conflicts) + len(d.Missing)
	for _, u := range d.Unchanged {
		if !u.Done {
			n++
		}
	}
	return n
}

// addApply records a write's outcome and prints the conflicts and missing IDs to stderr.
func (d *editDoc) addApply(e *env, res model.ApplyResult) {
	for _, a := range res.Applied {
		d.Changed = append(d.Changed, editDocRow{ID: a.Edit.ID, Row: a.Row, Set: setFields(a.Edit)})
	}
	for _, c := range res.Conflicts {
		d.Conflicts = append(d.Conflicts, c.String())
		fmt.Fprintf(e.stderr, "conflict: %s\n", model.SanitizeLine(c.String()))
	}
	for _, dm := range res.Damaged {
		d.Damaged = append(d.Damaged, dm.String())
		fmt.Fprintf(e.stderr, "damaged: %s\n", model.SanitizeLine(dm.String()))
	}
	for _, m := range res.Missing {
		d.Missing = append(d.Missing, m.ID)
		fmt.Fprintf(e.stderr, "%s: no longer in %q (deleted or its ID changed since load); nothing written\n", model.SanitizeLine(m.ID), m.Tab)
	}
}

// print writes the changed rows to stdout: as text, one line per row, or as the JSON
// document.
func (d *editDoc) print(e *env, asJSON bool) error {
	if asJSON {
		return writeJSON(e.stdout, d)
	}
	for _, c := range d.Changed {
		what := describeSet(c.Set)
		if c.Note != "" {
			what = c.Note
		}
		fmt.Fprintf(e.stdout, "%s\trow %d\t%s\n", model.SanitizeLine(c.ID), c.Row, model.SanitizeLine(what))
	}
	return nil
}

// editCommand is the shared shape of set-status and clear-error: load, build one edit per
// ID, apply them in one write, report every ID's fate.
//
// build returns the edit, or why there is none: done=true when the row already is as asked
// (not an error: running the same command twice is fine), false when it can't be done.
func editCommand(ctx context.Context, g *globals, e *env, tabName string, ids []string, asJSON bool, needTab func(*model.Table) error, build func(*model.Table, *model.Record) (ed model.Edit, why string, done bool)) error {
	if len(ids) == 0 {
		return usageErr("no IDs given")
	}
	st, t, err := openTab(ctx, g, e, tabName)
	if err != nil {
		return err
	}
	if needTab != nil {
		if err := needTab(t); err != nil {
			return err
		}
	}
	doc := newEditDoc(t.Config.Name)
	var edits []model.Edit
	for _, id := range ids {
		i := t.Index(id)
		if i < 0 {
			why := fmt.Sprintf("no row with ID %q in %q", id, t.Config.Name)
			fmt.Fprintf(e.stderr, "%s: %s\n", model.SanitizeLine(id), model.SanitizeLine(why))
			doc.Unchanged = append(doc.Unchanged, editDocNote{ID: id, Reason: why})
			continue
		}
		r := &t.Records[i]
		ed, why, done := build(t, r)
		if why != "" {
			fmt.Fprintf(e.stderr, "%s: %s\n", model.SanitizeLine(id), model.SanitizeLine(why))
			doc.Unchanged = append(doc.Unchanged, editDocNote{ID: id, Row: r.Row, Reason: why, Done: done})
			continue
		}
		edits = append(edits, ed)
	}
	if len(edits) > 0 {
		res, err := st.Apply(ctx, edits)
		if err != nil {
			return writeFailed(t.Config.Name, err)
		}
		doc.addApply(e, res)
	}
	notDone := doc.notDone()
	if notDone > 0 || len(doc.Damaged) > 0 {
		doc.ExitCode = exitPartial
	}
	if err := doc.print(e, asJSON); err != nil {
		return err
	}
	if notDone > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("%s of %d not changed%s", plural(notDone, "row", "rows"), len(ids), doc.damagedNote())}
	}
	if len(doc.Damaged) > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("all %d changed, but %s", len(ids), doc.damagedNote()[2:])}
	}
	return nil
}

// damagedNote says, after a comma, how many cells of other rows a write hit and could not
// put back exactly ("" when none).
func (d *editDoc) damagedNote() string {
	if len(d.Damaged) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s of rows inserted meanwhile cleared (see \"damaged:\" above): check them", plural(len(d.Damaged), "cell", "cells"))
}

// setFields is what an edit writes, by field name.
func setFields(ed model.Edit) map[string]string {
	out := make(map[string]string, len(ed.Set))
	for f, v := range ed.Set {
		out[string(f)] = v
	}
	return out
}

// describeSet renders what an edit writes, for the text output: `status="done" error=""`.
func describeSet(set map[string]string) string {
	var parts []string
	for _, f := range []model.Field{model.FStatus, model.FError, model.FLastError, model.FUpdatedAt, model.FKey} {
		if v, ok := set[string(f)]; ok {
			parts = append(parts, fmt.Sprintf("%s=%q", f, v))
		}
	}
	return strings.Join(parts, " ")
}

func cmdSetStatus(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("set-status", e)
	tab := fs.String("tab", "", "tab name or role")
	status := fs.String("status", "", "the new status (one of the tab's statuses)")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	ids, err := parseCmd(fs, g, args)
	if err != nil {
		return err
	}
	want := strings.ToLower(strings.TrimSpace(*status))
	if want == "" {
		return usageErr("set-status: --status is required")
	}
	check := func(t *model.Table) error {
		if t.HasStatus(want) {
			return nil
		}
		return usageErr("%q is not a status of %q (statuses: %s)", want, t.Config.Name, strings.Join(t.Statuses, ", "))
	}
	return editCommand(ctx, g, e, *tab, ids, *asJSON, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
		if r.Status == want {
			return model.Edit{}, fmt.Sprintf("already %s; nothing to change", want), true
		}
		return model.SetStatus(t, r, want), "", false
	})
}

func cmdClearError(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("clear-error", e)
	tab := fs.String("tab", "", "tab name or role (deadletter or queue)")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	ids, err := parseCmd(fs, g, args)
	if err != nil {
		return err
	}
	now := time.Now()
	check := func(t *model.Table) error {
		if t.Config.Role == model.RoleInbox {
			return usageErr("clear-error: %q is an inbox; sticky errors live in dead-letter and queue tabs", t.Config.Name)
		}
		return nil
	}
	return editCommand(ctx, g, e, *tab, ids, *asJSON, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
		ed, ok := model.ClearError(t, r, now)
		if !ok {
			// Already released (dead / pending) is what was asked: running it twice is fine.
			done := r.Status == model.StatusDead || r.Status == model.StatusPending
			return ed, fmt.Sprintf("status is %q, not a sticky error; nothing to clear", r.Status), done
		}
		return ed, "", false
	})
}

func cmdRequeueStale(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("requeue-stale", e)
	tab := fs.String("tab", "", "queue tab name (default: the configured queue tab)")
	older := fs.Duration("older-than", 0, "stale threshold, a positive duration such as 30m or 2h (default: the tab's stale_after, 30m)")
	dry := fs.Bool("dry-run", false, "list the stale claims, change nothing")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
	}
	if flagGiven(fs, "older-than") && *older <= 0 {
		// Zero or negative would make every claim stale (or silently fall back to the
		// default): either way not what was asked for.
		return usageErr("requeue-stale: --older-than %s: want a positive duration such as 30m or 2h (leave it out for the tab's stale_after)", *older)
	}
	name := *tab
	if name == "" {
		name = string(model.RoleQueue)
	}
	st, t, err := openTab(ctx, g, e, name)
	if err != nil {
		return err
	}
	if t.Config.Role != model.RoleQueue {
		return usageErr("requeue-stale: %q is not a queue tab", t.Config.Name)
	}
	if *older > 0 {
		t.Config.StaleAfter = *older
	}
	now := time.Now()
	doc := newEditDoc(t.Config.Name)
	doc.DryRun = *dry
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
		notes[r.ID] = fmt.Sprintf("claimed by %s %s ago", first(t.Get(r, model.FClaimedBy), "?"), now.Sub(r.Time).Round(time.Minute))
		edits = append(edits, ed)
		if *dry {
			doc.Changed = append(doc.Changed, editDocRow{ID: r.ID, Row: r.Row, Set: setFields(ed), Note: notes[r.ID]})
		}
	}
	finish := func() error {
		nd := doc.notDone()
		if nd > 0 || len(doc.Damaged) > 0 {
			doc.ExitCode = exitPartial
		}
		if err := doc.print(e, *asJSON); err != nil {
			return err
		}
		switch {
		case nd == stuck && stuck > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("%s can't be requeued until their ID cells are fixed%s", plural(stuck, "stale claim", "stale claims"), doc.damagedNote())}
		case nd > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("%s not requeued%s", plural(nd, "claim", "claims"), doc.damagedNote())}
		case len(doc.Damaged) > 0:
			return &exitError{code: exitPartial, err: fmt.Errorf("every stale claim requeued, but %s", doc.damagedNote()[2:])}
		}
		return nil
	}
	if len(edits) == 0 {
		if stuck == 0 {
			fmt.Fprintf(e.stderr, "no claims older than %s in %q\n", t.Config.StaleAfter, t.Config.Name)
		}
		return finish()
	}
	if *dry {
		fmt.Fprintf(e.stderr, "dry run: %s would go back to pending\n", plural(len(edits), "claim", "claims"))
		return finish()
	}
	res, err := st.Apply(ctx, edits)
	if err != nil {
		return writeFailed(t.Config.Name, err)
	}
	doc.addApply(e, res)
	for i := range doc.Changed {
		doc.Changed[i].Note = notes[doc.Changed[i].ID]
	}
	fmt.Fprintf(e.stderr, "requeued %s\n", plural(len(res.Applied), "claim", "claims"))
	return finish()
}

// flagGiven reports whether the flag was set on the command line (a value equal to the
// default included).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

func cmdInit(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("init", e)
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
	}
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

func cmdConfig(_ context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("config", e)
	rest, err := parseCmd(fs, g, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] != "check" {
		return usageErr("usage: triage config check [--config FILE]")
	}
	explicit := first(g.config, e.getenv("TRIAGE_CONFIG")) != ""
	path := first(g.config, e.getenv("TRIAGE_CONFIG"), config.DefaultPathFrom(e.getenv))
	probs, err := config.Check(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			// The config is optional: no file at the default place means every default.
			fmt.Fprintf(e.stdout, "%s: no config file; triage runs on its defaults (see README.md, Config)\n", path)
			return nil
		}
		return &exitError{code: exitUsage, err: err}
	}
	probs = append(probs, keyProblems(path)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	if len(probs) == 0 {
		fmt.Fprintf(e.stdout, "%s: ok\n", path)
		return nil
	}
	for _, p := range probs {
		if p.Line > 0 {
			fmt.Fprintf(e.stdout, "%s:%d: %s\n", path, p.Line, p.Msg)
		} else {
			fmt.Fprintf(e.stdout, "%s: %s\n", path, p.Msg)
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s in %s", plural(len(probs), "problem", "problems"), path)}
}

// writeFailed maps a failed write to its exit code: a setup or connection problem
// (read-only, unreachable, not shared, no access) is 2, like at startup; anything else
// leaves the rows not done, which is 1.
func writeFailed(tab string, err error) error {
	code := exitPartial
	for _, setup := range []error{sheets.ErrReadOnly, sheets.ErrUnreachable, sheets.ErrNotShared, sheets.ErrNotFound, sheets.ErrUnauthorized} {
		if errors.Is(err, setup) {
			code = exitUsage
		}
	}
	return &exitError{code: code, err: fmt.Errorf("write to %q: %w", tab, err)}
}

// keyProblems checks the config's [keys] against the TUI's actions: what config alone can't
// know (the action names, and two actions on one key).
func keyProblems(path string) []config.Problem {
	cfg, _ := config.Load(path, true)
	if cfg == nil || len(cfg.Keys) == 0 {
		return nil
	}
	var probs []config.Problem
	km := tui.DefaultKeyMap()
	actions := make([]string, 0, len(cfg.Keys))
	for a := range cfg.Keys {
		actions = append(actions, a)
	}
	sort.Strings(actions)
	for _, a := range actions {
		if err := km.Rebind(a, cfg.Keys[a]); err != nil {
			probs = append(probs, config.Problem{Line: cfg.Line("keys." + a), Msg: err.Error()})
		}
	}
	for _, c := range km.Conflicts() {
		probs = append(probs, config.Problem{Line: cfg.Line("keys"), Msg: c})
	}
	return probs
}
