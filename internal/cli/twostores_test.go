package cli

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/store/storetest"
)

// The tests that need both stores at once: a sheet carried into a database (Import, as
// `triage migrate` runs it) and read back alike, and the two stores' write-back side by
// side. The store contract both keep is store/storetest's, run from each store's own tests.

// Import carries a sheet's tabs into the tables: the same records load from both (IDs, keys,
// cells), a row without an identity is reported with why, the sheet is left as it was, and
// running it again adds nothing.
func TestImportCarriesTheSheet(t *testing.T) {
	sheet := testbed.SheetBackend(t, map[model.Role][][]string{
		model.RoleInbox: {{"2026-02-03T09:00:00Z", "No ID", "", "", "new", "", "", ""}},
		model.RoleQueue: {{"j1", "dup", "", "pending", "", "", "", "", "", "", ""}},
	})
	from, err := sheet.OpenReadOnly(t).Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := migratedDB(t)
	st := openDB(t, url, postgres.Options{Tabs: storetest.Tabs(), History: true})
	for run := 1; run <= 2; run++ {
		for _, r := range model.Roles {
			var calls int
			rep, err := st.Import(t.Context(), from.Tab(r), func(done, total int) { calls++ })
			if err != nil {
				t.Fatal(err)
			}
			wantSkipped := map[model.Role]int{model.RoleInbox: 1, model.RoleQueue: 2}[r]
			carried := len(from.Tab(r).Records) - wantSkipped
			wantAdded, wantPresent := carried, 0
			if run == 2 {
				wantAdded, wantPresent = 0, carried
			}
			if rep.Added != wantAdded || rep.Present != wantPresent || len(rep.Skipped) != wantSkipped || calls != 1 {
				t.Fatalf("run %d %s: %+v (progress told %d times)", run, r, rep, calls)
			}
			for _, sk := range rep.Skipped {
				if sk.Row == 0 || !strings.Contains(sk.Why, "ID") {
					t.Errorf("skipped %+v", sk)
				}
			}
		}
	}
	to, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range model.Roles {
		var want []model.Record
		for _, rec := range from.Tab(r).Records {
			if rec.ID != "" {
				want = append(want, rec)
			}
		}
		got := to.Tab(r).Records
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", r, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Status != want[i].Status {
				t.Errorf("%s row %d: %s/%s, want %s/%s", r, i, got[i].ID, got[i].Status, want[i].ID, want[i].Status)
			}
			if r != model.RoleDeadLetter && !slices.Equal(got[i].Cells, want[i].Cells) {
				t.Errorf("%s %s: cells %q, want %q", r, got[i].ID, got[i].Cells, want[i].Cells)
			}
		}
	}
	// The keyless dead letter keeps the key a replay would have minted from the sheet.
	if k := to.Tab(model.RoleDeadLetter).Records[2]; k.KeyOrigin != model.KeyCell || k.ID != from.Tab(model.RoleDeadLetter).Records[2].ID {
		t.Errorf("minted key: %+v", k)
	}
}

// hostileCells is cell text a sheet holds and PostgreSQL's text can't, or that an escape could
// confuse: NUL (the demo's "Bell Ringer" message holds one), the codec's own escape character
// alone and doubled and before a "0", every other C0 control, bidi overrides, a 50,000-character
// payload.
var hostileCells = []string{
	"Bell\x00Ringer", "\x00", "tail\x00", "\x10", "\x100", "\x10\x10", "a\x10\x00b",
	"\x01\x02\x03\x07\x08\x0b\x0c\x0e\x1b[2J\x1f\x7f", "\u202eevil\u202c", strings.Repeat("\x00é", 25000),
}

// Every cell reaches the database and comes back byte for byte, by every path that writes one
// (migrate's import, a conditional write, the dead-letter sink) and every path that reads one
// (a load, a write's locating read, a lease of the row's key): a batch is never refused for a
// NUL, and a write that expects a NUL-holding cell finds it.
func TestHostileCellsCarriedExactly(t *testing.T) {
	var inbox, dead [][]string
	for i, v := range hostileCells {
		id := "h" + strconv.Itoa(i)
		inbox = append(inbox, []string{"2026-02-03T09:00:00Z", v, "x@example.com", v, "new", id, "", ""})
		dead = append(dead, []string{"2026-02-03T09:00:00Z", "crm", "https://crm.example/in", v, v, "1", "POST", "k" + strconv.Itoa(i) + "\x00", "dead", "", "", ""})
	}
	sheet := testbed.SheetBackend(t, map[model.Role][][]string{model.RoleInbox: inbox, model.RoleDeadLetter: dead})
	from, err := sheet.OpenReadOnly(t).Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := migratedDB(t)
	st := openDB(t, url, postgres.Options{Tabs: storetest.Tabs(), History: true, Actor: "tester", Now: storetest.Clock})
	for _, r := range []model.Role{model.RoleInbox, model.RoleDeadLetter} {
		rep, err := st.Import(t.Context(), from.Tab(r), nil)
		if err != nil {
			t.Fatalf("import %s: %v", r, err)
		}
		if len(rep.Skipped) != 0 {
			t.Errorf("import %s skipped %+v", r, rep.Skipped)
		}
	}
	to, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []model.Role{model.RoleInbox, model.RoleDeadLetter} {
		want, got := from.Tab(r), to.Tab(r)
		if len(got.Records) != len(want.Records) {
			t.Fatalf("%s: %d rows on the database, %d on the sheet", r, len(got.Records), len(want.Records))
		}
		for i := range want.Records {
			w, g := &want.Records[i], &got.Records[i]
			for _, f := range []model.Field{model.FName, model.FMessage, model.FPayload, model.FError, model.FKey} {
				if !want.Header.Has(f) {
					continue
				}
				if f == model.FKey && want.Get(w, f) == "" {
					continue // a row without a key: migrate stores the one it has now
				}
				if a, b := want.Get(w, f), got.Get(g, f); a != b {
					t.Errorf("%s row %s %s: the database reads %q, the sheet %q", r, w.ID, f, clipCell(b), clipCell(a))
				}
			}
			if w.ID != g.ID {
				t.Errorf("%s: identity %q on the sheet, %q on the database", r, w.ID, g.ID)
			}
		}
	}

	// A conditional write expecting a NUL-holding cell, and writing one.
	tab := to.Tab(model.RoleInbox)
	rec := &tab.Records[tab.Index("h0")]
	res, err := st.Apply(t.Context(), []model.Edit{{Tab: tab.Config.Name, ID: "h0",
		Expect: map[model.Field]string{model.FMessage: tab.Get(rec, model.FMessage)},
		Set:    map[model.Field]string{model.FStatus: "done", model.FName: "Bell\x00Ringer, answered"}}})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("a write expecting a NUL cell: %+v %v", res, err)
	}
	// A dead letter whose payload and error hold NULs, and a replay lease of a NUL key.
	if err := st.DeadLetter(t.Context(), []model.DeadLetter{{Timestamp: time.Date(2026, 2, 4, 0, 0, 0, 0, time.UTC), Source: "crm",
		URL: "https://crm.example/in", Payload: `{"note":"a\u0000b"}` + "\x00", Error: "503\x00", Attempts: 1, Key: "sink\x00key"}}); err != nil {
		t.Fatalf("a dead letter with NULs: %v", err)
	}
	l, err := st.Lease(t.Context(), "failed_calls", []string{"k0\x00", "sink\x00key"})
	if err != nil || len(l.Taken) != 2 || l.Taken[0] != "k0\x00" {
		t.Fatalf("lease of NUL keys: %+v %v", l, err)
	}
	if err := st.Release(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	again, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := again.Tab(model.RoleInbox)
	if got := in.Get(&in.Records[in.Index("h0")], model.FName); got != "Bell\x00Ringer, answered" {
		t.Errorf("written NUL name reads %q", got)
	}
	dl := again.Tab(model.RoleDeadLetter)
	i := dl.Index("sink\x00key")
	if i < 0 {
		t.Fatalf("the dead letter with a NUL key is not found by it")
	}
	if got := dl.Get(&dl.Records[i], model.FPayload); got != `{"note":"a\u0000b"}`+"\x00" {
		t.Errorf("dead letter payload reads %q", got)
	}
}

func clipCell(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// A time is the same instant on both stores: a sheet in Europe/Berlin holds serial numbers
// and zone-less text (read in its zone), across both DST changes, and times that name their
// zone; once migrated, every row's time on the database is the sheet's instant, and a claim
// is stale on the database exactly when it is on the sheet.
func TestMigratedTimesAreTheSameInstant(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	now := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC) // the day summer time begins
	serial := func(tm time.Time) float64 { return model.TimeToSerial(tm, berlin) }
	inbox := [][]any{toAny(storetest.SchemaHeaders(model.RoleInbox)),
		{serial(time.Date(2026, 1, 15, 4, 10, 0, 0, berlin)), "Sofia Rossi", "s@example.it", "winter", "new", "m1"},
		{serial(time.Date(2026, 7, 15, 4, 10, 0, 0, berlin)), "Summer", "s@example.it", "summer", "new", "m2"},
		{"2026-03-29 01:59", "Before the change", "b@example.com", "zone-less", "new", "m3"},
		{"2026-10-25 03:30", "After the change back", "a@example.com", "zone-less", "new", "m4"},
		{"2026-02-01T09:00:00Z", "Zoned", "z@example.com", "RFC 3339", "new", "m5"},
		{"2026-02-01T09:00:00+05:30", "Offset", "o@example.com", "RFC 3339", "new", "m6"},
	}
	jobs := [][]any{toAny(storetest.SchemaHeaders(model.RoleQueue)),
		{"j1", "t", "{}", "claimed", "w1", serial(now.Add(-40 * time.Minute)), "", "", "1"},
		{"j2", "t", "{}", "claimed", "w1", serial(now.Add(-20 * time.Minute)), "", "", "1"},
	}
	emu := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: "tz", Title: "tz", TimeZone: "Europe/Berlin", Sheets: []*emulator.Sheet{
		{Title: model.DefaultTabName(model.RoleInbox), Rows: inbox}, {Title: model.DefaultTabName(model.RoleQueue), Rows: jobs}}})
	sheetTabs := []model.TabConfig{model.DefaultTabConfig(model.RoleInbox), model.DefaultTabConfig(model.RoleQueue)}
	sh := emu.Store(sheets.Options{SpreadsheetID: "tz", Tabs: sheetTabs, ReadOnly: true})
	from, err := sh.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := migratedDB(t)
	st := openDB(t, url, postgres.Options{Tabs: storetest.Tabs(), History: true, Now: func() time.Time { return now }})
	for _, r := range []model.Role{model.RoleInbox, model.RoleQueue} {
		if _, err := st.Import(t.Context(), from.Tab(r), nil); err != nil {
			t.Fatal(err)
		}
	}
	to, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []model.Role{model.RoleInbox, model.RoleQueue} {
		a, b := from.Tab(r), to.Tab(r)
		for i := range a.Records {
			j := b.Index(a.Records[i].ID)
			if j < 0 {
				t.Fatalf("%s %s not on the database", r, a.Records[i].ID)
			}
			for _, f := range []model.Field{model.FTimestamp, model.FClaimedAt} {
				if !a.Header.Has(f) {
					continue
				}
				x, okA := model.ParseTime(a.Get(&a.Records[i], f), a.Location)
				y, okB := model.ParseTime(b.Get(&b.Records[j], f), b.Location)
				if okA != okB || !x.Equal(y) {
					t.Errorf("%s %s %s: %v on the sheet (%q), %v on the database (%q)", r, a.Records[i].ID, f,
						x, a.Get(&a.Records[i], f), y, b.Get(&b.Records[j], f))
				}
			}
		}
	}
	req, err := st.RequeueStale(t.Context(), 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(req) != 1 || req[0].ID != "j1" {
		t.Errorf("requeued on the database: %+v, want j1 alone (stale on the sheet: 40 minutes, not 20)", req)
	}
}

// BenchmarkWriteBackSheetVsPostgres (here, where both stores may be imported) is a replay's write-back of 1,000 outcomes in one Apply,
// on the same 10,000 dead letters, side by side in one run, alternately, over a network
// shaped by a proxy (internal/netshape: 0, 2 and 20 ms round trips): the postgres store; its
// reference, a pgx.Batch of the same 1,000 conditional UPDATEs in one transaction (BEGIN, the
// batch, COMMIT), on its own copy of the rows; and the sheet store on the emulator over HTTP
// as triage talks to Google (streaming reads, the journal). It also loads the tab on both
// stores. It reports each side's ms per op and the ratios, the claims: x-batch (postgres ÷
// the batch) and x-write (postgres ÷ sheet); the absolute times are this machine's.
func BenchmarkWriteBackSheetVsPostgres(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchWriteBack(b, rtt) })
	}
}

func benchWriteBack(b *testing.B, rtt time.Duration) {
	ctx := context.Background()
	url := deadLetterDB(b, 10_000, 10_000)
	refURL := deadLetterDB(b, 10_000, 10_000)
	pg, err := postgres.Open(ctx, pgtest.Through(b, url, &netshape.Shaper{RTT: rtt}), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	ref, err := pgx.Connect(ctx, pgtest.Through(b, refURL, &netshape.Shaper{RTT: rtt}))
	if err != nil {
		b.Fatal(err)
	}
	defer ref.Close(ctx)
	wb, err := pg.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	rows := [][]any{toAny(tab.Header.Headers)}
	for _, r := range tab.Records {
		rows = append(rows, toAny(r.Cells))
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "ratio", Title: "ratio", Sheets: []*emulator.Sheet{{Title: tab.Config.Name, Rows: rows}}})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	addr, stop, err := netshape.Start(&netshape.Shaper{RTT: rtt}, srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{Endpoint: "http://" + addr})
	if err != nil {
		b.Fatal(err)
	}
	sh := sheets.New(ctx, conn.Sheets, sheets.Options{SpreadsheetID: "ratio", Tabs: []model.TabConfig{tab.Config}, HTTPClient: conn.HTTP})
	defer sh.Close(ctx)

	type store interface {
		Load(context.Context) (*model.Workbook, error)
		Apply(context.Context, []model.Edit) (model.ApplyResult, error)
	}
	// Each side keeps its own attempts count, so every edit expects what that side holds.
	attempts := map[string]map[string]int{"sheet": {}, "postgres": {}, "batch": {}}
	outcomes := func(name string, i int) []model.Edit {
		edits := make([]model.Edit, 1000)
		for j := range edits {
			r := &tab.Records[(i*1000+j)%len(tab.Records)]
			n := attempts[name][r.ID]
			expect := tab.Get(r, model.FAttempts)
			if n > 0 {
				expect = fmt.Sprint(n)
			}
			edits[j] = model.Edit{Tab: tab.Config.Name, ID: r.ID,
				Expect: map[model.Field]string{model.FAttempts: expect},
				Set: map[model.Field]string{model.FAttempts: fmt.Sprint(n + 100), model.FError: "", model.FStatus: "dead",
					model.FReplayedAt: model.FormatTime(time.Unix(int64(i), 0))}}
			attempts[name][r.ID] = n + 100
		}
		return edits
	}
	writeBack := func(name string, st store, i int) time.Duration {
		edits := outcomes(name, i)
		start := time.Now()
		res, err := st.Apply(ctx, edits)
		d := time.Since(start)
		if err != nil || len(res.Applied) != 1000 {
			b.Fatalf("%s: %d applied, %d conflicts: %v", name, len(res.Applied), len(res.Conflicts), err)
		}
		return d
	}
	// The reference: what a hand-written client that knows the rows' keys would send, the
	// same conditional UPDATEs pipelined in one batch, in one transaction.
	batch := func(i int) time.Duration {
		edits := outcomes("batch", i)
		start := time.Now()
		tx, err := ref.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		bt := &pgx.Batch{}
		for _, e := range edits {
			bt.Queue(`UPDATE failed_calls SET attempts = $1, error = $2, status = $3, replayed_at = $4, triaged_by = $5, triaged_at = $6
WHERE "key" = $7 AND attempts = $8`, e.Set[model.FAttempts], e.Set[model.FError], e.Set[model.FStatus], e.Set[model.FReplayedAt],
				"bench", "2026-03-01T12:00:00Z", e.ID, e.Expect[model.FAttempts])
		}
		br := tx.SendBatch(ctx, bt)
		for range edits {
			tag, err := br.Exec()
			if err != nil || tag.RowsAffected() != 1 {
				b.Fatalf("batch: %v (%d rows)", err, tag.RowsAffected())
			}
		}
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	load := func(st store) time.Duration {
		start := time.Now()
		wb, err := st.Load(ctx)
		d := time.Since(start)
		if err != nil || len(wb.Tab(model.RoleDeadLetter).Records) != 10_000 {
			b.Fatalf("load: %v", err)
		}
		return d
	}
	load(sh)
	load(pg)
	var pgWrite, shWrite, batchWrite, pgLoad, shLoad time.Duration
	for i := 0; b.Loop(); i++ {
		pgWrite += writeBack("postgres", pg, i)
		batchWrite += batch(i)
		shWrite += writeBack("sheet", sh, i)
		pgLoad += load(pg)
		shLoad += load(sh)
	}
	n := float64(b.N)
	b.ReportMetric(float64(shWrite.Milliseconds())/n, "ms-sheet-write/op")
	b.ReportMetric(float64(pgWrite.Milliseconds())/n, "ms-pg-write/op")
	b.ReportMetric(float64(batchWrite.Milliseconds())/n, "ms-batch-write/op")
	b.ReportMetric(float64(pgWrite)/float64(batchWrite), "x-batch")
	b.ReportMetric(float64(pgWrite)/float64(shWrite), "x-write")
	b.ReportMetric(float64(shLoad.Milliseconds())/n, "ms-sheet-load/op")
	b.ReportMetric(float64(pgLoad.Milliseconds())/n, "ms-pg-load/op")
	b.ReportMetric(float64(pgLoad)/float64(shLoad), "x-load")
}

// deadLetterDB is a migrated database of the package's private server holding total dead
// letters, one in every total/open of them open (dead), the rest delivered.
func deadLetterDB(b *testing.B, total, open int) string {
	b.Helper()
	ctx := context.Background()
	url := pgtest.DB(b)
	if _, err := postgres.Migrate(ctx, url); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
INSERT INTO failed_calls ("timestamp", source, url, payload, error, attempts, method, "key", status)
SELECT to_char(timestamp '2026-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'crm',
       'https://example.com/hook', '{"order":' || g || ',"note":"a payload of a usual size, some forty bytes"}',
       CASE WHEN g % $2 = 0 THEN '503 from crm' ELSE '' END, '1', 'POST', 'k-' || g,
       CASE WHEN g % $2 = 0 THEN 'dead' ELSE 'delivered' END
FROM generate_series(1, $1::int) g`, total, total/open); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE failed_calls"); err != nil {
		b.Fatal(err)
	}
	return url
}

// toAny is a row of text as the emulator holds it.
func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
