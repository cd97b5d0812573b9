package sense

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret in OCR text.
const Redacted = "[REDACTED]"

// rule is one redaction: every match of re is replaced by repl (which may
// use $1 for a kept prefix such as a variable name).
type rule struct {
	name string
	re   *regexp.Regexp
	repl string
}

// rules run in order, after <private> spans are dropped. They are compiled
// on first use, not at start-up: every acu process would pay for them.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{"private key block", regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), Redacted},
		{"api key", regexp.MustCompile(`\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}`), Redacted},
		{"github token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), Redacted},
		{"slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), Redacted},
		{"google api key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), Redacted},
		{"hugging face token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), Redacted},
		{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), Redacted},
		{"bearer token", regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}`), "$1 " + Redacted},
		{"cloud access key", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b`), Redacted},
		{"cloud secret", regexp.MustCompile(`(?i)\b((?:aws_)?secret_access_key|aws_session_token|azure_client_secret|client_secret)(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|\S+)`), "$1$2" + Redacted},
		{"password assignment", regexp.MustCompile(`(?i)\b([A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key))(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|\S+)`), "$1$2" + Redacted},
		{"url credentials", regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s@/]+@`), "$1:" + Redacted + "@"},
	}
})

// cardRe finds runs of 13 to 19 digits, optionally grouped by spaces or
// dashes; a Luhn check decides whether a run is a card number.
var cardRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d(?:[ \-]?\d){12,18}\b`) })

var privateRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<private>.*?(?:</private>|$)`) })

// Redact removes secrets from OCR text before it leaves the machine:
// <private>...</private> spans (an unclosed one runs to the end) are
// dropped; API keys (sk-..., gh*_, xox*-, AIza..., hf_), JWTs, bearer
// tokens, cloud access keys and secrets, private key blocks, credentials in
// URLs and password=/token:/secret= style assignments become [REDACTED];
// card numbers (13-19 digits passing the Luhn check) become [REDACTED].
func Redact(s string) string {
	if s == "" {
		return s
	}
	if strings.Contains(strings.ToLower(s), "<private>") {
		s = privateRe().ReplaceAllString(s, "")
	}
	for _, r := range rules() {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return cardRe().ReplaceAllStringFunc(s, func(m string) string {
		if luhn(m) {
			return Redacted
		}
		return m
	})
}

// luhn reports whether the digits of s pass the Luhn checksum.
func luhn(s string) bool {
	sum, n, double := 0, 0, false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
		double = !double
	}
	return n >= 13 && sum%10 == 0
}
