package model

import (
	"strings"
	"testing"
)

// TestCheckKey: a key no header can carry is refused, naming the character (escaped) and
// its position; the raw control never reaches the message.
func TestCheckKey(t *testing.T) {
	bad := map[string]string{
		"order-42\r\nX-Evil: 1": `\r at position 9`,
		"order-42\nx":           `\n at position 9`,
		"k\x01":                 `\x01 at position 2`,
		"k\x00":                 `\x00 at position 2`,
		"k\x7fx":                `\x7f (DEL) at position 2`,
		"k\x1b[31mx":            `\x1b (ESC) at position 2`,
		"k\tx":                  `\t at position 2`,
		"ké\u0085x":             `\u0085 at position 3`,
		"k\xffx":                "not valid UTF-8",
		"":                      "empty",
		"   ":                   "empty",
		// A key is sent exactly as written: whatever a reader might trim is refused.
		"CRKEY\r":            `\r at position 6`,
		"k\u0085":            `\u0085 at position 2`,
		"\u0085k":            `\u0085 at position 1`,
		"k\u2028":            "line separator (U+2028 at position 2)",
		"a\u2028b":           "line separator (U+2028 at position 2)",
		"a\u2029b":           "line separator (U+2029 at position 2)",
		" order-42":          "starts with whitespace (a space at position 1)",
		"order-42 ":          "ends with whitespace (a space at position 9)",
		"\u00a0order-42":     "starts with whitespace (U+00A0 at position 1)",
		"order-42\u3000":     "ends with whitespace (U+3000 at position 9)",
		" spaced both ends ": "starts with whitespace",
	}
	for k, want := range bad {
		err := CheckKey(k)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckKey(%q) = %v, want it to say %q", k, err, want)
			continue
		}
		if strings.ContainsAny(err.Error(), "\r\n\t\x00\x01\x1b\x7f\u0085\u2028\u2029\u00a0\u3000") {
			t.Errorf("CheckKey(%q) echoes a raw control: %q", k, err)
		}
	}
	for _, k := range []string{"order-42", "triage-0123abcd", "évènement-1", "a b", "k:1/2", "a\u00a0b"} {
		if err := CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
}

func TestCheckHeaderValueAndName(t *testing.T) {
	if err := CheckHeaderValue("Bearer a\tb"); err != nil {
		t.Errorf("a tab inside a value is allowed (RFC 9110): %v", err)
	}
	for v, want := range map[string]string{"Bearer xyz\r": `\r at position 11`, "a\nb": `\n`, "a\x00": `\x00`, "\x7f": "DEL"} {
		err := CheckHeaderValue(v)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "xyz") {
			t.Errorf("CheckHeaderValue(%q) = %v, want it to say %q and not quote the value", v, err, want)
		}
	}
	for _, n := range []string{"Authorization", "X-Api-Key", "x_y", "A!#$%&'*+-.^_`|~9"} {
		if err := CheckHeaderName(n); err != nil {
			t.Errorf("CheckHeaderName(%q) = %v", n, err)
		}
	}
	for n, want := range map[string]string{"Bad Header": "a space at position 4", "X:Y": `":" at position 2`, "": "empty", "X\r\nY": `\r`, "Ключ": "U+041A", "a(b)": `"("`} {
		err := CheckHeaderName(n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckHeaderName(%q) = %v, want it to say %q", n, err, want)
		}
	}
}

func TestCheckHeaderSetting(t *testing.T) {
	ok := [][2]string{{"Authorization", "env:CRM_TOKEN"}, {"Authorization", " env:_T1 "}, {"X-Api-Key", "literal\r\n"}, {"X-A", "a\tb"}}
	for _, c := range ok {
		if err := CheckHeaderSetting(c[0], c[1]); err != nil {
			t.Errorf("%q = %q: %v", c[0], c[1], err)
		}
	}
	bad := map[[2]string]string{
		{"Bad Header", "x"}:             "not a valid HTTP header name",
		{"Authorization", "env:"}:       "env: without a variable name",
		{"Authorization", "env:MY TOK"}: "not an environment variable name",
		{"Authorization", "env:1TOK"}:   "not an environment variable name",
		{"X-Api-Key", "a\r\nX-Evil: 1"}: `\r at position 2`,
		{"X-Api-Key", "a\x01b"}:         `\x01`,
	}
	for c, want := range bad {
		err := CheckHeaderSetting(c[0], c[1])
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q = %q: %v, want it to say %q", c[0], c[1], err, want)
		}
	}
}
