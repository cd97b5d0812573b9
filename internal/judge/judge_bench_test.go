package judge_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

func BenchmarkParseReply(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		judge.ParseReply("**YES**: the terminal shows Build succeeded after the last make step.")
	}
}

// BenchmarkOCRJudgeText is the matching cost of a text (pty) question over
// a 24-line terminal.
func BenchmarkOCRJudgeText(b *testing.B) {
	e, err := ocr.New(ocr.Options{})
	if err != nil {
		b.Fatal(err)
	}
	j, err := judge.NewOCR(judge.OCROptions{Engine: e})
	if err != nil {
		b.Fatal(err)
	}
	text := ""
	for i := 0; i < 23; i++ {
		text += "[ 40%] Building Go object internal/judge with some more words here\n"
	}
	text += "Build succeeded in 41.2s\n"
	q := judge.Question{Condition: `"Build succeeded" is visible`, Text: text}
	b.ReportAllocs()
	for b.Loop() {
		v, err := j.Judge(b.Context(), q)
		if err != nil || !v.Met {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkOCRJudgeFrame is a question about a screenshot already read
// (the engine's cache): matching only.
func BenchmarkOCRJudgeFrame(b *testing.B) {
	set := loadSet(b)
	j := ocrJudge(b, ocr.Options{})
	q := judge.Question{Condition: `"Quarterly Report" is visible`}
	for _, c := range set {
		if c.Scene == "page-loaded" {
			q.Frame = c.Frame
		}
	}
	if _, err := j.Judge(b.Context(), q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Judge(b.Context(), q); err != nil {
			b.Fatal(err)
		}
	}
}
