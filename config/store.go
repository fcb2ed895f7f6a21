package config

import (
	"fmt"
	"net/url"
	"strings"
)

// StoreSection is `[store]`: where the workbook lives when it is not a Google Sheet.
//
//	[store]
//	url = "postgres://triage:PASSWORD@db.internal:5432/triage?sslmode=verify-full"
//
// Empty (the default): the spreadsheet (`spreadsheet`, --spreadsheet) is the store. A URL
// moves every command (the TUI, list, set-status, replay, serve...) to that PostgreSQL
// database; `triage init` creates or migrates its tables. sslmode and every other libpq
// setting pass through in the query string. The password is never printed (RedactURL).
type StoreSection struct {
	URL string `toml:"url"`
}

// CheckStoreURL says what is wrong with a database URL, or nil: the one rule for [store] url,
// --database-url and TRIAGE_DATABASE_URL (`config check` and the runtime share it, invariant
// 12). It checks the form only (postgres:// or postgresql://, a database name, a port that is
// a number); whether the server answers is the connection's business. Its messages carry the
// URL redacted.
func CheckStoreURL(s string) error {
	if strings.TrimSpace(s) != s || s == "" {
		return fmt.Errorf("database URL %s is blank or has spaces around it: write it as postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=require", RedactURL(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("database URL %s can't be read as a URL (a password with @, /, : or %% in it must be percent-encoded): write it as postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=require", RedactURL(s))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("database URL %s: the scheme must be postgres:// (PostgreSQL is the only database triage stores in besides a sheet)", RedactURL(s))
	}
	if strings.Trim(u.Path, "/") == "" {
		return fmt.Errorf("database URL %s names no database: add it after the host (postgres://HOST/triage)", RedactURL(s))
	}
	return nil
}

// RedactURL is a database URL fit to print: its password (in the userinfo or a password
// query parameter) replaced by xxxxx; a text that isn't a URL is not shown at all.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if scheme, _, ok := strings.Cut(s, "://"); ok && !strings.ContainsAny(scheme, "@:/") {
			return scheme + "://(unreadable URL, not shown)"
		}
		return "(not shown)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// checkStore reports [store]'s problems, with the line of its url.
func (c *Config) checkStore() []Problem {
	if c.Store.URL == "" {
		return nil
	}
	if err := CheckStoreURL(c.Store.URL); err != nil {
		return []Problem{{Key: "store.url", Line: c.lines.lineOf("store.url"), Msg: err.Error()}}
	}
	return nil
}
