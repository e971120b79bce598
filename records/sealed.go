package records

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// Webhook secrets are kept sealed at rest: AES-256-GCM under a key of the
// service's own, the site id bound in as associated data (a sealed secret
// copied to another site's row does not open). The key is the file
// SecretsKeyFile, by default secrets.key in the data dir, created 0600 on
// first use; PostgreSQL deployments pass the same file to every instance.
// A secret stored in the clear by an earlier version is still read, and
// sealed when the site is next written.

// sealedPrefix starts every sealed value.
const sealedPrefix = "lekta-sealed:v1:"

// SecretsKeyName is the key file's name in the data dir.
const SecretsKeyName = "secrets.key"

// errNoSecretsKey: there is no key file to seal with (PostgreSQL without
// Config.SecretsKeyFile).
var errNoSecretsKey = fmt.Errorf("%w: no secrets key file: webhook secrets are kept sealed, and PostgreSQL deployments must name the key file", ErrBadConfig)

// sealer seals and opens webhook secrets with the key at path, loaded (or
// made) on first use.
type sealer struct {
	path string // "" when there is none

	once sync.Once
	aead cipher.AEAD
	err  error
}

func (s *sealer) load() (cipher.AEAD, error) {
	s.once.Do(func() {
		if s.path == "" {
			s.err = errNoSecretsKey
			return
		}
		key, err := readOrMakeKey(s.path)
		if err != nil {
			s.err = err
			return
		}
		block, err := aes.NewCipher(key)
		if err == nil {
			s.aead, err = cipher.NewGCM(block)
		}
		s.err = err
	})
	return s.aead, s.err
}

// readOrMakeKey reads the 32-byte key (base64) at path, creating it 0600
// when missing; a key file that others can read is refused.
func readOrMakeKey(path string) ([]byte, error) {
	fresh := make([]byte, 32)
	rand.Read(fresh)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(fresh) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write secrets key %s: %w", path, werr)
		}
		return fresh, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create secrets key %s: %w", path, err)
	}
	if modesMatter {
		if err := checkPrivate(path); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secrets key %s: %w", path, err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%w: secrets key %s is not 32 bytes of base64", ErrBadConfig, path)
	}
	return key, nil
}

// seal returns secret sealed for the site id; "" stays "".
func (s *sealer) seal(id, secret string) (string, error) {
	if secret == "" {
		return "", nil
	}
	aead, err := s.load()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(secret)+aead.Overhead())
	rand.Read(nonce)
	out := aead.Seal(nonce, nonce, []byte(secret), []byte(id))
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// open returns the secret of site id from its stored form: sealed, or in
// the clear as earlier versions stored it.
func (s *sealer) open(id, stored string) (string, error) {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil
	}
	aead, err := s.load()
	if err != nil {
		return "", err
	}
	data, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(data) < aead.NonceSize() {
		return "", fmt.Errorf("open webhook secret of site %s: malformed", id)
	}
	plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
	if err != nil {
		return "", fmt.Errorf("open webhook secret of site %s: wrong secrets key or altered row", id)
	}
	return string(plain), nil
}
