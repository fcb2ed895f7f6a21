package testbed

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The OAuth client OAuthServer knows, and the account it signs in.
const (
	ClientID      = "cid-123.apps.googleusercontent.com"
	ClientSecret  = "GOCSPX-test-secret"
	Email         = "ann@example.com"
	GrantedScopes = "openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/spreadsheets"
)

// OAuthServer is a local authorization server, as Google's is to a Desktop client: an
// authorize endpoint that redirects with a code (as after consent), a token endpoint that
// checks the client and the PKCE verifier against the challenge, and refreshes, and a revoke
// endpoint. It records every request. Access tokens are "ya29.at-N", refresh tokens
// "1//rt-N", N counting the tokens issued. Nothing leaves the loopback interface.
type OAuthServer struct {
	URL string

	mu             sync.Mutex
	authQueries    []url.Values
	tokenForms     []url.Values
	revoked        []string
	codes          map[string]url.Values // code → the authorize request's query
	refresh        map[string]bool
	issued         int
	firstExpiresIn int
	revokeStatus   int
}

// NewOAuthServer serves an authorization server until the test ends.
func NewOAuthServer(t testing.TB) *OAuthServer {
	t.Helper()
	o := &OAuthServer{codes: map[string]url.Values{}, refresh: map[string]bool{}, firstExpiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", o.authorize)
	mux.HandleFunc("POST /token", o.token)
	mux.HandleFunc("POST /revoke", o.revoke)
	o.URL = Serve(t, mux).URL
	return o
}

// authorize accepts only what a Desktop client with PKCE and offline access sends.
func (o *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o.mu.Lock()
	o.authQueries = append(o.authQueries, q)
	code := fmt.Sprintf("code-%d", len(o.authQueries))
	o.codes[code] = q
	o.mu.Unlock()
	if q.Get("response_type") != "code" || q.Get("client_id") != ClientID || q.Get("redirect_uri") == "" ||
		q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" || q.Get("access_type") != "offline" {
		http.Error(w, "invalid_request", 400)
		return
	}
	back := url.Values{"state": {q.Get("state")}, "code": {code}, "scope": {GrantedScopes}}
	http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
}

func (o *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f := r.PostForm
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tokenForms = append(o.tokenForms, f)
	fail := func(e, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]string{"error": e, "error_description": desc})
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	if id != ClientID || secret != ClientSecret {
		fail("invalid_client", "bad client")
		return
	}
	resp := map[string]any{"token_type": "Bearer", "scope": GrantedScopes}
	switch f.Get("grant_type") {
	case "authorization_code":
		q, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code"))
		if !ok {
			fail("invalid_grant", "unknown or used code")
			return
		}
		if f.Get("redirect_uri") != q.Get("redirect_uri") {
			fail("invalid_grant", "redirect_uri mismatch")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if q.Get("code_challenge_method") != "S256" || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
			fail("invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
		o.issued++
		rt := fmt.Sprintf("1//rt-%d", o.issued)
		o.refresh[rt] = true
		resp["access_token"] = fmt.Sprintf("ya29.at-%d", o.issued)
		resp["refresh_token"] = rt
		resp["expires_in"] = o.firstExpiresIn
		resp["id_token"] = FakeIDToken(Email)
	case "refresh_token":
		if !o.refresh[f.Get("refresh_token")] {
			fail("invalid_grant", "Token has been expired or revoked.")
			return
		}
		o.issued++
		resp["access_token"] = fmt.Sprintf("ya29.at-%d", o.issued)
		resp["expires_in"] = 3600
	default:
		fail("unsupported_grant_type", f.Get("grant_type"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func (o *OAuthServer) revoke(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.revoked = append(o.revoked, r.PostForm.Get("token"))
	if o.revokeStatus != 0 {
		http.Error(w, `{"error":"backend_error"}`, o.revokeStatus)
		return
	}
	delete(o.refresh, r.PostForm.Get("token"))
}

// SetFirstExpiresIn sets expires_in (seconds) of the tokens a code exchange issues (3600
// unless set).
func (o *OAuthServer) SetFirstExpiresIn(s int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.firstExpiresIn = s
}

// FailRevoke makes the revoke endpoint answer status (0: succeed again).
func (o *OAuthServer) FailRevoke(status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.revokeStatus = status
}

// AddRefreshToken makes rt a refresh token the token endpoint accepts.
func (o *OAuthServer) AddRefreshToken(rt string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refresh[rt] = true
}

// AuthQueries are the queries of the authorize requests so far.
func (o *OAuthServer) AuthQueries() []url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]url.Values(nil), o.authQueries...)
}

// TokenForms are the forms posted to the token endpoint so far.
func (o *OAuthServer) TokenForms() []url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]url.Values(nil), o.tokenForms...)
}

// Revoked are the tokens posted to the revoke endpoint so far.
func (o *OAuthServer) Revoked() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.revoked...)
}

// Consent plays the user in the browser at the authorization URL, consenting: it returns the
// address the browser is redirected to (not followed).
func Consent(t testing.TB, authURL string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %s", resp.Status)
	}
	return resp.Header.Get("Location")
}

// FakeIDToken is an unsigned JWT with an email claim.
func FakeIDToken(email string) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"iss": "https://accounts.google.com", "email": email, "email_verified": true})
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(claims) + ".c2ln"
}

// WriteClient writes, at path, a Desktop client_secret.json whose endpoints are this server.
func (o *OAuthServer) WriteClient(t testing.TB, path string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"installed": map[string]any{
		"client_id": ClientID, "client_secret": ClientSecret, "project_id": "demo",
		"auth_uri": o.URL + "/authorize", "token_uri": o.URL + "/token", "revoke_uri": o.URL + "/revoke",
		"redirect_uris": []string{"http://localhost"},
	}})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// ClientFile writes the client_secret.json under a fresh t.TempDir() and returns its path.
func (o *OAuthServer) ClientFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "client_secret.json")
	o.WriteClient(t, p)
	return p
}
