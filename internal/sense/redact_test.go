package sense

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text untouched", "go test ./... passed in 3.2s", "go test ./... passed in 3.2s"},
		{"openai key", "OPENAI key sk-proj-abcdefghijklmnopqrstuvwx123 in env", "OPENAI key [REDACTED] in env"},
		{"openrouter key", "export OPENROUTER_KEY=sk-or-v1-0123456789abcdef0123456789abcdef", "export OPENROUTER_KEY=[REDACTED]"},
		{"anthropic key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "[REDACTED]"},
		{"short sk- word kept", "the sk-learn docs", "the sk-learn docs"},
		{"github token", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [REDACTED]"},
		{"slack token", "xoxb-123456789012-abcdefghij", "[REDACTED]"},
		{"google key", "AIzaSyA-abcdefghijklmnopqrstuvwxyz12345", "[REDACTED]"},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "cookie [REDACTED]"},
		{"bearer token", "Authorization: Bearer abc.DEF-123_xyz~0", "Authorization: Bearer [REDACTED]"},
		{"bearer lower case", "curl -H 'authorization: bearer 0123456789abcdef'", "curl -H 'authorization: bearer [REDACTED]'"},
		{"aws access key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [REDACTED]"},
		{"aws secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=[REDACTED]"},
		{"password assignment", "mysql -u root password=hunter2 --host db", "mysql -u root password=[REDACTED] --host db"},
		{"password colon quoted", `DB_PASSWORD: "correct horse battery"`, `DB_PASSWORD: [REDACTED]`},
		{"passwd", "passwd = s3cr3t!", "passwd = [REDACTED]"},
		{"api_key assignment", "api_key=abc123", "api_key=[REDACTED]"},
		{"url credentials", "postgres://admin:pa55w0rd@db.local:5432/app", "postgres://admin:[REDACTED]@db.local:5432/app"},
		{"card number spaced", "card 4111 1111 1111 1111 exp 12/29", "card [REDACTED] exp 12/29"},
		{"card number dashed", "5500-0000-0000-0004", "[REDACTED]"},
		{"card number bare", "4012888888881881", "[REDACTED]"},
		{"not a card (Luhn fails)", "order 4111 1111 1111 1112", "order 4111 1111 1111 1112"},
		{"phone-length numbers kept", "call 555 0100 now", "call 555 0100 now"},
		{"private span", "visible <private>my diary entry</private> also visible", "visible  also visible"},
		{"private multiline", "a <PRIVATE>line1\nline2</Private> b", "a  b"},
		{"private unclosed", "shown <private>hidden to the end", "shown "},
		{"private key block", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"password=x", "sk-abcdefghijklmnopqrstuvwxyz", "<private>a", "4111111111111111", "Bearer abcdefghij"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if strings.Contains(strings.ToLower(out), "<private>") {
			t.Errorf("Redact(%q) = %q still holds a private span", s, out)
		}
		if Redact(out) != out {
			t.Errorf("Redact is not idempotent on %q: %q then %q", s, out, Redact(out))
		}
	})
}
