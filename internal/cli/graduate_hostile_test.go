package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets/emulator"
)

// hostileTexts are cells a person, a form or a hostile sender may leave in a sheet: every
// control character, NUL and the database's own escape character (DLE) alone and in the
// sequences it escapes with, C1 controls, bidi overrides, a byte sequence that is no UTF-8 (a
// lone surrogate's), formulas and number-like text kept as text, padding, line ends.
func hostileTexts() []string {
	out := []string{"", "plain", "\x00", "a\x00b", "\x10", "\x100", "\x10\x10", "\x10\x100\x00", "\u0085\u009b31m",
		"\u202eevil\u202c", "\u2066iso\u2069", "\ufeffbom", "\xed\xa0\x80", "😀 e\u0301", "=1+1", "'quoted", "+SUM(A1:A2)",
		"@x", "  padded  ", "line\r\nend", "007", "1e21", "TRUE"}
	for c := 1; c < 0x20; c++ {
		out = append(out, fmt.Sprintf("c%c%02x", rune(c), c))
	}
	return append(out, "del\x7f")
}

// hostileWorkbook is every tab of the schema filled with hostile cells, numbers and booleans
// as the API gives them, huge cells, and times in the spreadsheet's zone (serial numbers and
// zone-less text) on both sides of its DST changes, beside times that name their zone.
func hostileWorkbook(zone string) *emulator.Workbook {
	loc, _ := time.LoadLocation(zone)
	serial := func(y int, mo time.Month, d, h, mi int) float64 {
		wall := time.Date(y, mo, d, h, mi, 0, 0, time.UTC) // the sheet's serial is its wall clock
		return float64(wall.Unix())/86400 + 25569
	}
	var times []any
	for _, d := range []struct {
		mo     time.Month
		day, h int
	}{{3, 8, 1}, {3, 8, 3}, {3, 29, 1}, {3, 29, 3}, {10, 25, 1}, {10, 25, 2}, {11, 1, 1}, {11, 1, 2}, {7, 1, 12}} {
		times = append(times, serial(2026, d.mo, d.day, d.h, 30))
		times = append(times, fmt.Sprintf("2026-%02d-%02d %02d:30:00", d.mo, d.day, d.h))
	}
	times = append(times, "2026-03-29T02:30:00+02:00", "2026-11-01T01:30:00-05:00", time.Date(2026, 6, 1, 8, 0, 0, 0, loc).Format(time.RFC3339), "not a time", "")
	texts := hostileTexts()
	huge := strings.Repeat("x\u202e\x00", 16_666) // 49,998 characters: Google holds 50,000 a cell
	cell := func(i int) any {
		switch i % 7 {
		case 3:
			return float64(i) / 4
		case 5:
			return i%2 == 0
		}
		return texts[i%len(texts)]
	}
	var inbox, calls, jobs [][]any
	inbox = append(inbox, []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"})
	calls = append(calls, []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"})
	jobs = append(jobs, []any{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"})
	for i := range 60 {
		msg := cell(i + 1)
		if i == 7 {
			msg = huge
		}
		inbox = append(inbox, []any{times[i%len(times)], cell(i), cell(i + 2), msg, []string{"new", "read", " New ", "replied"}[i%4], fmt.Sprintf("m%d%s", i, texts[i%len(texts)])})
		payload := any(fmt.Sprintf(`{"n":%d,"t":%q}`, i, texts[i%len(texts)]))
		if i == 9 {
			payload = `{"big":"` + strings.Repeat("y", 49_980) + `"}`
		} else if i%6 == 0 {
			payload = cell(i) // not JSON
		}
		key := any(fmt.Sprintf("k%d-%s", i, texts[i%len(texts)]))
		if i%5 == 0 {
			key = "" // its key is its source's: the payload's n field, or minted
		}
		calls = append(calls, []any{times[(i+3)%len(times)], "crm", "https://crm.example/v1/" + texts[i%len(texts)], payload, cell(i + 3), float64(i % 4), "POST", key,
			[]string{"dead", "rejected", "Dead"}[i%3], times[(i+5)%len(times)]})
		jobs = append(jobs, []any{fmt.Sprintf("j%d%s", i, texts[(i+1)%len(texts)]), cell(i), cell(i + 4), []string{"pending", "claimed", "error", ""}[i%4], cell(i + 1),
			times[(i+7)%len(times)], cell(i + 5), times[(i+2)%len(times)], float64(i % 3)})
	}
	return &emulator.Workbook{SpreadsheetID: "hostile", Title: "hostile", TimeZone: zone, Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inbox}, {Title: "failed_calls", Rows: calls}, {Title: "Jobs", Rows: jobs},
	}}
}

// A generated hostile workbook graduates exactly, in two time zones: migrate carries every
// row (and proves it), then `list --json` of every tab reads the same on the sheet and on the
// database, row for row: the same rows, IDs and keys, statuses and times, every cell byte for
// byte, a time cell as the same instant (the database holds it in RFC 3339 UTC). Two cells
// differ by design, and migrate says so: an ID or key cell is carried as the identity (the
// cell trimmed), and an empty key cell as the key a replay sends from the sheet.
func TestGraduateAHostileWorkbook(t *testing.T) {
	for _, zone := range []string{"Europe/Berlin", "America/New_York"} {
		t.Run(strings.ReplaceAll(zone, "/", "_"), func(t *testing.T) {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			db := pgtest.DB(t)
			_, url := startEmu(t, hostileWorkbook(zone))
			c := newCLI(t, url)
			c.env["TRIAGE_SPREADSHEET"] = "hostile"
			cfg := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(cfg, []byte("[sources.crm]\nurl_prefixes = [\"https://crm.example/v1/\"]\nkey = \"body:n\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c.env["TRIAGE_CONFIG"] = cfg
			if r := c.run("init", "--database-url", db); r.code != 0 {
				t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r := c.run("migrate", "--to", db)
			for _, want := range []string{"Inbox → inbox: verified: 60 of 60 rows", "failed_calls → failed_calls: verified: 60 of 60 rows", "Jobs → jobs: verified: 60 of 60 rows"} {
				if r.code != 0 || !strings.Contains(r.stdout, want) {
					t.Fatalf("migrate: exit %d, want %q\n%s%s", r.code, want, r.stdout, r.stderr)
				}
			}
			if !strings.Contains(r.stdout, "1 row carried without the spaces around its key cell (the identity is the cell trimmed): 20") {
				t.Errorf("migrate doesn't name the row whose key cell was trimmed:\n%s", r.stdout)
			}
			for _, tab := range []string{"inbox", "deadletter", "queue"} {
				sheet := listDoc(t, c, "list", "--tab", tab, "--json")
				base := listDoc(t, c, "list", "--tab", tab, "--json", "--database-url", db)
				if len(sheet.Rows) != 60 || len(base.Rows) != 60 {
					t.Fatalf("%s: %d rows on the sheet, %d on the database; want 60 each", tab, len(sheet.Rows), len(base.Rows))
				}
				for i := range sheet.Rows {
					if d := rowDifference(sheet.Rows[i], base.Rows[i], loc); d != "" {
						t.Errorf("%s row %d: %s", tab, i, d)
					}
				}
			}
		})
	}
}

// listed is `list --json`'s document.
type listed struct {
	Rows []listedRow `json:"rows"`
}

type listedRow struct {
	Row    int               `json:"row"`
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Time   string            `json:"time"`
	Fields map[string]string `json:"fields"`
}

func listDoc(t *testing.T, c *cli, args ...string) listed {
	t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
	}
	var doc listed
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, r.stdout)
	}
	return doc
}

// timeHeaders are the columns holding times: a cell whose reading depends on the sheet's
// zone is carried as that instant in UTC, so it is compared as an instant.
var timeHeaders = map[string]bool{"Timestamp": true, "timestamp": true, "claimedAt": true, "updatedAt": true, "replayed_at": true}

// rowDifference says how a row listed from the database differs from the sheet's (whose
// zone is loc), or "".
func rowDifference(sheet, base listedRow, loc *time.Location) string {
	if sheet.Row != base.Row || sheet.ID != base.ID || sheet.Status != base.Status || sheet.Time != base.Time {
		return fmt.Sprintf("sheet row %d %q %q %q, database row %d %q %q %q", sheet.Row, sheet.ID, sheet.Status, sheet.Time, base.Row, base.ID, base.Status, base.Time)
	}
	for h, sv := range sheet.Fields {
		dv := base.Fields[h]
		switch h {
		case "ID", "id":
			sv = strings.TrimSpace(sv) // the identity: spaces around an ID are not carried (migrate says so)
		case "key":
			if sv = strings.TrimSpace(sv); sv == "" {
				sv = sheet.ID // the key a replay sends from the sheet, which the database keeps
			}
		}
		if sv == dv {
			continue
		}
		if timeHeaders[h] {
			st, okS := model.ParseTime(sv, loc)
			dt, okD := model.ParseTime(dv, time.UTC)
			if okS && okD && st.Equal(dt) {
				continue
			}
		}
		return fmt.Sprintf("%s: %q on the sheet, %q on the database", h, clipText(sv, 60), clipText(dv, 60))
	}
	for h, dv := range base.Fields {
		if _, ok := sheet.Fields[h]; !ok && dv != "" {
			return fmt.Sprintf("%s: %q on the database, no such column on the sheet", h, clipText(dv, 60))
		}
	}
	return ""
}
