package sheets_test

import (
	"crypto/rand"
	"crypto/rsa"
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

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// These tests hold what Connect adds to googleauth.Find (whose own tests are the sign-in's):
// the emulator needs no credential, the credential's token and quota project reach the
// Sheets API through the store's client, a service account asks for the change check's
// Drive scope, the identity names the account in the store's errors, and a refused sign-in
// is the store's ErrUnauthorized.

// isolateEnv makes sure no real credentials or emulator setting leak into a test.
func isolateEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPDATA", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(home, "gcloud"))
	t.Setenv(sheets.EmulatorHostEnv, "")
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

// lastQuotaProject is the X-Goog-User-Project header of the last API request.
var lastQuotaProject sync.Map

// emulatorServer serves a small inbox workbook.
func emulatorServer(t *testing.T) (*emulator.Emulator, *httptest.Server) {
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "auth", Title: "auth", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lastQuotaProject.Store(t.Name(), r.Header.Get("X-Goog-User-Project"))
		emu.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return emu, srv
}

func loadThrough(t *testing.T, a sheets.AuthOptions) (*sheets.Store, googleauth.Identity) {
	t.Helper()
	svc, id, err := sheets.Connect(ctx(t), a)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	s := sheets.New(ctx(t), svc, sheets.Options{SpreadsheetID: "auth", Tabs: []model.TabConfig{inboxTab("", "new")}, Identity: id})
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(wb.Tabs) != 1 || len(wb.Tabs[0].Records) != 2 {
		t.Fatalf("bad load")
	}
	return s, id
}

func checkBearer(t *testing.T, emu *emulator.Emulator, token string) {
	t.Helper()
	reqs := emu.Requests()
	if len(reqs) == 0 {
		t.Fatal("the emulator received nothing")
	}
	for _, r := range reqs {
		if r.Authorization != "Bearer "+token {
			t.Errorf("%s sent Authorization %q, want Bearer %s", r.Method, r.Authorization, token)
		}
	}
}

// A service-account key asks for Drive's metadata too (the change check before a refresh,
// change.go), its token reaches the Sheets API, and a 403 names the service account to
// share the sheet with.
func TestConnectServiceAccount(t *testing.T) {
	isolateEnv(t)
	emu, srv := emulatorServer(t)
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

	s, id := loadThrough(t, sheets.AuthOptions{CredentialsFile: path, APIEndpoint: srv.URL})
	if id.Kind != googleauth.KindServiceAccount || id.Email != email || id.Source != path {
		t.Errorf("identity = %+v", id)
	}
	forms := tok.Forms()
	if len(forms) != 1 {
		t.Fatalf("token server got %d requests, want 1 (token reused)", len(forms))
	}
	parts := strings.Split(forms[0].Get("assertion"), ".")
	if len(parts) != 3 {
		t.Fatalf("assertion is not a JWT: %q", forms[0].Get("assertion"))
	}
	var claims struct{ Scope string }
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(claims.Scope, "auth/spreadsheets") || !strings.Contains(claims.Scope, "auth/drive.metadata.readonly") {
		t.Errorf("claims = %+v", claims)
	}
	checkBearer(t, emu, "ya29.service-account-token")

	emu.InjectFault(emulator.Fault{Status: 403, Times: 2})
	if _, err := s.Load(ctx(t)); !errors.Is(err, sheets.ErrNotShared) || !strings.Contains(err.Error(), email) {
		t.Errorf("403: %v", err)
	}
}

// An authorized-user file's quota project is billed on every Sheets API request the store
// sends, under its refreshed token.
func TestConnectAuthorizedUser(t *testing.T) {
	isolateEnv(t)
	emu, srv := emulatorServer(t)
	tok := newTokenServer(t, "ya29.user-token")
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
		"client_secret": "shh", "refresh_token": "1//refresh", "token_uri": tok.URL + "/token", "quota_project_id": "billing-proj"})
	path := filepath.Join(t.TempDir(), "adc.json")
	os.WriteFile(path, b, 0o600)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)

	_, id := loadThrough(t, sheets.AuthOptions{APIEndpoint: srv.URL, Getenv: os.Getenv})
	if id.Kind != googleauth.KindAuthorizedUser || id.Source != path {
		t.Errorf("identity = %+v", id)
	}
	checkBearer(t, emu, "ya29.user-token")
	if qp, _ := lastQuotaProject.Load(t.Name()); qp != "billing-proj" {
		t.Errorf("X-Goog-User-Project = %q, want the file's quota_project_id", qp)
	}
}

// A token server that refuses the credentials is reported at Connect as the store's
// ErrUnauthorized, with what to do; a credentials file that isn't there is ErrNoCredentials.
func TestConnectTokenRefused(t *testing.T) {
	isolateEnv(t)
	tok := newTokenServer(t, "x")
	tok.fail = true
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": tok.URL + "/token"})
	path := filepath.Join(t.TempDir(), "user.json")
	os.WriteFile(path, b, 0o600)
	_, _, err := sheets.Connect(ctx(t), sheets.AuthOptions{CredentialsFile: path, APIEndpoint: "http://127.0.0.1:1/"})
	var serr *sheets.Error
	if !errors.Is(err, sheets.ErrUnauthorized) || !errors.As(err, &serr) || serr.Op != "sign in" {
		t.Fatalf("err = %v, want a sign-in Error of ErrUnauthorized", err)
	}
	for _, want := range []string{"sign in: ", "invalid_grant", tok.URL, "triage auth login"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, _, err := sheets.Connect(ctx(t), sheets.AuthOptions{CredentialsFile: filepath.Join(t.TempDir(), "nope.json")}); !errors.Is(err, sheets.ErrNoCredentials) || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing key file: %v", err)
	}
}

// SHEETS_EMULATOR_HOST (or an endpoint) means no credentials at all. Connect reads the
// variable only through AuthOptions.Getenv: without it, the variable is not seen.
func TestConnectEmulator(t *testing.T) {
	isolateEnv(t)
	emu, srv := emulatorServer(t)
	t.Setenv(sheets.EmulatorHostEnv, strings.TrimPrefix(srv.URL, "http://"))
	_, id := loadThrough(t, sheets.AuthOptions{CredentialsFile: "/does/not/matter.json", Getenv: os.Getenv})
	if id.Kind != googleauth.KindEmulator || id.Source != srv.URL+"/" {
		t.Errorf("identity = %+v", id)
	}
	if _, _, err := sheets.Connect(ctx(t), sheets.AuthOptions{CredentialsFile: "/does/not/matter.json"}); err == nil || !strings.Contains(err.Error(), "matter.json") {
		t.Errorf("without Getenv, SHEETS_EMULATOR_HOST must not be read: err = %v", err)
	}
	for _, r := range emu.Requests() {
		if r.Authorization != "" {
			t.Errorf("%s sent Authorization %q to the emulator", r.Method, r.Authorization)
		}
	}
}
