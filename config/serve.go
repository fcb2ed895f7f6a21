package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/model"
)

// ServeSection is `[serve]`: `triage serve`, the TUI for a team over SSH (DESIGN §9).
//
// Who gets in, and as whom:
//   - a key under `[serve.users.NAME] keys` is NAME, with that user's role;
//   - a key in the `authorized_keys` file is the person its comment names (the text after
//     the key, taken whole: "alice@laptop"), with `authorized_keys_role` (default viewer);
//   - a certificate signed by a key in `trusted_user_ca` is the principal it is valid for
//     that matches the login name (`ssh alice@host`, as OpenSSH does), and only when that
//     name is a configured user (`[serve.users.alice]`, keys may be empty): the CA vouches
//     who you are, the config says what you may do.
type ServeSection struct {
	// Addr is where the SSH server listens (default ":2222").
	Addr string `toml:"addr"`
	// HostKey is the server's private key (default $XDG_STATE_HOME/triage/ssh_host_ed25519),
	// created 0600 on first start.
	HostKey string `toml:"host_key"`
	// MaxSessions is how many sessions may be open at once (default 16).
	MaxSessions *int `toml:"max_sessions"`
	// IdleTimeout closes a session that has sent no input for that long (default "30m").
	IdleTimeout string `toml:"idle_timeout"`
	// MaxAuthFailures is how many refused keys one address may offer in 10 minutes before
	// it is refused for the rest of the window (default 10).
	MaxAuthFailures *int `toml:"max_auth_failures"`
	// AuthorizedKeys is an OpenSSH authorized_keys file; each key's comment is the person.
	AuthorizedKeys string `toml:"authorized_keys"`
	// AuthorizedKeysRole is the role of everyone in AuthorizedKeys (default viewer).
	AuthorizedKeysRole string `toml:"authorized_keys_role"`
	// TrustedUserCA is a file of CA public keys whose user certificates are accepted.
	TrustedUserCA string `toml:"trusted_user_ca"`
	// Users are the people, by name: what triaged_by records for them.
	Users map[string]ServeUser `toml:"users"`
}

// ServeUser is `[serve.users.NAME]`.
type ServeUser struct {
	// Keys are authorized_keys lines ("ssh-ed25519 AAAA... alice@laptop"); the comment is
	// not the name, the table is.
	Keys []string `toml:"keys"`
	// Role is viewer, triager or operator (model.ParseAccess).
	Role string `toml:"role"`
}

// Defaults of [serve].
const (
	DefaultServeAddr       = ":2222"
	DefaultMaxSessions     = 16
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultMaxAuthFailures = 10
	// AuthFailureWindow is the window max_auth_failures counts in.
	AuthFailureWindow = 10 * time.Minute
)

// ServeIdentity is who a key is: the person's name and role.
type ServeIdentity struct {
	Name   string
	Access model.Access
}

// ServeAuth is who may connect to `triage serve`, resolved from [serve] and the files it
// names. Both `triage config check` and `triage serve` build it with Config.ServeAuth, so
// they accept the same keys.
type ServeAuth struct {
	// Keys are the listed keys by their SHA256 fingerprint (gossh.FingerprintSHA256).
	Keys map[string]ServeIdentity
	// CAs are the trusted user certificate authorities.
	CAs []gossh.PublicKey
	// Users are the configured users' roles by name: a certificate's principal must be one.
	Users map[string]model.Access
}

// MaxSessionsValue is max_sessions with its default.
func (s ServeSection) MaxSessionsValue() int {
	if s.MaxSessions == nil || *s.MaxSessions <= 0 {
		return DefaultMaxSessions
	}
	return *s.MaxSessions
}

// MaxAuthFailuresValue is max_auth_failures with its default.
func (s ServeSection) MaxAuthFailuresValue() int {
	if s.MaxAuthFailures == nil || *s.MaxAuthFailures <= 0 {
		return DefaultMaxAuthFailures
	}
	return *s.MaxAuthFailures
}

// IdleTimeoutValue is idle_timeout with its default.
func (s ServeSection) IdleTimeoutValue() time.Duration {
	if d, err := positiveDuration(s.IdleTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultIdleTimeout
}

// AddrValue is addr with its default.
func (s ServeSection) AddrValue() string {
	if a := strings.TrimSpace(s.Addr); a != "" {
		return a
	}
	return DefaultServeAddr
}

// ResolvePath reads a path setting as the runtime does: "~" and "~/..." are under home, a
// relative path is relative to the config file's directory, "" stays "".
func (c *Config) ResolvePath(p, home string) string {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return ""
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return p
	case c.path != "":
		return filepath.Join(filepath.Dir(c.path), p)
	}
	return p
}

// checkServe reports the problems of [serve] that the file itself holds (values, roles,
// names, inline keys); ServeAuth adds what the files it names hold.
func (c *Config) checkServe() []Problem {
	var probs []Problem
	add := func(key string, line int, format string, a ...any) {
		if line == 0 {
			line = c.lines.lineOf(key)
		}
		probs = append(probs, Problem{Key: key, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	s := c.Serve
	if s.MaxSessions != nil && *s.MaxSessions <= 0 {
		add("serve.max_sessions", 0, "serve.max_sessions must be more than 0 (default %d)", DefaultMaxSessions)
	}
	if s.MaxAuthFailures != nil && *s.MaxAuthFailures <= 0 {
		add("serve.max_auth_failures", 0, "serve.max_auth_failures must be more than 0 (default %d)", DefaultMaxAuthFailures)
	}
	if s.IdleTimeout != "" {
		if d, err := positiveDuration(s.IdleTimeout); err != nil || d == 0 {
			add("serve.idle_timeout", 0, "serve.idle_timeout %q is not a positive duration (e.g. \"30m\")", s.IdleTimeout)
		}
	}
	if s.AuthorizedKeysRole != "" {
		if _, err := model.ParseAccess(s.AuthorizedKeysRole); err != nil {
			add("serve.authorized_keys_role", 0, "serve.authorized_keys_role: %v", err)
		}
	}
	for _, k := range []struct{ key, v string }{{"serve.addr", s.Addr}, {"serve.host_key", s.HostKey}, {"serve.authorized_keys", s.AuthorizedKeys}, {"serve.trusted_user_ca", s.TrustedUserCA}} {
		if k.v != "" && strings.TrimSpace(k.v) == "" {
			add(k.key, 0, "%s is blank: remove it for the default, or give a value", k.key)
		}
	}
	_, inline := c.inlineServeAuth()
	return append(probs, inline...)
}

// inlineServeAuth resolves [serve.users.*]: every usable key and role, and every problem.
func (c *Config) inlineServeAuth() (*ServeAuth, []Problem) {
	auth := &ServeAuth{Keys: map[string]ServeIdentity{}, Users: map[string]model.Access{}}
	var probs []Problem
	owner := map[string]string{} // fingerprint → the user that listed it first
	for _, name := range sortedKeys(c.Serve.Users) {
		u := c.Serve.Users[name]
		base := "serve.users." + name
		add := func(key string, line int, format string, a ...any) {
			if line == 0 {
				line = c.lines.lineOf(key)
			}
			probs = append(probs, Problem{Key: key, Line: line, Msg: fmt.Sprintf(format, a...)})
		}
		nameOK := true
		if err := CheckPersonName(name); err != nil {
			add(base, 0, "serve.users.%q: %v", model.SanitizeLine(name), err)
			nameOK = false
		}
		role, err := model.ParseAccess(u.Role)
		switch {
		case strings.TrimSpace(u.Role) == "":
			add(base, 0, "serve.users.%s has no role: add role = \"viewer\", \"triager\" or \"operator\"", model.SanitizeLine(name))
		case err != nil:
			add(base+".role", 0, "serve.users.%s: %v", model.SanitizeLine(name), err)
		}
		usable := nameOK && err == nil
		if usable {
			auth.Users[name] = role
		}
		for _, line := range u.Keys {
			at := c.lineOfEntry(base+".keys", keyNeedle(line))
			key, err := parseKeyLine(line)
			if err != nil {
				add(base+".keys", at, "serve.users.%s: %v", model.SanitizeLine(name), err)
				continue
			}
			fp := gossh.FingerprintSHA256(key)
			if prev, dup := owner[fp]; dup {
				add(base+".keys", at, "serve.users.%s: key %s is also listed for %s: a key is one person's", model.SanitizeLine(name), fp, model.SanitizeLine(prev))
				continue
			}
			owner[fp] = name
			if usable {
				auth.Keys[fp] = ServeIdentity{Name: name, Access: role}
			}
		}
	}
	return auth, probs
}

// ServeAuth resolves who may connect: the configured users, the authorized_keys file and the
// trusted CA file (paths read as ResolvePath does, with home for "~"). It returns every
// problem of the files, each on the line of the setting that names the file; the problems of
// the config file itself are Parse's (Load has already refused them).
func (c *Config) ServeAuth(home string) (*ServeAuth, []Problem) {
	auth, _ := c.inlineServeAuth()
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: key, Line: c.lines.lineOf(key), Msg: fmt.Sprintf(format, a...)})
	}
	s := c.Serve
	if path := c.ResolvePath(s.AuthorizedKeys, home); path != "" {
		role := model.AccessViewer
		if r, err := model.ParseAccess(s.AuthorizedKeysRole); err == nil && s.AuthorizedKeysRole != "" {
			role = r
		}
		err := eachLine(path, func(n int, line string) {
			key, _, name, err := parseAuthorizedLine(line)
			if err != nil {
				add("serve.authorized_keys", "%s:%d: %v", path, n, err)
				return
			}
			fp := gossh.FingerprintSHA256(key)
			switch {
			case name == "":
				add("serve.authorized_keys", "%s:%d: the key has no comment; the comment names the person (\"ssh-ed25519 AAAA... alice\")", path, n)
			case CheckPersonName(name) != nil:
				add("serve.authorized_keys", "%s:%d: the comment %q can't name a person: %v", path, n, model.SanitizeLine(name), CheckPersonName(name))
			case hasUser(s.Users, name):
				add("serve.authorized_keys", "%s:%d: %s is also [serve.users.%s]: list the key there, so one place says their role", path, n, name, name)
			case auth.Keys[fp] != (ServeIdentity{}):
				add("serve.authorized_keys", "%s:%d: key %s is already %s's: a key is one person's", path, n, fp, auth.Keys[fp].Name)
			default:
				auth.Keys[fp] = ServeIdentity{Name: name, Access: role}
			}
		})
		if err != nil {
			add("serve.authorized_keys", "serve.authorized_keys: %v", err)
		}
	}
	if path := c.ResolvePath(s.TrustedUserCA, home); path != "" {
		err := eachLine(path, func(n int, line string) {
			key, err := parseKeyLine(line)
			if err != nil {
				add("serve.trusted_user_ca", "%s:%d: %v", path, n, err)
				return
			}
			auth.CAs = append(auth.CAs, key)
		})
		if err != nil {
			add("serve.trusted_user_ca", "serve.trusted_user_ca: %v", err)
		} else if len(auth.CAs) == 0 && len(probs) == 0 {
			add("serve.trusted_user_ca", "serve.trusted_user_ca: %s holds no key", path)
		}
	}
	return auth, probs
}

// CheckPersonName says why name can't be a person's name (what triaged_by records), nil
// when it can: not empty, no surrounding space, nothing the terminal sanitiser would
// replace (control characters, bidi overrides), at most 64 characters.
func CheckPersonName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("a name can't be empty")
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("a name can't start or end with a space")
	case model.SanitizeLine(name) != name:
		return fmt.Errorf("a name can't hold control characters")
	case len([]rune(name)) > 64:
		return fmt.Errorf("a name is at most 64 characters")
	}
	return nil
}

func hasUser(users map[string]ServeUser, name string) bool {
	_, ok := users[name]
	return ok
}

// parseKeyLine reads one authorized_keys-format key without options; its comment is left.
func parseKeyLine(line string) (gossh.PublicKey, error) {
	key, _, _, err := parseAuthorizedLine(line)
	return key, err
}

// parseAuthorizedLine reads one authorized_keys line. Options (from=, command=,
// cert-authority ...) are refused rather than ignored: a restriction the server silently
// dropped would let in what its writer meant to keep out.
func parseAuthorizedLine(line string) (gossh.PublicKey, []string, string, error) {
	key, comment, opts, rest, err := gossh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, nil, "", fmt.Errorf("not a public key line (\"ssh-ed25519 AAAA... comment\"): %v", err)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, nil, "", fmt.Errorf("one key per line")
	}
	if len(opts) > 0 {
		return nil, nil, "", fmt.Errorf("key options (%s) are not supported by triage serve: remove them", model.SanitizeLine(strings.Join(opts, ",")))
	}
	if _, isCert := key.(*gossh.Certificate); isCert {
		return nil, nil, "", fmt.Errorf("a certificate, not a key: list its CA in serve.trusted_user_ca instead")
	}
	return key, opts, strings.TrimSpace(comment), nil
}

// eachLine calls f with every line of a key file that is not blank or a # comment.
func eachLine(path string, f func(n int, line string)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f(n, line)
	}
	return sc.Err()
}

// keyNeedle is a piece of an inline key line that finds it in the file: its base64 blob's
// start, else the line.
func keyNeedle(line string) string {
	fields := strings.Fields(line)
	for _, f := range fields {
		if strings.HasPrefix(f, "AAAA") {
			return f[:min(len(f), 24)]
		}
	}
	return strings.TrimSpace(line)
}

// lineOfEntry is the line of an entry of the array at key: the first line from the key's on
// that holds needle, else the key's line.
func (c *Config) lineOfEntry(key, needle string) int {
	start := c.lines.lineOf(key)
	if start == 0 || needle == "" {
		return start
	}
	for i := start - 1; i < len(c.text); i++ {
		if strings.Contains(c.text[i], needle) {
			return i + 1
		}
		if i > start-1 && strings.HasPrefix(strings.TrimSpace(c.text[i]), "[") {
			break
		}
	}
	return start
}
