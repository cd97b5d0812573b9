package notify

import (
	"errors"
	"fmt"
	"strings"
)

// SplitCommand splits a command-line template into argv with a small subset
// of POSIX shell quoting, and nothing else of the shell:
//
//   - unquoted spaces, tabs and newlines separate arguments;
//   - '...' keeps everything literally (no escapes inside);
//   - "..." keeps everything literally except that a backslash escapes
//     \ " $ ` and newline (a backslash before any other character stays);
//   - outside quotes a backslash escapes the next character, and a
//     backslash-newline joins lines;
//   - an empty pair of quotes makes an empty argument.
//
// There is no variable expansion, globbing, redirection or piping: the
// characters | & ; < > and ` are rejected when unquoted, because acu runs the
// command without a shell and would otherwise pass them on as literal
// arguments the user did not mean. A command that needs a shell names one
// itself: sh -c '...' sh {message}.
func SplitCommand(s string) ([]string, error) {
	var (
		args   []string
		cur    strings.Builder
		inArg  bool // cur holds an argument, possibly empty ("")
		i      int
		quoted rune // 0, '\'' or '"'
	)
	for i < len(s) {
		c := s[i]
		switch quoted {
		case '\'':
			if c == '\'' {
				quoted = 0
			} else {
				cur.WriteByte(c)
			}
			i++
			continue
		case '"':
			switch c {
			case '"':
				quoted = 0
			case '\\':
				if i+1 < len(s) {
					switch n := s[i+1]; n {
					case '\\', '"', '$', '`':
						cur.WriteByte(n)
						i += 2
						continue
					case '\n':
						i += 2
						continue
					}
				}
				cur.WriteByte(c)
			default:
				cur.WriteByte(c)
			}
			i++
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case '\'', '"':
			quoted = rune(c)
			inArg = true
		case '\\':
			if i+1 >= len(s) {
				return nil, errors.New("command template ends with a lone backslash: escape it as \\\\ or quote it")
			}
			if s[i+1] != '\n' {
				cur.WriteByte(s[i+1])
				inArg = true
			}
			i += 2
			continue
		case '|', '&', ';', '<', '>', '`':
			return nil, fmt.Errorf("command template has an unquoted %q at byte %d: acu runs the command without a shell; quote it, or name a shell yourself (sh -c '...' sh {message})", c, i)
		default:
			cur.WriteByte(c)
			inArg = true
		}
		i++
	}
	if quoted != 0 {
		return nil, fmt.Errorf("command template has an unterminated %c quote: close it", quoted)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("command template is empty: give a program and its arguments")
	}
	return args, nil
}
