package sheets

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"

	"github.com/triage-dev/triage/googleauth"
)

// EmulatorHostEnv names the environment variable that points triage at a local emulator
// (host:port); no credentials are used then.
const EmulatorHostEnv = "SHEETS_EMULATOR_HOST"

const userAgent = "triage"

// AuthOptions says how Connect reaches the Sheets API. Endpoint resolution between flag and
// environment is the caller's, except that an empty Endpoint with SHEETS_EMULATOR_HOST set
// means http://$SHEETS_EMULATOR_HOST/. Where the credential comes from is googleauth.Find's
// (the fields it shares with googleauth.Options mean what they mean there).
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
	// Scopes are the OAuth scopes (default googleauth.DefaultScopes).
	Scopes []string
	// HTTPClient is the base client (transport, timeout) for API and token requests.
	HTTPClient *http.Client
	// Pacer paces every Sheets and Drive request under the per-minute quota and waits out
	// quota answers (one Pacer may serve several connections: serve's sessions share it).
	// nil: a Pacer with Google's default quota, or against an emulator one that paces
	// nothing and only waits out its quota answers.
	Pacer *Pacer
}

// Connect builds a Sheets API client: against an emulator endpoint, with no credentials;
// otherwise with the credential googleauth.Find finds and proves with a first token, so bad
// or missing credentials fail here with an error saying what to do, not at the first
// request. A refused or unreachable token server is an *Error (ErrUnauthorized,
// ErrUnreachable); no credentials at all is an error wrapping ErrNoCredentials that lists
// the three ways to get some.
func Connect(ctx context.Context, a AuthOptions) (*sheetsapi.Service, googleauth.Identity, error) {
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
	Identity googleauth.Identity
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

func connect(ctx context.Context, a AuthOptions) (*sheetsapi.Service, *drive.Service, *http.Client, googleauth.Identity, error) {
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

	// A service-account key may ask for any scope: it asks for Drive's metadata too (the
	// change check). Other credentials keep what they were granted; Drive's 403 says so then.
	var extra []string
	if len(a.Scopes) == 0 {
		extra = []string{drive.DriveMetadataReadonlyScope}
	}
	cred, err := googleauth.Find(ctx, googleauth.Options{
		CredentialsFile:      a.CredentialsFile,
		CredentialsFromEnv:   a.CredentialsFromEnv,
		HomeDir:              a.HomeDir,
		Getenv:               a.Getenv,
		TokenCacheFile:       a.TokenCacheFile,
		Scopes:               a.Scopes,
		ServiceAccountScopes: extra,
		HTTPClient:           a.HTTPClient,
	})
	if err != nil {
		return nil, nil, nil, googleauth.Identity{}, signInError(err)
	}

	pacer := a.Pacer
	if pacer == nil {
		pacer = &Pacer{}
	}
	hc := apiHTTPClient(a.HTTPClient, cred, pacer)
	opts := []option.ClientOption{option.WithHTTPClient(hc), option.WithUserAgent(userAgent)}
	if a.APIEndpoint != "" {
		opts = append(opts, option.WithEndpoint(normalizeEndpoint(a.APIEndpoint)))
	}
	svc, err := sheetsapi.NewService(ctx, opts...)
	if err != nil {
		return nil, nil, nil, googleauth.Identity{}, fmt.Errorf("connect to the Sheets API: %w", err)
	}
	var dsvc *drive.Service
	if a.APIEndpoint == "" {
		// A test's API endpoint serves Sheets only; Google's serves Drive too.
		dsvc, err = drive.NewService(ctx, option.WithHTTPClient(hc), option.WithUserAgent(userAgent))
		if err != nil {
			return nil, nil, nil, googleauth.Identity{}, fmt.Errorf("connect to the Drive API: %w", err)
		}
	}
	return svc, dsvc, hc, cred.Identity, nil
}

// signInError is a failed first token fetch as the store's Error, so that a caller maps it
// by the store's sentinels (a refusal is ErrUnauthorized, an unreachable token server
// ErrUnreachable) as it maps any other failed call; any other error (no credentials) is
// handed on as it is.
func signInError(err error) error {
	var ge *googleauth.Error
	if !errors.As(err, &ge) {
		return err
	}
	kind := ErrUnauthorized
	if errors.Is(ge.Kind, googleauth.ErrUnreachable) {
		kind = ErrUnreachable
	}
	return &Error{Op: "sign in", Kind: kind, Err: ge.Err, Msg: ge.Msg}
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
func connectEmulator(ctx context.Context, endpoint string, hc *http.Client) (*sheetsapi.Service, googleauth.Identity, error) {
	opts := []option.ClientOption{option.WithEndpoint(endpoint), option.WithUserAgent(userAgent)}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	} else {
		opts = append(opts, option.WithoutAuthentication())
	}
	svc, err := sheetsapi.NewService(ctx, opts...)
	if err != nil {
		return nil, googleauth.Identity{}, fmt.Errorf("connect to the emulator at %s: %w", endpoint, err)
	}
	return svc, googleauth.Identity{Kind: googleauth.KindEmulator, Source: endpoint}, nil
}

// apiHTTPClient builds the client API requests go through. It copies the caller's client
// rather than changing it: the token requests themselves go through the caller's client
// (googleauth.Options.HTTPClient), which must not carry the token transport, while its
// transport, timeout, redirect policy and cookie jar should still apply to API calls. Each
// request gets the credential's token first, then is paced, then sent.
func apiHTTPClient(hc *http.Client, cred *googleauth.Credentials, pacer *Pacer) *http.Client {
	var base http.RoundTripper
	client := &http.Client{}
	if hc != nil {
		base = hc.Transport
		client.Timeout = hc.Timeout
		client.CheckRedirect = hc.CheckRedirect
		client.Jar = hc.Jar
	}
	client.Transport = cred.Transport(pacer.Transport(base))
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
