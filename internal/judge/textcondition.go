package judge

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// TextCondition is a condition the OCR judge can decide: every phrase is
// visible, or (Gone) none is.
type TextCondition struct {
	Phrases []string
	Gone    bool
}

// Compiled on first use, not at every acu start-up.
var (
	quoteRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"([^"]+)"|“([^”]+)”|‘([^’]+)’|` + "`([^`]+)`" + `|(?:^|[\s(])'([^']+)'`)
	})
	goneRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(gone|disappears?|disappeared|vanish(es|ed)?|no longer|not (be )?(visible|shown|displayed|present|there|on (the )?screen)|isn't|is not|aren't|are not|hidden|absent|goes away|went away|(is|are) closed)\b`)
	})
)

// ParseTextCondition extracts the quoted phrases of a condition and whether
// it asks for them to be gone. It fails when there is no quoted phrase with a
// letter or digit in it.
func ParseTextCondition(condition string) (TextCondition, error) {
	var tc TextCondition
	rest := condition
	for _, m := range quoteRE().FindAllStringSubmatchIndex(condition, -1) {
		for g := 1; g < len(m)/2; g++ {
			if m[2*g] >= 0 {
				p := strings.TrimSpace(condition[m[2*g]:m[2*g+1]])
				if len(tokens(p)) > 0 {
					tc.Phrases = append(tc.Phrases, p)
				}
				break
			}
		}
		rest = strings.Replace(rest, condition[m[0]:m[1]], " ", 1)
	}
	if len(tc.Phrases) == 0 {
		return tc, fmt.Errorf("condition %q has no quoted text: the ocr judge decides only conditions about quoted visible text, such as `\"Build succeeded\" is visible` or `\"Loading...\" is gone`; quote the text to look for, or use a vision backend (%s) for other conditions",
			condition, strings.Join(VisionBackends, ", "))
	}
	tc.Gone = goneRE().MatchString(rest)
	return tc, nil
}
