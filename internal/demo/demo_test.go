package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

func TestDemoWorkbookIsFreshAndHostile(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	wb, err := Workbook(now)
	if err != nil {
		t.Fatal(err)
	}
	rows := wb.Sheets[0].Rows
	tb, err := model.Decode(model.DefaultTabConfig(model.RoleInbox), rows, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tb.Records); n < 55 || n > 70 {
		t.Errorf("%d demo messages, want ~60", n)
	}
	var newest time.Time
	var hostile, long, rtl, formula, emoji bool
	for _, r := range tb.Records {
		if r.Time.After(newest) {
			newest = r.Time
		}
		m := tb.Get(&r, model.FMessage)
		hostile = hostile || strings.Contains(m, "\x1b]52;")
		long = long || len(m) >= 20000
		rtl = rtl || strings.ContainsRune(m, 'م')
		formula = formula || strings.HasPrefix(m, "=")
		emoji = emoji || strings.Contains(m, "🔥")
	}
	if age := now.Sub(newest); age < 0 || age > 24*time.Hour {
		t.Errorf("newest demo message is %v old", age)
	}
	if !(hostile && long && rtl && formula && emoji) {
		t.Errorf("demo lacks a case: hostile=%v long=%v rtl=%v formula=%v emoji=%v", hostile, long, rtl, formula, emoji)
	}
}
