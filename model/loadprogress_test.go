package model

import (
	"context"
	"testing"
)

func TestLoadProgressReachesTheFuncOfItsContext(t *testing.T) {
	var got []int
	ctx := WithLoadProgress(context.Background(), func(tab string, rows, total int) {
		if tab != "Inbox" || total != 10 {
			t.Errorf("tab %q total %d, want Inbox 10", tab, total)
		}
		got = append(got, rows)
	})
	ReportLoadProgress(ctx, "Inbox", 5, 10)
	ReportLoadProgress(ctx, "Inbox", 10, 10)
	ReportLoadProgress(context.Background(), "Inbox", 7, 10) // nobody asked: nothing, no panic
	if len(got) != 2 || got[0] != 5 || got[1] != 10 {
		t.Fatalf("reported %v, want [5 10]", got)
	}
}
