package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// ErrReadOnly is a write refused by a read-only store; nothing was sent.
var ErrReadOnly = errors.New("read-only: nothing was written (drop --readonly / readonly = true to make changes)")

// Options configures a Store.
type Options struct {
	// Tabs are the configured tabs in display order; each role reads its table (inbox,
	// failed_calls, jobs) and is shown under the tab's name. Column renames
	// ([tabs.ROLE.columns]) are the sheet's business: the tables have the schema's columns.
	Tabs []model.TabConfig
	// ReadOnly makes every write return ErrReadOnly without sending anything.
	ReadOnly bool
	// Actor fills triaged_by; an Apply whose context carries one (model.WithActor) records that one.
	Actor string
	// History makes Load return every row, settled ones too (delivered, discarded, done,
	// spam); by default it returns the open work only, which is what the TUI shows first.
	History bool
	// Now is the clock of triaged_at, claims and Workbook.Loaded (default time.Now).
	Now func() time.Time
	// Tracer, when set, hears every statement the store's connections send (a log, metrics,
	// a test's count of statements).
	Tracer pgx.QueryTracer
}

// The database store keeps the store contract, replay leases and history search included
// (store/storetest holds it to them).
var (
	_ store.Store           = (*Store)(nil)
	_ store.Leaser          = (*Store)(nil)
	_ store.HistorySearcher = (*Store)(nil)
)

// Store reads and writes the triage tables of one database. It is safe for concurrent use.
type Store struct {
	pool     *pgxpool.Pool
	cfg      *pgxpool.Config
	url      string // redacted
	db       string
	tabs     []model.TabConfig
	readOnly bool
	actor    string
	history  bool
	now      func() time.Time

	stamps model.Stamper // each Apply's own triaged_at (Store.stamp)

	changes changes
	// runs are the replay runs holding leases through this store (lease.go).
	runs runConns

	// beforeWrite, set by tests only, runs between an edit's read and its conditional write:
	// the instant another person's change makes the write a conflict.
	beforeWrite func()
}

// Open connects to the database at url (a postgres:// URL or libpq keyword/value string;
// sslmode and every other libpq setting pass through) and checks that its schema is this
// binary's: an older one is refused with `run triage init`, a newer one with "upgrade". It
// writes nothing.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	return open(ctx, url, cfg, opts)
}

func open(ctx context.Context, url string, cfg *pgxpool.Config, opts Options) (*Store, error) {
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", Redact(url), err)
	}
	v, err := dbVersion(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w (check the URL, that the server is up, and that the user may log in)", Redact(url), err)
	}
	if err := checkCurrent(v); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s: %w", Redact(url), err)
	}
	s := &Store{pool: pool, cfg: cfg, url: Redact(url), db: cfg.ConnConfig.Database,
		tabs: append([]model.TabConfig(nil), opts.Tabs...), readOnly: opts.ReadOnly,
		actor: opts.Actor, history: opts.History, now: opts.Now}
	if len(s.tabs) == 0 {
		for _, r := range model.Roles {
			s.tabs = append(s.tabs, model.DefaultTabConfig(r))
		}
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

func parseConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx redacts the password in its own message; ours names the URL redacted too.
		return nil, fmt.Errorf("database URL %s: %w (write it as postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=require)", Redact(url), err)
	}
	if !strings.Contains(url, "default_query_exec_mode") {
		// Every statement in one round trip, prepared or not: pgx's default prepares each new
		// statement first, a second round trip per statement in every short-lived command
		// (set-status, list, a cron replay), which a 20 ms network multiplies. Nothing is
		// prepared by name, so a transaction-pooling PgBouncer in front works too. A URL that
		// names its own mode keeps it.
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	return cfg, nil
}

// Close ends the store's connections (Changed's watch too), releasing the replay leases of
// runs that did not release their own.
func (s *Store) Close() {
	s.stopChanges()
	s.releaseAll()
	s.pool.Close()
}

// ReadOnly reports whether the store refuses every write.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Tabs returns the configured tabs.
func (s *Store) Tabs() []model.TabConfig { return append([]model.TabConfig(nil), s.tabs...) }

// SpreadsheetID names what the store works on, as the sheets store names its spreadsheet: the
// database URL, its password redacted.
func (s *Store) SpreadsheetID() string { return s.url }

// String is the redacted URL: a store printed never shows its password.
func (s *Store) String() string { return "postgres store " + s.url }

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact returns a database URL with its password replaced by "xxxxx", in URL form (the
// userinfo and a password query parameter) and keyword/value form (password=...), so it can
// be printed, logged or put in an error.
func Redact(s string) string {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			// An unparsable URL may still hold a password: show only its scheme.
			return strings.SplitN(s, "://", 2)[0] + "://(unparsable URL, not shown)"
		}
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return kvPassword.ReplaceAllString(s, "${1}xxxxx")
}

// table is the database table of a role and its columns, in schema order.
type table struct {
	role model.Role
	name string
	// rowNo is the column that orders rows and numbers them for display (Record.Row).
	rowNo string
	// pk is the primary key column a write addresses.
	pk     string
	fields []model.Field
	// closed are the settled statuses Load leaves out unless History is set.
	closed []string
}

var tables = map[model.Role]table{
	model.RoleInbox:      {name: "inbox", rowNo: "row_no", pk: "id", closed: []string{"done", "spam"}},
	model.RoleDeadLetter: {name: "failed_calls", rowNo: "id", pk: "id", closed: []string{model.StatusDelivered, model.StatusDiscarded}},
	model.RoleQueue:      {name: "jobs", rowNo: "row_no", pk: "id", closed: []string{model.StatusDone}},
}

func init() {
	for r, t := range tables {
		t.role = r
		for _, c := range model.SchemaFor(r).Columns {
			t.fields = append(t.fields, c.Field)
		}
		tables[r] = t
	}
}

// tableNamed is the table called name.
func tableNamed(name string) table {
	for _, t := range tables {
		if t.name == name {
			return t
		}
	}
	panic("postgres: no table " + name)
}

// col is a field's column expression as read: the key's NULL (no key yet) reads as "".
func col(f model.Field) string {
	if f == model.FKey {
		return `coalesce("key", '')`
	}
	return pgx.Identifier{string(f)}.Sanitize()
}

// selectList is the row number and every field, in schema order.
func (t table) selectList() string {
	parts := []string{t.rowNo}
	for _, f := range t.fields {
		parts = append(parts, col(f))
	}
	return strings.Join(parts, ", ")
}

// openFilter is the default view's condition, matching the table's partial index exactly
// (so the planner uses it): the statuses are constants of the schema, never input.
func (t table) openFilter() string {
	q := make([]string, len(t.closed))
	for i, s := range t.closed {
		q[i] = "'" + s + "'"
	}
	if len(q) == 1 {
		return "lower(btrim(status)) <> " + q[0]
	}
	return "lower(btrim(status)) NOT IN (" + strings.Join(q, ", ") + ")"
}

// decodeConfig is a tab's config as the table is laid out: the schema's own headers.
func decodeConfig(tc model.TabConfig) model.TabConfig {
	tc.Columns = nil
	return tc
}

func headers(r model.Role) []any {
	cols := model.SchemaFor(r).Columns
	h := make([]any, len(cols))
	for i, c := range cols {
		h[i] = c.Header
	}
	return h
}

// Load reads every configured tab's table: the open work (History: every row), in arrival
// order, decoded exactly as the sheets store decodes a tab (model.Decode), so keys, problems
// and duplicates read the same. A context from model.WithLoadProgress is told the rows read,
// every thousand and at each tab's end.
func (s *Store) Load(ctx context.Context) (*model.Workbook, error) {
	return s.load(ctx, s.tabs)
}

func (s *Store) load(ctx context.Context, tabs []model.TabConfig) (*model.Workbook, error) {
	// Cleared before the read: a change during it is noticed again (Changed).
	s.changes.dirty.Store(false)
	wb := &model.Workbook{SpreadsheetID: s.url, Title: "PostgreSQL " + s.db, Location: time.UTC}
	for _, tc := range tabs {
		t, ok := tables[tc.Role]
		if !ok {
			return nil, fmt.Errorf("load: tab %q has role %q, which has no table", tc.Name, tc.Role)
		}
		q := "SELECT " + t.selectList() + " FROM " + t.name
		if !s.history {
			q += " WHERE " + t.openFilter()
		}
		q += " ORDER BY " + t.rowNo
		tab, err := s.loadTable(ctx, tc, t, q)
		if err != nil {
			return nil, fmt.Errorf("load %s (table %s) from %s: %w", tc.Name, t.name, s.url, err)
		}
		wb.Tabs = append(wb.Tabs, tab)
	}
	wb.Loaded = s.now()
	return wb, nil
}

// EachPage reads every row of a configured tab's table (settled ones too), in row order, as
// tables of at most pageRows rows each decoded as Load decodes the tab, and calls each with
// them: a reader of a whole large table (migrate's proof of 1,000,000 rows) holds one page at
// a time. Duplicates are marked within a page only (the tables' keys are unique).
func (s *Store) EachPage(ctx context.Context, name string, pageRows int, each func(*model.Table) error) error {
	tc, ok := s.tabConfig(name)
	if !ok {
		return fmt.Errorf("read: no tab %q (configured: %s)", name, s.tabNames())
	}
	t := tables[tc.Role]
	after := int64(math.MinInt64)
	for {
		q := "SELECT " + t.selectList() + " FROM " + t.name + " WHERE " + t.rowNo + " > $1 ORDER BY " + t.rowNo + " LIMIT $2"
		tab, n, last, err := s.loadRows(ctx, tc, t, q, after, pageRows)
		if err != nil {
			return fmt.Errorf("read %s (table %s) from %s: %w", tc.Name, t.name, s.url, err)
		}
		if len(tab.Records) > 0 {
			if err := each(tab); err != nil {
				return err
			}
		}
		if n < pageRows {
			return nil
		}
		after = last
	}
}

// progressEvery is how many rows a load reads between two reports of its progress
// (model.WithLoadProgress).
const progressEvery = 1000

func (s *Store) loadTable(ctx context.Context, tc model.TabConfig, t table, q string, args ...any) (*model.Table, error) {
	tab, _, _, err := s.loadRows(ctx, tc, t, q, args...)
	return tab, err
}

// loadRows is loadTable that also says how many rows the query returned (empty ones too) and
// the last one's row number.
func (s *Store) loadRows(ctx context.Context, tc model.TabConfig, t table, q string, args ...any) (*model.Table, int, int64, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	data := [][]any{headers(tc.Role)}
	var rowNos []int64
	scanned, last := 0, int64(0)
	for rows.Next() {
		cells, no, err := scanRow(rows, len(t.fields))
		if err != nil {
			return nil, 0, 0, err
		}
		scanned, last = scanned+1, no
		if emptyRow(cells) {
			// model.Decode skips an empty row, as a sheet's; keep the numbering in step.
			continue
		}
		data = append(data, cells)
		rowNos = append(rowNos, no)
		if len(rowNos)%progressEvery == 0 {
			// The total isn't known until the last row (a count would cost a second scan).
			model.ReportLoadProgress(ctx, tc.Name, len(rowNos), 0)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}
	model.ReportLoadProgress(ctx, tc.Name, len(rowNos), len(rowNos))
	tab, err := model.Decode(decodeConfig(tc), data, time.UTC)
	if err != nil {
		return nil, 0, 0, err
	}
	tab.Config = tc
	for i := range tab.Records {
		// The row number is the table's (row 1 being the header, as on a sheet), stable
		// across loads; writes find rows by identity, never by it.
		tab.Records[i].Row = int(rowNos[i]) + 1
	}
	return tab, scanned, last, nil
}

func scanRow(rows pgx.Rows, n int) ([]any, int64, error) {
	var no int64
	strs := make([]string, n)
	dest := make([]any, n+1)
	dest[0] = &no
	for i := range strs {
		dest[i+1] = &strs[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, 0, err
	}
	cells := make([]any, n)
	for i, v := range strs {
		cells[i] = fromDB(v)
	}
	return cells, no, nil
}

func emptyRow(cells []any) bool {
	for _, c := range cells {
		if c.(string) != "" {
			return false
		}
	}
	return true
}

// tabConfig returns the configured tab with a name (store.FindTab: exact, then
// case-insensitive).
func (s *Store) tabConfig(name string) (model.TabConfig, bool) { return store.FindTab(s.tabs, name) }

// tabNames lists the configured tabs for an error (store.TabNames).
func (s *Store) tabNames() string { return store.TabNames(s.tabs) }

// stamp is one Apply's triaged_at (model.Stamper: each Apply's its own).
func (s *Store) stamp() string { return s.stamps.Stamp(s.now()) }
