package replay

import "testing"

func TestDestination(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example.com/v1/x?q=1":   "https://a.example.com/v1/",
		"http://127.0.0.1:8080/macros/s/e": "http://127.0.0.1:8080/macros/s/",
		"https://a.example.com":            "https://a.example.com/",
		"not a url":                        "not a url",
	} {
		if got := destination(in); got != want {
			t.Errorf("destination(%q) = %q, want %q", in, got, want)
		}
	}
}
