package emulator

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// fakeDNS resolves the names of the table below without a network.
func fakeDNS(_ context.Context, host string) ([]string, error) {
	switch host {
	case "localhost":
		return []string{"::1", "127.0.0.1"}, nil
	case "loop6.test":
		return []string{"::1"}, nil
	case "public.test":
		return []string{"203.0.113.7"}, nil
	case "rebind.test": // one loopback answer among others is not enough
		return []string{"127.0.0.1", "10.0.0.8"}, nil
	case "empty.test":
		return nil, nil
	}
	return nil, errors.New("no such host")
}

func TestLoopbackListenAddr(t *testing.T) {
	ok := map[string]string{
		"127.0.0.1:8089":        "127.0.0.1:8089",
		"127.0.0.2:0":           "127.0.0.2:0",
		"[::1]:8089":            "[::1]:8089",
		"[::ffff:127.0.0.1]:80": "[::ffff:127.0.0.1]:80",
		"localhost:8089":        "127.0.0.1:8089", // the checked address is the one bound
		"loop6.test:1":          "[::1]:1",
	}
	for addr, want := range ok {
		got, err := LoopbackListenAddr(context.Background(), addr, fakeDNS)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", addr, got, err, want)
		}
	}
	refused := []string{
		":8089", "0.0.0.0:8089", "[::]:8089", "[::ffff:0.0.0.0]:8089",
		"192.0.2.10:8089", "10.1.2.3:80", "[2001:db8::1]:8089", "[fe80::1%eth0]:8089",
		"public.test:8089", "rebind.test:8089",
	}
	for _, addr := range refused {
		_, err := LoopbackListenAddr(context.Background(), addr, fakeDNS)
		if !errors.Is(err, ErrNotLoopback) {
			t.Errorf("%s: got %v, want ErrNotLoopback", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1", "unknown.test:80", "empty.test:80"} {
		if _, err := LoopbackListenAddr(context.Background(), addr, fakeDNS); err == nil || errors.Is(err, ErrNotLoopback) {
			t.Errorf("%s: got %v, want a plain error", addr, err)
		}
	}
	_, err := LoopbackListenAddr(context.Background(), "0.0.0.0:8089", fakeDNS)
	if !strings.Contains(err.Error(), "every interface") {
		t.Errorf("message %q", err)
	}
}

// TestServeRefusesRemoteAddresses: the check happens before anything
// listens, so these addresses are never bound.
func TestServeRefusesRemoteAddresses(t *testing.T) {
	e := New()
	e.AddWorkbook(testWorkbook())
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.10:0"} {
		u, stop, err := Serve(context.Background(), addr, e)
		if !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Serve(%q): %q, %v; want ErrNotLoopback", addr, u, err)
			if stop != nil {
				stop()
			}
		}
	}
	_, err := ServeWith(context.Background(), "public.test:0", e, ServeOptions{LookupHost: fakeDNS})
	if !errors.Is(err, ErrNotLoopback) {
		t.Errorf("a name resolving to a public address: %v", err)
	}
}

func TestServeWithNamesAndOptions(t *testing.T) {
	e := New()
	e.AddWorkbook(testWorkbook())
	s, err := ServeWith(context.Background(), "localhost:0", e, ServeOptions{LookupHost: fakeDNS})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !s.Loopback || s.AllInterfaces || !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("server %+v", s)
	}
	resp, err := http.Get(s.URL + "/v4/spreadsheets/book1/values/A1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	// AllowRemote on a loopback address: still loopback, said so.
	s2, err := ServeWith(context.Background(), "127.0.0.1:0", e, ServeOptions{AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if !s2.Loopback || s2.AllInterfaces {
		t.Errorf("server %+v", s2)
	}
}
