package postgres_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

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
	inbox := [][]any{toAny(schemaHeaders(model.RoleInbox)),
		{serial(time.Date(2026, 1, 15, 4, 10, 0, 0, berlin)), "Sofia Rossi", "s@example.it", "winter", "new", "m1"},
		{serial(time.Date(2026, 7, 15, 4, 10, 0, 0, berlin)), "Summer", "s@example.it", "summer", "new", "m2"},
		{"2026-03-29 01:59", "Before the change", "b@example.com", "zone-less", "new", "m3"},
		{"2026-10-25 03:30", "After the change back", "a@example.com", "zone-less", "new", "m4"},
		{"2026-02-01T09:00:00Z", "Zoned", "z@example.com", "RFC 3339", "new", "m5"},
		{"2026-02-01T09:00:00+05:30", "Offset", "o@example.com", "RFC 3339", "new", "m6"},
	}
	jobs := [][]any{toAny(schemaHeaders(model.RoleQueue)),
		{"j1", "t", "{}", "claimed", "w1", serial(now.Add(-40 * time.Minute)), "", "", "1"},
		{"j2", "t", "{}", "claimed", "w1", serial(now.Add(-20 * time.Minute)), "", "", "1"},
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "tz", Title: "tz", TimeZone: "Europe/Berlin", Sheets: []*emulator.Sheet{
		{Title: model.DefaultTabName(model.RoleInbox), Rows: inbox}, {Title: model.DefaultTabName(model.RoleQueue), Rows: jobs}}})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	sheetTabs := []model.TabConfig{model.DefaultTabConfig(model.RoleInbox), model.DefaultTabConfig(model.RoleQueue)}
	sh := sheets.New(context.Background(), svc, sheets.Options{SpreadsheetID: "tz", Tabs: sheetTabs, ReadOnly: true})
	from, err := sh.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	url, _ := pgDB(t)
	st := openStore(t, url, postgres.Options{Tabs: tabs(), History: true, Now: func() time.Time { return now }})
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
