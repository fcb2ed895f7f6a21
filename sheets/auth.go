package sheets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Identity kinds: how Connect authenticated.
const (
	KindEmulator       = "emulator"
	KindServiceAccount = "service-account"
	KindAuthorizedUser = "authorized-user"
	KindCachedLogin    = "cached-login"
	KindADC            = "adc"
)

// EmulatorHostEnv names the environment variable that points triage at a local emulator
// (host:port); no credentials are used then.
const EmulatorHostEnv = "SHEETS_EMULATOR_HOST"

// DefaultScopes are the OAuth scopes Connect asks for when AuthOptions.Scopes is empty.
var DefaultScopes = []string{sheetsapi.SpreadsheetsScope}

const userAgent = "triage"

// AuthOptions says how Connect reaches the Sheets API. Endpoint resolution between flag and
// environment is the caller's, except that an empty Endpoint with SHEETS_EMULATOR_HOST set
// means http://$SHEETS_EMULATOR_HOST/.
type AuthOptions struct {
	// Endpoint is an emulator (or any unauthenticated) base URL (--endpoint): no credentials
	// are looked for or sent.
	Endpoint string
	// APIEndpoint overrides the API base URL while still authenticating (tests, proxies).
	APIEndpoint string
	// CredentialsFile is a service-account key or authorized-user JSON (--credentials, or
	// GOOGLE_APPLICATION_CREDENTIALS as the caller resolved it: see CredentialsFromEnv).
	CredentialsFile string
	// CredentialsFromEnv says CredentialsFile came from GOOGLE_APPLICATION_CREDENTIALS, so
	// errors name that variable rather than --credentials.
	CredentialsFromEnv bool
	// HomeDir is the user's home, where gcloud keeps Application Default Credentials (for
	// Identity.Source); empty: not shown.
	HomeDir string
	// Getenv, when set, is where Connect looks up SHEETS_EMULATOR_HOST,
	// GOOGLE_APPLICATION_CREDENTIALS and HOME for the options above left empty. nil: nowhere:
	// the caller resolved them (triage's settings resolver is the one reader of the
	// environment). The Google library's own Application Default Credentials search reads
	// its variables itself.
	Getenv func(string) string
	// TokenCacheFile is the CachedLogin written by `triage auth login`; it may not exist.
	TokenCacheFile string
	// Scopes are the OAuth scopes (default DefaultScopes).
	Scopes []string
	// HTTPClient is the base client (transport, timeout) for API and token requests.
	HTTPClient *http.Client
	// Pacer paces every Sheets and Drive request under the per-minute quota and waits out
	// quota answers (one Pacer may serve several connections: serve's sessions share it).
	// nil: a Pacer with Google's default quota, or against an emulator one that paces
	// nothing and only waits out its quota answers.
	Pacer *Pacer
}

// Identity is who the Sheets API sees.
type Identity struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Email is the account's address where known (a service account's client_email, the
	// cached login's email); it is the address the spreadsheet must be shared with.
	Email string
	// Source is the file the credentials came from, the metadata server, or the emulator URL.
	Source string
}

// String describes the identity for `triage auth status` and logs.
func (i Identity) String() string {
	who := i.Email
	if who == "" {
		who = "(address unknown)"
	}
	switch i.Kind {
	case KindEmulator:
		return "no credentials (emulator at " + i.Source + ")"
	case KindServiceAccount:
		return "service account " + who + " (key " + i.Source + ")"
	case KindAuthorizedUser:
		return "user " + who + " (authorized-user file " + i.Source + ")"
	case KindCachedLogin:
		return "user " + who + " (triage auth login, " + i.Source + ")"
	case KindADC:
		return "application default credentials " + who + " (" + i.Source + ")"
	}
	return i.Kind + " " + who
}

// CachedLogin is the file `triage auth login` writes and Connect reads: the OAuth client that
// performed the login, its token (with the refresh token) and the account's address.
type CachedLogin struct {
	// ClientID and ClientSecret are the OAuth client (a desktop-app client) the login used.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// TokenURI is the token endpoint (default Google's).
	TokenURI string `json:"token_uri,omitempty"`
	// Token is the access token and, above all, its refresh token.
	Token *oauth2.Token `json:"token"`
	// Email is the signed-in account, shown by `triage auth status` and in 403 errors.
	Email string `json:"email,omitempty"`
}

// ReadCachedLogin reads a CachedLogin file. A missing file returns an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadCachedLogin(path string) (*CachedLogin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c CachedLogin
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not a triage login file: %v", path, err)
	}
	if c.Token == nil || (c.Token.RefreshToken == "" && c.Token.AccessToken == "") {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	if c.ClientID == "" {
		return nil, fmt.Errorf("%s names no OAuth client (client_id)", path)
	}
	return &c, nil
}

// WriteCachedLogin writes a CachedLogin file readable by its owner only (0600), replacing
// any previous one atomically; the directory is created 0700 if needed.
func WriteCachedLogin(path string, c *CachedLogin) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".login-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// noCredentialsHelp is the body of the error when no credentials exist at all.
const noCredentialsHelp = `no Google credentials found. Any one of these fixes it:
  1. a service account: create a JSON key for it in the Cloud console, share the spreadsheet with its client_email (Editor), then pass --credentials key.json (or set GOOGLE_APPLICATION_CREDENTIALS);
  2. your own Google account: run ` + "`triage auth login`" + `;
  3. Application Default Credentials: run ` + "`gcloud auth application-default login --scopes=https://www.googleapis.com/auth/spreadsheets,https://www.googleapis.com/auth/cloud-platform`" + `.
To use a local emulator instead, set SHEETS_EMULATOR_HOST=host:port or pass --endpoint URL`

// keyFile is the part of a credentials JSON that Connect reads itself.
type keyFile struct {
	Type           string `json:"type"`
	ClientEmail    string `json:"client_email"`
	TokenURI       string `json:"token_uri"`
	QuotaProjectID string `json:"quota_project_id"`
}

// Connect builds a Sheets API client. In order: an emulator endpoint (no auth); the
// credentials file (or GOOGLE_APPLICATION_CREDENTIALS: a service-account key or an
// authorized-user file, whose token_uri is honoured); the cached `triage auth login` token if
// the file exists; Application Default Credentials. It fetches one access token before
// returning, so bad or missing credentials fail here with an error saying what to do, not
// at the first request. No credentials at all is an error wrapping ErrNoCredentials that
// lists the three ways to get some.
func Connect(ctx context.Context, a AuthOptions) (*sheetsapi.Service, Identity, error) {
	c, err := ConnectWithDrive(ctx, a)
	if err != nil {
		return nil, c.Identity, err
	}
	return c.Sheets, c.Identity, nil
}

// Conn is what ConnectWithDrive connects: the Sheets client, a Drive client over the same
// credential (nil where there is none), the HTTP client both send with, and who the API sees.
type Conn struct {
	Sheets   *sheetsapi.Service
	Drive    *drive.Service
	HTTP     *http.Client
	Identity Identity
}

// ConnectWithDrive is Connect that also returns a Drive API client over the same credential,
// for the change check (Store.WithDrive), and the HTTP client the store's streaming reads
// use (Options.HTTPClient): against an emulator, its files.get; with credentials, the same
// token, which asks for the drive.metadata.readonly scope too where the credential can ask
// for scopes (a service account; ADC and a cached login keep what they were granted, and a
// Drive answer of 403 turns the check off).
func ConnectWithDrive(ctx context.Context, a AuthOptions) (Conn, error) {
	svc, dsvc, hc, ident, err := connect(ctx, a)
	return Conn{Sheets: svc, Drive: dsvc, HTTP: hc, Identity: ident}, err
}

func connect(ctx context.Context, a AuthOptions) (*sheetsapi.Service, *drive.Service, *http.Client, Identity, error) {
	getenv := a.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if endpoint := emulatorEndpoint(a.Endpoint, getenv); endpoint != "" {
		pacer := a.Pacer
		if pacer == nil {
			pacer = &Pacer{PerMinute: -1}
		}
		hc := pacedClient(a.HTTPClient, pacer)
		svc, ident, err := connectEmulator(ctx, endpoint, hc)
		if err != nil {
			return nil, nil, nil, ident, err
		}
		dopts := []option.ClientOption{option.WithEndpoint(endpoint + "drive/v3/"), option.WithUserAgent(userAgent), option.WithHTTPClient(hc)}
		dsvc, err := drive.NewService(ctx, dopts...)
		if err != nil {
			return nil, nil, nil, ident, fmt.Errorf("connect to the emulator's Drive API at %s: %w", endpoint, err)
		}
		return svc, dsvc, hc, ident, nil
	}

	scopes := a.Scopes
	// A service-account key may ask for any scope: it asks for Drive's metadata too (the
	// change check). Other credentials keep what they were granted (asking a VM's metadata
	// server for a scope it lacks would fail the token itself); Drive's 403 says so then.
	withDrive := len(scopes) == 0
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	tokenClient := a.HTTPClient
	if tokenClient == nil {
		tokenClient = &http.Client{Timeout: 30 * time.Second}
	}
	// The token source outlives Connect's ctx (it refreshes for the whole session).
	tokCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, tokenClient)

	credFile, credEnv := a.CredentialsFile, a.CredentialsFromEnv
	if credFile == "" {
		credFile = getenv("GOOGLE_APPLICATION_CREDENTIALS")
		credEnv = credFile != ""
	}
	home := a.HomeDir
	if home == "" {
		home = getenv("HOME")
	}
	var (
		cred credSource
		err  error
	)
	switch {
	case credFile != "":
		cred, err = fromCredentialsFile(tokCtx, credFile, credEnv, scopes, withDrive)
	case a.TokenCacheFile != "" && fileExists(a.TokenCacheFile):
		cred, err = fromCachedLogin(tokCtx, a.TokenCacheFile, scopes)
	default:
		cred, err = fromDefaultCredentials(tokCtx, home, scopes)
	}
	if err != nil {
		return nil, nil, nil, Identity{}, err
	}
	if cred.tokenURI == "" && !cred.metadata {
		cred.tokenURI = google.Endpoint.TokenURL
	}

	ts := oauth2.ReuseTokenSource(nil, cred.ts)
	if _, err := fetchToken(ctx, ts); err != nil {
		return nil, nil, nil, Identity{}, tokenError(err, cred.id, cred.tokenURI, cred.metadata)
	}

	pacer := a.Pacer
	if pacer == nil {
		pacer = &Pacer{}
	}
	hc := apiHTTPClient(a.HTTPClient, ts, cred.quota, pacer)
	opts := []option.ClientOption{option.WithHTTPClient(hc), option.WithUserAgent(userAgent)}
	if a.APIEndpoint != "" {
		opts = append(opts, option.WithEndpoint(normalizeEndpoint(a.APIEndpoint)))
	}
	svc, err := sheetsapi.NewService(ctx, opts...)
	if err != nil {
		return nil, nil, nil, Identity{}, fmt.Errorf("connect to the Sheets API: %w", err)
	}
	var dsvc *drive.Service
	if a.APIEndpoint == "" {
		// A test's API endpoint serves Sheets only; Google's serves Drive too.
		dsvc, err = drive.NewService(ctx, option.WithHTTPClient(hc), option.WithUserAgent(userAgent))
		if err != nil {
			return nil, nil, nil, Identity{}, fmt.Errorf("connect to the Drive API: %w", err)
		}
	}
	return svc, dsvc, hc, cred.id, nil
}

// emulatorEndpoint settles, before any credentials are looked for, whether Connect talks to
// an emulator instead ("": it authenticates). SHEETS_EMULATOR_HOST is read only through
// getenv because the caller decides whether the environment counts at all (see
// AuthOptions.Getenv).
func emulatorEndpoint(endpoint string, getenv func(string) string) string {
	if endpoint == "" {
		if h := strings.TrimSpace(getenv(EmulatorHostEnv)); h != "" {
			endpoint = "http://" + h + "/"
		}
	}
	if endpoint != "" {
		endpoint = normalizeEndpoint(endpoint)
	}
	return endpoint
}

// connectEmulator builds the client for an emulator, which takes no credentials: none are
// looked for, so a machine without any can still run against one. Without a caller's HTTP
// client the library has to be told so (WithoutAuthentication), or it would go looking for
// Application Default Credentials itself.
func connectEmulator(ctx context.Context, endpoint string, hc *http.Client) (*sheetsapi.Service, Identity, error) {
	opts := []option.ClientOption{option.WithEndpoint(endpoint), option.WithUserAgent(userAgent)}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	} else {
		opts = append(opts, option.WithoutAuthentication())
	}
	svc, err := sheetsapi.NewService(ctx, opts...)
	if err != nil {
		return nil, Identity{}, fmt.Errorf("connect to the emulator at %s: %w", endpoint, err)
	}
	return svc, Identity{Kind: KindEmulator, Source: endpoint}, nil
}

// credSource is what one way of finding credentials yields. The three ways share it so that
// Connect fetches the first token, and explains a failure, the same way whichever was used.
type credSource struct {
	ts       oauth2.TokenSource
	id       Identity
	tokenURI string
	quota    string
	metadata bool // ADC from the GCE metadata server: no file at all
}

// fromCredentialsFile reads an explicit credentials file (--credentials or
// GOOGLE_APPLICATION_CREDENTIALS). It parses the file itself before the Google library does,
// so that the operator learns which of the two named the file, a type triage can't use is
// refused by name, and the token_uri is vetted before any secret is sent to it.
func fromCredentialsFile(tokCtx context.Context, credFile string, credEnv bool, scopes []string, withDrive bool) (credSource, error) {
	b, err := os.ReadFile(credFile)
	if err != nil {
		via := "--credentials"
		if credEnv {
			via = "GOOGLE_APPLICATION_CREDENTIALS"
		}
		return credSource{}, fmt.Errorf("%w: can't read the credentials file %s (from %s): %v", ErrNoCredentials, credFile, via, err)
	}
	var kf keyFile
	if err := json.Unmarshal(b, &kf); err != nil {
		return credSource{}, fmt.Errorf("%w: %s is not a Google credentials JSON file: %v", ErrNoCredentials, credFile, err)
	}
	// Checked before the library is handed the file: it would send the signed
	// assertion (or the refresh token and client secret) to any token_uri, in clear.
	if err := checkTokenURI(credFile, "credentials file", kf.TokenURI); err != nil {
		return credSource{}, err
	}
	var (
		ctype google.CredentialsType
		id    Identity
	)
	switch kf.Type {
	case "service_account":
		ctype, id = google.ServiceAccount, Identity{Kind: KindServiceAccount, Email: kf.ClientEmail, Source: credFile}
	case "authorized_user":
		ctype, id = google.AuthorizedUser, Identity{Kind: KindAuthorizedUser, Source: credFile}
	default:
		return credSource{}, fmt.Errorf("%w: %s has credentials of type %q; triage takes a service-account key (\"service_account\") or an authorized-user file (\"authorized_user\")", ErrNoCredentials, credFile, kf.Type)
	}
	if ctype == google.ServiceAccount && withDrive {
		scopes = append(slices.Clone(scopes), drive.DriveMetadataReadonlyScope)
	}
	creds, err := google.CredentialsFromJSONWithType(tokCtx, b, ctype, scopes...)
	if err != nil {
		return credSource{}, fmt.Errorf("%w: %s: %v", ErrNoCredentials, credFile, err)
	}
	return credSource{ts: creds.TokenSource, id: id, tokenURI: kf.TokenURI, quota: kf.QuotaProjectID}, nil
}

// fromCachedLogin uses the token `triage auth login` saved. Its token source writes every
// refresh back to the file (SavingTokenSource), so the next run need not refresh again; a
// saved login that can't be used is an error naming `triage auth login`, the one fix for it.
func fromCachedLogin(tokCtx context.Context, path string, scopes []string) (credSource, error) {
	c, err := ReadCachedLogin(path)
	if err != nil {
		return credSource{}, fmt.Errorf("%w: the saved login is unusable (%v): run `triage auth login` again", ErrNoCredentials, err)
	}
	tokenURI := c.TokenURI
	if tokenURI == "" {
		tokenURI = google.Endpoint.TokenURL
	}
	if err := checkTokenURI(path, "saved login", tokenURI); err != nil {
		return credSource{}, err
	}
	cfg := &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: google.Endpoint.AuthURL, TokenURL: tokenURI, AuthStyle: oauth2.AuthStyleInParams}}
	return credSource{
		ts:       SavingTokenSource(path, c.Token, cfg.TokenSource(tokCtx, c.Token)),
		id:       Identity{Kind: KindCachedLogin, Email: c.Email, Source: path},
		tokenURI: tokenURI,
	}, nil
}

// fromDefaultCredentials is the last resort, Application Default Credentials. When the
// library found a file (gcloud's), its token_uri gets the same vetting as an explicit
// credentials file's; when it found only the GCE metadata server, metadata is set, because
// that server's refusal means "no credentials", not "bad credentials".
func fromDefaultCredentials(tokCtx context.Context, home string, scopes []string) (credSource, error) {
	creds, err := google.FindDefaultCredentials(tokCtx, scopes...)
	if err != nil {
		return credSource{}, noCredentials(fmt.Sprintf("no --credentials, no GOOGLE_APPLICATION_CREDENTIALS, no saved login, and Application Default Credentials said: %v", err))
	}
	cs := credSource{ts: creds.TokenSource, id: Identity{Kind: KindADC, Source: "GCE metadata server"}}
	if len(creds.JSON) == 0 {
		cs.metadata = true
		return cs, nil
	}
	var kf keyFile
	_ = json.Unmarshal(creds.JSON, &kf)
	cs.id.Email, cs.tokenURI, cs.quota = kf.ClientEmail, kf.TokenURI, kf.QuotaProjectID
	cs.id.Source = adcWellKnownFile(home)
	if err := checkTokenURI(cs.id.Source, "Application Default Credentials file", cs.tokenURI); err != nil {
		return credSource{}, err
	}
	return cs, nil
}

// apiHTTPClient builds the client API requests go through. It copies the caller's client
// rather than changing it: the token requests themselves go through the caller's client
// (Connect's tokCtx), which must not carry the token transport, while its transport,
// timeout, redirect policy and cookie jar should still apply to API calls.
func apiHTTPClient(hc *http.Client, ts oauth2.TokenSource, quota string, pacer *Pacer) *http.Client {
	base := http.DefaultTransport
	client := &http.Client{}
	if hc != nil {
		if hc.Transport != nil {
			base = hc.Transport
		}
		client.Timeout = hc.Timeout
		client.CheckRedirect = hc.CheckRedirect
		client.Jar = hc.Jar
	}
	if quota != "" {
		base = quotaTransport{base: base, project: quota}
	}
	client.Transport = &oauth2.Transport{Source: ts, Base: pacer.Transport(base)}
	return client
}

// pacedClient is hc (nil: the default client) with its requests paced by pacer.
func pacedClient(hc *http.Client, pacer *Pacer) *http.Client {
	client := &http.Client{}
	var base http.RoundTripper
	if hc != nil {
		*client = *hc
		base = hc.Transport
	}
	client.Transport = pacer.Transport(base)
	return client
}

// checkTokenURI applies the OAuth client file's rule (checkEndpointURL) to a credentials
// file's token_uri: https anywhere, plain http only to a loopback host (a local test server).
// Over plain http to another host, the signed assertion or the refresh token and client
// secret would cross the network in clear, to whoever answers. Empty means Google's default.
func checkTokenURI(path, what, tokenURI string) error {
	if tokenURI == "" {
		return nil
	}
	if err := checkEndpointURL(tokenURI); err != nil {
		return fmt.Errorf("%w: the %s %s has token_uri %q: %v; fix token_uri in the file (Google's is %s) or create a new key",
			ErrNoCredentials, what, path, tokenURI, err, google.Endpoint.TokenURL)
	}
	return nil
}

// noCredentials is the error listing the three ways to get credentials; detail says what
// Application Default Credentials found instead.
func noCredentials(detail string) error {
	return fmt.Errorf("%w. %s\n(checked: %s)", ErrNoCredentials, strings.TrimPrefix(noCredentialsHelp, "no Google credentials found. "), detail)
}

// tokenError explains a failed first token fetch.
func tokenError(err error, id Identity, tokenURI string, metadata bool) error {
	if errors.Is(err, context.Canceled) || (errors.Is(err, context.DeadlineExceeded) && !isNetworkError(err)) {
		return fmt.Errorf("getting an access token: %w", err)
	}
	if metadata {
		// FindDefaultCredentials thought this is a Google Cloud VM, but its metadata server
		// has no token for us: as good as no credentials.
		return noCredentials(fmt.Sprintf("no --credentials, no GOOGLE_APPLICATION_CREDENTIALS, no saved login, no gcloud login, and the GCE metadata server gave no token: %v", err))
	}
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &rerr):
		hint := "check the file, or create a new key"
		if id.Kind == KindCachedLogin || id.Kind == KindAuthorizedUser {
			hint = "the login may have expired or been revoked: run `triage auth login` again"
			if advice := expiredLogin(rerr, loginMadeAt(id)); advice != "" && id.Kind == KindCachedLogin {
				return &Error{Op: "sign in", Kind: ErrUnauthorized, Err: err, Msg: fmt.Sprintf("the token server at %s refused the saved login of %s. %s", tokenURI, id, advice)}
			}
		}
		return &Error{Op: "sign in", Kind: ErrUnauthorized, Err: err,
			Msg: fmt.Sprintf("the token server at %s refused the credentials of %s (%s): %s", tokenURI, id, tokenErrorText(rerr), hint)}
	case isNetworkError(err):
		return &Error{Op: "sign in", Kind: ErrUnreachable, Err: err,
			Msg: fmt.Sprintf("can't reach the token server at %s: %v; check the network / proxy (HTTPS_PROXY)", tokenURI, err)}
	}
	return &Error{Op: "sign in", Kind: ErrUnauthorized, Err: err,
		Msg: fmt.Sprintf("couldn't get an access token for %s: %v", id, err)}
}

// loginTestingLife is how long Google keeps a refresh token of an OAuth client whose consent
// screen is in Testing (the usual state of a Desktop client made for `triage auth login`).
const loginTestingLife = 7 * 24 * time.Hour

// expiredLogin is what to tell a person whose login Google refused as invalid_grant ("Token
// has been expired or revoked."), "" for any other refusal: most often a client in Testing,
// whose logins Google ends after 7 days, and the two ways to stop it. madeAt, when known, is
// when the login was made.
func expiredLogin(r *oauth2.RetrieveError, madeAt time.Time) string {
	if r == nil || r.ErrorCode != "invalid_grant" {
		return ""
	}
	when := ""
	if !madeAt.IsZero() {
		when = fmt.Sprintf(" This one was made %s", madeAt.Local().Format("2006-01-02 15:04"))
		if time.Since(madeAt) >= loginTestingLife {
			when += ", more than 7 days ago."
		} else {
			when += "; it may also have been revoked (a password change, the account's security page, `triage auth logout`)."
		}
	}
	return fmt.Sprintf("Google ended it (%s). A login through an OAuth client whose consent screen is in Testing lasts 7 days.%s "+
		"Run `triage auth login` again now; to stop it lapsing every week, publish the client's consent screen "+
		"(Google Cloud console, Google Auth Platform, Audience: Publish app), or use a service account (--credentials key.json, the sheet shared with its address)",
		tokenErrorText(r), when)
}

// loginMadeAt is when the saved login behind id was made (zero when unknown).
func loginMadeAt(id Identity) time.Time {
	if id.Kind != KindCachedLogin || id.Source == "" {
		return time.Time{}
	}
	rec, err := ReadLoginRecord(id.Source)
	if err != nil {
		return time.Time{}
	}
	return rec.LoggedInAt
}

// fetchToken gets a token from ts, giving up when ctx is done.
func fetchToken(ctx context.Context, ts oauth2.TokenSource) (*oauth2.Token, error) {
	type result struct {
		tok *oauth2.Token
		err error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := ts.Token()
		ch <- result{t, err}
	}()
	select {
	case r := <-ch:
		return r.tok, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// quotaTransport bills API calls to the credentials' quota project (gcloud user credentials
// need it: without one the Sheets API answers 403 "API has not been used in project ...").
type quotaTransport struct {
	base    http.RoundTripper
	project string
}

// RoundTrip adds the quota-project header to a copy of the request.
func (q quotaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("X-Goog-User-Project", q.project)
	return q.base.RoundTrip(r2)
}

func normalizeEndpoint(e string) string {
	e = strings.TrimSpace(e)
	if !strings.Contains(e, "://") {
		e = "http://" + e
	}
	if !strings.HasSuffix(e, "/") {
		e += "/"
	}
	return e
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// adcWellKnownFile is where gcloud writes Application Default Credentials (as the oauth2
// library looks for them), under home ("" when home is unknown).
func adcWellKnownFile(home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
}
