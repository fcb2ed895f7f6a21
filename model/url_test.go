package model

import (
	"strings"
	"testing"
)

// TestURLUnderPrefixes is the allowlist rule of invariant 8, row by row: what is allowed,
// and every way found of making a server read a checked URL as another one.
func TestURLUnderPrefixes(t *testing.T) {
	pre := []string{
		"https://crm.example.com",
		"https://script.google.com/macros/s/",
		"http://127.0.0.1:8080/api",
		"https://[2001:db8::1]/v1/",
		"https://hooks.example.com:8443/in/",
	}
	yes := []string{
		"https://crm.example.com/",
		"https://crm.example.com",
		"https://crm.example.com/v1/orders?x=1",
		"https://crm.example.com/v1/orders?next=../../admin", // the query doesn't route
		"https://CRM.Example.com:443/v1",                     // host case, default port
		"HTTPS://crm.example.com/v1",                         // scheme case
		"https://crm.example.com:0443/v1",                    // leading zeros are the same port
		"https://script.google.com/macros/s/AKfy/exec",
		"http://127.0.0.1:8080/api",
		"http://127.0.0.1:8080/api/x",
		"http://127.0.0.1:8080/api?x=1",
		"https://[2001:db8::1]/v1/x",
		"https://[2001:0db8:0:0::1]:443/v1/x", // the same address, canonical form
		"https://hooks.example.com:8443/in/a%20b",
		"https://crm.example.com/a:b@c!$&'()*+,=-._~",
		"https://crm.example.com/v1/%7euser",
	}
	no := map[string]string{
		"https://crm.example.com.evil.io/":                "not under",
		"https://evil.io/crm.example.com/":                "not under",
		"https://crm.example.com@evil.io/":                "user info",
		"https://user:pw@crm.example.com/":                "user info",
		"https://evil.io/https://crm.example.com/":        "not under",
		"http://crm.example.com/":                         "not under",
		"https://crm.example.com:8443/":                   "not under",
		"https://hooks.example.com/in/":                   "not under", // prefix port 8443
		"https://script.google.com/macros/x/":             "not under",
		"https://script.google.com/macros/s":              "not under", // prefix ends in /
		"http://127.0.0.1:8080/api2":                      "not under",
		"http://127.0.0.1:8080/apix/y":                    "not under",
		"http://127.0.0.1:8081/api":                       "not under",
		"https://[2001:db8::2]/v1/x":                      "not under",
		"https://[fe80::1%25eth0]/v1/":                    "percent-escape in its host",
		"https://[2001:db8::1/v1/":                        "unclosed",
		"https://crm.example.com:/v1":                     "empty port",
		"https://crm.example.com:99999/v1":                "not a port",
		"https://crm.example.com:44a/v1":                  "not a port",
		"//crm.example.com/":                              "absolute",
		"crm.example.com/x":                               "absolute",
		"javascript:alert(1)":                             "absolute",
		"ftp://crm.example.com/":                          "scheme",
		"https:crm.example.com/x":                         "absolute",
		"https:///crm.example.com/x":                      "no host",
		"":                                                "empty",
		"https://script.google.com/macros/s/../../admin":  "dot segment",
		"https://script.google.com/macros/s/./x":          "dot segment",
		"https://script.google.com/macros/s/.../x":        "dot segment",
		"https://script.google.com/macros/s/%2e%2e/admin": `encoded "."`,
		"https://script.google.com/macros/s/.%2E/admin":   `encoded "."`,
		"https://crm.example.com/api/..%2fadmin/x":        `encoded "/"`,
		"https://crm.example.com/api/x%2fadmin":           `encoded "/"`,
		"https://crm.example.com/api/x%2Fadmin":           `encoded "/"`,
		"https://crm.example.com/api/%2E%2E%2Fadmin/x":    `encoded "."`,
		"https://crm.example.com/api/..;/admin/x":         "; in its path",
		"https://crm.example.com/api;x/y":                 "; in its path",
		"https://crm.example.com/api/x%3badmin":           `encoded ";"`,
		"https://crm.example.com/api/x%5cadmin":           "encoded backslash",
		"https://crm.example.com/api/..%5Cadmin":          "encoded backslash",
		"https://crm.example.com/api/x%5Cadmin":           "encoded backslash",
		"https://crm.example.com/api/..\\admin/x":         "backslash",
		"https://crm.example.com\\@evil.io/":              "backslash",
		"https://crm.example.com/api/%252e%252e/admin":    "double encoding",
		"https://crm.example.com/api/x%00/admin":          "control",
		"https://crm.example.com/api/x%0d%0aHost:evil":    "control",
		"https://crm.example.com/api/%c0%ae%c0%ae/admin":  "non-ASCII",
		"https://crm.example.com/api/%ef%bc%8e%ef%bc%8e/": "non-ASCII",
		"https://crm.example.com/api/\uff0e\uff0e/admin":  "non-ASCII",
		"https://crm.example.com/api/x%3f/y":              `encoded "?"`,
		"https://crm.example.com/api/x%23/y":              `encoded "#"`,
		"https://crm.example.com/api/x%zz":                "not a percent-escape",
		"https://crm.example.com/api/x%2":                 "not a percent-escape",
		"https://crm.example.com//evil.io/x":              "starting with //",
		"https://crm.example.com/api/x#/../../admin":      "fragment",
		"https://crm.example.com/api/x\t":                 `\t`,
		"https://crm.example.com/api/\nx":                 `\n`,
		"https://crm.example.com/api/x\r":                 `\r`,
		"https://crm.example.com/api/\x1b[2Jx":            "ESC",
		"https://crm.example.com/a b":                     "space",
		" https://crm.example.com/":                       "space",
		"https://crm.example.com/api/x|y":                 "can't hold",
		"https://crm.example.com/api/{x}":                 "can't hold",
		"https://crm.exa mple.com/":                       "space",
		"https://crm.ex\u0430mple.com/":                   "non-ASCII", // Cyrillic a
		"https://crm.example.com\u3002evil.io/":           "non-ASCII", // ideographic full stop
		"https://crm.example.com/\u202egpj.exe":           "non-ASCII",
	}
	for _, u := range yes {
		if err := URLUnderPrefixes(u, pre); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
	for u, why := range no {
		err := URLUnderPrefixes(u, pre)
		if err == nil {
			t.Errorf("%q allowed", u)
			continue
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("%q: refused with %q, want it to say %q", u, err, why)
		}
		if strings.ContainsAny(err.Error(), "\r\n\t\x1b\u202e") {
			t.Errorf("%q: the message carries a raw control: %q", u, err)
		}
	}
	if err := URLUnderPrefixes("https://crm.example.com/", nil); err == nil {
		t.Error("no prefixes allowed a URL")
	}
	// A prefix that is itself refused matches nothing, even the URL it spells.
	if err := URLUnderPrefixes("https://a.example/x", []string{"https://u@a.example/"}); err == nil {
		t.Error("a prefix with user info allowed a URL")
	}
}

// TestURLUnderPrefixesSegmentBoundary: a prefix without a trailing slash matches whole
// segments; with one, anything below it.
func TestURLUnderPrefixesSegmentBoundary(t *testing.T) {
	cases := []struct {
		prefix, url string
		ok          bool
	}{
		{"https://h/api", "https://h/api", true},
		{"https://h/api", "https://h/api/", true},
		{"https://h/api", "https://h/api/x", true},
		{"https://h/api", "https://h/apix", false},
		{"https://h/api", "https://h/api.json", false},
		{"https://h/api/", "https://h/api", false},
		{"https://h/api/", "https://h/api/x", true},
		{"https://h/api/v", "https://h/api/v1", false},
		{"https://h/ap%7Ei/", "https://h/ap%7ei/x", true}, // escapes compare case-insensitively
		{"https://h", "https://h/anything/at/all", true},
		{"https://h/", "https://h", true},
		{"http://h:80/", "http://h/x", true},
		{"https://h:443/", "https://h/x", true},
		{"https://h/", "https://h:443/x", true},
		{"https://h/", "http://h:443/x", false},
		{"https://evil.com/", "https://evil.com.attacker/x", false},
		{"https://evil.com.attacker/", "https://evil.com/x", false},
	}
	for _, c := range cases {
		err := URLUnderPrefixes(c.url, []string{c.prefix})
		if (err == nil) != c.ok {
			t.Errorf("%q under %q: %v, want allowed=%v", c.url, c.prefix, err, c.ok)
		}
	}
}

// TestParseURLPrefix: what config check and Source.Validate accept as an allowlist entry.
func TestParseURLPrefix(t *testing.T) {
	good := map[string]URLPrefix{
		"https://script.google.com/macros/s/": {"https", "script.google.com", "/macros/s/"},
		"HTTPS://Script.Google.COM:443":       {"https", "script.google.com", "/"},
		"http://127.0.0.1:8080/api":           {"http", "127.0.0.1:8080", "/api"},
		"https://[::1]:8443/x/":               {"https", "[::1]:8443", "/x/"},
	}
	for s, want := range good {
		got, err := ParseURLPrefix(s)
		if err != nil || got != want {
			t.Errorf("ParseURLPrefix(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	bad := map[string]string{
		"https://user@crm.example.com/":       "user info",
		"https://user:pw@crm.example.com/":    "user info",
		"https://crm.example.com/?x=1":        "query",
		"https://crm.example.com/api?":        "query",
		"https://crm.example.com/#frag":       "fragment",
		"https://crm.example.com/a/%2e%2e/":   `encoded "."`,
		"https://crm.example.com/a/../":       "dot segment",
		"https://crm.example.com/a;b/":        "; in its path",
		"https://crm.example.com\\a/":         "backslash",
		"https://crm.example.com/a\r\n":       `\r`,
		"crm.example.com/":                    "absolute",
		"/api/":                               "absolute",
		"https:///api/":                       "no host",
		"":                                    "empty",
		"https://crm.example.com/" + "\x7f":   "DEL",
		"https://crm.example.com:0/":          "not a port",
		"https://crm.example.com/%":           "not a percent-escape",
		"https://[fe80::1%25en0]/":            "percent-escape",
		"https://[1.2.3.4]/":                  "not an IPv6",
		"https://crm.example.com/a b/":        "space",
		"https://crm.example.com/" + "é/":     "non-ASCII",
		"wss://crm.example.com/":              "scheme",
		"https://crm.example.com/%252e%252e/": "double encoding",
	}
	for s, why := range bad {
		_, err := ParseURLPrefix(s)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseURLPrefix(%q) = %v, want an error saying %q", s, err, why)
		}
	}
}

// TestURLMessagesAreCapped: a 60,000-character URL from a cell is not echoed in full.
func TestURLMessagesAreCapped(t *testing.T) {
	long := "https://evil.example/" + strings.Repeat("a", 60000)
	err := URLUnderPrefixes(long, []string{"https://crm.example.com/"})
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "60021 chars") {
		t.Fatalf("message of %d bytes: %.300v", len(err.Error()), err)
	}
}
