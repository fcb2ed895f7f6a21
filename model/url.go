package model

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The destination allowlist (invariant 8). One rule decides whether a URL may be contacted
// (url_prefixes, and the Apps Script hop's redirect_prefixes) and whether an allowlist entry
// is acceptable at all (`config check`, Source.Validate), so the check that config passes is
// the check the runtime applies.
//
// The comparison is on parsed parts: scheme and host case-folded, a scheme's default port
// folded away (https://h:443/ is https://h/), IPv6 addresses in canonical form, and the path
// compared as sent (escaped), on a segment boundary unless the prefix ends in "/"
// (https://h/api allows /api and /api/x, not /apix).
//
// Where a server could read a URL differently from how it is checked, it is refused outright
// rather than normalised, because the server in front of the destination (nginx, a CDN, a
// Java app server) is the one that decides where the request goes and we can't know its
// rules. The raw text is checked before Go's parser turns anything into something else, and
// Go's reading is then required to agree with ours. Refused, in a URL or a prefix:
//   - user info (user@host), a fragment (#...), a percent-escape in the host;
//   - control characters, spaces, a backslash (read as / by many servers) anywhere;
//   - non-ASCII characters, raw or percent-encoded in the path: Unicode normalisation turns
//     "．" (U+FF0E) into ".", and old decoders read overlong UTF-8 (%c0%ae) as ".";
//   - in the path: ";" (path parameters: Tomcat reads "..;/" as ".."), an encoded ".", "/",
//     "\", ";", "?", "#", "%" (double encoding: %252e becomes %2e, then "."), or control
//     character, any segment made only of dots ("." and ".." and "..."), a path starting with
//     "//", and characters a URL path can't hold unescaped;
//   - a prefix with a query.

// URLPrefix is one parsed allowlist entry of url_prefixes or redirect_prefixes.
type URLPrefix struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is the lower-case host (an IPv6 address in brackets, canonical), with ":port"
	// only when the port is not the scheme's default.
	Host string
	// Path is the path as sent (escaped, hex digits upper-cased), "/" at least.
	Path string
}

// String renders the prefix in its normalised form.
func (p URLPrefix) String() string { return p.Scheme + "://" + p.Host + p.Path }

// ParseURLPrefix parses and checks an allowlist entry: an absolute http(s) URL with a host,
// no user info, query or fragment, and a path that passes the rules above. The error says
// what is wrong with it.
func ParseURLPrefix(s string) (URLPrefix, error) {
	u, err := parseStrictURL(s)
	if err != nil {
		return URLPrefix{}, fmt.Errorf("prefix %s %v", quoteCapped(s), err)
	}
	if u.hasQuery {
		return URLPrefix{}, fmt.Errorf("prefix %s has a query (?...): a prefix is scheme://host/path only", quoteCapped(s))
	}
	return URLPrefix{Scheme: u.scheme, Host: u.host, Path: u.path}, nil
}

// URLUnderPrefixes is the allowlist decision: nil when raw lies under one of prefixes, else
// an error saying why not (the URL quoted, escaped and shortened). Prefixes that are not
// valid (see ParseURLPrefix) match nothing.
func URLUnderPrefixes(raw string, prefixes []string) error {
	u, err := parseStrictURL(raw)
	if err != nil {
		return fmt.Errorf("url %s %v", quoteCapped(raw), err)
	}
	if len(prefixes) == 0 {
		return fmt.Errorf("url %s: no allowed prefixes are configured", quoteCapped(raw))
	}
	for _, ps := range prefixes {
		p, err := ParseURLPrefix(ps)
		if err != nil {
			continue
		}
		if p.contains(u) {
			return nil
		}
	}
	q := make([]string, len(prefixes))
	for i, p := range prefixes {
		q[i] = quoteCapped(p)
	}
	return fmt.Errorf("url %s is not under any allowed prefix (%s)", quoteCapped(raw), strings.Join(q, ", "))
}

// contains reports whether u lies under the prefix: same scheme and host, and the prefix's
// path is a prefix of u's on a segment boundary (any boundary when it ends in "/").
func (p URLPrefix) contains(u strictURL) bool {
	if p.Scheme != u.scheme || p.Host != u.host {
		return false
	}
	if strings.HasSuffix(p.Path, "/") {
		return strings.HasPrefix(u.path, p.Path)
	}
	return u.path == p.Path || strings.HasPrefix(u.path, p.Path+"/")
}

// strictURL is a URL that passed parseStrictURL, in comparable form.
type strictURL struct {
	scheme, host, path string
	hasQuery           bool
}

// errAt is a refusal naming a 1-based character position.
func errAt(pos int, format string, a ...any) error {
	return fmt.Errorf(format+" at position %d", append(a, pos)...)
}

// parseStrictURL applies the rules above. Its errors read after the URL: "has a backslash
// at position 20 (...)".
func parseStrictURL(s string) (strictURL, error) {
	if s == "" {
		return strictURL{}, errors.New("is empty")
	}
	// The raw text first, before any parser decodes or drops a thing.
	if err := checkRawText(s); err != nil {
		return strictURL{}, err
	}
	// From here on s is printable ASCII, so byte offsets are character positions - 1.
	i := strings.Index(s, "://")
	if i <= 0 {
		return strictURL{}, errors.New("is not an absolute http(s) URL (https://host/path)")
	}
	scheme := strings.ToLower(s[:i])
	if scheme != "http" && scheme != "https" {
		return strictURL{}, fmt.Errorf("has the scheme %q: only http and https are sent to", s[:i])
	}
	start := i + 3
	rest := s[start:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	rest = rest[end:]
	if authority == "" {
		return strictURL{}, errors.New("has no host")
	}
	if j := strings.IndexByte(authority, '@'); j >= 0 {
		return strictURL{}, fmt.Errorf("carries user info (user@host, @ at position %d): refused, a reader could take either part for the host", start+j+1)
	}
	if j := strings.IndexByte(authority, '%'); j >= 0 {
		return strictURL{}, errAt(start+j+1, "has a percent-escape in its host")
	}
	host, err := normAuthority(scheme, authority)
	if err != nil {
		return strictURL{}, err
	}
	pathStart := start + end
	path, hasQuery := rest, false
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		path, hasQuery = rest[:q], true
	}
	if err := checkPath(path, pathStart); err != nil {
		return strictURL{}, err
	}
	if path == "" {
		path = "/"
	}
	if err := sameForGo(s, scheme, authority, path); err != nil {
		return strictURL{}, err
	}
	return strictURL{scheme: scheme, host: host, path: upperEscapes(path), hasQuery: hasQuery}, nil
}

// checkRawText refuses, by position, what the raw text of a URL must not hold: invalid
// UTF-8, a control character, a space, a non-ASCII character, a backslash, a fragment.
func checkRawText(s string) error {
	pos := 0
	for i, r := range s {
		pos++
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			return errAt(pos, "is not valid UTF-8")
		case isControl(r):
			return errAt(pos, "has a control character (%s)", describeRune(r))
		case r == ' ':
			return errAt(pos, "has a space")
		case r >= 0x80:
			return fmt.Errorf("has a non-ASCII character (%s at position %d): some servers fold such characters into others (U+FF0E into \".\"); use the punycode (xn--) form of a host", describeRune(r), pos)
		case r == '\\':
			return fmt.Errorf("has a backslash at position %d: many servers read it as /", pos)
		case r == '#':
			return fmt.Errorf("has a fragment (# at position %d): it is never sent, and parsers disagree about what follows it", pos)
		}
	}
	return nil
}

// sameForGo holds the check to Go's parser, which is what the HTTP client uses to build the
// request: it must read the same scheme, host and path, or what was checked is not what
// would be sent.
func sameForGo(s, scheme, authority, path string) error {
	gu, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("is not a URL Go's HTTP client can send (%v)", err)
	}
	goPath := gu.EscapedPath()
	if goPath == "" {
		goPath = "/"
	}
	if gu.User != nil || gu.Opaque != "" || gu.Host != authority || !strings.EqualFold(gu.Scheme, scheme) || goPath != path {
		return errors.New("is read differently by Go's URL parser than by this check: refused")
	}
	return nil
}

// validAt reports whether the rune at byte i of s is valid UTF-8 (U+FFFD itself is).
func validAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size > 1
}

// normAuthority lower-cases the host, puts an IPv6 address in canonical form and drops the
// scheme's default port.
func normAuthority(scheme, a string) (string, error) {
	var host, port string
	var hasPort bool
	var err error
	if strings.HasPrefix(a, "[") {
		host, port, hasPort, err = splitIPv6(a)
	} else {
		host, port, hasPort, err = splitName(a)
	}
	if err != nil || !hasPort {
		return host, err
	}
	n, err := parsePort(port)
	if err != nil {
		return "", err
	}
	if (scheme == "https" && n == 443) || (scheme == "http" && n == 80) {
		return host, nil
	}
	return host + ":" + strconv.Itoa(n), nil
}

// splitIPv6 reads "[addr]" or "[addr]:port": the address in canonical form, in brackets.
func splitIPv6(a string) (host, port string, hasPort bool, err error) {
	j := strings.IndexByte(a, ']')
	if j < 0 {
		return "", "", false, errors.New("has an unclosed [ in its host")
	}
	addr, perr := netip.ParseAddr(a[1:j])
	if perr != nil || !addr.Is6() || addr.Zone() != "" {
		return "", "", false, fmt.Errorf("has %q in brackets, which is not an IPv6 address", a[1:j])
	}
	host = "[" + addr.String() + "]"
	switch after := a[j+1:]; {
	case after == "":
		return host, "", false, nil
	case after[0] == ':':
		return host, after[1:], true, nil
	default:
		return "", "", false, fmt.Errorf("has %q after its IPv6 address", after)
	}
}

// splitName reads "name" or "name:port", the name lower-cased and holding only what a host
// name can.
func splitName(a string) (host, port string, hasPort bool, err error) {
	h, p, ok := strings.Cut(a, ":")
	host = strings.ToLower(h)
	if host == "" {
		return "", "", false, errors.New("has no host")
	}
	for k := 0; k < len(host); k++ {
		c := host[k]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", "", false, fmt.Errorf("has %q in its host %q, which a host name can't hold", string(c), a)
		}
	}
	return host, p, ok, nil
}

// parsePort reads a port number, 1 to 65535, digits only.
func parsePort(port string) (int, error) {
	if port == "" {
		return 0, errors.New("has an empty port (host: with nothing after the colon)")
	}
	n := 0
	for k := 0; k < len(port); k++ {
		if port[k] < '0' || port[k] > '9' || n > 65535 {
			return 0, fmt.Errorf("has the port %q, which is not a port number", port)
		}
		n = n*10 + int(port[k]-'0')
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("has the port %q, which is not a port number", port)
	}
	return n, nil
}

// checkPath refuses a path that a server could read as another path. offset is the path's
// byte offset in the URL, for positions.
func checkPath(path string, offset int) error {
	if strings.HasPrefix(path, "//") {
		return errAt(offset+1, "has a path starting with // (some servers read what follows as a host)")
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		pos := offset + i + 1
		switch {
		case c == ';':
			return fmt.Errorf("has a ; in its path at position %d: some servers read what follows as parameters and drop it (..;/ becomes ..)", pos)
		case c == '%':
			if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
				return errAt(pos, "has a %% that is not a percent-escape")
			}
			if why := encodedRefusal(unhex(path[i+1])<<4 | unhex(path[i+2])); why != "" {
				return fmt.Errorf("has %s (%s at position %d) in its path: a server that decodes it could read another path", why, path[i:i+3], pos)
			}
			i += 2
		case !isPathChar(c):
			return fmt.Errorf("has %q at position %d, which a URL path can't hold unescaped", string(c), pos)
		}
	}
	for _, seg := range strings.Split(path, "/") {
		if seg != "" && strings.Trim(seg, ".") == "" {
			return fmt.Errorf("has the dot segment %q in its path: a server resolves it to another path", seg)
		}
	}
	return nil
}

// encodedRefusal names a percent-encoded byte that is refused in a path, or "".
func encodedRefusal(b byte) string {
	switch {
	case b == '.':
		return `an encoded "."`
	case b == '/':
		return `an encoded "/"`
	case b == '\\':
		return "an encoded backslash"
	case b == ';':
		return `an encoded ";"`
	case b == '?' || b == '#':
		return fmt.Sprintf("an encoded %q", string(b))
	case b == '%':
		return `an encoded "%" (double encoding)`
	case b < 0x20 || b == 0x7f:
		return "an encoded control character"
	case b >= 0x80:
		return "an encoded non-ASCII byte (Unicode normalisation or overlong UTF-8 can turn it into . or /)"
	}
	return ""
}

// isPathChar is an RFC 3986 pchar or "/", minus ";" (refused) and "%" (checked apart).
func isPathChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,=:@/", c) >= 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// upperEscapes upper-cases the hex digits of percent-escapes, so %3a and %3A compare equal.
func upperEscapes(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	b := []byte(p)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}
