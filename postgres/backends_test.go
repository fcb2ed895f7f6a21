package postgres_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// store is what both stores answer, as the TUI, the replay runner and the producer use them.
type store interface {
	Load(ctx context.Context) (*model.Workbook, error)
	Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error)
	ReadOnly() bool
	DeadLetter(ctx context.Context, letters []model.DeadLetter) error
}

// backend is a store over its real backend, and the means to act behind its back as another
// person would: the same invariant test body runs against each (the sheet store through the
// emulator over HTTP, the postgres store against the package's private server).
type backend struct {
	name  string
	store store
	// set writes one cell of the row with an identity directly, as another person would.
	set func(t *testing.T, role model.Role, id string, f model.Field, v string)
	// row reads the cells of the row with an identity as the backend holds them.
	row func(t *testing.T, role model.Role, id string) map[model.Field]string
	// between runs f once, between the store's next read and its write.
	between func(f func())
	// errReadOnly is the store's read-only error.
	errReadOnly error
}

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// seed is every backend's starting workbook: each tab with the schema's headers, as
// `triage init` makes them, and rows of text.
func seed() map[model.Role][][]string {
	return map[model.Role][][]string{
		model.RoleInbox: {
			// Timestamp, Name, Email, Message, Status, ID, triaged_by, triaged_at
			{"2026-02-01T09:00:00Z", "Ada", "ada@example.com", "hello", "new", "m1", "", ""},
			{"2026-02-01T10:00:00Z", "Bo", "bo@example.com", "=1+1", "new", "m2", "", ""},
			{"2026-02-01T11:00:00Z", "Cy", "cy@example.com", "bye", "read", "m3", "", ""},
		},
		model.RoleDeadLetter: {
			// timestamp, source, url, payload, error, attempts, method, key, status, replayed_at, triaged_by, triaged_at
			{"2026-02-02T09:00:00Z", "stripe", "https://example.com/hook", `{"n":1}`, "500", "3", "POST", "k1", "dead", "", "", ""},
			{"2026-02-02T10:00:00Z", "stripe", "https://example.com/hook", `{"n":2}`, "500", "3", "POST", "k2", "rejected", "", "", ""},
			{"2026-02-02T11:00:00Z", "stripe", "https://example.com/hook", `{"n":3}`, "timeout", "0", "POST", "", "dead", "", "", ""},
		},
		model.RoleQueue: {
			// id, type, payload, status, claimedBy, claimedAt, lastError, updatedAt, attempts, triaged_by, triaged_at
			{"j1", "email", `{"to":"a"}`, "pending", "", "", "", "", "0", "", ""},
			{"j2", "email", `{"to":"b"}`, "claimed", "w1", "2026-03-01T10:00:00Z", "", "", "1", "", ""},
			{"j3", "email", `{"to":"c"}`, "error", "w2", "2026-03-01T09:00:00Z", "boom", "", "1", "", ""},
		},
	}
}

func tabs() []model.TabConfig {
	var out []model.TabConfig
	for _, r := range model.Roles {
		out = append(out, model.DefaultTabConfig(r))
	}
	return out
}

func schemaHeaders(r model.Role) []string {
	var h []string
	for _, c := range model.SchemaFor(r).Columns {
		h = append(h, c.Header)
	}
	return h
}

// backends returns one fresh backend of each kind, seeded alike.
func backends(t *testing.T) []*backend {
	return []*backend{sheetBackend(t, false), pgBackend(t, false)}
}

func sheetBackend(t *testing.T, readOnly bool) *backend {
	return sheetWith(t, readOnly, nil)
}

// sheetWith is sheetBackend whose tabs also hold extra rows (cells in schema order).
func sheetWith(t *testing.T, readOnly bool, extra map[model.Role][][]string) *backend {
	t.Helper()
	wb := &emulator.Workbook{SpreadsheetID: "sheet1", Title: "triage"}
	for _, r := range model.Roles {
		rows := [][]any{toAny(schemaHeaders(r))}
		for _, row := range append(seed()[r], extra[r]...) {
			rows = append(rows, toAny(row))
		}
		wb.Sheets = append(wb.Sheets, &emulator.Sheet{Title: model.DefaultTabName(r), Rows: rows})
	}
	emu := emulator.New()
	emu.AddWorkbook(wb)
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	st := sheets.New(context.Background(), svc, sheets.Options{SpreadsheetID: "sheet1", Tabs: tabs(), ReadOnly: readOnly, Actor: "tester", Now: clock})
	find := func(t *testing.T, r model.Role, id string) (int, []any, model.HeaderMap) {
		t.Helper()
		cells := emu.Cells("sheet1", model.DefaultTabName(r))
		hdr := make([]string, len(cells[0]))
		for i, v := range cells[0] {
			hdr[i] = model.CellString(v)
		}
		hm, err := model.MapHeaders(model.DefaultTabConfig(r), hdr)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(cells); i++ {
			row := make([]string, len(hdr))
			for c := range row {
				if c < len(cells[i]) {
					row[c] = model.CellString(cells[i][c])
				}
			}
			if model.RowIdentity(model.DefaultTabConfig(r), hm, row) == id {
				return i + 1, cells[i], hm
			}
		}
		t.Fatalf("sheet: no %s row %q", r, id)
		return 0, nil, hm
	}
	return &backend{
		name:        "sheet",
		store:       st,
		errReadOnly: sheets.ErrReadOnly,
		set: func(t *testing.T, r model.Role, id string, f model.Field, v string) {
			row, _, hm := find(t, r, id)
			if err := emu.SetCell("sheet1", model.DefaultTabName(r), row, hm.Col(f), v); err != nil {
				t.Fatal(err)
			}
		},
		row: func(t *testing.T, r model.Role, id string) map[model.Field]string {
			_, cells, hm := find(t, r, id)
			out := map[model.Field]string{}
			for f, c := range hm.Index {
				if c < len(cells) {
					out[f] = model.CellString(cells[c])
				} else {
					out[f] = ""
				}
			}
			return out
		},
		between: func(f func()) {
			var done bool
			emu.SetHook(func(r emulator.Request) {
				if r.Method == "spreadsheets.batchUpdate" && !done {
					done = true
					f()
				}
			})
		},
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

var tableOf = map[model.Role]string{model.RoleInbox: "inbox", model.RoleDeadLetter: "failed_calls", model.RoleQueue: "jobs"}

// pgDB makes a migrated database and returns its URL and a direct connection to it.
func pgDB(t *testing.T) (string, *pgx.Conn) { return pgDBB(t) }

// pgDBB is pgDB for a test or a benchmark.
func pgDBB(t testing.TB) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.DB(t)
	if _, err := postgres.Migrate(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return url, conn
}

// insert adds rows (cells in schema order) to a role's table.
func insert(t testing.TB, conn *pgx.Conn, r model.Role, rows [][]string) {
	t.Helper()
	var cols, ph []string
	for i, c := range model.SchemaFor(r).Columns {
		cols = append(cols, pgx.Identifier{string(c.Field)}.Sanitize())
		ph = append(ph, "$"+itoa(i+1))
	}
	q := "INSERT INTO " + tableOf[r] + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")"
	for _, row := range rows {
		args := make([]any, len(row))
		for i, v := range row {
			args[i] = v
			if model.SchemaFor(r).Columns[i].Field == model.FKey && v == "" {
				args[i] = nil
			}
		}
		if _, err := conn.Exec(context.Background(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

func pgBackend(t *testing.T, readOnly bool) *backend {
	t.Helper()
	url, conn := pgDB(t)
	for _, r := range model.Roles {
		insert(t, conn, r, seed()[r])
	}
	st := openStore(t, url, postgres.Options{Tabs: tabs(), ReadOnly: readOnly, Actor: "tester", Now: clock, History: true})
	// where finds a row by identity as the store does: a dead letter by its effective key.
	where := func(t *testing.T, r model.Role, id string) string {
		if r != model.RoleDeadLetter {
			return "id = " + quote(id)
		}
		wb, err := st.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		tab := wb.Tab(r)
		i := tab.Index(id)
		if i < 0 {
			t.Fatalf("postgres: no %s row %q", r, id)
		}
		return "id = " + itoa(tab.Records[i].Row-1)
	}
	return &backend{
		name:        "postgres",
		store:       st,
		errReadOnly: postgres.ErrReadOnly,
		set: func(t *testing.T, r model.Role, id string, f model.Field, v string) {
			q := "UPDATE " + tableOf[r] + " SET " + pgx.Identifier{string(f)}.Sanitize() + " = $1 WHERE " + where(t, r, id)
			tag, err := conn.Exec(context.Background(), q, v)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("set %s %s %s: %v (%d rows)", r, id, f, err, tag.RowsAffected())
			}
		},
		row: func(t *testing.T, r model.Role, id string) map[model.Field]string {
			var cols []string
			fields := []model.Field{}
			for _, c := range model.SchemaFor(r).Columns {
				fields = append(fields, c.Field)
				cols = append(cols, "coalesce("+pgx.Identifier{string(c.Field)}.Sanitize()+"::text, '')")
			}
			vals := make([]string, len(cols))
			dest := make([]any, len(cols))
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := conn.QueryRow(context.Background(), "SELECT "+strings.Join(cols, ", ")+" FROM "+tableOf[r]+" WHERE "+where(t, r, id)).Scan(dest...); err != nil {
				t.Fatal(err)
			}
			out := map[model.Field]string{}
			for i, f := range fields {
				out[f] = vals[i]
			}
			return out
		},
		between: func(f func()) {
			var done bool
			st.SetBeforeWrite(func() {
				if !done {
					done = true
					f()
				}
			})
		},
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func itoa(i int) string { return strconv.Itoa(i) }

// forEach runs body against every backend, each a subtest.
func forEach(t *testing.T, body func(t *testing.T, b *backend)) {
	t.Helper()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { body(t, b) })
	}
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}

func runtimeGosched() { runtime.Gosched() }

// openStore opens the postgres store on url with opts, closed when the test ends.
func openStore(t testing.TB, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// openTracedStore is openStore whose connections report every statement to tracer.
func openTracedStore(t testing.TB, url string, opts postgres.Options, tracer pgx.QueryTracer) *postgres.Store {
	t.Helper()
	st, err := postgres.OpenTraced(t.Context(), url, opts, tracer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}
