package config

import (
	"strings"
	"testing"
)

// [store] url: the form is checked (config check and the runtime share CheckStoreURL), and no
// message ever shows the password.
func TestStoreURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // "" when valid
	}{
		{"postgres://triage:s3cret@db.internal:5432/triage?sslmode=verify-full", ""},
		{"postgresql://triage@/triage?host=/run/postgresql", ""},
		{"mysql://triage:s3cret@db/triage", "scheme must be postgres://"},
		{"postgres://triage:s3cret@db.internal:5432", "names no database"},
		{"postgres://triage:s3cret@db:port/triage", "can't be read as a URL"},
		{"postgres://triage:s3c/ret@db/triage", "can't be read as a URL"},
		{" postgres://triage:s3cret@db/triage", "spaces around"},
	} {
		cfg, probs := Parse([]byte("spreadsheet = \"x\"\n[store]\nurl = \"" + tc.url + "\"\n"))
		if cfg.Store.URL != tc.url {
			t.Fatalf("parsed %q", cfg.Store.URL)
		}
		if tc.want == "" {
			if len(probs) != 0 {
				t.Errorf("%s: %v", tc.url, probs)
			}
			continue
		}
		if len(probs) != 1 || probs[0].Line != 3 || !strings.Contains(probs[0].Msg, tc.want) {
			t.Errorf("%s: %v, want %q on line 3", tc.url, probs, tc.want)
			continue
		}
		if strings.Contains(probs[0].Msg, "s3c") {
			t.Errorf("%s: the password is printed: %s", tc.url, probs[0].Msg)
		}
	}
	if got := RedactURL("postgres://u:s3cret@h/db?password=s3cret&sslmode=require"); strings.Contains(got, "s3cret") {
		t.Errorf("RedactURL: %s", got)
	}
}
