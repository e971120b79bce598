package records

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CheckURL reports whether raw can name a PostgreSQL database, without
// connecting; the error names --database-url and never repeats the URL.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url.Error quotes the URL, password and all
		}
		return nil, fmt.Errorf("%w: --database-url is not a URL: %w", ErrBadConfig, err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("%w: --database-url: want postgres://user:password@host:port/database, got scheme %q", ErrBadConfig, u.Scheme)
	}
	return u, nil
}

// connectPostgres opens a pool on c.DatabaseURL and checks that it answers.
func connectPostgres(ctx context.Context, c Config) (*DB, error) {
	u, err := parseURL(c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db := &DB{kind: PostgreSQL, where: describeURL(u), timeout: c.CallTimeout, q: postgresQueries}
	if pw, ok := u.User.Password(); ok && pw != "" {
		db.secrets = append(db.secrets, pw)
	}
	if pw := u.Query().Get("password"); pw != "" {
		db.secrets = append(db.secrets, pw)
	}
	cfg, err := pgx.ParseConfig(c.DatabaseURL)
	if err != nil {
		return nil, db.scrub(fmt.Errorf("%w: --database-url: %w", ErrBadConfig, err))
	}
	if cfg.ConnectTimeout <= 0 || cfg.ConnectTimeout > c.CallTimeout {
		cfg.ConnectTimeout = c.CallTimeout
	}
	db.sql = stdlib.OpenDB(*cfg)
	db.sql.SetMaxOpenConns(16)
	db.sql.SetMaxIdleConns(4)
	db.sql.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := db.call(ctx)
	defer cancel()
	if err := db.sql.PingContext(pctx); err != nil {
		_ = db.sql.Close()
		return nil, db.unavailable("connect to "+db.where, err)
	}
	return db, nil
}

// describeURL names a PostgreSQL database for people: scheme, user, host and
// database, never the password or the query (which may hold one).
func describeURL(u *url.URL) string {
	d := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		d.User = url.User(u.User.Username())
	}
	return d.String()
}
