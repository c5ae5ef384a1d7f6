package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// PublicPrefix starts a public key's text form: "ed25519:" and the 32 bytes
// in standard base64, one line of the shared configuration's [keys].
const PublicPrefix = "ed25519:"

// FormatPublic returns pub's text form.
func FormatPublic(pub ed25519.PublicKey) string {
	return PublicPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublic reads a public key's text form.
func ParsePublic(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), PublicPrefix)
	if !ok {
		return nil, fmt.Errorf("public key %.24q…: want %q and base64 (hearth keygen prints it)", s, PublicPrefix)
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("public key %.24q…: not %d bytes of base64", s, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// keyLabel starts the line that names a key file's owner, before its PEM
// block (PEM readers, OpenSSL's included, skip text before a block).
const keyLabel = "hearth key: "

// Generate makes a key for name from random (crypto/rand when nil).
func Generate(name string, random io.Reader) (*Signer, error) {
	if random == nil {
		random = rand.Reader
	}
	_, priv, err := ed25519.GenerateKey(random)
	if err != nil {
		return nil, fmt.Errorf("sign: generating a key: %w", err)
	}
	return NewSigner(name, priv)
}

// MarshalKey returns s's key file: a line naming the key's owner, then the
// private key as a PKCS #8 PEM block ("PRIVATE KEY", as `openssl genpkey
// -algorithm ed25519` writes it).
func MarshalKey(s *Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s\n", keyLabel, s.name)
	if err := pem.Encode(&b, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return b.Bytes(), nil
}

// ParseKey reads a key file. name, when not empty, is the owner expected:
// a file that names another is refused; a file without the naming line
// (an OpenSSL key) takes name.
func ParseKey(b []byte, name string) (*Signer, error) {
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("no PEM \"PRIVATE KEY\" block (hearth keygen writes one)")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("data after the PEM block")
	}
	owner := ""
	head := b[:bytes.Index(b, []byte("-----BEGIN"))]
	for _, l := range strings.Split(string(head), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), keyLabel); ok {
			owner = strings.TrimSpace(v)
		}
	}
	switch {
	case owner == "" && name == "":
		return nil, fmt.Errorf("no %q line names the key's owner", strings.TrimSpace(keyLabel))
	case owner == "":
		owner = name
	case name != "" && owner != name:
		return nil, fmt.Errorf("the key is %q's, not %q's", owner, name)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("PKCS #8: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an Ed25519 key", k)
	}
	return NewSigner(owner, priv)
}

// LoadKey reads key file path (ParseKey). Like ssh, it refuses a file that
// others than its owner may read.
func LoadKey(path, name string) (*Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %v lets others read it: chmod 600 %s", path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	s, err := ParseKey(b, name)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return s, nil
}

// WriteKey writes s's key file at path with mode 0600, refusing to
// replace an existing file.
func WriteKey(path string, s *Signer) error {
	b, err := MarshalKey(s)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("key file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	return nil
}

// Ephemeral returns a keyring with a fresh key for every name, each its
// own signer: `hearth sim` signs a run's messages with keys that live as
// long as the run.
func Ephemeral(names []string, controllers ...string) (*Keyring, error) {
	k := NewKeyring()
	for i, n := range append(append([]string{}, names...), controllers...) {
		if k.Signer(n) != nil {
			continue
		}
		s, err := Generate(n, nil)
		if err != nil {
			return nil, err
		}
		if err := k.AddSigner(s); err != nil {
			return nil, err
		}
		if i >= len(names) {
			k.controllers[n] = true
		}
	}
	return k, nil
}
