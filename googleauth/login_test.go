package googleauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/internal/testbed"
	"golang.org/x/oauth2"
)

// withState replaces the state of a redirect address.
func withState(t *testing.T, addr, state string) string {
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("state", state)
	u.RawQuery = q.Encode()
	return u.String()
}

// visit is the browser following the redirect to the loopback listener.
func visit(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get(addr)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type loginResult struct {
	rec *googleauth.LoginRecord
	err error
}

// startFlow starts a login against o and waits for it in the background.
func startFlow(t *testing.T, o *testbed.OAuthServer, opts googleauth.LoginOptions) (*googleauth.LoginFlow, string, chan loginResult) {
	t.Helper()
	c, err := googleauth.ReadOAuthClient(o.ClientFile(t))
	if err != nil {
		t.Fatal(err)
	}
	opts.Client = c
	if opts.CacheFile == "" {
		opts.CacheFile = filepath.Join(t.TempDir(), "state", "triage", "token.json")
	}
	f, err := googleauth.StartLogin(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ch := make(chan loginResult, 1)
	go func() {
		rec, err := f.Wait(ctx(t))
		ch <- loginResult{rec, err}
	}()
	return f, opts.CacheFile, ch
}

func result(t *testing.T, ch chan loginResult) loginResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the login flow did not finish")
	}
	return loginResult{}
}

// checkSaved checks the saved login file: mode 0600, the tokens, the account, the scopes.
func checkSaved(t *testing.T, path, access, refresh string) *googleauth.LoginRecord {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("login not saved: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("login file mode %04o, want 0600", st.Mode().Perm())
	}
	rec, err := googleauth.ReadLoginRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Token.AccessToken != access || rec.Token.RefreshToken != refresh || rec.Email != testbed.Email || rec.ClientID != testbed.ClientID {
		t.Errorf("saved login: access %q refresh %q email %q client %q", rec.Token.AccessToken, rec.Token.RefreshToken, rec.Email, rec.ClientID)
	}
	if !strings.Contains(strings.Join(rec.Scopes, " "), "auth/spreadsheets") {
		t.Errorf("saved scopes %v", rec.Scopes)
	}
	if _, err := googleauth.ReadCachedLogin(path); err != nil {
		t.Errorf("Find can't read the login file: %v", err)
	}
	return rec
}

// The browser reaches the loopback listener: the authorization request carries the client,
// the loopback redirect, the S256 challenge, offline access and a state; the code is
// exchanged with the verifier matching the challenge; the login is saved 0600.
func TestLoginLoopback(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	f, path, ch := startFlow(t, o, googleauth.LoginOptions{})
	if !strings.HasPrefix(f.RedirectURI(), "http://127.0.0.1:") || f.Port() == 0 {
		t.Fatalf("redirect %q port %d", f.RedirectURI(), f.Port())
	}
	redirect := testbed.Consent(t, f.URL())
	q := o.AuthQueries()[0]
	for k, want := range map[string]string{
		"client_id": testbed.ClientID, "redirect_uri": f.RedirectURI(), "response_type": "code",
		"code_challenge_method": "S256", "access_type": "offline", "prompt": "consent",
	} {
		if q.Get(k) != want {
			t.Errorf("authorize %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if len(q.Get("state")) < 16 || len(q.Get("code_challenge")) != 43 {
		t.Errorf("state %q, code_challenge %q", q.Get("state"), q.Get("code_challenge"))
	}
	if sc := strings.Fields(q.Get("scope")); len(sc) != 3 || sc[0] != "https://www.googleapis.com/auth/spreadsheets" || sc[1] != "openid" || sc[2] != "email" {
		t.Errorf("scope = %q", q.Get("scope"))
	}
	if !strings.HasPrefix(redirect, f.RedirectURI()+"?") {
		t.Fatalf("redirected to %q", redirect)
	}

	code, body := visit(t, redirect)
	if code != 200 || !strings.Contains(body, "signed in, you can close this tab") {
		t.Errorf("loopback page: %d %s", code, body)
	}
	r := result(t, ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	forms := o.TokenForms()
	if len(forms) != 1 || forms[0].Get("grant_type") != "authorization_code" {
		t.Fatalf("token requests: %v", forms)
	}
	v := forms[0].Get("code_verifier")
	sum := sha256.Sum256([]byte(v))
	if v == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") || forms[0].Get("redirect_uri") != f.RedirectURI() {
		t.Errorf("exchange: verifier %q (challenge %q), redirect_uri %q", v, q.Get("code_challenge"), forms[0].Get("redirect_uri"))
	}
	if r.rec.Email != testbed.Email {
		t.Errorf("email %q", r.rec.Email)
	}
	rec := checkSaved(t, path, "ya29.at-1", "1//rt-1")
	if rec.RevokeURI != o.URL+"/revoke" {
		t.Errorf("revoke uri %q", rec.RevokeURI)
	}
	// The listener answers nothing else now.
	if code, _ := visit(t, redirect); code == 200 {
		t.Errorf("a second visit succeeded")
	}
}

// No browser reaches the listener: the user pastes the address the browser was sent to (or
// just its query). Lines that are not such an address get a hint, and the flow keeps waiting.
func TestLoginPastedAddress(t *testing.T) {
	isolateEnv(t)
	for _, form := range []string{"full address", "query only"} {
		t.Run(form, func(t *testing.T) {
			o := testbed.NewOAuthServer(t)
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			var log testbed.Buffer
			f, path, ch := startFlow(t, o, googleauth.LoginOptions{Paste: pr, Log: &log})
			redirect := testbed.Consent(t, f.URL())
			paste := redirect
			if form == "query only" {
				paste = redirect[strings.Index(redirect, "?")+1:]
			}
			// In the background: a flow that doesn't read must fail the test, not hang it.
			go fmt.Fprintf(pw, "\nhello\n%s\n  %s  \n", f.URL(), paste)
			r := result(t, ch)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if l := log.String(); !strings.Contains(l, "has no code") || !strings.Contains(l, "the sign-in address to open") {
				t.Errorf("hints for wrong pastes:\n%s", l)
			}
			forms := o.TokenForms()
			if len(forms) != 1 || forms[0].Get("code_verifier") == "" || forms[0].Get("code") != "code-1" {
				t.Errorf("token requests: %v", forms)
			}
			checkSaved(t, path, "ya29.at-1", "1//rt-1")
		})
	}
}

// A redirect whose state is not the flow's is refused, from the browser or pasted: no code
// is sent to the token endpoint and nothing is saved.
func TestLoginWrongStateRefused(t *testing.T) {
	isolateEnv(t)
	for _, via := range []string{"browser", "paste"} {
		t.Run(via, func(t *testing.T) {
			o := testbed.NewOAuthServer(t)
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			f, path, ch := startFlow(t, o, googleauth.LoginOptions{Paste: pr})
			forged := withState(t, testbed.Consent(t, f.URL()), "forged-state")
			if via == "browser" {
				code, body := visit(t, forged)
				if code != 400 || !strings.Contains(body, "state") {
					t.Errorf("loopback page for a wrong state: %d %s", code, body)
				}
			} else {
				go fmt.Fprintln(pw, forged)
			}
			r := result(t, ch)
			if r.err == nil || !strings.Contains(r.err.Error(), "refused") || !strings.Contains(r.err.Error(), "state") {
				t.Fatalf("err = %v, want a refused state", r.err)
			}
			if forms := o.TokenForms(); len(forms) != 0 {
				t.Errorf("a code with a wrong state reached the token endpoint: %v", forms)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a login was saved: %v", err)
			}
		})
	}
}

// The user denies access: the flow ends with what to do, nothing is exchanged.
func TestLoginAccessDenied(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	f, _, ch := startFlow(t, o, googleauth.LoginOptions{})
	u, _ := url.Parse(testbed.Consent(t, f.URL()))
	state := u.Query().Get("state")
	code, _ := visit(t, f.RedirectURI()+"?error=access_denied&state="+url.QueryEscape(state))
	if code != 400 {
		t.Errorf("page status %d", code)
	}
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "access was not allowed") {
		t.Errorf("err = %v", r.err)
	}
	if len(o.TokenForms()) != 0 {
		t.Error("token endpoint called")
	}
}

// A flow nobody answers times out with what to do.
func TestLoginTimeout(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	_, _, ch := startFlow(t, o, googleauth.LoginOptions{Timeout: 100 * time.Millisecond})
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "no answer from the browser") || !strings.Contains(r.err.Error(), "triage auth login") {
		t.Errorf("err = %v", r.err)
	}
}

// A fixed --port is used, and a busy one is a clear error.
func TestLoginFixedPort(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	f, _, _ := startFlow(t, o, googleauth.LoginOptions{Timeout: time.Second})
	c, _ := googleauth.ReadOAuthClient(o.ClientFile(t))
	_, err := googleauth.StartLogin(googleauth.LoginOptions{Client: c, CacheFile: filepath.Join(t.TempDir(), "t.json"), Port: f.Port()})
	if err == nil || !strings.Contains(err.Error(), "--port") {
		t.Errorf("busy port: %v", err)
	}
}

// After login, the access token expires: Find refreshes it at the client's token_uri,
// the Sheets API sees the new token, and the refreshed token is saved back to the cache
// file (still 0600), so the next run doesn't refresh again.
func TestLoginRefreshOnExpiry(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	o.SetFirstExpiresIn(1) // expired at once: oauth2 renews 10s before expiry
	f, path, ch := startFlow(t, o, googleauth.LoginOptions{})
	visit(t, testbed.Consent(t, f.URL()))
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	checkSaved(t, path, "ya29.at-1", "1//rt-1")

	api := newAPIServer(t)
	id := signIn(t, googleauth.Options{TokenCacheFile: path}, api)
	if id.Kind != googleauth.KindCachedLogin || id.Email != testbed.Email {
		t.Errorf("identity %+v", id)
	}
	forms := o.TokenForms()
	if len(forms) != 2 || forms[1].Get("grant_type") != "refresh_token" || forms[1].Get("refresh_token") != "1//rt-1" || forms[1].Get("client_id") != testbed.ClientID {
		t.Fatalf("token requests: %v", forms)
	}
	checkBearer(t, api, "ya29.at-2")
	if reqs := api.Requests(); reqs[len(reqs)-1].authorization != "Bearer ya29.at-2" {
		t.Errorf("last request: %q", reqs[len(reqs)-1].authorization)
	}
	rec := checkSaved(t, path, "ya29.at-2", "1//rt-1")
	if time.Until(rec.Token.Expiry) < 30*time.Minute {
		t.Errorf("saved expiry %v is not the refreshed token's", rec.Token.Expiry)
	}
	if rec.RevokeURI != o.URL+"/revoke" {
		t.Errorf("refresh lost the login's other fields: %+v", rec)
	}
}

// SavingTokenSource writes each new token back, and leaves a file holding another login
// (or none) alone.
func TestLoginSavingTokenSource(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	o.AddRefreshToken("rt-x")
	path := filepath.Join(t.TempDir(), "token.json")
	start := &oauth2.Token{AccessToken: "old", RefreshToken: "rt-x", Expiry: time.Now().Add(-time.Minute)}
	write := func(refresh string) {
		t.Helper()
		err := googleauth.WriteLoginRecord(path, &googleauth.LoginRecord{CachedLogin: googleauth.CachedLogin{ClientID: testbed.ClientID, ClientSecret: testbed.ClientSecret,
			TokenURI: o.URL + "/token", Token: &oauth2.Token{AccessToken: "old", RefreshToken: refresh}, Email: testbed.Email}, Scopes: []string{"s"}, RevokeURI: "r"})
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := &oauth2.Config{ClientID: testbed.ClientID, ClientSecret: testbed.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: o.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}}

	write("rt-x")
	ts := googleauth.SavingTokenSource(path, start, cfg.TokenSource(ctx(t), start))
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := googleauth.ReadLoginRecord(path)
	if err != nil || rec.Token.AccessToken != tok.AccessToken || rec.Token.RefreshToken != "rt-x" || rec.RevokeURI != "r" || rec.Email != testbed.Email {
		t.Fatalf("after refresh: %+v %v", rec, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o", st.Mode().Perm())
	}

	// Another login replaced the file: a refresh of the old one must not overwrite it.
	write("rt-other")
	start2 := &oauth2.Token{AccessToken: "old2", RefreshToken: "rt-x", Expiry: time.Now().Add(-time.Minute)}
	if _, err := googleauth.SavingTokenSource(path, start2, cfg.TokenSource(ctx(t), start2)).Token(); err != nil {
		t.Fatal(err)
	}
	if rec, _ := googleauth.ReadLoginRecord(path); rec.Token.RefreshToken != "rt-other" || rec.Token.AccessToken != "old" {
		t.Errorf("another login was overwritten: %+v", rec.Token)
	}

	// Logged out meanwhile: the file is not brought back.
	os.Remove(path)
	start3 := &oauth2.Token{AccessToken: "old3", RefreshToken: "rt-x", Expiry: time.Now().Add(-time.Minute)}
	if _, err := googleauth.SavingTokenSource(path, start3, cfg.TokenSource(ctx(t), start3)).Token(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a logged-out login came back: %v", err)
	}
}

// Logout revokes the refresh token at the client's revoke URI and deletes the file; when
// revocation fails, the file is deleted anyway and the error says so without the token.
func TestLoginLogout(t *testing.T) {
	isolateEnv(t)
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprintf("revoke fails=%v", failing), func(t *testing.T) {
			o := testbed.NewOAuthServer(t)
			f, path, ch := startFlow(t, o, googleauth.LoginOptions{})
			visit(t, testbed.Consent(t, f.URL()))
			if r := result(t, ch); r.err != nil {
				t.Fatal(r.err)
			}
			if failing {
				o.FailRevoke(503)
			}
			res, err := googleauth.Logout(ctx(t), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Revoked(); len(got) != 1 || got[0] != "1//rt-1" {
				t.Errorf("revoked %v, want the refresh token", got)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the login file is still there: %v", err)
			}
			if res.Email != testbed.Email || res.Revoked == failing || (res.RevokeErr != nil) != failing {
				t.Errorf("result %+v", res)
			}
			if failing && (strings.Contains(res.RevokeErr.Error(), "1//rt-1") || !strings.Contains(res.RevokeErr.Error(), "myaccount.google.com/permissions")) {
				t.Errorf("revoke error: %v", res.RevokeErr)
			}
			if _, err := googleauth.Logout(ctx(t), path, nil); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("second logout: %v", err)
			}
		})
	}
}

// ReadOAuthClient takes a Desktop client file, honours its endpoints, and explains what
// else it was given.
func TestLoginReadOAuthClient(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(v)
		if s, ok := v.(string); ok {
			b = []byte(s)
		}
		os.WriteFile(p, b, 0o600)
		return p
	}
	c, err := googleauth.ReadOAuthClient(write("desktop.json", map[string]any{"installed": map[string]any{"client_id": "id", "client_secret": "s"}}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != "installed" || c.AuthURI != "https://accounts.google.com/o/oauth2/auth" || c.TokenURI != "https://oauth2.googleapis.com/token" || c.RevokeURI != googleauth.DefaultRevokeURI {
		t.Errorf("defaults: %+v", c)
	}
	c, err = googleauth.ReadOAuthClient(write("custom.json", map[string]any{"installed": map[string]any{"client_id": "id", "token_uri": "https://sso.example.com/token", "auth_uri": "http://127.0.0.1:9/a"}}))
	if err != nil || c.TokenURI != "https://sso.example.com/token" || c.AuthURI != "http://127.0.0.1:9/a" {
		t.Errorf("endpoints not honoured: %+v %v", c, err)
	}
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"sa.json":      {map[string]any{"type": "service_account", "client_email": "x@y"}, "service-account key"},
		"junk.json":    {"not json", "not a Desktop OAuth client file"},
		"other.json":   {map[string]any{"foo": 1}, "not a Desktop OAuth client file"},
		"noid.json":    {map[string]any{"installed": map[string]any{"client_secret": "s"}}, "no client_id"},
		"http.json":    {map[string]any{"installed": map[string]any{"client_id": "i", "token_uri": "http://evil.example.com/token"}}, "plain http"},
		"webnoport.js": {map[string]any{"web": map[string]any{"client_id": "i", "redirect_uris": []string{"https://app.example.com/cb"}}}, ""},
	} {
		_, err := googleauth.ReadOAuthClient(write(name, tc.v))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		} else if !strings.Contains(err.Error(), "Desktop app") && name != "http.json" && name != "noid.json" {
			t.Errorf("%s: error doesn't say how to get a Desktop client: %v", name, err)
		}
	}
	if _, err := googleauth.ReadOAuthClient(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "Desktop app") {
		t.Errorf("missing file: %v", err)
	}
	// A Web client without a registered loopback redirect can't log in: said before listening.
	web, _ := googleauth.ReadOAuthClient(filepath.Join(dir, "webnoport.js"))
	if _, err := googleauth.StartLogin(googleauth.LoginOptions{Client: web, CacheFile: filepath.Join(dir, "t.json")}); err == nil || !strings.Contains(err.Error(), "redirect_uri_mismatch") {
		t.Errorf("web client: %v", err)
	}
}

// An error redirect is only believed with the login's state, and its text is made inert
// before it can reach a terminal.
func TestLoginErrorRedirectNeedsStateAndIsSanitised(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	f, _, ch := startFlow(t, o, googleauth.LoginOptions{})
	visit(t, f.RedirectURI()+"?error=access_denied&state=forged")
	r := result(t, ch)
	if r.err == nil || !strings.Contains(r.err.Error(), "state does not match") {
		t.Fatalf("a forged error redirect ended the login as %v", r.err)
	}

	f, _, ch = startFlow(t, o, googleauth.LoginOptions{})
	u, _ := url.Parse(testbed.Consent(t, f.URL()))
	state := u.Query().Get("state")
	visit(t, f.RedirectURI()+"?error=server_error&error_description="+url.QueryEscape("boom\x1b]0;pwned\x07\u202e")+"&state="+url.QueryEscape(state))
	r = result(t, ch)
	if r.err == nil || !strings.Contains(r.err.Error(), "server_error: boom") {
		t.Fatalf("err = %v", r.err)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(r.err.Error(), bad) {
			t.Errorf("error text carries %q to the terminal: %q", bad, r.err.Error())
		}
	}
}
