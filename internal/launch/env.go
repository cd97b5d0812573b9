package launch

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The one list of what a launched program never inherits from acu: the
// daemon's own settings and every variable that looks like a credential.
// Names are compared upper-cased.
var (
	// secretPrefixes: acu's own settings (ACU_WEBHOOK_SECRET, ACU_TOKEN,
	// ACU_DB with its password ...), the agent's, and PostgreSQL's client
	// variables (PGPASSWORD, PGPASSFILE, PGSERVICE ...).
	secretPrefixes = []string{"ACU_", "AGENT_", "PG"}
	// secretParts: anywhere in the name (OPENROUTER_API_KEY, GITHUB_TOKEN,
	// AWS_SECRET_ACCESS_KEY, SMTP_PASSWORD, GOOGLE_APPLICATION_CREDENTIALS).
	secretParts = []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
		"CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY", "SESSION_KEY", "AUTH_KEY"}
	// secretSuffixes: at the end of the name (STRIPE_KEY, SMTP_PASS,
	// SENTRY_DSN, REDIS_URL is caught by its value below).
	secretSuffixes = []string{"_KEY", "_PASS", "_PWD", "_DSN"}
	// secretNames: exact names.
	secretNames = []string{"DATABASE_URL", "DB_URL", "MONGODB_URI", "MONGO_URL", "REDIS_URL", "AMQP_URL", "NETRC"}
)

// IsSecret reports whether an environment variable is kept from launched
// programs: by its name (see the lists above), or by its value when that
// is a URL carrying a password (postgres://user:pw@host/db, whatever the
// variable is called).
func IsSecret(name, value string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(secretNames, n) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	if i := strings.Index(value, "://"); i > 0 && strings.Contains(value[i:], "@") {
		if u, err := url.Parse(value); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				return true
			}
		}
	}
	return false
}

// Scrub returns env without the variables IsSecret names, except those
// whose names are in allow (ACU_LAUNCH_ENV_ALLOW: a user's choice to pass
// them on). The order of the rest is kept.
func Scrub(env, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if IsSecret(k, v) && !slices.Contains(allow, k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// CheckEnv validates variables a request asks to set for a launched
// program: names of letters, digits and underscores not starting with a
// digit, values without NUL bytes. The error names the variable.
func CheckEnv(env map[string]string) error {
	for k, v := range env {
		if !validName(k) {
			return fmt.Errorf("env: %q is not a variable name: use letters, digits and _ (not starting with a digit)", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("env: the value of %s holds a NUL byte", k)
		}
	}
	return nil
}

func validName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
