package model

import (
	"testing"
	"time"
)

func TestAccessCheck(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	q, _ := Decode(DefaultTabConfig(RoleQueue), [][]any{
		{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		{"job-1", "email", "{}", "claimed", "w-1", "2025-06-01T10:00:00Z", "", "", "1"},
		{"job-2", "email", "{}", "error", "w-2", "2025-06-01T09:00:00Z", "boom", "", "3"},
	}, time.UTC)
	requeue, ok := Requeue(q, &q.Records[0], now)
	if !ok {
		t.Fatal("job-1 is a stale claim")
	}
	clear, ok := ClearError(q, &q.Records[1], now)
	if !ok {
		t.Fatal("job-2 is sticky")
	}
	status := SetStatus(q, &q.Records[1], "done")
	payload := Edit{Tab: "failed_calls", ID: "k", Expect: map[Field]string{FPayload: "{}"}, Set: map[Field]string{FPayload: `{"a":1}`}}
	writeBack := Edit{Tab: "failed_calls", ID: "k", Set: map[Field]string{FStatus: "delivered", FAttempts: "1", FReplayedAt: "x"}}
	url := Edit{Tab: "failed_calls", ID: "k", Set: map[Field]string{FURL: "https://evil.example/"}}
	message := Edit{Tab: "Inbox", ID: "m", Set: map[Field]string{FMessage: "edited"}}
	cases := []struct {
		a    Access
		e    Edit
		name string
		ok   bool
	}{
		{AccessViewer, status, "viewer status", false},
		{AccessViewer, clear, "viewer clear", false},
		{"", status, "no role", false},
		{AccessTriager, status, "triager status", true},
		{AccessTriager, clear, "triager clear error (releases the error job's claim)", true},
		{AccessTriager, requeue, "triager requeue", false},
		{AccessTriager, payload, "triager payload", false},
		{AccessTriager, writeBack, "triager write-back", false},
		{AccessTriager, url, "triager url (what a replay sends)", false},
		{AccessTriager, message, "triager message", false},
		{AccessOperator, url, "operator url", true},
		{AccessOperator, requeue, "operator requeue", true},
		{AccessOperator, payload, "operator payload", true},
		{AccessOperator, writeBack, "operator write-back", true},
	}
	for _, c := range cases {
		why := c.a.Check(c.e)
		if (why == "") != c.ok {
			t.Errorf("%s: Check = %q, want allowed=%v", c.name, why, c.ok)
		}
	}
	if AccessTriager.CanReplay() || !AccessOperator.CanReplay() || AccessViewer.CanWrite() || !AccessTriager.CanWrite() {
		t.Error("CanReplay/CanWrite")
	}
	for _, s := range []string{"viewer", " Operator ", "TRIAGER"} {
		if _, err := ParseAccess(s); err != nil {
			t.Errorf("ParseAccess(%q): %v", s, err)
		}
	}
	if _, err := ParseAccess("admin"); err == nil {
		t.Error("admin is not a role")
	}
}
