package records

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Webhook secrets are kept sealed at rest: AES-256-GCM under a key of the
// service's own, the site id bound in as associated data (a sealed secret
// copied to another site's row does not open). The key is the file
// SecretsKeyFile, by default secrets.key in the data dir, made 0600 by
// Open when missing; a file the configuration names is a secret of the
// deployment and is never made here (PostgreSQL deployments pass the same
// file to every instance, and a mistyped path would otherwise seal under a
// new key). Open reads the key at once, so that a key that cannot be used
// stops start-up rather than every later write of a webhook secret. A
// secret stored in the clear by an earlier version is still read, and
// sealed when the site is next written.

// sealedPrefix starts every sealed value.
const sealedPrefix = "lekta-sealed:v1:"

// SecretsKeyName is the key file's name in the data dir.
const SecretsKeyName = "secrets.key"

// maxKeyFile bounds what is read of a key file: a key is one line of 44
// characters, so anything much longer is not one.
const maxKeyFile = 256

// errNoSecretsKey: there is no key file to seal with (PostgreSQL without
// Config.SecretsKeyFile).
var errNoSecretsKey = fmt.Errorf("%w: no secrets key file: webhook secrets are kept sealed, and PostgreSQL deployments must name the key file", ErrBadConfig)

// sealer seals and opens webhook secrets with the key at path, loaded (or
// made, when create is set) on first use.
type sealer struct {
	path   string // "" when there is none
	create bool   // make the key when missing: only the default one

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
		key, err := readOrMakeKey(s.path, s.create)
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

// check loads the key now; without a key file there is nothing to check.
func (s *sealer) check() error {
	if s.path == "" {
		return nil
	}
	_, err := s.load()
	return err
}

// readOrMakeKey reads the key at path, first making it when create is set
// and there is no file there.
func readOrMakeKey(path string, create bool) ([]byte, error) {
	if _, err := os.Lstat(path); create && errors.Is(err, fs.ErrNotExist) {
		// Another process may make it first: then its key is read.
		if err := MakeSecretsKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return readKey(path)
}

// CheckSecretsKey reads the key file at path as Open does, for a check at
// start-up before anything listens, and says why it cannot seal webhook
// secrets: it is missing, it is not a regular file, other users can read
// or write it (the file a symlink names included), or it does not hold a
// key. Errors wrap ErrBadConfig and name the path and the fix.
func CheckSecretsKey(path string) error {
	_, err := readKey(path)
	return err
}

// readKey reads the 32-byte key (base64) at path; see CheckSecretsKey.
func readKey(path string) ([]byte, error) {
	// Stat, not Lstat: secret mounts make the key a symlink, and what
	// matters is who can read the file it names.
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: the secrets key file %s does not exist; make one with: (umask 077; head -c 32 /dev/urandom | base64 > %s)",
			ErrBadConfig, path, path)
	case err != nil:
		return nil, fmt.Errorf("%w: secrets key file: %w", ErrBadConfig, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%w: the secrets key file %s is not a file", ErrBadConfig, path)
	}
	if modesMatter {
		if err := refuseShared("secrets key file", path, st); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read secrets key %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("read secrets key %s: %w", path, err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 || len(data) > maxKeyFile {
		return nil, fmt.Errorf("%w: the secrets key file %s does not hold a key: a key is 32 random bytes in base64, one line of 44 characters, "+
			"as made by: head -c 32 /dev/urandom | base64", ErrBadConfig, path)
	}
	return key, nil
}

// MakeSecretsKey writes a new random key to path with mode 0600, for
// Config.SecretsKeyFile. It never replaces a file (the error then wraps
// fs.ErrExist), and the key appears whole or not at all: it is written
// beside path and linked into place, so a process reading path at the
// same moment never sees half a key.
func MakeSecretsKey(path string) error {
	key := make([]byte, 32)
	rand.Read(key)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("make secrets key %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("make secrets key %s: %w", path, err)
	}
	if err := os.Link(f.Name(), path); err != nil {
		return fmt.Errorf("make secrets key %s: %w", path, err)
	}
	return nil
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
