package postgres_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// requeueClaims are claims of every kind model.Requeue tells apart: stale, fresh and at the
// threshold, in every time form model.ParseTime reads and many it doesn't, under statuses
// that are and aren't a claim.
func requeueClaims(now time.Time) [][2]string {
	ago := func(d time.Duration) string { return model.FormatTime(now.Add(-d)) }
	serial := func(d time.Duration) string {
		return strconv.FormatFloat(model.TimeToSerial(now.Add(-d), time.UTC), 'f', -1, 64)
	}
	var claims [][2]string
	add := func(status string, times ...string) {
		for _, tm := range times {
			claims = append(claims, [2]string{status, tm})
		}
	}
	// RFC 3339 around each threshold the test uses (30m, 45m, 2h).
	for _, d := range []time.Duration{10 * time.Minute, 30 * time.Minute, 45 * time.Minute, 2 * time.Hour} {
		add("claimed", ago(d-time.Second), ago(d), ago(d+time.Second))
		add("claimed", now.Add(-d).Add(-500*time.Millisecond).Format(time.RFC3339Nano), now.Add(-d).Add(500*time.Millisecond).Format(time.RFC3339Nano))
		add("claimed", now.Add(-d-time.Second).In(time.FixedZone("", 2*3600)).Format(time.RFC3339))
		add("claimed", serial(d-time.Minute), serial(d+time.Minute))
	}
	add("claimed",
		// Zone-less forms, read as UTC (now is 2026-03-01 12:00 UTC).
		"2026-03-01T11:00:00", "2026-03-01T11:31:00", "2026-03-01T11:00", "2026-03-01 11:00:00", "2026-03-01   11:40",
		"2026-03-01 11:00:00.25", "2026-03-01", "2026-02-28", "3/1/2026 11:00:00", "3/1/2026 11:45", "03/01/2026", "3/1/2026 9:00",
		"1 Mar 2026 11:00", "1 mar 2026 11:50", "Mar 1, 2026 11:00", "MAR 1, 2026 11:59",
		"Sun, 01 Mar 2026 11:00:00 +0000", "Sun, 01 Mar 2026 13:00:00 +0200", "Sun, 01 Mar 2026 11:50:00 -0100",
		"Sun, 01 Mar 2026 11:00:00 PST", "Sun, 01 Mar 2026 11:00:00 UTC", "Sun, 01 Mar 2026 11:00:00 GMT",
		"Sun, 01 Mar 2026 11:00:00 GMT+3", "Sun, 01 Mar 2026 11:00:00 CEST", "Sun, 01 Mar 2026 11:00:00 +03",
		"sun, 01 Mar 2026 11:00:00 ChST",
		// Go's parser beyond RFC 3339's letter.
		"2026-03-01T9:00:00Z", "2026-03-01T11:00:00,5Z", "2026-03-01T11:00:00+24:00", "2026-03-01T11:00:00.123456789Z",
		// White space Go trims, and the far past and future.
		" 2026-03-01T10:00:00Z\u00a0", "\t2026-03-01T10:00:00Z\u3000", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2027-01-01T00:00:00Z",
		// Serial numbers as text in other spellings.
		"46082", "4.6e4", "+46000.5", ".5", "2958465", "2958466", "1_000", "1_000.5_5", "1e1_0", "nan", "NaN",
		"0x1p-2", "0X_1P0", "0x1.8p1", "0x.8p1", "0xB3F2p-1", "-0x1p2",
		// Go's float syntax it refuses.
		"+nan", "inf", "-Infinity", "0x10", "0xp1", "0x_.8p1", "0x1_p0", "1__0", "_1", "1_", "1._5", "1_e5", "1e_5", "0b101",
		// Not times, for model or for Go.
		"", "soon", "now", "yesterday", "epoch", "allballs", "10:00", "2026/03/01 10:00", "2026-02-30T10:00:00Z",
		"2026-03-01T24:00:00Z", "2026-03-01T10:60:00Z", "2026-03-01T10:00:60Z", "2026-03-01T10:00:00z", "2026-03-01t10:00:00Z",
		"2026-03-01T10:00Z", "2026-03-01 10:00:00Z", "2026-03-01T10:00:00+25:00", "2026-03-01T10:00:00+0100", "0", "-5", "1e400", "0x1p99999",
		"13/1/2026", "2/30/2026", "1 March 2026 11:00", "Foo, 01 Mar 2026 11:00:00 GMT", "Sun, 01 Mar 2026 11:00:00 UTCX",
		"Sun, 01 Mar 2026 11:00:00 GMT+24", "Sun, 01 Mar 2026 11:00:00 ABCD", "Sun, 01 Mar 2026 11:00:00 -07:00", "Sun, 1 Mar 2026 11:00:00 GMT",
		"2026-03-01T10:00:00Z\u200b", "2026-03-01 T10:00",
	)
	// Statuses: a claim in any case and white space, and rows that aren't claims.
	old := ago(5 * time.Hour)
	add(" CLAIMED ", old)
	add("Claimed\u00a0", old)
	add("claimed\u200b", old)
	add("pending", old)
	add("", old)
	add("done", old)
	add("error", old)
	add("claim", old)
	return claims
}

// requeue-stale on a database is one statement (Store.RequeueStale, counted) whose staleness is
// model.Requeue's exactly: the same claims, stale, fresh, at the threshold and unreadable, go
// back to pending through both, under the default threshold, a tab's stale_after and an
// --older-than override.
func TestRequeueStaleIsModelRequeue(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	claims := requeueClaims(now)
	for _, staleAfter := range []time.Duration{0, 45 * time.Minute, 2 * time.Hour} {
		t.Run(fmt.Sprint(staleAfter), func(t *testing.T) {
			url, conn := pgDB(t)
			var rows [][]string
			for i, c := range claims {
				rows = append(rows, []string{fmt.Sprintf("j%03d", i), "t", "{}", c[0], "w", c[1], "", "", "1", "", ""})
			}
			insert(t, conn, model.RoleQueue, rows)
			tabs := tabs()
			for i := range tabs {
				if tabs[i].Role == model.RoleQueue {
					tabs[i].StaleAfter = staleAfter
				}
			}
			c := &counter{}
			st := openTracedStore(t, url, postgres.Options{Tabs: tabs, History: true, Now: func() time.Time { return now }}, c)
			wb, err := st.Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			jobs := wb.Tab(model.RoleQueue)
			if len(jobs.Records) != len(claims) {
				t.Fatalf("loaded %d jobs, want %d", len(jobs.Records), len(claims))
			}
			var want []string
			for i := range jobs.Records {
				if _, ok := model.Requeue(jobs, &jobs.Records[i], now); ok {
					want = append(want, jobs.Records[i].ID)
				}
			}
			before := c.n.Load()
			back, err := st.RequeueStale(t.Context(), jobs.Config.StaleAfter)
			if err != nil {
				t.Fatal(err)
			}
			if n := c.n.Load() - before; n != 1 {
				t.Errorf("RequeueStale sent %d statements, want 1", n)
			}
			var got []string
			for _, r := range back {
				got = append(got, r.ID)
			}
			if len(want) < 10 || len(want) > len(claims)-10 {
				t.Fatalf("the cases don't tell stale from fresh: %d of %d stale", len(want), len(claims))
			}
			if !slices.Equal(got, want) {
				for i, c := range claims {
					id := fmt.Sprintf("j%03d", i)
					if slices.Contains(got, id) != slices.Contains(want, id) {
						t.Errorf("status %q claimedAt %q: RequeueStale %v, model.Requeue %v", c[0], c[1], slices.Contains(got, id), slices.Contains(want, id))
					}
				}
			}
		})
	}
}
