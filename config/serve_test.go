package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
)

// newKeyLine is a fresh ed25519 public key as an authorized_keys line with comment.
func newKeyLine(t *testing.T, comment string) (string, string) {
	t.Helper()
	s, line := testbed.SSHKey(t)
	if comment != "" {
		line += " " + comment
	}
	return line, gossh.FingerprintSHA256(s.PublicKey())
}

// TestServeSectionProblemsHaveTheirLines: every bad value of [serve] is reported on its
// line, a bad key inside a multi-line keys array on the entry's own line.
func TestServeSectionProblemsHaveTheirLines(t *testing.T) {
	alice, _ := newKeyLine(t, "alice@laptop")
	bob, _ := newKeyLine(t, "")
	data := `[serve]
max_sessions = 0
idle_timeout = "soon"
max_auth_failures = -1
authorized_keys_role = "admin"

[serve.users.alice]
role = "operator"
keys = [
  "` + alice + `",
  "ssh-ed25519 AAAAnotbase64!! x",
]

[serve.users.bob]
keys = ["` + bob + `"]

[serve.users.carol]
role = "root"
keys = ["` + alice + `"]

[serve.users."eve\u001b[2J"]
role = "viewer"
`
	_, probs := Parse([]byte(data))
	want := []lineProblem{
		{2, "max_sessions must be more than 0"},
		{3, `idle_timeout "soon" is not a positive duration`},
		{4, "max_auth_failures must be more than 0"},
		{5, `unknown role "admin"`},
		{11, "not a public key line"},
		{14, "bob has no role"},
		{18, `unknown role "root"`},
		{19, "also listed for alice"},
		{21, "control characters"},
	}
	wantProblems(t, probs, true, want...)
	for _, p := range probs {
		if strings.ContainsRune(p.Msg, 0x1b) {
			t.Errorf("a problem carries an ESC: %q", p.Msg)
		}
	}
}

// TestServeAuthResolvesUsersFileAndCA: inline users, the authorized_keys file (comment =
// name, authorized_keys_role) and the CA file make one table; the file's problems are on
// the line of the setting that names it, with the file's own line.
func TestServeAuthResolvesUsersFileAndCA(t *testing.T) {
	dir := t.TempDir()
	alice, aliceFP := newKeyLine(t, "alice@laptop")
	dave, daveFP := newKeyLine(t, "dave")
	nameless, _ := newKeyLine(t, "")
	ca, _ := newKeyLine(t, "the-ca")
	clash, _ := newKeyLine(t, "alice")
	ak := "# the team\n" + dave + "\n" + nameless + "\n" + alice + "\nfrom=\"10.0.0.1\" " + clash + "\n" + clash + "\n"
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(ak), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pub"), []byte(ca+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := `[serve]
authorized_keys = "authorized_keys"
authorized_keys_role = "triager"
trusted_user_ca = "~/ca.pub"
[serve.users.alice]
role = "operator"
keys = ["` + alice + `"]
[serve.users.bob]
role = "viewer"
`
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	auth, probs := c.ServeAuth(dir)
	if got := auth.Keys[aliceFP]; got != (ServeIdentity{Name: "alice", Access: model.AccessOperator}) {
		t.Errorf("alice's key = %+v", got)
	}
	if got := auth.Keys[daveFP]; got != (ServeIdentity{Name: "dave", Access: model.AccessTriager}) {
		t.Errorf("dave's key (authorized_keys, comment = name, authorized_keys_role) = %+v", got)
	}
	if len(auth.Keys) != 2 {
		t.Errorf("keys = %v, want alice's and dave's", auth.Keys)
	}
	if len(auth.CAs) != 1 || auth.Users["bob"] != model.AccessViewer || auth.Users["alice"] != model.AccessOperator {
		t.Errorf("CAs %d, users %v", len(auth.CAs), auth.Users)
	}
	want := []string{":3: the key has no comment", ":4: key SHA256:", ":5: key options (from=", ":6: alice is also [serve.users.alice]"}
	var onLine2 []lineProblem
	for _, w := range want {
		onLine2 = append(onLine2, lineProblem{2, w})
	}
	wantProblems(t, probs, true, onLine2...)

	// A file that isn't there is a problem on its setting's line.
	c.Serve.TrustedUserCA = "/nonexistent/ca.pub"
	_, probs = c.ServeAuth(dir)
	if !hasProblem(probs, 4, "/nonexistent/ca.pub", false) {
		t.Errorf("a missing CA file is not reported on line 4: %v", probs)
	}
}

// TestServeDefaults: an empty [serve] means the documented defaults.
func TestServeDefaults(t *testing.T) {
	c, probs := Parse([]byte("[serve]\n"))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	s := c.Serve
	if s.AddrValue() != ":2222" || s.MaxSessionsValue() != 16 || s.IdleTimeoutValue().String() != "30m0s" || s.MaxAuthFailuresValue() != 10 {
		t.Errorf("defaults: %s %d %s %d", s.AddrValue(), s.MaxSessionsValue(), s.IdleTimeoutValue(), s.MaxAuthFailuresValue())
	}
}
