package model

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What an HTTP request can carry (invariant 3: a key no header can carry is refused before
// sending; invariant 8: what we send is what was checked). These checks are pure so that
// `config check`, the planner and the client apply the same rule and say the same thing.
//
// The rule for a header value follows RFC 9110 §5.5 (field-value = *( field-vchar / SP /
// HTAB )), made stricter where a permissive reading would send something else than was meant:
//   - C0 controls (\x00-\x1f), DEL (\x7f) and C1 controls (U+0080-U+009F) are refused: Go's
//     transport refuses CR, LF and NUL itself (and triage used to report that as a network
//     error), and a proxy may cut or fold the others.
//   - HTAB is allowed inside a header value (the RFC allows it; a configured secret may hold
//     one) but not in a key: a key is an identifier that a receiver compares byte for byte,
//     and a tab inside one is whitespace some proxies fold, so the same key could arrive as
//     two different ones.
//   - invalid UTF-8 is refused in both (a sheet cell can't hold it; a library caller's bytes
//     might).

// CheckKey reports why an idempotency key can't be sent, or nil. A key is an exact string to
// the receiver: it is sent as the row (or the caller) holds it, never trimmed or cleaned, so
// one that a header can't carry as it is, or that would not read back as the same string, is
// refused: a control character (C0, DEL, C1 such as U+0085 NEL: a "\r" left by a CRLF file),
// a line or paragraph separator (U+2028, U+2029), invalid UTF-8, or whitespace at either end
// (a space, a tab, U+00A0, U+2028...: trimmed by one reader and not another, the same key
// would arrive as two). The message names the first offending character, escaped (never the
// raw control), and its 1-based position: "key contains a control character (\r at position
// 12); it can't be sent in a header". The caller says where the key came from and what to fix.
func CheckKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return errors.New("key is empty")
	}
	if pos, r, bad := firstUnsendable(key, false); bad {
		if r == utf8.RuneError {
			return fmt.Errorf("key is not valid UTF-8 (at position %d); it can't be sent in a header", pos)
		}
		return fmt.Errorf("key contains a control character (%s at position %d); it can't be sent in a header", describeRune(r), pos)
	}
	pos := 0
	for _, r := range key {
		pos++
		if r == '\u2028' || r == '\u2029' {
			return fmt.Errorf("key contains a line separator (%s at position %d); it can't be sent as it is", describeRune(r), pos)
		}
	}
	first, _ := utf8.DecodeRuneInString(key)
	last, _ := utf8.DecodeLastRuneInString(key)
	switch {
	case unicode.IsSpace(first):
		return fmt.Errorf("key starts with whitespace (%s at position 1); a key is sent exactly as written, never trimmed", describeSpace(first))
	case unicode.IsSpace(last):
		return fmt.Errorf("key ends with whitespace (%s at position %d); a key is sent exactly as written, never trimmed", describeSpace(last), utf8.RuneCountInString(key))
	}
	return nil
}

// describeSpace names a whitespace character for a message: "a space", else as describeRune.
func describeSpace(r rune) string {
	if r == ' ' {
		return "a space"
	}
	return describeRune(r)
}

// CheckHeaderValue reports why v can't be sent as an HTTP header value, or nil; see CheckKey
// for the rule (a tab is allowed here). The value itself is never quoted: it may be a secret.
func CheckHeaderValue(v string) error {
	if pos, r, bad := firstUnsendable(v, true); bad {
		if r == utf8.RuneError {
			return fmt.Errorf("value is not valid UTF-8 (at position %d); it can't be sent in a header", pos)
		}
		return fmt.Errorf("value contains a control character (%s at position %d); it can't be sent in a header", describeRune(r), pos)
	}
	return nil
}

// CheckHeaderName reports why name isn't an HTTP header field name (an RFC 9110 token:
// letters, digits and !#$%&'*+-.^_`|~), or nil.
func CheckHeaderName(name string) error {
	if name == "" {
		return errors.New("header name is empty")
	}
	pos := 0
	for _, r := range name {
		pos++
		if r < 0x80 && isTokenChar(byte(r)) {
			continue
		}
		what := fmt.Sprintf("%q", string(r))
		if isControl(r) || r == utf8.RuneError || r >= 0x80 {
			what = describeRune(r)
		}
		if r == ' ' {
			what = "a space"
		}
		return fmt.Errorf("header name %s is not a valid HTTP header name: it has %s at position %d (a name is letters, digits and !#$%%&'*+-.^_`|~ only)", quoteCapped(name), what, pos)
	}
	return nil
}

// isTokenChar reports whether c may appear in an RFC 9110 token.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// firstUnsendable finds the first character of s a header can't carry: its 1-based position
// and the rune (utf8.RuneError for invalid UTF-8).
func firstUnsendable(s string, allowTab bool) (pos int, r rune, bad bool) {
	for i, c := range s {
		pos++
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return pos, c, true
			}
		}
		if c == '\t' && allowTab {
			continue
		}
		if isControl(c) {
			return pos, c, true
		}
	}
	return 0, 0, false
}

// isControl is C0, DEL or C1.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// describeRune names a character for a message without putting it on the terminal: \r, \n,
// \t, \x01, \x1b (ESC), \x7f (DEL), \u0085 for controls, U+FF0E for other non-ASCII, the
// character itself for printable ASCII.
func describeRune(r rune) string {
	switch {
	case r == '\r':
		return `\r`
	case r == '\n':
		return `\n`
	case r == '\t':
		return `\t`
	case r == 0x1b:
		return `\x1b (ESC)`
	case r == 0x7f:
		return `\x7f (DEL)`
	case r < 0x20:
		return fmt.Sprintf(`\x%02x`, r)
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf(`\u%04x`, r)
	case r >= 0x80:
		return fmt.Sprintf("U+%04X", r)
	}
	return string(r)
}

// maxQuoted bounds how much of a value a message quotes: a 60,000-character URL from a cell
// must not become a 60,000-character message.
const maxQuoted = 200

// quoteCapped quotes s Go-style (controls, C1 and bidi overrides escaped, so it is safe on a
// terminal as it is) and shortens it to maxQuoted characters.
func quoteCapped(s string) string {
	if n := utf8.RuneCountInString(s); n > maxQuoted {
		r := []rune(s)
		return fmt.Sprintf("%q…(%d chars)", string(r[:maxQuoted]), n)
	}
	return fmt.Sprintf("%q", s)
}

// EnvPrefix marks a configured header value that is read from the environment at send time
// ("env:CRM_TOKEN"), so secrets stay out of the config file and the sheet.
const EnvPrefix = "env:"

// CheckHeaderSetting checks one configured header as written in the config (name, and a
// value that is either literal or "env:NAME"): the rule `config check` and the replay
// client's source validation share. A literal value is trimmed, as it is when sent; an
// environment variable's value can only be checked at send time (CheckHeaderValue).
func CheckHeaderSetting(name, value string) error {
	if err := CheckHeaderName(name); err != nil {
		return err
	}
	v := strings.TrimSpace(value)
	if env, ok := strings.CutPrefix(v, EnvPrefix); ok {
		if env == "" {
			return fmt.Errorf("header %s says env: without a variable name", name)
		}
		if !ValidEnvName(env) {
			return fmt.Errorf("header %s reads %s, which is not an environment variable name (letters, digits and _, not starting with a digit)", name, quoteCapped(EnvPrefix+env))
		}
		return nil
	}
	if err := CheckHeaderValue(v); err != nil {
		return fmt.Errorf("header %s: %w; fix it in the config", name, err)
	}
	return nil
}

// ValidEnvName reports whether s can name an environment variable in an "env:NAME" value
// (letters, digits and _, not starting with a digit): one rule for headers and the notify URL.
func ValidEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
