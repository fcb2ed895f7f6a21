package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/triage-dev/triage/sheets/emulator"
)

// listHostileWorkbook has a tab of each role whose cells are what makes a table hard to lay
// out and dangerous to print: escape sequences, bidi controls, C1 controls, NULs, newlines
// and tabs, wide characters, emoji with modifiers and joiners, combining marks, cells far
// past any terminal's width, a repeated ID and a blank one (rows with problems).
func listHostileWorkbook() *emulator.Workbook {
	long := strings.Repeat("a very long message that goes on ", 8)
	return &emulator.Workbook{SpreadsheetID: "s1", Title: "Hostile", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			{46000.5, "Ann", "ann@example.com", "hello, my order is late", "new", "m1"},
			{46000.6, "山田 太郎", "yamada@example.jp", "注文した商品がまだ届いていません。確認してください。", "new", "m2"},
			{46000.7, "Zoë", "zoe@example.com", "👍🏽 thanks 👨‍👩‍👧 the family loves it 🎉", "done", "m3"},
			{46000.8, "Eve\u202e", "e@x", "\x1b]0;pwned\x07c1 \u009b31m \x1b[2J nul\x00 bidi\u2066x\u2069 end", "new\x1b[2J\u0085", "m4\x1b[31m"},
			{46000.9, "Cafe\u0301", "cafe@example.com", "Re\u0301sume\u0301 attached:\nline two\tand a tab \\ backslash", "read", "m5"},
			{46001.0, "Long", "long@example.com", long, "new", "m6"},
			{46001.1, "Dup", "dup@example.com", "same ID as m1", "new", "m1"},
			{46001.2, "NoID", "noid@example.com", "this row has no ID", "new", ""},
		}},
		{Title: "failed_calls", Rows: [][]any{
			{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"},
			{46000.25, "warehouse", "https://warehouse.example.com/api/v2/stock/adjustments?sku=A-1&location=main", `{"sku":"A-1"}`, "rejected by receiver: 422 Unprocessable Entity: quantity must be positive", "2", "POST", "w1", "rejected"},
			{46000.26, "crm\u202e", "http://crm.example.com/\x1b[2Jcontacts", `{"email":"a@example.com"}`, "boom\x00\nsecond line", "1", "POST", "k1", "dead"},
		}},
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt"},
			{"j1", "sync", "{}", "error", "worker-1", "", "upstream said 500 Internal Server Error after 3 retries with backoff", ""},
			{"j2", "mail", "{}", "claimed", "worker-2\u0085", "2025-12-09T12:00:00Z", "", ""},
			{"0f8fad5b-d9cb-469f-a165-70867728950e", "sync", "{}", "pending", "", "", "", ""},
		}},
	}}
}

// listTabs are the tabs of listHostileWorkbook, one of each role.
var listTabs = []string{"Inbox", "failed_calls", "Jobs"}

// TestListPipedOutputUnchanged: with stdout not a terminal and no -o, `list` prints exactly
// what it printed before it learnt to fit a terminal (the golden file was written by that
// version): scripts that read the table keep working.
func TestListPipedOutputUnchanged(t *testing.T) {
	_, url := startEmu(t, listHostileWorkbook())
	c := newCLI(t, url)
	var out strings.Builder
	for _, tab := range listTabs {
		r := c.run("--spreadsheet", "s1", "list", "--tab", tab)
		if r.code != 0 {
			t.Fatalf("list --tab %s: exit %d\n%s", tab, r.code, r.stderr)
		}
		out.WriteString("$ triage list --tab " + tab + "\n" + r.stdout + "-- stderr --\n" + r.stderr)
	}
	golden.RequireEqual(t, out.String())
}
