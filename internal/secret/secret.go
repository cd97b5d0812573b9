// Package secret holds values that must never reach a log, an error message
// or a config dump: API keys and the daemon token.
package secret

import "log/slog"

// String is a secret string. Every printed form is "REDACTED" (or empty when
// unset); only Reveal returns the value.
type String string

const redacted = "REDACTED"

// Reveal returns the secret itself, for the one place that must send it.
func (s String) Reveal() string { return string(s) }

// Set reports whether the secret has a value.
func (s String) Set() bool { return s != "" }

func (s String) mask() string {
	if s == "" {
		return ""
	}
	return redacted
}

// String implements fmt.Stringer.
func (s String) String() string { return s.mask() }

// GoString implements fmt.GoStringer, so %#v redacts too.
func (s String) GoString() string { return `"` + s.mask() + `"` }

// LogValue implements slog.LogValuer.
func (s String) LogValue() slog.Value { return slog.StringValue(s.mask()) }

// MarshalText implements encoding.TextMarshaler, so JSON and text dumps redact.
func (s String) MarshalText() ([]byte, error) { return []byte(s.mask()), nil }
