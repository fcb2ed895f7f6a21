package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/sheets"
	contract "github.com/triage-dev/triage/store"
)

// store is what the commands use of a store, the whole store contract (store.Store): the
// sheet's (*sheets.Store), or the PostgreSQL database's (*postgres.Store) when a database URL
// is set. Both give the same answers (store/storetest.Exercise runs one test body against
// each, from each store's own tests).
type store = contract.Store

var (
	_ store = (*sheets.Store)(nil)
	_ store = (*postgres.Store)(nil)
)

// openStore returns the store for the resolved settings: the database when one is set, else
// the spreadsheet through the Sheets API.
func openStore(ctx context.Context, s *settings, e *env) (store, googleauth.Identity, error) {
	if s.databaseURL != "" {
		st, err := openDatabase(ctx, s, e)
		return st, googleauth.Identity{}, err
	}
	return connectStore(ctx, s, e, nil)
}

// openDatabase opens the PostgreSQL store (Open checks its schema: `triage init` first).
func openDatabase(ctx context.Context, s *settings, e *env) (*postgres.Store, error) {
	st, err := postgres.Open(ctx, s.databaseURL, postgres.Options{
		Tabs:     s.cfg.TabConfigs(),
		ReadOnly: s.readonly,
		Actor:    actorName(googleauth.Identity{}, e),
		Tracer:   e.dbTracer,
	})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return st, nil
}

// openCountedStore is openStore whose store also counts the write requests it sends
// (replay.WriteCounter), for a replay's summary; it returns the store and what a replay
// writes through. The database store's writes are counted as replay counts a store without a
// counter: one transaction per Apply.
func openCountedStore(ctx context.Context, s *settings, e *env) (store, replay.Store, error) {
	if s.databaseURL != "" {
		st, err := openDatabase(ctx, s, e)
		if err != nil {
			return nil, nil, err
		}
		return st, st, nil
	}
	writes := &sheetsWrites{base: http.DefaultTransport}
	st, _, err := connectStore(ctx, s, e, &http.Client{Transport: writes})
	if err != nil {
		return nil, nil, err
	}
	return st, &countedStore{Store: st, writes: writes}, nil
}

// countedStore is a store that says how many write requests it has sent.
type countedStore struct {
	*sheets.Store
	writes *sheetsWrites
}

// WriteRequests is how many write requests the store has sent (replay.WriteCounter).
func (c *countedStore) WriteRequests() int { return int(c.writes.n.Load()) }

// sheetsWrites is the store's HTTP transport when its writes are counted: it counts the
// Sheets API's write requests (every write is a spreadsheets.batchUpdate or a
// values:batchUpdate, each round, fence and retry its own request) and passes everything on.
type sheetsWrites struct {
	base http.RoundTripper
	n    atomic.Int64
}

// tokenRequestTimeout bounds a request that is not to the Sheets API (an OAuth token's), as
// sheets.Connect bounds it when it isn't given a client of ours.
const tokenRequestTimeout = 30 * time.Second

func (t *sheetsWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, "/v4/") {
		ctx, cancel := context.WithTimeout(req.Context(), tokenRequestTimeout)
		resp, err := t.base.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, ":batchUpdate") {
		t.n.Add(1)
	}
	return t.base.RoundTrip(req)
}

// cancelOnClose ends a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// connectStore connects with hc as the base HTTP client (nil: sheets.Connect's own).
func connectStore(ctx context.Context, s *settings, e *env, hc *http.Client) (*sheets.Store, googleauth.Identity, error) {
	if s.spreadsheet == "" {
		return nil, googleauth.Identity{}, usageErr("no spreadsheet: pass --spreadsheet ID, set TRIAGE_SPREADSHEET, or put spreadsheet = \"ID\" in %s (the ID is the part of the sheet's URL between /d/ and /edit)", first(s.cfg.Path(), e.vars().defaultConfigPath))
	}
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{
		Endpoint:           s.endpoint,
		CredentialsFile:    s.credentials,
		CredentialsFromEnv: s.credentialsFromEnv,
		HomeDir:            e.vars().home,
		TokenCacheFile:     tokenCachePath(e),
		HTTPClient:         hc,
		Pacer:              quotaPacer(s, e),
	})
	ident := conn.Identity
	if err != nil {
		return nil, ident, &exitError{code: exitUsage, err: err}
	}
	st := sheets.New(ctx, conn.Sheets, sheets.Options{
		SpreadsheetID: s.spreadsheet,
		Tabs:          s.cfg.TabConfigs(),
		ReadOnly:      s.readonly,
		Actor:         actorName(ident, e),
		Identity:      ident,
		HTTPClient:    conn.HTTP,
		FullReadEvery: s.cfg.FullRefreshInterval(),
	}).WithDrive(conn.Drive)
	return st, ident, nil
}

// quotaPacer paces the store's requests under [quota] per_minute (Google's default when
// unset; against an emulator nothing is paced unless it is set) and waits out quota answers
// for [quota] budget, telling e.quotaNotice (else stderr) of every wait.
func quotaPacer(s *settings, e *env) *sheets.Pacer {
	p := &sheets.Pacer{PerMinute: s.cfg.Quota.PerMinute, Budget: s.cfg.Quota.BudgetDuration()}
	if c := e.quotaClock; c != nil {
		p.Now, p.Sleep = c.Now, c.Sleep
	}
	if p.PerMinute == 0 && s.endpoint != "" {
		p.PerMinute = -1
	}
	notice := e.quotaNotice
	if notice == nil {
		notice = func(line string) { fmt.Fprintf(e.stderr, "triage: %s\n", line) }
	}
	p.OnWait = func(w sheets.QuotaWait) {
		if w.Answered || w.Wait >= time.Second {
			notice(w.String())
		}
	}
	return p
}

// closeStore deletes the journal sheets of the store's checked writes before the command
// exits (see sheets.Store.Close), under its own short deadline: the command's context may be
// cancelled already, and a failure only leaves them for the next write of any triage.
func closeStore(st store) {
	switch st := st.(type) {
	case *sheets.Store:
		if st == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = st.Close(ctx)
	case *postgres.Store:
		if st != nil {
			st.Close()
		}
	}
}

// settler is a store whose writes a killed process can leave unfinished, and which settles
// them (sheets.Store.Settle; a database's transactions leave nothing to settle).
type settler interface {
	Settle(ctx context.Context) (model.ApplyResult, bool, error)
}

var _ settler = (*sheets.Store)(nil)

// settleFirst settles other processes' unfinished writes (a killed command's, say) before a
// command that writes plans its own; ran says it did, and the caller reads its tab again.
// What it put back and what it could not check are in the result, for the command to report.
func settleFirst(ctx context.Context, st store) (res model.ApplyResult, ran bool, err error) {
	s, ok := st.(settler)
	if !ok || st.ReadOnly() {
		return model.ApplyResult{}, false, nil
	}
	res, ran, err = s.Settle(ctx)
	if err != nil {
		return res, ran, &exitError{code: exitPartial, err: fmt.Errorf("settling another triage's unfinished write first: %w", err)}
	}
	return res, ran, nil
}

// loadTabToWrite is LoadTab for a command that writes the tab next: unfinished writes are
// settled first (settleFirst), and the tab read again if they were.
// rowsLoader is a store whose load of a tab can also reach the rows a command names, settled
// or open (postgres.Store: the database loads only the open work otherwise, and a command
// must reach any row by its ID, as on the sheet, which always reads the whole tab).
type rowsLoader interface {
	LoadTabRows(ctx context.Context, name string, ids []string) (*model.Workbook, error)
}

// loadTab reads a tab for a command that names ids (nil: none).
func loadTab(ctx context.Context, st store, name string, ids []string) (*model.Workbook, error) {
	if rl, ok := st.(rowsLoader); ok && len(ids) > 0 {
		return rl.LoadTabRows(ctx, name, ids)
	}
	return st.LoadTab(ctx, name)
}

func loadTabToWrite(ctx context.Context, st store, name string, ids []string) (*model.Workbook, model.ApplyResult, error) {
	wb, err := loadTab(ctx, st, name, ids)
	if err != nil {
		return nil, model.ApplyResult{}, &exitError{code: exitUsage, err: err}
	}
	settled, ran, err := settleFirst(ctx, st)
	if err != nil || !ran {
		return wb, settled, err
	}
	if wb, err = loadTab(ctx, st, name, ids); err != nil {
		return nil, settled, &exitError{code: exitUsage, err: err}
	}
	return wb, settled, nil
}

// loadWorkbook does the first load; a failure here is a connection or setup problem, which
// the CLI reports with exit code 2.
func loadWorkbook(ctx context.Context, st store) (*model.Workbook, error) {
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
func actorName(ident googleauth.Identity, e *env) string {
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
