package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/internal/testbed"
)

// authRun is one `triage auth ...` invocation running in the background.
type authRun struct {
	stdin          *io.PipeWriter
	stdout, stderr *testbed.Buffer
	done           chan int
}

// authEnv is an isolated environment: state, config and home in temp dirs.
func authEnv(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"HOME":            dir,
		"XDG_STATE_HOME":  filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
	}
}

// startAuth runs `triage auth ARGS...` in-process.
func startAuth(t *testing.T, vars map[string]string, args ...string) *authRun {
	t.Helper()
	pr, pw := io.Pipe()
	r := &authRun{stdin: pw, stdout: &testbed.Buffer{}, stderr: &testbed.Buffer{}, done: make(chan int, 1)}
	e := &env{stdin: pr, stdout: r.stdout, stderr: r.stderr, getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	go func() {
		defer cancel()
		r.done <- run(ctx, append([]string{"auth"}, args...), e)
	}()
	t.Cleanup(func() { pw.Close() })
	return r
}

func (r *authRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case c := <-r.done:
		return c
	case <-time.After(25 * time.Second):
		t.Fatalf("auth did not finish; stderr:\n%s", r.stderr)
	}
	return -1
}

// waitFor waits until stderr contains s.
func (r *authRun) waitFor(t *testing.T, s string) {
	t.Helper()
	if !testbed.Until(t, func() bool { return strings.Contains(r.stderr.String(), s) }) {
		t.Fatalf("stderr never said %q:\n%s", s, r.stderr)
	}
}

func authCmd(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	r := startAuth(t, vars, args...)
	code := r.wait(t)
	return code, r.stdout.String(), r.stderr.String()
}

// printedURL is the sign-in address the command printed.
func printedURL(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "http://127.0.0.1:") && strings.Contains(l, "/authorize?") {
			return l
		}
	}
	t.Fatalf("no sign-in address in:\n%s", stderr)
	return ""
}

func noSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{"ya29.at-1", "1//rt-1", testbed.ClientSecret, "code-1"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s shows %q:\n%s", where, secret, s)
		}
	}
}

// The full journey through the CLI: login with the client named in the config (relative to
// the config file), the browser opened by triage reaching the loopback listener; status;
// logout revoking and deleting.
func TestAuthLoginLoopbackStatusLogout(t *testing.T) {
	as := testbed.NewOAuthServer(t)
	vars := authEnv(t)
	vars["DISPLAY"] = ":0" // so triage opens "the browser": this test plays it
	cfgDir := filepath.Join(vars["XDG_CONFIG_HOME"], "triage")
	as.WriteClient(t, filepath.Join(cfgDir, "client_secret.json"))
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("oauth_client = \"client_secret.json\"\n"), 0o600)
	origOpen, origHost := openBrowser, hostname
	t.Cleanup(func() { openBrowser, hostname = origOpen, origHost })
	hostname = func() (string, error) { return "jump.example.net", nil }
	var pageMu sync.Mutex
	var page string
	browserDone := make(chan struct{})
	openBrowser = func(u string) error {
		go func() {
			defer close(browserDone)
			resp, err := http.Get(u) // follows the redirect to the loopback listener
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			pageMu.Lock()
			page = string(b)
			pageMu.Unlock()
		}()
		return nil
	}

	r := startAuth(t, vars, "login")
	if code := r.wait(t); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, r.stderr)
	}
	<-browserDone
	stderr := r.stderr.String()
	t.Logf("login output:\n%s", stderr)
	u, _ := url.Parse(printedURL(t, stderr))
	port := strings.TrimPrefix(strings.TrimSuffix(u.Query().Get("redirect_uri"), "/"), "http://127.0.0.1:")
	for _, want := range []string{
		"If your browser is on another machine: ssh -L " + port + ":127.0.0.1:" + port + " jump.example.net",
		"or paste the address your browser was sent to (it starts with http://127.0.0.1:" + port + "/) here:",
		"Signed in as " + testbed.Email,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("login output lacks %q:\n%s", want, stderr)
		}
	}
	pageMu.Lock()
	if !strings.Contains(page, "signed in, you can close this tab") {
		t.Errorf("browser page: %q", page)
	}
	pageMu.Unlock()
	noSecrets(t, "login", stderr+r.stdout.String())
	if f := as.TokenForms(); len(f) != 1 || f[0].Get("code_verifier") == "" {
		t.Errorf("token requests: %v", f)
	}
	cache := filepath.Join(vars["XDG_STATE_HOME"], "triage", "token.json")
	st, err := os.Stat(cache)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token cache: %v %v", st, err)
	}
	rec, err := googleauth.ReadLoginRecord(cache)
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := authCmd(t, vars, "status")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errOut)
	}
	for _, want := range []string{"Signed in as " + testbed.Email, "auth/spreadsheets", "expires " + rec.Token.Expiry.Local().Format(timeLayout),
		cache, "triage uses", "the saved login",
		"signed in:     " + rec.LoggedInAt.Local().Format(timeLayout),
		"until " + rec.LoggedInAt.Add(7*24*time.Hour).Local().Format(timeLayout) + " if it is in Testing (Google ends those after 7 days)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// The token was issued for an hour: by now it expires in a little less, which reads as
	// the TUI would read it, in one compact unit.
	if !regexp.MustCompile(`\(in (59m|1h)\)`).MatchString(out) {
		t.Errorf("status should say when the token expires, compactly (in 59m or in 1h):\n%s", out)
	}
	noSecrets(t, "status", out+errOut)
	t.Logf("status output:\n%s", out)

	// Something earlier in the credential order wins, and status says so.
	vars["GOOGLE_APPLICATION_CREDENTIALS"] = "/keys/sa.json"
	if _, out, _ := authCmd(t, vars, "status"); !strings.Contains(out, "GOOGLE_APPLICATION_CREDENTIALS is set (/keys/sa.json), so it is used and the saved login is not") {
		t.Errorf("status with GOOGLE_APPLICATION_CREDENTIALS:\n%s", out)
	}
	delete(vars, "GOOGLE_APPLICATION_CREDENTIALS")

	code, out, errOut = authCmd(t, vars, "logout")
	if code != 0 || !strings.Contains(errOut, "Revoked the login of "+testbed.Email) {
		t.Errorf("logout: %d %s %s", code, out, errOut)
	}
	if got := as.Revoked(); len(got) != 1 || got[0] != "1//rt-1" {
		t.Errorf("revoked %v, want the refresh token", got)
	}
	if _, err := os.Stat(cache); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("logout left the token cache: %v", err)
	}
	noSecrets(t, "logout", out+errOut)
	if code, _, errOut := authCmd(t, vars, "logout"); code != 0 || !strings.Contains(errOut, "Not signed in") {
		t.Errorf("second logout: %d %s", code, errOut)
	}
	if code, out, _ := authCmd(t, vars, "status"); code != 0 || !strings.Contains(out, "Not signed in") || !strings.Contains(out, "Application Default Credentials") {
		t.Errorf("status after logout: %d %s", code, out)
	}
}

// From a jump host: no browser, the user pastes the address back; a pasted address with a
// wrong state is refused and nothing is exchanged or saved.
func TestAuthLoginPasted(t *testing.T) {
	for _, forged := range []bool{false, true} {
		t.Run(fmt.Sprintf("forged=%v", forged), func(t *testing.T) {
			as := testbed.NewOAuthServer(t)
			vars := authEnv(t)
			vars["SSH_CONNECTION"] = "10.0.0.2 50000 10.0.0.1 22"
			client := filepath.Join(vars["HOME"], "secrets", "client.json")
			as.WriteClient(t, client)
			orig := openBrowser
			t.Cleanup(func() { openBrowser = orig })
			openBrowser = func(string) error { t.Error("opened a browser over SSH"); return nil }

			r := startAuth(t, vars, "login", "--oauth-client", "~/secrets/client.json", "--port", "0")
			r.waitFor(t, ") here:")
			addr := testbed.Consent(t, printedURL(t, r.stderr.String()))
			if forged {
				u, _ := url.Parse(addr)
				q := u.Query()
				q.Set("state", "not-the-state")
				u.RawQuery = q.Encode()
				addr = u.String()
			}
			go fmt.Fprintln(r.stdin, addr) // in the background: a command that doesn't read must not hang the test
			code := r.wait(t)
			cache := filepath.Join(vars["XDG_STATE_HOME"], "triage", "token.json")
			_, statErr := os.Stat(cache)
			if !forged {
				if code != 0 || statErr != nil {
					t.Fatalf("exit %d, cache %v\n%s", code, statErr, r.stderr)
				}
				if f := as.TokenForms(); len(f) != 1 || f[0].Get("code_verifier") == "" {
					t.Errorf("token requests: %v", f)
				}
				noSecrets(t, "login", r.stderr.String())
				return
			}
			if code != exitUsage || !strings.Contains(r.stderr.String(), "state does not match") {
				t.Errorf("forged state: exit %d\n%s", code, r.stderr)
			}
			if f := as.TokenForms(); len(f) != 0 {
				t.Errorf("a forged redirect's code was exchanged: %v", f)
			}
			if !errors.Is(statErr, fs.ErrNotExist) {
				t.Errorf("a login was saved: %v", statErr)
			}
		})
	}
}

// Revocation fails: the file is deleted all the same, and the exit code and message say
// the login is still valid at Google.
func TestAuthLogoutRevokeFails(t *testing.T) {
	as := testbed.NewOAuthServer(t)
	as.FailRevoke(503)
	vars := authEnv(t)
	cache := filepath.Join(vars["XDG_STATE_HOME"], "triage", "token.json")
	if err := googleauth.WriteLoginRecord(cache, &googleauth.LoginRecord{CachedLogin: googleauth.CachedLogin{ClientID: testbed.ClientID,
		Token: tokenFor("ya29.at-1", "1//rt-1"), Email: testbed.Email}, RevokeURI: as.URL + "/revoke"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := authCmd(t, vars, "logout")
	if code != exitPartial || !strings.Contains(errOut, "not revoked") || !strings.Contains(errOut, "myaccount.google.com/permissions") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(cache); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file kept: %v", err)
	}
	if got := as.Revoked(); len(got) != 1 || got[0] != "1//rt-1" {
		t.Errorf("revoked %v", got)
	}
	noSecrets(t, "logout", out+errOut)
}

// No OAuth client configured: a usage error saying how to make one and where to name it.
func TestAuthLoginWithoutClient(t *testing.T) {
	vars := authEnv(t)
	code, _, errOut := authCmd(t, vars, "login")
	if code != exitUsage {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{"Desktop app", "oauth_client", "--oauth-client", "Cloud console", "--credentials"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("message lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = authCmd(t, vars, "login", "--oauth-client", filepath.Join(vars["HOME"], "nope.json"))
	if code != exitUsage || !strings.Contains(errOut, "nope.json") {
		t.Errorf("missing client file: %d %s", code, errOut)
	}
}

func TestAuthUsage(t *testing.T) {
	vars := authEnv(t)
	for _, args := range [][]string{{}, {"frob"}, {"status", "--port", "8085"}, {"login", "extra", "words"}, {"login", "--port", "99999"}} {
		if code, _, errOut := authCmd(t, vars, args...); code != exitUsage || !strings.Contains(errOut, "triage:") {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

func tokenFor(access, refresh string) *oauth2.Token {
	return &oauth2.Token{AccessToken: access, RefreshToken: refresh, Expiry: time.Now().Add(time.Hour)}
}

// --change-check asks for the Drive metadata scope as well (the change check's), and only
// then: a plain login asks for what it always did.
func TestAuthLoginChangeCheckScope(t *testing.T) {
	for _, withCheck := range []bool{false, true} {
		t.Run(fmt.Sprintf("change-check=%v", withCheck), func(t *testing.T) {
			as := testbed.NewOAuthServer(t)
			vars := authEnv(t)
			vars["SSH_CONNECTION"] = "10.0.0.2 50000 10.0.0.1 22"
			client := filepath.Join(vars["HOME"], "client.json")
			as.WriteClient(t, client)
			args := []string{"login", "--oauth-client", client, "--port", "0"}
			if withCheck {
				args = append(args, "--change-check")
			}
			r := startAuth(t, vars, args...)
			r.waitFor(t, ") here:")
			addr := testbed.Consent(t, printedURL(t, r.stderr.String()))
			go fmt.Fprintln(r.stdin, addr)
			if code := r.wait(t); code != 0 {
				t.Fatalf("exit %d\n%s", code, r.stderr)
			}
			q := as.AuthQueries()
			if len(q) != 1 {
				t.Fatalf("%d authorize requests", len(q))
			}
			scope := q[0].Get("scope")
			if got := strings.Contains(scope, "drive.metadata.readonly"); got != withCheck {
				t.Errorf("scope %q: drive.metadata.readonly asked for %v, want %v", scope, got, withCheck)
			}
			if !strings.Contains(scope, "spreadsheets") {
				t.Errorf("scope %q without spreadsheets", scope)
			}
			// The server grants the Sheets scope only: the login holds, and says the change
			// check is off and how to turn it on.
			if got := strings.Contains(r.stderr.String(), "Drive metadata scope was not granted"); got != withCheck {
				t.Errorf("the note on the ungranted scope shown %v, want %v:\n%s", got, withCheck, r.stderr)
			}
		})
	}
}
