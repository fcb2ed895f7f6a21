package model

import (
	"fmt"
	"testing"
	"time"
)

// inboxRows builds n inbox rows as the API returns them under UNFORMATTED_VALUE.
func inboxRows(n int) [][]any {
	rows := make([][]any, 0, n+1)
	rows = append(rows, []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"})
	statuses := []any{"new", "read", "", "done", "spam"}
	for i := 0; i < n; i++ {
		rows = append(rows, []any{
			45000 + float64(i)/100, fmt.Sprintf("Person %d", i), fmt.Sprintf("p%d@example.com", i),
			fmt.Sprintf("Hello, this is message number %d about a quote for a website redesign.", i),
			statuses[i%len(statuses)], fmt.Sprintf("id-%08d", i),
		})
	}
	return rows
}

func BenchmarkDecode100k(b *testing.B) {
	rows := inboxRows(100_000)
	tc := DefaultTabConfig(RoleInbox)
	b.ReportAllocs()
	for b.Loop() {
		t, err := Decode(tc, rows, time.UTC)
		if err != nil || len(t.Records) != 100_000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilter100k(b *testing.B) {
	benchFilter(b, "status:new redesign 99")
}

// BenchmarkFilterOr100k is the new syntax on the same rows: OR alternatives, a quoted phrase
// and a negated OR term.
func BenchmarkFilterOr100k(b *testing.B) {
	benchFilter(b, `status:new|re "website redesign" !spam|done 99|77`)
}

// benchFilter matches query against 100,000 decoded inbox rows, b.N times.
func benchFilter(b *testing.B, query string) {
	t, _ := Decode(DefaultTabConfig(RoleInbox), inboxRows(100_000), time.UTC)
	hay := make([]string, len(t.Records))
	for i := range t.Records {
		hay[i] = Haystack(&t.Records[i])
	}
	m := ParseFilter(query).Bind(t)
	for b.Loop() {
		n := 0
		for i := range t.Records {
			if m.Match(&t.Records[i], hay[i]) {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no match")
		}
	}
}
