package judge_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// testFrame is a 1280x720 frame: grey, with a pure red square at the
// top left, so the image the model receives can be checked.
func testFrame() *frame.Frame {
	w, h := 1280, 720
	pix := make([]byte, w*h*4)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := pix[(y*w+x)*4:]
			if x < 320 && y < 320 {
				p[0], p[1], p[2] = 0, 0, 255 // BGRX red
			} else {
				p[0], p[1], p[2] = 128, 128, 128
			}
		}
	}
	return frame.New(pix, w, h, w*4, ":99", "screen", time.Now())
}

func newVision(t *testing.T, srv *llmtest.Server, o judge.VisionOptions) *judge.Vision {
	t.Helper()
	c, err := llm.New(srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	o.Client = c
	v, err := judge.NewVision(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVisionProviders sends the seed's prompt and the frame's JPEG through
// each provider's exact wire format.
func TestVisionProviders(t *testing.T) {
	for _, tc := range []struct {
		name, model string
		new         func(testing.TB, llmtest.Handler) *llmtest.Server
	}{
		{"openai", "google/gemini-2.0-flash-lite-001", llmtest.NewOpenAI},
		{"anthropic", "claude-haiku-4-5", llmtest.NewAnthropic},
		{"gemini", "gemini-2.0-flash-lite", llmtest.NewGemini},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFrame()
			srv := tc.new(t, func(r llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: "**YES**: a red square is in the top left corner.", Usage: llm.Usage{InputTokens: 300, OutputTokens: 12}}
			})
			v := newVision(t, srv, judge.VisionOptions{Backend: tc.name, Model: tc.model})
			vd, err := v.Judge(t.Context(), judge.Question{Condition: "a red square is shown", Elapsed: 12 * time.Second, Frame: f, RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			if !vd.Met || vd.Unparsed || vd.Evidence != "a red square is in the top left corner." {
				t.Errorf("Judge = met %v unparsed %v evidence %q; want met, parsed, the evidence sentence", vd.Met, vd.Unparsed, vd.Evidence)
			}
			if vd.Usage.InputTokens != 300 || vd.Usage.OutputTokens != 12 || vd.Latency <= 0 {
				t.Errorf("Judge usage %+v latency %v; want the provider's usage and a latency", vd.Usage, vd.Latency)
			}
			req := srv.Last()
			want := "Look at this screenshot and tell me if the following condition is met.\n\n" +
				"CONDITION: a red square is shown\n\n" +
				"Time elapsed waiting: 12s\n\n" +
				"Reply with ONLY one of these two formats:\n" +
				"YES: <one sentence of visible evidence confirming the condition is met>\n" +
				"NO: <one sentence explaining what is missing or not yet visible>"
			if req.Text() != want {
				t.Errorf("prompt = %q, want %q", req.Text(), want)
			}
			if req.System != judge.DefaultSystem || req.MaxTokens != 150 || req.Temperature != 0.1 || req.Model != tc.model {
				t.Errorf("request system %q max_tokens %d temperature %v model %q; want the default system prompt, 150, 0.1, the model",
					req.System, req.MaxTokens, req.Temperature, req.Model)
			}
			imgs := req.Images()
			if len(imgs) != 1 {
				t.Fatalf("request has %d images, want 1", len(imgs))
			}
			jpg, err := f.JPEG(960, 72)
			if err != nil {
				t.Fatal(err)
			}
			if imgs[0].MIME != "image/jpeg" || !bytes.Equal(imgs[0].Data, jpg) {
				t.Errorf("image sent is %s of %d bytes, want the frame's JPEG(960, 72) of %d bytes", imgs[0].MIME, len(imgs[0].Data), len(jpg))
			}
			if b := imgs[0].Image.Bounds(); b.Dx() != 960 || b.Dy() != 540 {
				t.Errorf("image sent is %v, want 960x540", b)
			}
			r, g, bl, _ := imgs[0].Image.At(100, 100).RGBA()
			if r>>8 < 200 || g>>8 > 60 || bl>>8 > 60 {
				t.Errorf("pixel (100,100) of the image sent = %d,%d,%d; want red", r>>8, g>>8, bl>>8)
			}
		})
	}
}

func TestVisionUnparsed(t *testing.T) {
	for _, reply := range []string{"", "   ", "I'm sorry, but I can't help with that.", "asdf qwerty", "Yesterday it was done", "The answer is YES"} {
		srv := llmtest.NewOpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: reply} })
		v := newVision(t, srv, judge.VisionOptions{Backend: "openai"})
		vd, err := v.Judge(t.Context(), judge.Question{Condition: "done", Frame: testFrame()})
		if err != nil {
			t.Fatalf("Judge(reply %q) error %v, want a verdict", reply, err)
		}
		if vd.Met || !vd.Unparsed || vd.Raw != reply {
			t.Errorf("Judge(reply %q) = met %v unparsed %v raw %q; want not met, unparsed, the raw reply", reply, vd.Met, vd.Unparsed, vd.Raw)
		}
		if v.Unparsed() != 1 {
			t.Errorf("Unparsed() = %d after reply %q, want 1", v.Unparsed(), reply)
		}
	}
}

func TestVisionNo(t *testing.T) {
	srv := llmtest.NewAnthropic(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "NO: the progress bar shows 40%."} })
	v := newVision(t, srv, judge.VisionOptions{Backend: "claude", System: "custom system", MaxTokens: 20, Temperature: new(float64)})
	vd, err := v.Judge(t.Context(), judge.Question{Condition: "download finished", Frame: testFrame()})
	if err != nil {
		t.Fatal(err)
	}
	if vd.Met || vd.Unparsed || vd.Evidence != "the progress bar shows 40%." {
		t.Errorf("Judge = %+v, want a clean NO with its evidence", vd)
	}
	req := srv.Last()
	if req.System != "custom system" || req.MaxTokens != 20 || req.Temperature != 0 {
		t.Errorf("request system %q max_tokens %d temperature %v; want the configured ones", req.System, req.MaxTokens, req.Temperature)
	}
}

// TestVisionText: a text question (a tmux pane) sends the text, no image.
func TestVisionText(t *testing.T) {
	srv := llmtest.NewGemini(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "YES: the pane ends with Done."} })
	v := newVision(t, srv, judge.VisionOptions{Backend: "gemini"})
	vd, err := v.Judge(t.Context(), judge.Question{Condition: "the script printed Done", Elapsed: 3 * time.Second, Text: "$ ./run.sh\nDone\n$ "})
	if err != nil {
		t.Fatal(err)
	}
	if !vd.Met {
		t.Errorf("Judge(text) met = false, want true")
	}
	req := srv.Last()
	if len(req.Images()) != 0 {
		t.Errorf("text question sent %d images, want none", len(req.Images()))
	}
	if p := req.Text(); !strings.Contains(p, "CONDITION: the script printed Done") || !strings.Contains(p, "$ ./run.sh\nDone") || !strings.Contains(p, "Time elapsed waiting: 3s") {
		t.Errorf("text prompt = %q, want the condition, the text and the elapsed time", p)
	}
}

// TestVisionError: a failing provider is an error, not a verdict.
func TestVisionError(t *testing.T) {
	srv := llmtest.NewOpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "YES"} })
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Times: -1})
	o := srv.Options()
	o.MaxRetries = -1
	c, err := llm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.NewVision(judge.VisionOptions{Client: c, Backend: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Judge(t.Context(), judge.Question{Condition: "x", Frame: testFrame()}); err == nil || !strings.Contains(err.Error(), "vllm judge") {
		t.Errorf("Judge on a 500 = %v, want an error naming the backend", err)
	}
}

// TestVisionHang: a hung endpoint is bounded by the judge's timeout.
func TestVisionHang(t *testing.T) {
	srv := llmtest.NewOpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "YES"} })
	srv.Fail(llmtest.Fault{Kind: llmtest.Hang, Times: -1})
	v := newVision(t, srv, judge.VisionOptions{Backend: "openai", Timeout: 200 * time.Millisecond})
	_, err := v.Judge(t.Context(), judge.Question{Condition: "x", Frame: testFrame()})
	if err == nil {
		t.Fatal("Judge on a hung endpoint = nil error, want one")
	}
	if !strings.Contains(err.Error(), "openai judge") {
		t.Errorf("error %q does not name the backend", err)
	}
}

// TestBenchVision runs the labelled set through a fake model that answers
// from the labels, checking RunBench's accounting (accuracy, false YES,
// cost) rather than any model.
func TestBenchVision(t *testing.T) {
	set := loadSet(t)
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		// Always YES: every NO case becomes a false YES.
		return llmtest.Reply{Text: "YES: looks done.", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 10}}
	})
	o := srv.Options()
	o.Model = "google/gemini-2.0-flash-lite-001"
	c, err := llm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.NewVision(judge.VisionOptions{Client: c, Backend: "openrouter"})
	if err != nil {
		t.Fatal(err)
	}
	r := judge.RunBench(t.Context(), v, set)
	yes := 0
	for _, c := range set {
		if c.Expect {
			yes++
		}
	}
	if r.N != len(set) || r.Correct != yes || r.FalseYes != len(set)-yes || r.FalseYesRate != 1 {
		t.Errorf("RunBench(always YES) = N %d correct %d falseYes %d rate %v; want %d, %d, %d, 1", r.N, r.Correct, r.FalseYes, r.FalseYesRate, len(set), yes, len(set)-yes)
	}
	if r.CostUSD <= 0 {
		t.Errorf("RunBench cost = %v, want the priced model's cost", r.CostUSD)
	}
	if r.P50 <= 0 || r.P99 < r.P50 {
		t.Errorf("RunBench latencies p50 %v p99 %v", r.P50, r.P99)
	}
}
