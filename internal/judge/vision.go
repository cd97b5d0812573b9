package judge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acu-dev/acu/internal/llm"
)

// chatter is the one call the vision judge needs; *llm.Client has it.
type chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// DefaultSystem is the vision judge's system prompt unless configured
// (ACU_VISION_SYSTEM_INSTRUCTIONS).
const DefaultSystem = "You are a screen-state judge. You see one screenshot (or one terminal's text) and decide whether a condition is met right now. " +
	"Be decisive: answer YES only when the screen visibly satisfies the condition, otherwise NO. " +
	"Start your reply with YES: or NO: followed by one short sentence of evidence. Never add anything else."

// VisionOptions configures a vision judge.
type VisionOptions struct {
	Client      chatter  // *llm.Client
	Backend     string   // name reported by Name(), e.g. "openrouter"
	Model       string   // empty: the client's default model
	System      string   // empty: DefaultSystem
	MaxTokens   int      // 0: 150
	Temperature *float64 // nil: 0.1
	MaxDim      int      // 0: 960 (long side of the JPEG sent)
	Quality     int      // 0: 72
	Timeout     time.Duration
	Logger      *slog.Logger
}

// Vision asks a vision model the seed's YES/NO question about a frame.
type Vision struct {
	o        VisionOptions
	temp     float64
	unparsed atomic.Int64
	calls    atomic.Int64
}

// NewVision returns a vision judge.
func NewVision(o VisionOptions) (*Vision, error) {
	if o.Client == nil {
		return nil, errors.New("vision judge: no model client")
	}
	if o.Backend == "" {
		o.Backend = "vision"
	}
	if o.System == "" {
		o.System = DefaultSystem
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = 150
	}
	temp := 0.1
	if o.Temperature != nil {
		temp = *o.Temperature
	}
	if temp < 0 || temp > 2 {
		return nil, fmt.Errorf("vision judge temperature %v: must be 0..2", temp)
	}
	if o.MaxDim == 0 {
		o.MaxDim = 960
	}
	if o.Quality == 0 {
		o.Quality = 72
	}
	if o.Quality < 1 || o.Quality > 100 {
		return nil, fmt.Errorf("vision judge jpeg quality %d: must be 1..100", o.Quality)
	}
	if o.MaxDim < 64 {
		return nil, fmt.Errorf("vision judge max dimension %d: must be at least 64", o.MaxDim)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Vision{o: o, temp: temp}, nil
}

// Name implements Backend.
func (v *Vision) Name() string { return v.o.Backend }

// Model returns the configured model ("" means the client's default).
func (v *Vision) Model() string { return v.o.Model }

// Check implements Backend: a vision model can be asked about anything
// non-empty.
func (v *Vision) Check(condition string) error {
	if strings.TrimSpace(condition) == "" {
		return errors.New("empty condition: describe what should be on the screen")
	}
	return nil
}

// Unparsed reports how many replies were not a clean YES or NO.
func (v *Vision) Unparsed() int64 { return v.unparsed.Load() }

// Calls reports how many questions were sent.
func (v *Vision) Calls() int64 { return v.calls.Load() }

// Prompt returns the user prompt for a condition about a screenshot after
// elapsed waiting, exactly the seed's.
func Prompt(condition string, elapsed time.Duration) string {
	return "Look at this screenshot and tell me if the following condition is met.\n\n" +
		"CONDITION: " + condition + "\n\n" +
		"Time elapsed waiting: " + strconv.Itoa(int(elapsed.Round(time.Second)/time.Second)) + "s\n\n" +
		replyFormat
}

// TextPrompt is Prompt for a text target: the text replaces the image.
func TextPrompt(condition string, elapsed time.Duration, text string) string {
	return "Look at this terminal text and tell me if the following condition is met.\n\n" +
		"CONDITION: " + condition + "\n\n" +
		"Time elapsed waiting: " + strconv.Itoa(int(elapsed.Round(time.Second)/time.Second)) + "s\n\n" +
		"TERMINAL TEXT:\n```\n" + strings.ReplaceAll(text, "```", "'''") + "\n```\n\n" +
		replyFormat
}

const replyFormat = "Reply with ONLY one of these two formats:\n" +
	"YES: <one sentence of visible evidence confirming the condition is met>\n" +
	"NO: <one sentence explaining what is missing or not yet visible>"

// Judge implements Backend.
func (v *Vision) Judge(ctx context.Context, q Question) (Verdict, error) {
	msg := llm.Message{Role: "user"}
	switch {
	case q.Frame != nil && q.Text == "":
		// The base64 is memoized in the frame: every condition judged
		// on this frame sends the same bytes without a copy per call.
		jpg, b64, err := q.Frame.JPEGBase64(v.o.MaxDim, v.o.Quality)
		if err != nil {
			return Verdict{}, fmt.Errorf("encode frame for %s judge: %w", v.o.Backend, err)
		}
		msg.Text = Prompt(q.Condition, q.Elapsed)
		msg.Images = []llm.Image{{MIME: "image/jpeg", Data: jpg, Base64: b64}}
	case q.Text != "":
		msg.Text = TextPrompt(q.Condition, q.Elapsed, q.Text)
	default:
		return Verdict{}, errors.New("judge question has neither a frame nor text")
	}
	if v.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, v.o.Timeout)
		defer cancel()
	}
	v.calls.Add(1)
	start := time.Now()
	resp, err := v.o.Client.Chat(ctx, llm.Request{
		Model:       v.o.Model,
		System:      v.o.System,
		Messages:    []llm.Message{msg},
		MaxTokens:   v.o.MaxTokens,
		Temperature: v.temp,
		RunID:       q.RunID,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("%s judge: %w", v.o.Backend, err)
	}
	vd := Verdict{
		Raw:         resp.Text,
		Model:       resp.Model,
		Latency:     resp.Latency,
		CostUSD:     resp.CostUSD,
		CostUnknown: !resp.CostKnown,
		Usage:       resp.Usage,
	}
	if vd.Model == "" {
		vd.Model = v.o.Model
	}
	if vd.Latency == 0 {
		vd.Latency = time.Since(start)
	}
	met, ev, ok := ParseReply(resp.Text)
	vd.Met, vd.Evidence = met, ev
	if !ok {
		vd.Unparsed = true
		v.unparsed.Add(1)
		switch {
		case resp.Refusal != "":
			vd.Evidence = "model refused: " + firstParagraph(resp.Refusal)
		case strings.TrimSpace(resp.Text) == "":
			vd.Evidence = "empty reply"
			if resp.FinishReason != "" {
				vd.Evidence += " (finish reason " + resp.FinishReason + ")"
			}
		default:
			vd.Evidence = "reply was not YES or NO: " + ev
		}
		v.o.Logger.Debug("judge reply unparsed", "backend", v.o.Backend, "model", vd.Model, "run_id", q.RunID, "reply", firstParagraph(resp.Text))
	}
	return vd, nil
}
