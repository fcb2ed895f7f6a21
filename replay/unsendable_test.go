package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// rawControls are characters that must never reach a message as they are.
const rawControls = "\r\n\x00\x01\x07\x1b\x7f"

// TestUnsendableKeysRefusedBeforeSending: keys with control characters (CRLF, \x01, DEL,
// ESC, from the key cell or from the payload) are refused by the plan: nothing is sent for
// them, nothing is written to their rows, they count as no attempt and, four in a row, don't
// halt the run; the row after them is delivered. Each reason says what is wrong and where,
// with the character escaped.
func TestUnsendableKeysRefusedBeforeSending(t *testing.T) {
	rcv := receiver.New()
	rcv.BodyKeyField = "id"
	sum, st := runBadKeys(t, rcv, []string{"order-42\r\nX-Evil: 1", "k\x01x", "k\x7fx", "k\x1b[31mx"}, `{"id":"p\u0007q"}`)
	want := map[int]string{
		2: `\r at position 9); it can't be sent in a header; fix the key cell`,
		3: `\x01 at position 2`,
		4: `\x7f (DEL) at position 2`,
		5: `\x1b (ESC) at position 2`,
		6: `\x07 at position 2); it can't be sent in a header; fix the payload's "id" field`,
	}
	if len(sum.Refused) != len(want) {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for _, r := range sum.Refused {
		if !strings.Contains(r.Reason, "control character ("+want[r.Row]) || r.Skipped {
			t.Errorf("row %d refused %q, want it to say %q", r.Row, r.Reason, want[r.Row])
		}
		if strings.ContainsAny(r.Reason, rawControls) {
			t.Errorf("row %d: the reason echoes a raw control: %q", r.Row, r.Reason)
		}
	}
	for i := 0; i < 5; i++ {
		if got := st.rowAt(i); got["attempts"] != "1" || got["status"] != "dead" || got["error"] != "" {
			t.Errorf("refused row %d was written: %v", i+2, got)
		}
	}
	if got := st.rowAt(5); got["status"] != "delivered" {
		t.Errorf("the row after the refused ones ended %v", got)
	}
	if code := sum.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1 (rows not done, no halt)", code)
	}
}

// TestKeysNotExactRefusedBeforeSending (invariant 3): a key is an exact string to the
// receiver, so one that a trim would change ("CRKEY\r" from a CRLF file, U+2028, U+0085 or
// spaces at its ends, in the key cell or in the payload's key field) is refused with the
// reason, never trimmed and sent: nothing reaches the receiver for it, nothing is written to
// its row, it is no attempt, and five in a row don't halt the run.
func TestKeysNotExactRefusedBeforeSending(t *testing.T) {
	sum, st := runBadKeys(t, receiver.New(), []string{"CRKEY\r", "k-ls\u2028", "k-nel\u0085", "  k-spaced "}, `{"id":" p-1 "}`)
	want := map[int]string{
		2: `control character (\r at position 6); it can't be sent in a header; fix the key cell`,
		3: `line separator (U+2028 at position 5)`,
		4: `control character (\u0085 at position 6)`,
		5: `starts with whitespace (a space at position 1); a key is sent exactly as written, never trimmed; fix the key cell`,
		6: `starts with whitespace (a space at position 1); a key is sent exactly as written, never trimmed; fix the payload's "id" field`,
	}
	if len(sum.Refused) != len(want) || sum.Counts[model.StateRefused] != len(want) {
		t.Fatalf("refused %+v, counts %v", sum.Refused, sum.Counts)
	}
	for _, r := range sum.Refused {
		if !strings.Contains(r.Reason, want[r.Row]) || r.Skipped {
			t.Errorf("row %d refused %q, want it to say %q", r.Row, r.Reason, want[r.Row])
		}
		if strings.ContainsAny(r.Reason, rawControls+"\u2028\u0085") {
			t.Errorf("row %d: the reason echoes a raw control: %q", r.Row, r.Reason)
		}
	}
	for i := range len(want) {
		if got := st.rowAt(i); got["attempts"] != "1" || got["status"] != "dead" || got["error"] != "" {
			t.Errorf("refused row %d was written: %v", i+2, got)
		}
	}
	if got := st.rowAt(len(want)); got["status"] != "delivered" {
		t.Errorf("the row after the refused ones ended %v", got)
	}
}

// TestSecretEndingInCRRefusedNotHalting: a secret read from the environment that ends in
// "\r" (a token file with Windows line endings) can't be sent in a header. Each of the
// source's rows is refused before sending, with no attempt counted, no backoff, and three of
// them in a row don't halt the run: another source's row still goes out.
func TestSecretEndingInCRRefusedNotHalting(t *testing.T) {
	rcv, srv, u := destination(t)
	rows := keyRows(4, "crm", u)
	rows[3].source = "shop"
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}},
		&replay.Source{Name: "shop", URLPrefixes: []string{srv.URL}})
	c.Getenv = func(k string) string {
		if k == "CRM_TOKEN" {
			return "Bearer xyz\r"
		}
		return ""
	}
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 1})
	if sum.Halted != nil {
		t.Fatalf("halted: %s", sum.Halted)
	}
	if got := attemptsByKey(rcv); len(got) != 1 || len(got["k-3"]) != 1 {
		t.Fatalf("the receiver got %v, want only the shop row", got)
	}
	refused := 0
	for _, r := range sum.Rows {
		if r.Source != "crm" {
			continue
		}
		refused++
		if r.State != model.StateRefused || r.Attempts != 0 {
			t.Errorf("row %d: state %s after %d attempts, want refused with none", r.Row, r.State, r.Attempts)
		}
		if !strings.Contains(r.Detail, `CRM_TOKEN`) || !strings.Contains(r.Detail, `\r at position 11`) || strings.Contains(r.Detail, "xyz") || strings.ContainsAny(r.Detail, rawControls) {
			t.Errorf("row %d: detail %q, want it to name the variable and the escaped \\r, never the secret", r.Row, r.Detail)
		}
	}
	if refused != 3 || sum.Counts[model.StateRefused] != 3 {
		t.Errorf("%d crm rows refused, counts %v", refused, sum.Counts)
	}
	for i := 0; i < 3; i++ {
		if got := st.rowAt(i); got["attempts"] != "1" || got["status"] != "dead" {
			t.Errorf("refused row %d was written: %v", i+2, got)
		}
	}
}

// TestUnsendableHeadersRefusedBeforeSending: a header name that is not an HTTP token, a
// literal value with CRLF, or a key placement in such a header: the source is refused
// (Source.Validate, the same rule as config check), so its rows are refused by the plan and
// nothing reaches the receiver; Client.Do refuses the same way, and a key with a control
// character given straight to Do too.
func TestUnsendableHeadersRefusedBeforeSending(t *testing.T) {
	rcv := receiver.New()
	srv := serve(t, rcv)
	cases := []struct {
		name string
		src  replay.Source
		key  string
		want string
	}{
		{"header name with a space", replay.Source{Headers: map[string]string{"Bad Header": "x"}}, "k", "not a valid HTTP header name"},
		{"header name with a colon", replay.Source{Headers: map[string]string{"X:Y": "x"}}, "k", "not a valid HTTP header name"},
		{"literal value with CRLF", replay.Source{Headers: map[string]string{"X-Api-Key": "abc\r\nX-Evil: 1"}}, "k", `\r at position 4`},
		{"key header name", replay.Source{Key: []replay.KeySpec{{In: "header", Name: "Idempotency Key"}}}, "k", "not a valid HTTP header name"},
		{"key with CRLF", replay.Source{}, "a\r\nb", `\r at position 2`},
		{"key with NUL", replay.Source{}, "a\x00b", `\x00 at position 2`},
	}
	for _, tc := range cases {
		src := tc.src
		src.Name, src.URLPrefixes = "crm", []string{srv.URL}
		res := fastClient(&src).Do(context.Background(), replay.Call{Key: tc.key, Source: "crm", URL: srv.URL + "/hook", Body: []byte(`{}`)})
		if res.Outcome != replay.Refused || len(res.Attempts) != 0 || !strings.Contains(res.Detail, tc.want) || strings.ContainsAny(res.Detail, rawControls) {
			t.Errorf("%s: %v after %d attempts: %q, want refused saying %q", tc.name, res.Outcome, len(res.Attempts), res.Detail, tc.want)
		}
		if tc.key != "k" {
			continue
		}
		st := newMemStore(dlConfig, keyRows(3, "crm", srv.URL+"/hook"))
		tab := st.table(t)
		sum := replay.Run(context.Background(), fastClient(&src), st, tab, records(tab), replay.RunOptions{})
		if sum.Halted != nil || len(sum.Refused) != 3 || !strings.Contains(sum.Refused[0].Reason, tc.want) {
			t.Errorf("%s: run halted %v, refused %+v", tc.name, sum.Halted, sum.Refused)
		}
	}
	if n := len(rcv.Attempts()); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

// TestKeyTTLRefusesFutureTimestamps: a row dated in the future (beyond a few minutes of
// clock skew) can't be shown to be within the receiver's key lifetime, so the key_ttl guard
// refuses it, unless forced; a row a minute ahead passes.
func TestKeyTTLRefusesFutureTimestamps(t *testing.T) {
	rcv, srv, _ := destination(t)
	c := ttlClient(srv.URL)
	rows := keyRows(4, "crm", srv.URL+"/x")
	rows[0].ts = "2026-01-03T13:00:00Z" // an hour ahead
	rows[1].ts = "2027-01-03T12:00:00Z" // a year ahead
	rows[2].ts = "2026-01-03T12:01:00Z" // within the skew allowance
	rows[3].ts = "2026-01-03T11:00:00Z"
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
	if got := attemptsByKey(rcv); len(got) != 2 || got["k-2"] == nil || got["k-3"] == nil {
		t.Fatalf("sent %v, want k-2 and k-3", got)
	}
	if len(sum.Refused) != 2 {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for _, r := range sum.Refused {
		if !strings.Contains(r.Reason, "in the future") || !strings.Contains(r.Reason, "key lifetime") || !strings.Contains(r.Reason, "--force") {
			t.Errorf("row %d refused %q", r.Row, r.Reason)
		}
	}
	tab = st.table(t)
	sum = replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Force: true})
	if len(attemptsByKey(rcv)) != 4 || sum.Counts["delivered"] != 2 {
		t.Fatalf("forced: sent %d, counts %v", len(attemptsByKey(rcv)), sum.Counts)
	}
}

// runBadKeys replays, one at a time, four crm rows whose key cells hold cellKeys, a form row
// whose key comes from payload's "id" field, and a crm row keyed "k-ok", all dead after one
// attempt, to rcv. The run must not halt, and only k-ok may reach the receiver.
func runBadKeys(t *testing.T, rcv *receiver.Receiver, cellKeys []string, payload string) (model.ReplaySummary, *memStore) {
	t.Helper()
	srv := serve(t, rcv)
	u := srv.URL + "/hook"
	var rows []row
	for _, k := range cellKeys {
		rows = append(rows, row{source: "crm", url: u, payload: `{}`, key: k, attempts: "1", status: "dead"})
	}
	rows = append(rows, row{source: "form", url: u, payload: payload, attempts: "1", status: "dead"},
		row{source: "crm", url: u, payload: `{}`, key: "k-ok", attempts: "1", status: "dead"})
	tc := formKeys()
	st := newMemStore(tc, rows)
	tab := st.table(t)
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}},
		&replay.Source{Name: "form", URLPrefixes: []string{srv.URL}, Key: []replay.KeySpec{{In: "body", Name: "id"}}})
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 1})
	if sum.Halted != nil {
		t.Fatalf("halted: %s", sum.Halted)
	}
	if got := attemptsByKey(rcv); len(got) != 1 || len(got["k-ok"]) != 1 {
		t.Fatalf("the receiver got %v, want only k-ok", got)
	}
	return sum, st
}
