package model

import "testing"

func TestErrorKind(t *testing.T) {
	cases := map[string]string{
		"":    "",
		"   ": "",
		"503 Service Unavailable from crm (after 3 attempts)":                                       "503",
		"422 from warehouse: rejected ({\"ok\":false,\"error\":\"qty must be positive\"})":          "422",
		"429 Too Many Requests from crm; it asked to retry in 1h0m0s, beyond the 30s cap: deferred": "429",
		"HTTP 502 Bad Gateway":    "502",
		"upstream status=504":     "504",
		"failed: status code 401": "401",
		"no answer from crm within 20s (timeout; it may have acted) (after 3 attempts)": "timeout",
		"context deadline exceeded": "timeout",
		"network error talking to crm: connection refused (it may have acted)": "refused",
		"network error talking to crm: EOF (it may have acted)":                "reset",
		"read tcp: connection reset by peer":                                   "reset",
		"dial tcp: lookup crm.example: no such host":                           "dns",
		"x509: certificate signed by unknown authority":                        "tls",
		"something odd":             "other",
		"order 5034 failed":         "other", // a number that isn't a status
		"port 8080 unreachable":     "other",
		"1.503 seconds":             "other",
		"600 is not a status":       "other",
		"dial 127.0.0.1:503 failed": "other",
	}
	for in, want := range cases {
		if got := ErrorKind(in); got != want {
			t.Errorf("ErrorKind(%q) = %q, want %q", in, got, want)
		}
	}
}
