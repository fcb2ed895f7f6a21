package model

import (
	"strings"
)

// ErrorKind sorts an error cell's text into the few kinds an operator groups failures by: the
// HTTP status code when the text has one ("503"), else the class of network failure
// ("timeout", "refused", "reset", "dns", "tls"), "" for an empty cell and "other" for the rest.
// It reads what replay writes ("503 Service Unavailable from crm (after 3 attempts)", "no answer
// from crm within 20s (timeout; …)", "network error talking to crm: EOF") and what other
// producers commonly write ("HTTP 502", "status=429", "context deadline exceeded").
func ErrorKind(text string) string {
	s := strings.ToLower(strings.TrimSpace(text))
	if s == "" {
		return ""
	}
	if code := httpStatus(s); code != "" {
		return code
	}
	switch {
	case strings.Contains(s, "timeout"), strings.Contains(s, "timed out"), strings.Contains(s, "deadline exceeded"):
		return "timeout"
	case strings.Contains(s, "connection refused"):
		return "refused"
	case strings.Contains(s, "reset by peer"), strings.Contains(s, "eof"), strings.Contains(s, "broken pipe"):
		return "reset"
	case strings.Contains(s, "no such host"), strings.Contains(s, "dns"):
		return "dns"
	case strings.Contains(s, "tls"), strings.Contains(s, "x509"), strings.Contains(s, "certificate"):
		return "tls"
	}
	return "other"
}

// httpStatus finds an HTTP status code in s: a 3-digit number from 100 to 599 that stands on
// its own, at the start of the text or right after "http", "status" or "code" (so a port, a
// byte count or an ID elsewhere in the text isn't taken for one).
func httpStatus(s string) string {
	if c := leadingCode(s); c != "" {
		return c
	}
	for _, marker := range []string{"http ", "http/1.1 ", "http/2 ", "status ", "status=", "status: ", "status code ", "code "} {
		if i := strings.Index(s, marker); i >= 0 {
			if c := leadingCode(s[i+len(marker):]); c != "" {
				return c
			}
		}
	}
	return ""
}

// leadingCode is the status code s starts with, if it does.
func leadingCode(s string) string {
	if len(s) < 3 || s[0] < '1' || s[0] > '5' || !isDigit(s[1]) || !isDigit(s[2]) {
		return ""
	}
	if len(s) > 3 && (isDigit(s[3]) || s[3] == '.' || s[3] == ':') {
		return ""
	}
	return s[:3]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
