package model

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMapHeadersCaseAliasesOverridesExtras(t *testing.T) {
	tc := DefaultTabConfig(RoleInbox)
	hm, err := MapHeaders(tc, []string{"  submitted ", "Notes", "MESSAGE", "status", "Id", "E-mail"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Field]int{FTimestamp: 0, FMessage: 2, FStatus: 3, FID: 4, FEmail: 5}
	for f, i := range want {
		if hm.Col(f) != i {
			t.Errorf("%s at %d, want %d", f, hm.Col(f), i)
		}
	}
	if hm.Has(FName) {
		t.Errorf("name should be absent")
	}
	tc.Columns = map[Field]string{FID: "Submission Key"}
	hm, err = MapHeaders(tc, []string{"Status", "ID", "submission key"})
	if err != nil {
		t.Fatal(err)
	}
	if hm.Col(FID) != 2 {
		t.Errorf("override ignored: id at %d", hm.Col(FID))
	}
}

func TestMapHeadersMissingNamesTabHeaderAndFound(t *testing.T) {
	tc := DefaultTabConfig(RoleDeadLetter)
	tc.Name = "failed calls"
	_, err := MapHeaders(tc, []string{"timestamp", "source", "URL"})
	var mh *MissingHeaderError
	if !errors.As(err, &mh) {
		t.Fatalf("want MissingHeaderError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{`"failed calls"`, `"payload"`, `"timestamp", "source", "URL"`, "triage init"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	_, err = MapHeaders(DefaultTabConfig(RoleQueue), nil)
	if err == nil || !strings.Contains(err.Error(), "row 1 is empty") {
		t.Errorf("empty header: %v", err)
	}
}

func TestSerialTimeRoundTripInZone(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata")
	}
	// 45992.5 = 2025-12-01 12:00 in the spreadsheet's zone.
	got := SerialToTime(45992.5, loc)
	want := time.Date(2025, 12, 1, 12, 0, 0, 0, loc)
	if !got.Equal(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if s := TimeToSerial(want, loc); s != 45992.5 {
		t.Fatalf("serial %v", s)
	}
	for _, in := range []any{"2025-12-01T11:00:00Z", "2025-12-01 12:00", "12/1/2025 12:00", 45992.5, "45992.5"} {
		tm, ok := ParseTime(in, loc)
		if !ok || !tm.Equal(want) {
			t.Errorf("ParseTime(%v) = %v %v", in, tm, ok)
		}
	}
	for _, bad := range []any{"", "yesterday", -3.0, true} {
		if _, ok := ParseTime(bad, loc); ok {
			t.Errorf("ParseTime(%v) accepted", bad)
		}
	}
}

func TestDecodeKeepsBadRowsAndFlagsThem(t *testing.T) {
	rows := [][]any{
		{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Extra"},
		{45992.5, "Ann", "a@x", "hi", "", "id-1", "x"},
		{},
		{"not a date", "Bob", "b@x", "yo", "Read", "", nil},
		{45992.6, "Cy", "c@x", "dup", "done", "id-1"},
		{45992.7, "Di", "d@x", "ok", "SPAM ", "id-4", nil, "beyond header"},
	}
	tb, err := Decode(DefaultTabConfig(RoleInbox), rows, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Records) != 4 {
		t.Fatalf("records %d", len(tb.Records))
	}
	r0, r1, r2, r3 := tb.Records[0], tb.Records[1], tb.Records[2], tb.Records[3]
	// r0 and r2 share id-1: neither can be written until one changes, and both say so.
	if r0.Status != "new" || r0.ID != "" || r0.Row != 2 || tb.Get(&r0, "extra") != "" || r0.Cells[6] != "x" ||
		!strings.Contains(strings.Join(r0.Problems, ";"), `rows 2, 5 share the ID "id-1"`) {
		t.Errorf("r0 %+v", r0)
	}
	if r1.Row != 4 || r1.ID != "" || len(r1.Problems) != 2 || r1.Status != "read" {
		t.Errorf("r1 %+v", r1)
	}
	if r2.ID != "" || !strings.Contains(strings.Join(r2.Problems, ";"), `rows 2, 5 share the ID "id-1"`) {
		t.Errorf("r2 %+v", r2)
	}
	if r3.Status != "spam" || r3.Cells[7] != "beyond header" {
		t.Errorf("r3 %+v", r3)
	}
	c := tb.Counts()
	if c["new"] != 1 || c["read"] != 1 || c["done"] != 1 || c["spam"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestEffectiveKeyOrder(t *testing.T) {
	tc := DefaultTabConfig(RoleDeadLetter)
	tc.BodyKeyFields = map[string]string{"contact-form": "id"}
	hm, err := MapHeaders(tc, []string{"timestamp", "source", "url", "payload", "key"})
	if err != nil {
		t.Fatal(err)
	}
	k, o, p := EffectiveKey(tc, hm, []string{"1", "contact-form", "https://x", `{"id":"abc"}`, "cell-key"})
	if k != "cell-key" || o != KeyCell || p == "" {
		t.Errorf("disagreeing payload not flagged: %q %v %q", k, o, p)
	}
	k, o, p = EffectiveKey(tc, hm, []string{"1", "contact-form", "https://x", `{"id":"abc"}`, ""})
	if k != "abc" || o != KeyPayload || p != "" {
		t.Errorf("payload key: %q %v %q", k, o, p)
	}
	k1, o, _ := EffectiveKey(tc, hm, []string{"1", "crm", "https://x", `{"id":"abc"}`, ""})
	k2, _, _ := EffectiveKey(tc, hm, []string{"1", "crm", "https://x", `{"id":"abc"}`, ""})
	k3, _, _ := EffectiveKey(tc, hm, []string{"2", "crm", "https://x", `{"id":"abc"}`, ""})
	if o != KeyMinted || k1 != k2 || k1 == k3 || !strings.HasPrefix(k1, "triage-") {
		t.Errorf("minted keys %q %q %q (%v)", k1, k2, k3, o)
	}
}

func TestEditInverseAndClearError(t *testing.T) {
	tb, err := Decode(DefaultTabConfig(RoleQueue), [][]any{
		{"id", "status", "lastError", "updatedAt", "claimedAt"},
		{"j1", "error", "boom", "", ""},
		{"j2", "done", "", "", ""},
	}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, ok := ClearError(tb, &tb.Records[0], now)
	if _, blanks := e.Set[FLastError]; !ok || e.Set[FStatus] != "pending" || blanks || e.Set[FUpdatedAt] != "2026-01-02T03:04:05Z" {
		t.Fatalf("clear error edit %+v: want pending, the error text kept (why it stopped)", e)
	}
	if _, ok := ClearError(tb, &tb.Records[1], now); ok {
		t.Fatal("cleared a done job")
	}
	inv := e.Inverse()
	if inv.Expect[FStatus] != "pending" || inv.Set[FStatus] != "error" {
		t.Fatalf("inverse %+v", inv)
	}
}

func TestStaleThreshold(t *testing.T) {
	tc := DefaultTabConfig(RoleQueue)
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	tb, _ := Decode(tc, [][]any{
		{"id", "status", "claimedAt"},
		{"a", "claimed", FormatTime(now.Add(-29 * time.Minute))},
		{"b", "claimed", FormatTime(now.Add(-31 * time.Minute))},
		{"c", "pending", FormatTime(now.Add(-3 * time.Hour))},
		{"d", "claimed", FormatTime(now.Add(-30 * time.Minute))},
	}, time.UTC)
	want := []bool{false, true, false, false}
	for i, w := range want {
		if got := tb.Stale(&tb.Records[i], now); got != w {
			t.Errorf("row %s stale=%v want %v", tb.Records[i].ID, got, w)
		}
		if _, ok := Requeue(tb, &tb.Records[i], now); ok != w {
			t.Errorf("requeue %s = %v", tb.Records[i].ID, ok)
		}
	}
}

func TestFilter(t *testing.T) {
	tb, _ := Decode(DefaultTabConfig(RoleDeadLetter), [][]any{
		{"source", "url", "payload", "error", "status"},
		{"crm", "https://crm/x", "{}", "timeout", ""},
		{"billing", "https://b/y", "{}", "401 Unauthorized", "rejected"},
		{"crm", "https://crm/z", "{}", "", "delivered"},
	}, time.UTC)
	cases := map[string][]int{
		"":                 {0, 1, 2},
		"source:crm":       {0, 2},
		"status:dead":      {0},
		"!status:dead":     {1, 2},
		"error:unauth":     {1},
		"url:crm/z":        {2},
		"crm !delivered":   {0},
		"nosuchfield:x":    {},
		"!nosuchfield:x":   {0, 1, 2},
		"HTTPS://CRM":      {0, 2},
		"status:rejected ": {1},
		"kind:timeout":     {0},
		"kind:4":           {1},
		"kind:":            {0, 1},
		"!kind:401":        {0, 2},
	}
	for q, want := range cases {
		m := ParseFilter(q).Bind(tb)
		var got []int
		for i := range tb.Records {
			if m.Match(&tb.Records[i], Haystack(&tb.Records[i])) {
				got = append(got, i)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%q: got %v want %v", q, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: got %v want %v", q, got, want)
			}
		}
	}
}

func TestSanitizeRemovesEveryTerminalControl(t *testing.T) {
	hostile := "a\x1b[2Jb\x1b]0;title\x07c\x1b]52;c;ZXZpbA==\x07d\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\" +
		"\x1bPq#0\x1b\\e\u009b31m\u0085f\u202eg\u2066h\x7fi\x00j\xffk\r\nl\tm"
	for _, s := range []string{Sanitize(hostile), SanitizeLine(hostile)} {
		for _, bad := range []string{"\x1b", "\u009b", "\u0085", "\u202e", "\u2066", "\x07", "\x00", "\x7f", "\r", "\t"} {
			if strings.Contains(s, bad) {
				t.Errorf("sanitised text still contains %q: %q", bad, s)
			}
		}
		if !strings.Contains(s, "␛") || !strings.Contains(s, "⇄") {
			t.Errorf("placeholders not visible: %q", s)
		}
	}
	if !strings.Contains(Sanitize(hostile), "\n") || strings.Contains(SanitizeLine(hostile), "\n") {
		t.Errorf("newline handling wrong")
	}
	if got := Sanitize("héllo 👋 مرحبا"); got != "héllo 👋 مرحبا" {
		t.Errorf("benign text changed: %q", got)
	}
}

func TestSetStatusWritesTheTabsSpelling(t *testing.T) {
	tc := DefaultTabConfig(RoleInbox)
	tc.Statuses = []string{"New", "Read", "Done"}
	tb, err := Decode(tc, [][]any{{"Status", "ID"}, {"New", "a"}}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	r := &tb.Records[0]
	if r.Status != "new" {
		t.Fatalf("status normalised to %q", r.Status)
	}
	e := SetStatus(tb, r, "read")
	if e.Set[FStatus] != "Read" || e.Expect[FStatus] != "New" {
		t.Errorf("edit %+v", e)
	}
	if !tb.HasStatus("DONE") || tb.HasStatus("spam") {
		t.Errorf("HasStatus")
	}
}

func TestFilterFieldAliasesFollowTheSchema(t *testing.T) {
	tb, _ := Decode(DefaultTabConfig(RoleQueue), [][]any{
		{"id", "status", "lastError"},
		{"a", "error", "401 Unauthorized"},
		{"b", "done", ""},
	}, time.UTC)
	m := ParseFilter("error:401").Bind(tb)
	if !m.Match(&tb.Records[0], Haystack(&tb.Records[0])) || m.Match(&tb.Records[1], Haystack(&tb.Records[1])) {
		t.Error("error: should search a queue's lastError column")
	}
}

func TestDuplicateKeysFlagBothDeadLetters(t *testing.T) {
	tb, _ := Decode(DefaultTabConfig(RoleDeadLetter), [][]any{
		{"source", "url", "payload", "key"},
		{"crm", "https://x/", "{}", "k1"},
		{"crm", "https://x/", "{}", "k2"},
		{"crm", "https://y/", "{}", "k1"},
	}, time.UTC)
	for _, i := range []int{0, 2} {
		r := tb.Records[i]
		if r.ID != "" || !strings.Contains(strings.Join(r.Problems, ";"), "idempotency key") {
			t.Errorf("row %d: %+v", r.Row, r)
		}
	}
	if tb.Records[1].ID != "k2" {
		t.Errorf("unique key lost: %+v", tb.Records[1])
	}
}

func TestRequeueReleasesTheClaimAndUndoRestoresIt(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	tc := DefaultTabConfig(RoleQueue)
	tc.Statuses = []string{"Pending", "Claimed", "Done", "Error"}
	claimed := FormatTime(now.Add(-2 * time.Hour))
	tb, _ := Decode(tc, [][]any{{"id", "status", "claimedBy", "claimedAt"}, {"a", "Claimed", "w1", claimed}}, time.UTC)
	e, ok := Requeue(tb, &tb.Records[0], now)
	if !ok || e.Set[FStatus] != "Pending" || e.Set[FClaimedBy] != "" || e.Set[FClaimedAt] != "" || e.Expect[FClaimedBy] != "w1" {
		t.Fatalf("requeue edit %+v", e)
	}
	inv := e.Inverse()
	if inv.Set[FClaimedBy] != "w1" || inv.Set[FClaimedAt] != claimed || inv.Set[FStatus] != "Claimed" {
		t.Errorf("undo %+v", inv)
	}
}

// TestKeyAsHeld: the key a row is found by (EffectiveKey) is trimmed; the key it would be sent
// with is the one it holds, from the same place, so CheckKey refuses what a trim would hide.
func TestKeyAsHeld(t *testing.T) {
	tc := DefaultTabConfig(RoleDeadLetter)
	tc.BodyKeyFields = map[string]string{"form": "id"}
	hm, err := MapHeaders(tc, []string{"timestamp", "source", "url", "payload", "key"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		source, payload, cell string
		found, held           string
	}{
		{"crm", `{}`, "CRKEY\r", "CRKEY", "CRKEY\r"},
		{"crm", `{}`, " k-1 ", "k-1", " k-1 "},
		{"crm", `{}`, "k\u2028", "k", "k\u2028"},
		{"crm", `{}`, "k-2", "k-2", "k-2"},
		{"form", `{"id":" p-1\u0085"}`, "", "p-1", " p-1\u0085"},
		{"form", `{"id":42}`, "", "42", "42"},
	} {
		cells := []string{"1", c.source, "https://x", c.payload, c.cell}
		found, _, _ := EffectiveKey(tc, hm, cells)
		if held := KeyAsHeld(tc, hm, cells); found != c.found || held != c.held {
			t.Errorf("cell %q payload %s: found by %q, held %q; want %q, %q", c.cell, c.payload, found, held, c.found, c.held)
		}
		if err := CheckKey(KeyAsHeld(tc, hm, cells)); (err == nil) != (c.found == c.held) {
			t.Errorf("cell %q payload %s: CheckKey(%q) = %v", c.cell, c.payload, c.held, err)
		}
	}
	minted := []string{"1", "crm", "https://x", `{}`, ""}
	if k, _, _ := EffectiveKey(tc, hm, minted); KeyAsHeld(tc, hm, minted) != k {
		t.Errorf("a minted key is held as minted")
	}
}

func TestPayloadKeyIsTrimmedLikeAKeyCell(t *testing.T) {
	if k, ok := PayloadKey(`{"id":"  abc "}`, "id"); !ok || k != "abc" {
		t.Errorf("got %q %v", k, ok)
	}
	if _, ok := PayloadKey(`{"id":"   "}`, "id"); ok {
		t.Error("a blank payload key is no key")
	}
}
