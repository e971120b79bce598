package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"lekta.dev/lekta/records"
)

// databaseFlags say where the SQL database of records (and, without Redis,
// of hot state) is: shared by audit, serve and db.
type databaseFlags struct {
	dataDir        string
	databaseURL    string
	secretsKeyFile string
}

func (d *databaseFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.dataDir, "data-dir", "", "directory of the SQLite database lekta.db (default $XDG_STATE_HOME/lekta, else ~/.local/state/lekta; created with mode 0700)")
	fs.StringVar(&d.databaseURL, "database-url", "", "postgres://… keep records (reports) in PostgreSQL instead of the SQLite file; needs --redis-url for serve and audit")
	fs.StringVar(&d.secretsKeyFile, "secrets-key-file", "", "key file that seals webhook secrets at rest: 32 random bytes in base64, mode 0600, as made by (umask 077; head -c 32 /dev/urandom | base64 > PATH); "+
		"checked at start, and a named file must exist (default secrets.key in --data-dir, made when missing); serve needs it with --database-url, the same file on every instance")
}

// config returns the records configuration; errors name the flag.
func (d *databaseFlags) config(getenv func(string) string) (records.Config, error) {
	if d.databaseURL != "" {
		return records.Config{DatabaseURL: d.databaseURL, SecretsKeyFile: d.secretsKeyFile}, nil
	}
	dir := d.dataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(getenv); err != nil {
			return records.Config{}, err
		}
	}
	return records.Config{DataDir: dir, SecretsKeyFile: d.secretsKeyFile}, nil
}

// checkSecretsKey refuses, before serve listens, a --secrets-key-file it
// could not seal webhook secrets with; errors name the flag. The default
// key, in the data dir, is made and checked when the database opens.
func (d *databaseFlags) checkSecretsKey() error {
	switch {
	case d.databaseURL != "" && d.secretsKeyFile == "":
		return errors.New("--secrets-key-file: required with --database-url: webhook secrets are kept sealed, " +
			"and every instance must open them with the same key file (a secret of the deployment, mode 0600)")
	case d.secretsKeyFile == "":
		return nil
	}
	if err := records.CheckSecretsKey(d.secretsKeyFile); err != nil {
		return fmt.Errorf("--secrets-key-file: %w", err)
	}
	return nil
}

// defaultDataDir is $XDG_STATE_HOME/lekta, else ~/.local/state/lekta, as
// the XDG base directory specification places state that outlives a run.
func defaultDataDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "lekta"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "lekta"), nil
	}
	return "", errors.New("--data-dir: not given, and neither XDG_STATE_HOME nor HOME is set to place it")
}

// openRecords opens and migrates the database; a bad flag is errBadConfig
// (exit 2), a database that cannot answer is a part that failed (exit 3).
func (d *databaseFlags) openRecords(ctx context.Context, getenv func(string) string) (*records.DB, error) {
	rc, err := d.config(getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	db, err := records.Open(ctx, rc)
	if errors.Is(err, records.ErrBadConfig) {
		return nil, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	return db, nil
}

// exitFor maps an error of openRecords to an exit status.
func exitFor(err error) int {
	if errors.Is(err, errBadConfig) {
		return exitBadInput
	}
	return exitNotRun
}
