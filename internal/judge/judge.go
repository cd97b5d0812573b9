package judge

import (
	"context"
	"image"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/llm"
)

// Question is one condition asked about one frame, or about one text.
type Question struct {
	Condition string
	Elapsed   time.Duration // how long the wait has been watching
	Frame     *frame.Frame
	// Text, when set, is judged instead of pixels: a text target such as a
	// tmux pane.
	Text  string
	RunID string // cost is accounted to this run
}

// Verdict is a judge's answer.
type Verdict struct {
	Met      bool
	Evidence string            // one sentence: what was seen, or what is missing
	Raw      string            // the model's reply as received (empty for OCR)
	Boxes    []image.Rectangle // where the evidence is, in frame pixels (OCR)
	Model    string
	Latency  time.Duration
	CostUSD  float64
	// CostUnknown: the model call's cost is unknown (no provider figure,
	// no price), so CostUSD's 0 is not its cost. Always false for OCR.
	CostUnknown bool
	Usage       llm.Usage
	Unparsed    bool // the reply was not a clean YES or NO: not met, and not an answer to remember
}

// Backend decides conditions.
type Backend interface {
	// Name is the backend's configuration name: "openrouter", "ocr", ...
	Name() string
	// Check reports whether the backend can decide condition, with an error
	// naming the backends that can when it cannot.
	Check(condition string) error
	// Judge answers one question. An error means no verdict (network,
	// provider, OCR failure); a reply that cannot be parsed is a verdict
	// with Met false and Unparsed true, not an error. Callers must not
	// remember an Unparsed verdict as the answer for that (condition,
	// frame): it is no answer, and asking again may give one.
	Judge(ctx context.Context, q Question) (Verdict, error)
}

// Backend names, as ACU_VISION_BACKEND takes them.
const (
	OpenRouter = "openrouter"
	Ollama     = "ollama"
	VLLM       = "vllm"
	Claude     = "claude"
	Gemini     = "gemini"
	OpenAI     = "openai"
	OCR        = "ocr"
)

// VisionBackends lists the backends that send the frame to a vision model
// and can decide any condition.
var VisionBackends = []string{OpenRouter, Claude, Gemini, OpenAI, Ollama, VLLM}

// Backends lists every accepted backend name.
var Backends = append(append([]string(nil), VisionBackends...), OCR)

const maxEvidence = 400

// ParseReply reads a judge model's reply strictly. Only a reply whose first
// word is YES (case-insensitive, after whitespace and markdown such as
// "**YES**:" or "> ") resolves. A first word of NO is a clean "not met".
// Anything else (empty, refusal, garbage, "Yesterday...") is not met and not
// parsed. evidence is the rest of the first paragraph, trimmed of separators
// and markdown, at most 400 bytes.
func ParseReply(reply string) (met bool, evidence string, parsed bool) {
	s := strings.TrimLeftFunc(reply, func(r rune) bool { return unicode.IsSpace(r) || isMarkup(r) })
	end := 0
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsLetter(r) {
			break
		}
		end += n
	}
	word := s[:end]
	switch {
	case strings.EqualFold(word, "yes"):
		met, parsed = true, true
	case strings.EqualFold(word, "no"):
		parsed = true
	default:
		return false, firstParagraph(s), false
	}
	return met, firstParagraph(strings.TrimLeftFunc(s[end:], func(r rune) bool {
		return unicode.IsSpace(r) || isMarkup(r) || strings.ContainsRune(":.,;-–—=>)", r)
	})), parsed
}

func isMarkup(r rune) bool { return strings.ContainsRune("*_#>`\"'“”‘’[(", r) }

func firstParagraph(s string) string {
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRight(s, "*_` ")
	if len(s) > maxEvidence {
		cut := maxEvidence
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
