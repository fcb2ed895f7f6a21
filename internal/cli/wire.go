package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// openStore connects to the Sheets API and returns the store for the resolved settings.
func openStore(ctx context.Context, s *settings, e *env) (*sheets.Store, sheets.Identity, error) {
	if s.spreadsheet == "" {
		return nil, sheets.Identity{}, usageErr("no spreadsheet: pass --spreadsheet ID, set TRIAGE_SPREADSHEET, or put spreadsheet = \"ID\" in %s (the ID is the part of the sheet's URL between /d/ and /edit)", first(s.cfg.Path(), e.vars().defaultConfigPath))
	}
	svc, ident, err := sheets.Connect(ctx, sheets.AuthOptions{
		Endpoint:           s.endpoint,
		CredentialsFile:    s.credentials,
		CredentialsFromEnv: s.credentialsFromEnv,
		HomeDir:            e.vars().home,
		TokenCacheFile:     tokenCachePath(e),
	})
	if err != nil {
		return nil, ident, &exitError{code: exitUsage, err: err}
	}
	st := sheets.New(ctx, svc, sheets.Options{
		SpreadsheetID: s.spreadsheet,
		Tabs:          s.cfg.TabConfigs(),
		ReadOnly:      s.readonly,
		Actor:         actorName(ident, e),
		Identity:      ident,
	})
	return st, ident, nil
}

// closeStore deletes the journal sheets of the store's checked writes before the command
// exits (see sheets.Store.Close), under its own short deadline: the command's context may be
// cancelled already, and a failure only leaves them for the next write of any triage.
func closeStore(st *sheets.Store) {
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = st.Close(ctx)
}

// loadWorkbook does the first load; a failure here is a connection or setup problem, which
// the CLI reports with exit code 2.
func loadWorkbook(ctx context.Context, st *sheets.Store) (*model.Workbook, error) {
	wb, err := st.Load(ctx)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return wb, nil
}

// findTab resolves --tab (a tab name or a role name) in a loaded workbook. A configured tab
// that is missing from the spreadsheet or can't be used is reported with its real cause, by
// its configured name, whichever way it was asked for: `replay` asks for the role
// ("deadletter"), a person may type the tab's name ("failed_calls").
func findTab(wb *model.Workbook, name string) (*model.Table, error) {
	if name == "" {
		return nil, usageErr("--tab is required (tabs: %s)", tabNames(wb))
	}
	if t := wb.TabNamed(name); t != nil {
		return t, nil
	}
	role := model.Role(strings.ToLower(strings.TrimSpace(name)))
	if t := wb.Tab(role); t != nil {
		return t, nil
	}
	asked := func(tc model.TabConfig) bool { return strings.EqualFold(tc.Name, name) || tc.Role == role }
	for _, b := range wb.Broken {
		if asked(b.Config) {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("the %s tab %q can't be used: %w", b.Config.Role, b.Config.Name, b.Err)}
		}
	}
	for _, m := range wb.Missing {
		if asked(m) {
			return nil, usageErr("the %s tab %q is not in the spreadsheet: run `triage init` to create it, or, if the tab has another name, set it in the config ([tabs.%s] name = \"...\"); tabs loaded: %s",
				m.Role, m.Name, m.Role, tabNames(wb))
		}
	}
	return nil, usageErr("no tab %q: it is neither a configured tab's name nor a role (inbox, deadletter, queue); tabs loaded: %s", name, tabNames(wb))
}

func tabNames(wb *model.Workbook) string {
	var n []string
	for _, t := range wb.Tabs {
		n = append(n, t.Config.Name)
	}
	if len(n) == 0 {
		return "none loaded"
	}
	return joinQuoted(n)
}

// actorName is who fills triaged_by: the signed-in account or the service account's email;
// where the credentials don't say (ADC with a user account, the emulator), the local user
// and host, so a change can still be traced.
func actorName(ident sheets.Identity, e *env) string {
	if ident.Email != "" {
		return ident.Email
	}
	user := first(e.vars().user, "unknown")
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return user + "@" + host
}
