package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// newListCmd is `triage list`: it prints a tab's rows, sanitised, as a table or one JSON document.
func newListCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print a tab's rows as a table or JSON",
		Long: `Print the rows of one tab (inbox, dead-letter or queue), sanitised, as a table on stdout,
or as one JSON document with --json. --status and --filter narrow the rows; the filter
language is the TUI's (/ in the TUI).`,
		Example: `  triage list --tab Inbox --status new
  triage list --tab deadletter --filter 'source:crm !status:delivered'
  triage list --tab queue --json | jq '.rows[].id'`,
		Args: noArgs,
	}
	fs := cmd.Flags()
	tab := fs.String("tab", "", "tab name or role (inbox, deadletter, queue)")
	completeTabs(cmd)
	status := fs.String("status", "", "only rows with this status")
	filter := fs.String("filter", "", "filter query, as in the TUI, e.g. 'source:crm !status:done'")
	asJSON := fs.Bool("json", false, "one JSON document on stdout")
	g.register(fs, gConnect)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runList(cmd.Context(), g, e, *tab, *status, *filter, *asJSON)
	}
	return cmd
}

func runList(ctx context.Context, g *globals, e *env, tab, status, filter string, asJSON bool) error {
	_, t, err := openTab(ctx, g, e, tab)
	if err != nil {
		return err
	}
	q := filter
	if status != "" {
		want := strings.ToLower(strings.TrimSpace(status))
		if !t.HasStatus(want) {
			return usageErr("list: --status %q is not a status of %q (statuses: %s)", status, t.Config.Name, strings.Join(t.Statuses, ", "))
		}
		q += " status:" + want
	}
	m := model.ParseFilter(q).Bind(t)
	var recs []*model.Record
	for i := range t.Records {
		r := &t.Records[i]
		if m.Match(r, model.Haystack(r)) {
			recs = append(recs, r)
		}
	}
	if asJSON {
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
		line := []string{fmt.Sprint(r.Row), clip(model.SanitizeLine(r.ID), 40), clip(model.SanitizeLine(r.Status), 20)}
		for _, c := range cols {
			v := ""
			if c < len(r.Cells) {
				v = r.Cells[c]
			}
			if c == timeCol && !r.Time.IsZero() {
				v = r.Time.In(t.Location).Format(listTimeLayout)
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
