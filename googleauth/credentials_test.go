package googleauth_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/internal/testbed"
)

// isolateEnv makes sure no real credentials leak into a test.
func isolateEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPDATA", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(home, "gcloud"))
	return home
}

// tokenServer is a local OAuth token endpoint that records what it was sent.
type tokenServer struct {
	*httptest.Server
	mu    sync.Mutex
	forms []url.Values
	token string
	fail  bool
}

func newTokenServer(t *testing.T, token string) *tokenServer {
	ts := &tokenServer{token: token}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		ts.mu.Lock()
		ts.forms = append(ts.forms, r.PostForm)
		fail := ts.fail
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if fail {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": ts.token, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) Forms() []url.Values {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]url.Values(nil), ts.forms...)
}

// apiRequest is what the API server saw of one request.
type apiRequest struct {
	method, path, authorization, quotaProject string
}

// apiServer stands in for the Sheets API: it records each request's credentials and answers
// every one with an empty JSON object.
type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []apiRequest
}

func newAPIServer(t *testing.T) *apiServer {
	a := &apiServer{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.reqs = append(a.reqs, apiRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Goog-User-Project")})
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	t.Cleanup(a.Close)
	return a
}

// Requests are the requests the server has seen, oldest first.
func (a *apiServer) Requests() []apiRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]apiRequest(nil), a.reqs...)
}

// signIn finds the credential opts name and sends two API requests with it, as a store's
// first load would.
func signIn(t *testing.T, opts googleauth.Options, api *apiServer) googleauth.Identity {
	t.Helper()
	cred, err := googleauth.Find(ctx(t), opts)
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	client := &http.Client{Transport: cred.Transport(nil)}
	for _, path := range []string{"/v4/spreadsheets/auth", "/v4/spreadsheets/auth/values:batchGet"} {
		resp, err := client.Get(api.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
	}
	return cred.Identity
}

func checkBearer(t *testing.T, api *apiServer, token string) {
	t.Helper()
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("the API received nothing")
	}
	for _, r := range reqs {
		if r.authorization != "Bearer "+token {
			t.Errorf("%s %s sent Authorization %q, want Bearer %s", r.method, r.path, r.authorization, token)
		}
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// A service-account key goes through the real JWT-bearer flow, against the key file's
// token_uri, asking for the service-account scopes too, and its token reaches the API.
func TestFindServiceAccountJWT(t *testing.T) {
	isolateEnv(t)
	api := newAPIServer(t)
	tok := newTokenServer(t, "ya29.service-account-token")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	const email = "triage-bot@demo-project.iam.gserviceaccount.com"
	keyJSON, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "demo-project",
		"private_key_id": "kid-1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      "1234567890",
		"token_uri":      tok.URL + "/token",
	})
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, keyJSON, 0o600); err != nil {
		t.Fatal(err)
	}

	id := signIn(t, googleauth.Options{CredentialsFile: path, ServiceAccountScopes: []string{googleauth.ChangeCheckScope}}, api)
	if id.Kind != googleauth.KindServiceAccount || id.Email != email || id.Source != path {
		t.Errorf("identity = %+v", id)
	}
	forms := tok.Forms()
	if len(forms) != 1 {
		t.Fatalf("token server got %d requests, want 1 (token reused)", len(forms))
	}
	if g := forms[0].Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Errorf("grant_type = %q", g)
	}
	// The assertion is a JWT signed with the key, for the key file's token_uri.
	parts := strings.Split(forms[0].Get("assertion"), ".")
	if len(parts) != 3 {
		t.Fatalf("assertion is not a JWT: %q", forms[0].Get("assertion"))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("assertion signature: %v", err)
	}
	var claims struct{ Iss, Aud, Scope string }
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	// The service-account scopes too (the sheets store asks for Drive's metadata, its change
	// check before a refresh).
	if claims.Iss != email || claims.Aud != tok.URL+"/token" || !strings.Contains(claims.Scope, "auth/spreadsheets") || !strings.Contains(claims.Scope, "auth/drive.metadata.readonly") {
		t.Errorf("claims = %+v", claims)
	}
	checkBearer(t, api, "ya29.service-account-token")
}

// GOOGLE_APPLICATION_CREDENTIALS is honoured like --credentials; an authorized-user file
// refreshes its token at its token_uri.
func TestFindAuthorizedUser(t *testing.T) {
	isolateEnv(t)
	api := newAPIServer(t)
	tok := newTokenServer(t, "ya29.user-token")
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
		"client_secret": "shh", "refresh_token": "1//refresh", "token_uri": tok.URL + "/token", "quota_project_id": "billing-proj"})
	path := filepath.Join(t.TempDir(), "adc.json")
	os.WriteFile(path, b, 0o600)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)

	id := signIn(t, googleauth.Options{Getenv: os.Getenv}, api)
	if id.Kind != googleauth.KindAuthorizedUser || id.Source != path {
		t.Errorf("identity = %+v", id)
	}
	forms := tok.Forms()
	if len(forms) != 1 || forms[0].Get("grant_type") != "refresh_token" || forms[0].Get("refresh_token") != "1//refresh" || forms[0].Get("client_id") != "cid.apps.googleusercontent.com" {
		t.Fatalf("token requests = %v", forms)
	}
	checkBearer(t, api, "ya29.user-token")
	for _, r := range api.Requests() {
		if r.quotaProject != "billing-proj" {
			t.Errorf("%s X-Goog-User-Project = %q, want the file's quota_project_id", r.path, r.quotaProject)
		}
	}
}

// A cached `triage auth login` is used when there is no credentials file.
func TestFindCachedLogin(t *testing.T) {
	home := isolateEnv(t)
	api := newAPIServer(t)
	tok := newTokenServer(t, "ya29.refreshed")
	path := filepath.Join(home, ".config", "triage", "token.json")
	err := googleauth.WriteCachedLogin(path, &googleauth.CachedLogin{ClientID: "cid", ClientSecret: "cs", TokenURI: tok.URL + "/token",
		Token: &oauth2.Token{AccessToken: "expired", RefreshToken: "rt-9", Expiry: time.Now().Add(-time.Hour)}, Email: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("token cache mode %v, want 0600", st.Mode().Perm())
	}
	id := signIn(t, googleauth.Options{TokenCacheFile: path}, api)
	if id.Kind != googleauth.KindCachedLogin || id.Email != "ann@example.com" {
		t.Errorf("identity = %+v", id)
	}
	if forms := tok.Forms(); len(forms) != 1 || forms[0].Get("refresh_token") != "rt-9" {
		t.Errorf("token requests = %v", forms)
	}
	checkBearer(t, api, "ya29.refreshed")
}

// A token server that refuses the credentials is reported by Find, with what to do.
func TestFindTokenRefused(t *testing.T) {
	isolateEnv(t)
	tok := newTokenServer(t, "x")
	tok.fail = true
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": tok.URL + "/token"})
	path := filepath.Join(t.TempDir(), "user.json")
	os.WriteFile(path, b, 0o600)
	_, err := googleauth.Find(ctx(t), googleauth.Options{CredentialsFile: path})
	var gerr *googleauth.Error
	if !errors.Is(err, googleauth.ErrRefused) || !errors.As(err, &gerr) {
		t.Fatalf("err = %v, want an *Error of ErrRefused", err)
	}
	for _, want := range []string{"invalid_grant", tok.URL, "triage auth login"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := googleauth.Find(ctx(t), googleauth.Options{CredentialsFile: filepath.Join(t.TempDir(), "nope.json")}); !errors.Is(err, googleauth.ErrNoCredentials) || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing key file: %v", err)
	}
}

// No credentials anywhere: the error lists all three ways to get some. The environment is
// emptied and the metadata server is a local one that knows nothing, so the test never
// leaves the machine.
func TestFindNoCredentials(t *testing.T) {
	home := isolateEnv(t)
	var mdHits sync.Map
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mdHits.Store(r.URL.Path, true)
		http.NotFound(w, r)
	}))
	t.Cleanup(md.Close)
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(md.URL, "http://"))
	_, err := googleauth.Find(ctx(t), googleauth.Options{TokenCacheFile: filepath.Join(home, "no-login.json")})
	if !errors.Is(err, googleauth.ErrNoCredentials) {
		t.Fatalf("err = %v, want ErrNoCredentials", err)
	}
	for _, want := range []string{"--credentials", "share the spreadsheet", "triage auth login", "gcloud auth application-default login"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}
	asked := false
	mdHits.Range(func(k, _ any) bool { asked = true; return false })
	if !asked {
		t.Errorf("the local metadata server was never asked: did ADC look elsewhere?")
	}
	t.Logf("the error:\n%v", err)
}

// refusingTransport fails the test on any request: nothing may be sent.
type refusingTransport struct{ t *testing.T }

func (r refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.t.Errorf("a request was sent to %s", req.URL)
	return nil, errors.New("refused by the test")
}

// A credentials file's token_uri follows the OAuth client file's rule: https anywhere, plain
// http only to a loopback host. Otherwise the signed assertion, or the refresh token and
// client secret, would cross the network in clear: Find refuses before sending anything,
// naming the file and the token_uri.
func TestFindRefusesPlainHTTPTokenURI(t *testing.T) {
	home := isolateEnv(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	serviceAccount := func(tokenURI string) map[string]string {
		return map[string]string{"type": "service_account", "private_key_id": "kid", "client_id": "1",
			"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
			"client_email": "bot@p.iam.gserviceaccount.com", "token_uri": tokenURI}
	}
	user := func(tokenURI string) map[string]string {
		return map[string]string{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": tokenURI}
	}
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noNetwork := &http.Client{Transport: refusingTransport{t}}
	for _, bad := range []string{"http://oauth2.example.com/token", "http://10.0.0.7:8080/token", "http://[2001:db8::1]/token", "ftp://oauth2.example.com/token"} {
		for _, c := range []struct {
			name string
			file map[string]string
		}{{"sa.json", serviceAccount(bad)}, {"user.json", user(bad)}} {
			path := write(c.name, c.file)
			_, err := googleauth.Find(ctx(t), googleauth.Options{CredentialsFile: path, HTTPClient: noNetwork})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "token_uri") {
				t.Errorf("%s with token_uri %s: err = %v, want a refusal naming the file and the token_uri", c.name, bad, err)
			}
		}
	}

	// A saved login with such a token_uri (edited by hand) is refused the same way.
	cache := filepath.Join(home, "token.json")
	if err := googleauth.WriteCachedLogin(cache, &googleauth.CachedLogin{ClientID: "cid", ClientSecret: "cs", TokenURI: "http://oauth2.example.com/token",
		Token: &oauth2.Token{AccessToken: "old", RefreshToken: "rt", Expiry: time.Now().Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	_, err = googleauth.Find(ctx(t), googleauth.Options{TokenCacheFile: cache, HTTPClient: noNetwork})
	if err == nil || !strings.Contains(err.Error(), cache) || !strings.Contains(err.Error(), "http://oauth2.example.com/token") {
		t.Errorf("saved login: err = %v", err)
	}

	// So is gcloud's Application Default Credentials file.
	adc := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
	if err := os.MkdirAll(filepath.Dir(adc), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(user("http://oauth2.example.com/token"))
	if err := os.WriteFile(adc, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = googleauth.Find(ctx(t), googleauth.Options{TokenCacheFile: filepath.Join(home, "none.json"), HTTPClient: noNetwork, HomeDir: home})
	if err == nil || !strings.Contains(err.Error(), adc) || !strings.Contains(err.Error(), "http://oauth2.example.com/token") {
		t.Errorf("ADC file: err = %v", err)
	}
	os.Remove(adc)

	// A local token endpoint on loopback still works, by address or as localhost.
	api := newAPIServer(t)
	tok := newTokenServer(t, "ya29.loopback")
	_, port, _ := strings.Cut(strings.TrimPrefix(tok.URL, "http://"), ":")
	for i, uri := range []string{tok.URL + "/token", "http://localhost:" + port + "/token"} {
		path := write("sa-ok.json", serviceAccount(uri))
		signIn(t, googleauth.Options{CredentialsFile: path}, api)
		if n := len(tok.Forms()); n != i+1 {
			t.Errorf("%s: the loopback token server got %d requests, want %d", uri, n, i+1)
		}
	}
	checkBearer(t, api, "ya29.loopback")
}

// A saved login Google refuses as invalid_grant ("Token has been expired or revoked.") says
// what most often happened, a client in Testing whose logins Google ends after 7 days, when
// this one was made, and the ways out: log in again now, publish the consent screen, or a
// service account.
func TestExpiredLoginIsExplained(t *testing.T) {
	isolateEnv(t)
	o := testbed.NewOAuthServer(t)
	made := time.Now().Add(-8 * 24 * time.Hour).UTC().Truncate(time.Second)
	rec := googleauth.LoginRecord{CachedLogin: googleauth.CachedLogin{ClientID: testbed.ClientID, ClientSecret: testbed.ClientSecret, TokenURI: o.URL + "/token",
		Token: &oauth2.Token{AccessToken: "ya29.old", RefreshToken: "1//lapsed", Expiry: time.Now().Add(-time.Hour)}, Email: testbed.Email}, LoggedInAt: made}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "login.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = googleauth.Find(ctx(t), googleauth.Options{TokenCacheFile: path})
	if !errors.Is(err, googleauth.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	for _, want := range []string{"Token has been expired or revoked.", "in Testing lasts 7 days", made.Local().Format("2006-01-02 15:04"), "more than 7 days ago",
		"triage auth login", "Publish app", "service account"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}
