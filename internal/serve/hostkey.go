package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// loadHostKey reads the server's private host key, creating an ed25519 one (0600, in a 0700
// directory) when there is none. A key file that others may read is refused: whoever reads
// it can pose as this server to everyone who trusts it. It returns the key's PEM bytes (what
// wish is given, so it never makes a key of its own) and the parsed signer.
func loadHostKey(path string) (data []byte, signer gossh.Signer, created bool, err error) {
	if path == "" {
		return nil, nil, false, errors.New("no host key path: set [serve] host_key or pass --host-key FILE")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := createHostKey(path); err != nil {
			return nil, nil, false, err
		}
		created = true
	case err != nil:
		return nil, nil, false, fmt.Errorf("host key %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, nil, false, fmt.Errorf("host key %s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, nil, false, fmt.Errorf("host key %s is readable or writable by others (mode %04o): run `chmod 600 %s`, and if others may have read it, move it away so a new one is made (then tell users the new fingerprint)", path, fi.Mode().Perm(), path)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("host key: %w", err)
	}
	signer, err = gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, nil, false, fmt.Errorf("host key %s: %w (it must be an unencrypted OpenSSH or PEM private key)", path, err)
	}
	return data, signer, created, nil
}

// createHostKey writes a new ed25519 private key at path, mode 0600, never over a file.
func createHostKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("host key directory: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("generate host key: %w", err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "triage serve host key")
	if err != nil {
		return fmt.Errorf("encode host key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create host key: %w", err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("write host key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write host key %s: %w", path, err)
	}
	return nil
}
