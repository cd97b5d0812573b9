package notify

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "openclaw system event --text {message} --mode now", []string{"openclaw", "system", "event", "--text", "{message}", "--mode", "now"}},
		{"extra blanks", "  a \t b\n\nc  ", []string{"a", "b", "c"}},
		{"single quotes keep all", `sh -c 'printf %s "$1" > f; echo \n' sh {message}`, []string{"sh", "-c", `printf %s "$1" > f; echo \n`, "sh", "{message}"}},
		{"double quotes", `notify-send "acu: {message}"`, []string{"notify-send", "acu: {message}"}},
		{"double quote escapes", `x "a\"b\\c\$d\` + "`" + `e\nf"`, []string{"x", `a"b\c$d` + "`" + `e\nf`}},
		{"double quote line join", "x \"a\\\nb\"", []string{"x", "ab"}},
		{"backslash outside quotes", `x a\ b \'c\" \\`, []string{"x", "a b", `'c"`, `\`}},
		{"backslash newline joins", "x a\\\nb", []string{"x", "ab"}},
		{"backslash newline between args", "x \\\n y", []string{"x", "y"}},
		{"empty args", `x "" ''`, []string{"x", "", ""}},
		{"adjacent quoting concatenates", `x a'b c'"d e"f`, []string{"x", "ab cd ef"}},
		{"quoted operators", `x '|' "&" \; '<>' "` + "\\`" + `"`, []string{"x", "|", "&", ";", "<>", "`"}},
		{"dollar is literal", `x $HOME ${message}`, []string{"x", "$HOME", "${message}"}},
		{"unicode", "x ‘→’ 日本", []string{"x", "‘→’", "日本"}},
		{"path with spaces", `"/opt/Open Claw/bin/openclaw" system event --text {message}`, []string{"/opt/Open Claw/bin/openclaw", "system", "event", "--text", "{message}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommand(tt.in)
			if err != nil {
				t.Fatalf("SplitCommand(%q) error %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitCommand(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSplitCommandErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty"},
		{"blank", "  \n\t", "empty"},
		{"unterminated single", "x 'abc", "unterminated ' quote"},
		{"unterminated double", `x "abc`, `unterminated " quote`},
		{"escaped close stays open", `x "abc\"`, `unterminated " quote`},
		{"lone backslash", `x abc\`, "lone backslash"},
		{"pipe", "x | y", `unquoted '|'`},
		{"redirect", "x > f", `unquoted '>'`},
		{"input", "x < f", `unquoted '<'`},
		{"and", "x && y", `unquoted '&'`},
		{"semicolon", "x; y", `unquoted ';'`},
		{"backtick", "x `id`", "unquoted '`'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommand(tt.in)
			if err == nil {
				t.Fatalf("SplitCommand(%q) = %q, want error containing %q", tt.in, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SplitCommand(%q) error %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

// quoteArg quotes s for SplitCommand with single quotes, the one form that
// needs no escapes inside.
func quoteArg(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{
		"openclaw system event --text {message} --mode now",
		`sh -c 'printf %s "$1" > f' sh {message}`,
		`x "a\"b" c\ d '' ""`, "x \\\n y", `x "abc`, "x | y", "\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitCommand(s)
		if err != nil {
			return
		}
		if len(args) == 0 {
			t.Fatalf("SplitCommand(%q) = no args and no error", s)
		}
		// Quoting the result and splitting again must give the same argv.
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = quoteArg(a)
		}
		again, err := SplitCommand(strings.Join(q, " "))
		if err != nil {
			t.Fatalf("SplitCommand(requoted %q) error %v", args, err)
		}
		if diff := cmp.Diff(args, again); diff != "" {
			t.Fatalf("requoting %q changed argv (-first +second):\n%s", s, diff)
		}
	})
}

func BenchmarkSplitCommand(b *testing.B) {
	b.ReportAllocs()
	const s = `sh -c 'printf %s "$1" > "$2"' sh {message} "/tmp/acu wake.txt"`
	for b.Loop() {
		if _, err := SplitCommand(s); err != nil {
			b.Fatal(err)
		}
	}
}
