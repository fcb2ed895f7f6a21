package report

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAlertText: the halted run's alert says what halted, why, the counts and where the
// report is, with chat markup escaped; it names the tab and spreadsheet and no secret.
func TestAlertText(t *testing.T) {
	r := fixedRun(t)
	r.Summary.Halted.Detail = "401 from billing <https://evil.example|click> & more"
	a, ok := NewAlert(r, "/var/log/triage/replay-2026-03-02.html")
	if !ok {
		t.Fatal("no alert for a halted run")
	}
	want := "triage replay on failed_calls halted: systemic, source billing: 401 from billing &lt;https://evil.example|click&gt; &amp; more · 2 delivered, 6 not done (1 rejected, 1 systemic, 1 retryable, 1 not-attempted, 1 refused, 1 unknown) · report: /var/log/triage/replay-2026-03-02.html"
	if a.Text != want {
		t.Errorf("text\n got %q\nwant %q", a.Text, want)
	}
	if !a.Halted || a.Cause != "systemic" || a.HaltSource != "billing" || a.Tab != "failed_calls" || a.Spreadsheet != testSheet ||
		a.Delivered != 2 || a.NotDone != 6 || a.ExitCode != 3 || a.Counts["not-attempted"] != 1 || a.Started != "2026-03-02T04:00:00Z" {
		t.Errorf("alert %+v", a)
	}
	long := strings.Repeat("x", 5000)
	r.Summary.Halted.Detail = long
	a, _ = NewAlert(r, "")
	if len(a.Text) > 600 || strings.Contains(a.Text, long) || strings.Contains(a.Text, "report:") {
		t.Errorf("an alert of %d bytes: %q", len(a.Text), a.Text)
	}
}

// receiver records what is posted to it.
type receiver struct {
	mu     sync.Mutex
	bodies []string
	code   int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" {
		rc.bodies = append(rc.bodies, string(b))
	}
	if rc.code != 0 {
		if rc.code/100 == 3 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(rc.code)
		_, _ = w.Write([]byte("no_service\x1b[2J"))
	}
}

func TestPost(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	a, _ := NewAlert(fixedRun(t), "r.html")
	if err := Post(context.Background(), srv.URL+"/services/T0/B0/TOKEN", a, time.Second); err != nil {
		t.Fatal(err)
	}
	if len(rc.bodies) != 1 {
		t.Fatalf("%d messages", len(rc.bodies))
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(rc.bodies[0]), &got); err != nil || got["text"] != a.Text || got["halted"] != true {
		t.Errorf("body %s (%v)", rc.bodies[0], err)
	}

	// A failure says which host and why, never the URL's path (the webhook's token).
	for _, code := range []int{404, 302} {
		rc.code = code
		err := Post(context.Background(), srv.URL+"/services/T0/B0/TOKEN", a, time.Second)
		if err == nil || strings.Contains(err.Error(), "TOKEN") || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), "answered") {
			t.Errorf("%d: %v", code, err)
		}
	}
	if len(rc.bodies) != 3 {
		t.Errorf("%d posts, want 3 (a redirect is not followed)", len(rc.bodies))
	}
	srv.Close()
	err := Post(context.Background(), srv.URL+"/services/T0/B0/TOKEN", a, time.Second)
	if err == nil || strings.Contains(err.Error(), "TOKEN") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("dead endpoint: %v", err)
	}

	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	start := time.Now()
	err = Post(context.Background(), slow.URL+"/x/TOKEN", a, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer") || time.Since(start) > 10*time.Second {
		t.Errorf("slow endpoint: %v after %v", err, time.Since(start))
	}
}
