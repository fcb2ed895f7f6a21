package postgres_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/store"
	"github.com/triage-dev/triage/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestStoreContract holds the postgres store to the store contract (store/storetest): every
// invariant both stores keep, each subtest on a fresh database of the package's private
// server, the random calls answered as the sheet store answered them.
func TestStoreContract(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Backend { return pgBackend(t) })
}

// now and clock are the stores' clock (storetest.Now).
var now = storetest.Now

func clock() time.Time { return now }

// seed is every backend's starting workbook (storetest.Seed).
func seed() map[model.Role][][]string { return storetest.Seed() }

// tabs is every role's tab under its default configuration.
func tabs() []model.TabConfig { return storetest.Tabs() }

func schemaHeaders(r model.Role) []string { return storetest.SchemaHeaders(r) }

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

// pgBackend is the postgres store over a fresh database of the package's private server,
// seeded with storetest.Seed, as store/storetest exercises it: another person's edits are
// UPDATEs on a connection of their own, a change between the read and the write is
// SetBeforeWrite's, a dead run is a killed store (its advisory lock freed with its
// connection), and an expired lease one whose until has passed.
func pgBackend(t *testing.T) storetest.Backend {
	t.Helper()
	url, conn := pgDB(t)
	for _, r := range model.Roles {
		insert(t, conn, r, seed()[r])
	}
	opts := postgres.Options{Tabs: tabs(), Actor: storetest.Actor, Now: clock, History: true}
	st := openStore(t, url, opts)
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
	return storetest.Backend{
		Name:        "postgres",
		Store:       st,
		ErrReadOnly: postgres.ErrReadOnly,
		OpenReadOnly: func(t *testing.T) store.Store {
			ro := opts
			ro.ReadOnly = true
			return openStore(t, url, ro)
		},
		Set: func(t *testing.T, r model.Role, id string, f model.Field, v string) {
			q := "UPDATE " + tableOf[r] + " SET " + pgx.Identifier{string(f)}.Sanitize() + " = $1 WHERE " + where(t, r, id)
			tag, err := conn.Exec(context.Background(), q, v)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("set %s %s %s: %v (%d rows)", r, id, f, err, tag.RowsAffected())
			}
		},
		Row: func(t *testing.T, r model.Role, id string) map[model.Field]string {
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
		Between: func(f func()) {
			var done bool
			st.SetBeforeWrite(func() {
				if !done {
					done = true
					f()
				}
			})
		},
		Runner: func(t *testing.T, actor string) store.Leaser {
			return openStore(t, url, postgres.Options{Tabs: tabs(), Actor: actor})
		},
		DeadRunner: func(t *testing.T, actor string) store.Leaser {
			st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs(), Actor: actor})
			if err != nil {
				t.Fatal(err)
			}
			return dyingStore{st}
		},
		Expire: func(t *testing.T) {
			if _, err := conn.Exec(t.Context(), `UPDATE replay_leases SET until = now() - interval '1 second'`); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// dyingStore is a postgres store whose process dies right after its Lease: its connections
// close, and with them the run's advisory lock.
type dyingStore struct{ *postgres.Store }

func (d dyingStore) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	l, err := d.Store.Lease(ctx, tab, keys)
	postgres.Kill(d.Store)
	return l, err
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func itoa(i int) string { return strconv.Itoa(i) }

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
