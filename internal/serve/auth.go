package serve

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/config"
)

// identify says who a key is: a listed key (config.ServeAuth.Keys) is its person whatever
// login name they typed; a user certificate must be signed by a trusted CA, be within its
// validity window, list the login name among its principals (as OpenSSH checks it), and that
// name must be a configured user, whose role it gets. why says why a key was refused, for
// the log only: the client sees "Permission denied (publickey)" whatever the reason.
func identify(auth *config.ServeAuth, meta connMeta, key gossh.PublicKey, now time.Time) (u User, why string) {
	if auth == nil {
		return User{}, "no users are configured"
	}
	cert, isCert := key.(*gossh.Certificate)
	if !isCert {
		fp := gossh.FingerprintSHA256(key)
		id, ok := auth.Keys[fp]
		if !ok {
			return User{}, "key not listed"
		}
		return User{Name: id.Name, Access: id.Access, Key: fp}, ""
	}
	if len(auth.CAs) == 0 {
		return User{}, "a certificate, and no trusted_user_ca is configured"
	}
	checker := &gossh.CertChecker{
		IsUserAuthority: func(ca gossh.PublicKey) bool {
			for _, k := range auth.CAs {
				if bytes.Equal(k.Marshal(), ca.Marshal()) {
					return true
				}
			}
			return false
		},
		Clock: func() time.Time { return now },
	}
	// Authenticate checks the certificate type, the CA, the principal (the login name),
	// the validity window and the signature. It lets the source-address critical option
	// through for the server to enforce from the returned permissions, which charm's ssh
	// server doesn't pass on: it is enforced here.
	perms, err := checker.Authenticate(meta, cert)
	if err != nil {
		return User{}, fmt.Sprintf("certificate refused: %v", err)
	}
	if src, ok := perms.CriticalOptions["source-address"]; ok && !fromAllowed(src, meta.remote) {
		return User{}, fmt.Sprintf("certificate refused: source-address %q doesn't allow %v", src, meta.remote)
	}
	role, ok := auth.Users[meta.user]
	if !ok {
		return User{}, fmt.Sprintf("certificate for %q, who is not a configured user ([serve.users.%s])", meta.user, meta.user)
	}
	return User{Name: meta.user, Access: role, Key: gossh.FingerprintSHA256(cert.Key)}, ""
}

// fromAllowed reports whether remote is in a certificate's source-address list (addresses
// and CIDR ranges, comma-separated).
func fromAllowed(list string, remote net.Addr) bool {
	ip := net.ParseIP(host(remote))
	if ip == nil {
		return false
	}
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if _, n, err := net.ParseCIDR(a); err == nil {
			if n.Contains(ip) {
				return true
			}
		} else if x := net.ParseIP(a); x != nil && x.Equal(ip) {
			return true
		}
	}
	return false
}

// connMeta is what CertChecker.Authenticate reads of a connection: the login name and the
// remote address (for a certificate's source-address option).
type connMeta struct {
	user   string
	remote net.Addr
	local  net.Addr
}

func (m connMeta) User() string          { return m.user }
func (m connMeta) SessionID() []byte     { return nil }
func (m connMeta) ClientVersion() []byte { return nil }
func (m connMeta) ServerVersion() []byte { return nil }
func (m connMeta) RemoteAddr() net.Addr  { return m.remote }
func (m connMeta) LocalAddr() net.Addr   { return m.local }
