package cli

import (
	"context"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// benchInboxRows is a 100,000-row inbox like sheets.BenchmarkLoad100k's: the same tab the
// Node comparison in bench/node fetches (docs/BENCHMARKS.md).
func benchInboxRows(n int) [][]any {
	rows := make([][]any, 0, n+1)
	rows = append(rows, []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"})
	for i := 1; i <= n; i++ {
		s := strconv.Itoa(i)
		rows = append(rows, []any{45000.0 + float64(i)/24, "Person " + s, "p" + s + "@example.com", "hello " + s, "new", "m" + s})
	}
	return rows
}

// countWriter counts what `list` prints, for MB/s.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkList100k runs the real `triage list --tab Inbox` (settings, connect, load through
// the sheets/v4 client over HTTP from the emulator, filter, print through the sanitising
// writer) on a 100,000-row inbox, as text and as --json. MB/s is of what reaches stdout.
func BenchmarkList100k(b *testing.B) {
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "list100k", Title: "list100k", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: benchInboxRows(100_000)},
	}})
	srv := httptest.NewServer(emu)
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	vars := map[string]string{
		"SHEETS_EMULATOR_HOST": strings.TrimPrefix(srv.URL, "http://"),
		"XDG_CONFIG_HOME":      dir,
		"XDG_STATE_HOME":       dir,
		"HOME":                 dir,
	}
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"text", []string{"--spreadsheet", "list100k", "list", "--tab", "Inbox"}},
		{"json", []string{"--spreadsheet", "list100k", "list", "--tab", "Inbox", "--json"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			var out countWriter
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
			listOnce := func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				out.n = 0
				if code := run(ctx, mode.args, e); code != exitOK {
					b.Fatalf("exit %d", code)
				}
			}
			listOnce()
			b.SetBytes(out.n)
			for b.Loop() {
				listOnce()
			}
		})
	}
}

// BenchmarkListOutput100k is the printing half of `list` alone, on a decoded 100,000-row
// inbox, through the sanitising writer: the streamed table and JSON, and (as "before") the
// tabwriter table and the encoding/json document they replaced (refListTable, refListJSON).
func BenchmarkListOutput100k(b *testing.B) {
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleInbox), benchInboxRows(100_000), time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	recs := listRecords(tab)
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"text", func(w io.Writer) error { return writeListTable(w, tab, recs) }},
		{"json", func(w io.Writer) error { return writeListJSON(w, tab, recs) }},
		{"fitted-80", func(w io.Writer) error { _, err := writeListFitted(w, tab, recs, 80); return err }},
		{"wide", func(w io.Writer) error { return writeListWide(w, tab, recs) }},
		{"tsv", func(w io.Writer) error { return writeListTSV(w, tab, recs) }},
		{"text-tabwriter-before", func(w io.Writer) error { _, err := io.WriteString(w, refListTable(tab, recs)); return err }},
		{"json-encoding-json-before", func(w io.Writer) error { _, err := io.WriteString(w, refListJSON(tab, recs)); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out countWriter
			for b.Loop() {
				out.n = 0
				w := newSafeWriter(&out)
				if err := c.write(w); err != nil {
					b.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(out.n)
		})
	}
}
