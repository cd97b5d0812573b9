package smartwait

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/runs"
)

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"resolved", ResolvedMessage("wait_a", `"Done" is visible`, "the terminal shows Done"),
			`[smart_wait resolved] Job wait_a: "Done" is visible → the terminal shows Done`},
		{"timeout", TimeoutMessage("wait_a", "page loaded", 300*time.Second),
			"[smart_wait timeout] Job wait_a: page loaded — Timeout after 300s."},
		{"timeout whole seconds", TimeoutMessage("wait_a", "page loaded", 1500*time.Millisecond),
			"[smart_wait timeout] Job wait_a: page loaded — Timeout after 1s."},
		{"cancelled", CancelledMessage("wait_a", "page loaded", "moved on."),
			"[smart_wait cancelled] Job wait_a: page loaded — Cancelled: moved on."},
		{"cancelled no reason", CancelledMessage("wait_a", "page loaded", ""),
			"[smart_wait cancelled] Job wait_a: page loaded — Cancelled."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// Claim takes only decodable wait runs; Recover ends the rest.
func TestClaimRejects(t *testing.T) {
	e := New(Options{})
	for _, tc := range []struct {
		name string
		run  runs.Run
	}{
		{"other kind", runs.Run{ID: "agent_1", Kind: "agent", Spec: json.RawMessage(`{"criteria":"x","target":"screen"}`)}},
		{"bad json", runs.Run{ID: "wait_1", Kind: KindWait, Spec: json.RawMessage(`{`)}},
		{"no criteria", runs.Run{ID: "wait_2", Kind: KindWait, Spec: json.RawMessage(`{"target":"screen"}`)}},
		{"bad target", runs.Run{ID: "wait_3", Kind: KindWait, Spec: json.RawMessage(`{"criteria":"x","target":"nonsense:1"}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if e.Claim(tc.run) {
				t.Errorf("Claim(%s) = true, want false", tc.run.Spec)
			}
		})
	}
}

// Stored specs are data from disk: decoding any of them must not panic.
func FuzzJobFromRun(f *testing.F) {
	f.Add([]byte(`{"criteria":"x","target":"pty:s","source":"tmux","timeoutMs":1000,"deadline":"2026-01-01T00:00:00Z","history":[{"timeoutMs":5}]}`), []byte(`{"evidence":"e","evaluations":3}`))
	f.Add([]byte(`{`), []byte(`null`))
	f.Fuzz(func(t *testing.T, spec, result []byte) {
		run := runs.Run{ID: "wait_f", Kind: KindWait, Spec: spec, Result: result, EndedAt: time.Unix(1, 0)}
		if j, err := jobFromRun(run); err == nil && j.ID != "wait_f" {
			t.Errorf("jobFromRun id = %q", j.ID)
		}
		_, _, _ = targetFor(spec2(spec))
	})
}

func spec2(b []byte) spec {
	var sp spec
	_ = json.Unmarshal(b, &sp)
	return sp
}

// An engine without a judge refuses waits with ErrNoJudge and advice.
func TestNoJudge(t *testing.T) {
	e := New(Options{NoJudge: "ocr judge: tesseract not found"})
	_, err := e.Create(t.Context(), Spec{Criteria: `"Done" is visible`})
	if !errors.Is(err, ErrNoJudge) || !strings.Contains(err.Error(), "tesseract not found") || !strings.Contains(err.Error(), "apt-get install tesseract-ocr") {
		t.Errorf("Create without a judge = %v, want ErrNoJudge with the reason and advice", err)
	}
	if e.opts.Judge.Name() != "none" {
		t.Errorf("judge name = %q, want none", e.opts.Judge.Name())
	}
}
