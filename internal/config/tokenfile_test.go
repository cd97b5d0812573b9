package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secretFile := write("secret", "tok-from-file\n", 0o400)
	groupFile := write("group", "tok-group", 0o440)
	worldFile := write("world", "tok-world\n", 0o444)
	emptyFile := write("empty", " \n", 0o600)
	twoFile := write("two", "tok one\n", 0o600)

	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string // the token, when no error
		wantErr []string
	}{
		{"mounted secret", map[string]string{"ACU_TOKEN_FILE": secretFile}, "tok-from-file", nil},
		{"group-readable, as Kubernetes mounts with fsGroup", map[string]string{"ACU_TOKEN_FILE": groupFile}, "tok-group", nil},
		{"readable by others", map[string]string{"ACU_TOKEN_FILE": worldFile}, "", []string{"ACU_TOKEN_FILE", "readable or writable by others", "0444", "mode=0400"}},
		{"missing", map[string]string{"ACU_TOKEN_FILE": filepath.Join(dir, "nope")}, "", []string{"ACU_TOKEN_FILE", "no such file"}},
		{"empty", map[string]string{"ACU_TOKEN_FILE": emptyFile}, "", []string{"ACU_TOKEN_FILE", "is empty"}},
		{"two words", map[string]string{"ACU_TOKEN_FILE": twoFile}, "", []string{"ACU_TOKEN_FILE", "the token alone"}},
		{"a directory", map[string]string{"ACU_TOKEN_FILE": dir}, "", []string{"ACU_TOKEN_FILE", "not a regular file"}},
		{"both set", map[string]string{"ACU_TOKEN_FILE": secretFile, "ACU_TOKEN": "tok-env"}, "", []string{"ACU_TOKEN_FILE", "set one of them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["ACU_DATA_DIR"] = dir
			getenv, environ := env(tc.env)
			c, _, _, err := Load(getenv, environ, nil, nil)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Load = %v, want no error", err)
				}
				if got := c.Token.Reveal(); got != tc.want {
					t.Errorf("Token = %q, want %q", got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load = nil error, want one containing %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "tok-") {
				t.Errorf("Load error = %q reveals the token", err)
			}
		})
	}
}
