package replay_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// recorder is a backend behind the front: it records every request and answers
// {"ok":true}, so a request that reaches it looks like a success to the client.
type recorder struct {
	mu   sync.Mutex
	reqs []recordedReq
}

type recordedReq struct {
	method, path string
	header       http.Header
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, recordedReq{method: r.Method, path: r.URL.Path, header: r.Header.Clone()})
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true}`))
}

func (rc *recorder) requests() []recordedReq {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recordedReq(nil), rc.reqs...)
}

// normalisingFront is a front proxy that reads paths the way real ones do, as loosely as
// any of them: it percent-decodes until nothing changes (a chain of servers each decoding
// once), folds full-width and overlong-UTF-8 dots and slashes (Unicode normalisation, old
// IIS), treats "\" as "/", cuts at a NUL, strips ";params" from each segment (Tomcat, Jetty)
// and resolves dot segments and repeated slashes (nginx). It sends /api and /api/... to the
// API backend and everything else to the admin backend.
type normalisingFront struct {
	api, admin string // backend base URLs
}

func frontPath(raw string) string {
	p := raw
	for range 4 {
		d, err := url.PathUnescape(p)
		if err != nil || d == p {
			break
		}
		p = d
	}
	p = strings.NewReplacer("\xc0\xae", ".", "\xc0\xaf", "/", "\uff0e", ".", "\uff0f", "/", "\uff3c", "/").Replace(p)
	p = strings.ReplaceAll(p, `\`, "/")
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexByte(s, ';'); j >= 0 {
			segs[i] = s[:j]
		}
	}
	return path.Clean("/" + strings.Join(segs, "/"))
}

func (f *normalisingFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _, _ := strings.Cut(r.RequestURI, "?")
	p := frontPath(raw)
	base := f.admin
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		base = f.api
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+p, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// allowlistEscapes are paths below the front's /api/ that the front routes to the admin
// backend: each climbs out of /api/ in a way that only shows after the front's reading.
var allowlistEscapes = []struct {
	name, path string
	// goSends is false for rows Go's HTTP client refuses to send at all (so the front can't
	// be shown to route them).
	goSends bool
}{
	{"encoded slash", "/api/..%2fadmin/x", true},
	{"encoded dots and slash", "/api/%2e%2e%2fadmin/x", true},
	{"upper-case escapes", "/api/%2E%2E%2Fadmin/x", true},
	{"path parameter", "/api/..;/admin/x", true},
	{"encoded backslash", "/api/..%5cadmin/x", true},
	{"raw backslash", `/api/..\admin/x`, true},
	{"double encoding", "/api/%252e%252e%252fadmin/x", true},
	{"encoded dots", "/api/%2e%2e/admin/x", true},
	{"half-encoded dots", "/api/.%2e/admin/x", true},
	{"plain dot-dot", "/api/../admin/x", true},
	{"dot then dot-dot", "/api/./../admin/x", true},
	{"two levels", "/api/x/..%2f..%2fadmin", true},
	{"encoded semicolon", "/api/..%3b/admin/x", true},
	{"NUL truncation", "/api/..%00/admin/x", true},
	{"overlong UTF-8 dots", "/api/%c0%ae%c0%ae/admin/x", true},
	{"full-width dots", "/api/\uff0e\uff0e/admin/x", true},
	{"encoded full-width dots", "/api/%ef%bc%8e%ef%bc%8e/admin/x", true},
	{"encoded slash in the prefix", "/api%2f..%2fadmin/x", true},
	{"tab", "/api/..\t/admin/x", false},
	{"newline", "/api/..\n/admin/x", false},
}

// newFrontFixture starts the API backend, the admin backend and the front before them.
func newFrontFixture(t *testing.T) (front string, api, admin *recorder) {
	t.Helper()
	api, admin = &recorder{}, &recorder{}
	apiSrv, adminSrv := serve(t, api), serve(t, admin)
	f := serve(t, &normalisingFront{api: apiSrv.URL, admin: adminSrv.URL})
	return f.URL, api, admin
}

const frontSecret = "Bearer s3cret-front"

func frontGetenv(k string) string {
	if k == "API_TOKEN" {
		return frontSecret
	}
	return ""
}

// TestFrontRoutesEveryEscapeToAdmin shows the front is as loose as the escapes need: sent
// as they are (not through triage's client), each reaches the admin backend. Without this,
// the allowlist tests below could pass against a front that routes nothing anywhere.
func TestFrontRoutesEveryEscapeToAdmin(t *testing.T) {
	front, api, admin := newFrontFixture(t)
	for _, e := range allowlistEscapes {
		if !e.goSends {
			continue
		}
		before := len(admin.requests())
		resp, err := http.Get(front + e.path)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		resp.Body.Close()
		if got := len(admin.requests()); got != before+1 {
			t.Errorf("%s: %s did not reach the admin backend through the front", e.name, e.path)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("the API backend got %d of the escapes", n)
	}
}

// TestAllowlistEscapesThroughNormalisingFront: every escape row, sent through the real
// client with url_prefixes = [front/api/] and a secret header, is refused before anything is
// sent: the admin backend never sees a request (let alone one carrying the secret), while an
// ordinary URL under the prefix does reach the API backend with it.
func TestAllowlistEscapesThroughNormalisingFront(t *testing.T) {
	front, api, admin := newFrontFixture(t)
	src := &replay.Source{Name: "api", URLPrefixes: []string{front + "/api/"}, Headers: map[string]string{"Authorization": "env:API_TOKEN"}}
	c := fastClient(src)
	c.Getenv = frontGetenv
	for _, e := range allowlistEscapes {
		res := c.Do(context.Background(), replay.Call{Key: "k-" + e.name, Source: "api", URL: front + e.path, Body: []byte(`{}`)})
		if res.Outcome != replay.Refused || len(res.Attempts) != 0 {
			t.Errorf("%s: %s gave %v after %d attempts (%s), want refused before sending", e.name, e.path, res.Outcome, len(res.Attempts), res.Detail)
		}
		if strings.ContainsAny(res.Detail, "\t\n") {
			t.Errorf("%s: detail carries a raw control: %q", e.name, res.Detail)
		}
	}
	if res := c.Do(context.Background(), replay.Call{Key: "k-ok", Source: "api", URL: front + "/api/orders", Body: []byte(`{}`)}); res.Outcome != replay.Delivered {
		t.Fatalf("an ordinary URL under the prefix: %v %s", res.Outcome, res.Detail)
	}
	assertAdminUntouched(t, admin)
	if reqs := api.requests(); len(reqs) != 1 || reqs[0].header.Get("Authorization") != frontSecret {
		t.Errorf("API backend saw %+v, want the one ordinary call with its secret", reqs)
	}
}

// TestRedirectPrefixEscapesThroughNormalisingFront: the apps-script hop is checked by the
// same rule. The script answers 302 to each escape below redirect_prefixes = [front/api/];
// none is followed (the outcome is systemic: an answer from somewhere not allowed), and the
// admin backend sees nothing. A Location that is really under the prefix is followed.
func TestRedirectPrefixEscapesThroughNormalisingFront(t *testing.T) {
	front, api, admin := newFrontFixture(t)
	script := receiver.New()
	locations := map[string]string{"k-ok": front + "/api/echo"}
	for _, e := range allowlistEscapes {
		locations["k-"+e.name] = front + e.path
	}
	script.Rule = func(key string, n int) (receiver.Fault, bool) {
		return receiver.Fault{Mode: receiver.Moved, Status: http.StatusFound, Location: locations[key]}, true
	}
	scriptSrv := serve(t, script)
	src := &replay.Source{Name: "form", Preset: replay.PresetAppsScript, URLPrefixes: []string{scriptSrv.URL + "/macros/s/"},
		RedirectPrefixes: []string{front + "/api/"}, Headers: map[string]string{"Authorization": "env:API_TOKEN"}}
	c := fastClient(src)
	c.Getenv = frontGetenv
	for _, e := range allowlistEscapes {
		if strings.ContainsAny(e.path, "\t\n") {
			continue // net/http refuses to put these in a Location header at all
		}
		res := c.Do(context.Background(), replay.Call{Key: "k-" + e.name, Source: "form", URL: scriptSrv.URL + "/macros/s/AK/exec", Body: []byte(`{}`)})
		if res.Outcome != replay.Systemic || !strings.Contains(res.Detail, "redirect_prefixes") {
			t.Errorf("%s: the hop to %s gave %v (%s), want systemic: not followed", e.name, e.path, res.Outcome, res.Detail)
		}
	}
	if res := c.Do(context.Background(), replay.Call{Key: "k-ok", Source: "form", URL: scriptSrv.URL + "/macros/s/AK/exec", Body: []byte(`{}`)}); res.Outcome != replay.Delivered {
		t.Fatalf("a hop under redirect_prefixes: %v %s", res.Outcome, res.Detail)
	}
	assertAdminUntouched(t, admin)
	if reqs := api.requests(); len(reqs) != 1 || reqs[0].method != http.MethodGet || reqs[0].header.Get("Authorization") != "" {
		t.Errorf("API backend saw %+v, want the one hop: a GET without the secret", reqs)
	}
}

func assertAdminUntouched(t *testing.T, admin *recorder) {
	t.Helper()
	for _, r := range admin.requests() {
		if r.header.Get("Authorization") != "" {
			t.Errorf("the admin backend got %s %s WITH the source's secret", r.method, r.path)
		} else {
			t.Errorf("the admin backend got %s %s", r.method, r.path)
		}
	}
}
