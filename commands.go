package main

import (
	"context"
	"errors"
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

// editCommand is the shared shape of set-status and clear-error: load, build one edit per
// ID, apply them in one write, report every ID's fate.
//
// build returns the edit, or why there is none: done=true when the row already is as asked
// (not an error: running the same command twice is fine), false when it can't be done.
func editCommand(ctx context.Context, g *globals, e *env, tabName string, ids []string, needTab func(*model.Table) error, build func(*model.Table, *model.Record) (ed model.Edit, why string, done bool)) error {
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
	var edits []model.Edit
	notDone := 0
	for _, id := range ids {
		i := t.Index(id)
		if i < 0 {
			fmt.Fprintf(e.stderr, "%s: no row with ID %q in %q\n", id, id, t.Config.Name)
			notDone++
			continue
		}
		ed, why, done := build(t, &t.Records[i])
		if why != "" {
			fmt.Fprintf(e.stderr, "%s: %s\n", id, why)
			if !done {
				notDone++
			}
			continue
		}
		edits = append(edits, ed)
	}
	if len(edits) > 0 {
		res, err := st.Apply(ctx, edits)
		if err != nil {
			return writeFailed(t.Config.Name, err)
		}
		notDone += reportApply(e, res)
	}
	if notDone > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("%s of %d not changed", plural(notDone, "row", "rows"), len(ids))}
	}
	return nil
}

// reportApply prints a write's outcome per edit and returns how many were not written.
func reportApply(e *env, res model.ApplyResult) int {
	for _, a := range res.Applied {
		fmt.Fprintf(e.stdout, "%s\trow %d\t%s\n", a.Edit.ID, a.Row, describeSet(a.Edit))
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(e.stderr, "conflict: %s\n", model.SanitizeLine(c.String()))
	}
	for _, m := range res.Missing {
		fmt.Fprintf(e.stderr, "%s: no longer in %q (deleted or its ID changed since load); nothing written\n", m.ID, m.Tab)
	}
	return len(res.Conflicts) + len(res.Missing)
}

func describeSet(ed model.Edit) string {
	var parts []string
	for _, f := range []model.Field{model.FStatus, model.FError, model.FLastError, model.FUpdatedAt, model.FKey} {
		if v, ok := ed.Set[f]; ok {
			parts = append(parts, fmt.Sprintf("%s=%q", f, v))
		}
	}
	return strings.Join(parts, " ")
}

func cmdSetStatus(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("set-status", e)
	tab := fs.String("tab", "", "tab name or role")
	status := fs.String("status", "", "the new status (one of the tab's statuses)")
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
	return editCommand(ctx, g, e, *tab, ids, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
		if r.Status == want {
			return model.Edit{}, fmt.Sprintf("already %s; nothing to change", want), true
		}
		return model.SetStatus(t, r, want), "", false
	})
}

func cmdClearError(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("clear-error", e)
	tab := fs.String("tab", "", "tab name or role (deadletter or queue)")
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
	return editCommand(ctx, g, e, *tab, ids, check, func(t *model.Table, r *model.Record) (model.Edit, string, bool) {
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
	older := fs.Duration("older-than", 0, "stale threshold (default: the tab's stale_after, 30m)")
	dry := fs.Bool("dry-run", false, "list the stale claims, change nothing")
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
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
	var edits []model.Edit
	stuck := 0
	for i := range t.Records {
		r := &t.Records[i]
		ed, ok := model.Requeue(t, r, now)
		if !ok {
			continue
		}
		if r.ID == "" {
			// A stale claim that can't be written (no ID, or one shared with another row) is
			// still stale: say so, and count it as not done.
			fmt.Fprintf(e.stderr, "row %d: stale claim not requeued: %s\n", r.Row, model.SanitizeLine(strings.Join(r.Problems, "; ")))
			stuck++
			continue
		}
		fmt.Fprintf(e.stdout, "%s\trow %d\tclaimed by %s %s ago\n", model.SanitizeLine(r.ID), r.Row,
			model.SanitizeLine(first(t.Get(r, model.FClaimedBy), "?")), now.Sub(r.Time).Round(time.Minute))
		edits = append(edits, ed)
	}
	notDone := func() error {
		if stuck == 0 {
			return nil
		}
		return &exitError{code: exitPartial, err: fmt.Errorf("%s can't be requeued until their ID cells are fixed", plural(stuck, "stale claim", "stale claims"))}
	}
	if len(edits) == 0 {
		if stuck == 0 {
			fmt.Fprintf(e.stderr, "no claims older than %s in %q\n", t.Config.StaleAfter, t.Config.Name)
		}
		return notDone()
	}
	if *dry {
		fmt.Fprintf(e.stderr, "dry run: %s would go back to pending\n", plural(len(edits), "claim", "claims"))
		return notDone()
	}
	res, err := st.Apply(ctx, edits)
	if err != nil {
		return writeFailed(t.Config.Name, err)
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(e.stderr, "conflict: %s\n", model.SanitizeLine(c.String()))
	}
	for _, m := range res.Missing {
		fmt.Fprintf(e.stderr, "%s: no longer in %q; nothing written\n", m.ID, m.Tab)
	}
	fmt.Fprintf(e.stderr, "requeued %s\n", plural(len(res.Applied), "claim", "claims"))
	if !res.OK() {
		return &exitError{code: exitPartial, err: fmt.Errorf("%s not requeued", plural(len(res.Conflicts)+len(res.Missing)+stuck, "claim", "claims"))}
	}
	return notDone()
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

func printInit(e *env, rep sheets.InitReport) {
	if len(rep.CreatedTabs) == 0 && len(rep.AddedHeaders) == 0 {
		fmt.Fprintln(e.stdout, "nothing to do: every configured tab and header exists")
		return
	}
	for _, t := range rep.CreatedTabs {
		fmt.Fprintf(e.stdout, "created tab %q\n", t)
	}
	for t, hs := range rep.AddedHeaders {
		fmt.Fprintf(e.stdout, "added headers to %q: %s\n", t, joinQuoted(hs))
	}
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
