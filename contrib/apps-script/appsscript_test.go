package appsscript

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

// node finds the node binary. Without it the drop-in's tests skip, saying how to install it,
// as the PostgreSQL tests skip without a server; under CI=true they fail instead, so CI can't
// pass by skipping (a drop-in that is not tested is a drop-in that silently rots).
func node(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		msg := "node is not installed, so the Apps Script drop-in (contrib/apps-script/safeFetch.gs) can't be tested: install Node.js 18 or newer (apt-get install nodejs; .ci/run does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// TestSafeFetchNode runs safeFetch.test.js with Node's own test runner (node:test, no npm).
func TestSafeFetchNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(t), "--test", "--test-reporter=tap", "safeFetch.test.js")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test safeFetch.test.js failed (%v); its output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") {
		t.Fatalf("node --test reported no clean pass; its output:\n%s", out)
	}
}

// keyCase is one call whose key both sides derive.
type keyCase struct {
	Source  string `json:"source"`
	URL     string `json:"url"`
	Payload string `json:"payload"`
}

// TestKeysMatchTriage checks the drop-in against model: the key it takes from a payload's id
// is the one model.PayloadKey reads from the same cell, and the key it mints is
// model.MintKey with an empty timestamp. The drop-in always writes the key it sent, so triage
// never mints for its rows; this keeps the two readings of one payload from drifting apart
// (a payload id and a key cell that disagree make triage refuse the row).
func TestKeysMatchTriage(t *testing.T) {
	cases := []keyCase{
		{"api", "https://api.example.com/v1/orders", `{"id":"order-1"}`},
		{"api", "https://api.example.com/v1/orders", `{"id":"  spaced  ","x":1}`},
		{"api", "https://api.example.com/v1/orders", `{"id": 1.0}`},
		{"api", "https://api.example.com/v1/orders", `{"id": -12e3, "n": {"id": "inner"}}`},
		{"api", "https://api.example.com/v1/orders", `{"n": {"id": "inner"}, "id": "outer"}`},
		{"api", "https://api.example.com/v1/orders", `{"id":"a","id":"b"}`},
		{"api", "https://api.example.com/v1/orders", `{"id":"é\u00e9 \"q\""}`},
		{"api", "https://api.example.com/v1/orders", `{"id":""}`},
		{"api", "https://api.example.com/v1/orders", "{\"id\":\"\u00a0k\u0085 \u3000\"}"},
		{"api", "https://api.example.com/v1/orders", "{\"id\":\"\ufeffk\ufeff\"}"},
		{"api", "https://api.example.com/v1/orders", `{"id":" \u2028 "}`},
		{"api", "https://api.example.com/v1/orders", `{"id":null}`},
		{"api", "https://api.example.com/v1/orders", `{"id":true}`},
		{"api", "https://api.example.com/v1/orders", `[{"id":"in an array"}]`},
		{"contact-form", "https://script.google.com/macros/s/AKfy/exec", `=HYPERLINK("x")`},
		{"contact-form", "https://script.google.com/macros/s/AKfy/exec", "ünïcödé ✓ 🙂"},
		{"s", "https://h/", ""},
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script := `
const {load} = require('./standins.js');
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const env = load();
const out = cases.map((c) => {
  const pk = env.ctx.safeFetchPayloadKey_(c.payload, 'id');
  return {payloadKey: pk == null ? '' : pk, hasPayloadKey: pk != null, minted: env.ctx.safeFetchMintKey_(c.source, c.url, c.payload)};
});
process.stdout.write(JSON.stringify(out));
`
	out := runNode(t, script, in)
	var got []struct {
		PayloadKey    string `json:"payloadKey"`
		HasPayloadKey bool   `json:"hasPayloadKey"`
		Minted        string `json:"minted"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node's answer is not JSON (%v): %s", err, out)
	}
	if len(got) != len(cases) {
		t.Fatalf("node answered %d cases, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		pk, ok := model.PayloadKey(c.Payload, "id")
		if got[i].HasPayloadKey != ok || got[i].PayloadKey != pk {
			t.Errorf("payload %s: drop-in reads key %q (%v), triage reads %q (%v)", c.Payload, got[i].PayloadKey, got[i].HasPayloadKey, pk, ok)
		}
		if want := model.MintKey(c.Source, c.URL, c.Payload, ""); got[i].Minted != want {
			t.Errorf("payload %s: drop-in mints %q, triage mints %q", c.Payload, got[i].Minted, want)
		}
	}
}

// columnCase is a dead-letter header row and a [tabs.deadletter.columns] mapping, given to
// triage as its config and to the drop-in as SAFEFETCH.deadLetter.columns.
type columnCase struct {
	Header  []string          `json:"header"`
	Columns map[string]string `json:"columns"`
}

// TestColumnsMatchTriage checks the drop-in's column finding against triage's: a mapping the
// drop-in accepts is one `triage config check` accepts (and the reverse), and on every header
// row it finds each field in the column triage finds it in (model.MapHeaders through
// config.TabConfigs), so a call dead-lettered by the drop-in is read by triage with the key
// it was sent with.
func TestColumnsMatchTriage(t *testing.T) {
	std := []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}
	cases := []columnCase{
		{std, nil},
		{[]string{"Notes", " KEY ", "status", "Payload", "source", "Idempotency Key", "url", "error", "tries", "Method", "timestamp"}, nil},
		{[]string{"Notes", " KEY ", "status", "Payload", "source", "Idempotency Key", "url", "error", "tries", "Method", "timestamp"}, map[string]string{"key": "Idempotency Key"}},
		{std, map[string]string{"key": "Request-Id"}},
		{[]string{"When", "Source", "URL", "Body", "Err", "Tries", "Verb", "Request-Id", "State"}, map[string]string{" Key ": "request-id", "ERROR": "err"}},
		{[]string{"timestamp", "source", "Endpoint", "payload", "error", "attempts", "method", "url", "status"}, map[string]string{"key": "url", "url": "Endpoint"}},
		{std, map[string]string{"key": "URL"}},
		{std, map[string]string{"key": "Ref", "error": "ref"}},
		{std, map[string]string{"key": "  "}},
		{std, map[string]string{"bogus": "x"}},
		{std, map[string]string{"key": "a", "Key": "b"}},
		{[]string{"İDEMPOTENCY KEY", "source\u0085", "\ufeffurl", "url", "payload\u00a0", "Body", "ΣTATUΣ", "status"}, nil},
		{[]string{"idempotency key", "source", "url", "payload"}, map[string]string{"key": "Idempotency\u2003Key"}},
		{[]string{"key", "key", "url", "source", "payload", "Body", "endpoint"}, nil},
		{append([]string{"Done At"}, std...), map[string]string{"replayed_at": "Done At"}},
		{[]string{"state", "status", "source", "url", "payload"}, map[string]string{"status": "State"}},
		{[]string{"tries", "attempts", "time", "created", "timestamp"}, nil},
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script := `
const {load} = require('./standins.js');
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const out = cases.map((c) => {
  const env = load({config: {sources: {}, deadLetter: {columns: c.columns || {}}}});
  try {
    const mapping = env.ctx.safeFetchColumnMapping_();
    return {ok: true, cols: env.ctx.safeFetchFindColumns_(c.header, mapping)};
  } catch (e) {
    return {ok: false, error: String(e.message)};
  }
});
process.stdout.write(JSON.stringify(out));
`
	out := runNode(t, script, in)
	var got []struct {
		OK    bool           `json:"ok"`
		Error string         `json:"error"`
		Cols  map[string]int `json:"cols"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node's answer is not JSON (%v): %s", err, out)
	}
	if len(got) != len(cases) {
		t.Fatalf("node answered %d cases, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		var toml strings.Builder
		toml.WriteString("[tabs.deadletter.columns]\n")
		for f, h := range c.Columns {
			kf, _ := json.Marshal(f)
			kh, _ := json.Marshal(h)
			fmt.Fprintf(&toml, "%s = %s\n", kf, kh)
		}
		cfg, probs := config.Parse([]byte(toml.String()))
		if accepted := len(probs) == 0; accepted != got[i].OK {
			t.Errorf("case %d %q: triage accepts the mapping: %v (%v); the drop-in: %v (%s)", i, c.Columns, accepted, probs, got[i].OK, got[i].Error)
			continue
		}
		if !got[i].OK {
			continue
		}
		var tc model.TabConfig
		for _, x := range cfg.TabConfigs() {
			if x.Role == model.RoleDeadLetter {
				tc = x
			}
		}
		hm, _ := model.MapHeaders(tc, c.Header) // a missing required column is fine here: compare what is found
		want := map[string]int{}
		for f, idx := range hm.Index {
			want[string(f)] = idx
		}
		if fmt.Sprint(want) != fmt.Sprint(got[i].Cols) {
			t.Errorf("case %d: header %q, columns %q:\n triage finds %v\ndrop-in finds %v", i, c.Header, c.Columns, want, got[i].Cols)
		}
	}
}

// runNode runs script under node with in on its standard input and returns what it printed,
// failing the test with node's standard error if it fails.
func runNode(t *testing.T, script string, in []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(t), "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node failed (%v): %s", err, stderr)
	}
	return out
}
