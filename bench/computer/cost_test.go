package computerbench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// The scripted scenario of BenchmarkSmartWaitCost: a terminal counts a
// "download" for downloadFor, one line a second, then a red window says
// it is done. The model must notice, then end its turn.
const (
	downloadFor = 30 * time.Second
	pollWait    = 5 // seconds of the polling model's wait action
	// judgeIn, judgeOut are a judge call's tokens as Gemini counts them
	// for acu's 960 px JPEG (two 258-token tiles) and the YES/NO prompt.
	judgeIn, judgeOut = 700, 10
	// toolOverhead is the computer tool's share of the system prompt that
	// Anthropic bills on every call (its docs: about 700 tokens).
	toolOverhead = 700
	judgeModel   = "google/gemini-2.0-flash-lite-001"
	actorModel   = "claude-sonnet-4-5"
)

// costRig is a daemon in process (actions, smart wait with a vision judge
// that answers YES only when the red window is really in the JPEG) on its
// own Xvfb.
type costRig struct {
	dpy        string
	url        string
	judgeCalls atomic.Int64
}

func newCostRig(b *testing.B) *costRig {
	b.Helper()
	r := &costRig{dpy: testx.StartXvfb(b, xvfb.Options{Width: 1024, Height: 600})}
	jsrv := llmtest.NewOpenAI(b, func(q llmtest.Request) llmtest.Reply {
		r.judgeCalls.Add(1)
		usage := llm.Usage{InputTokens: judgeIn, OutputTokens: judgeOut}
		for _, im := range q.Images() {
			if im.Image != nil && redPixels(im.Image) > 10000 {
				return llmtest.Reply{Text: "YES: the red done window is visible.", Usage: usage}
			}
		}
		return llmtest.Reply{Text: "NO: the download is still running.", Usage: usage}
	})
	jc, err := llm.New(jsrv.Options())
	if err != nil {
		b.Fatal(err)
	}
	jb, err := judge.NewVision(judge.VisionOptions{Client: jc, Backend: "openrouter", Model: judgeModel})
	if err != nil {
		b.Fatal(err)
	}
	c := rig.NewCore(b, nil)
	eng := smartwait.New(smartwait.Options{Runs: c.Runs, Capture: c.Hub, Judge: jb, Store: c.DB, DefaultDisplay: r.dpy})
	svc, err := actions.New(actions.Options{Hub: c.Hub, Runs: c.Runs, Settle: eng, DefaultDisplay: r.dpy})
	if err != nil {
		b.Fatal(err)
	}
	rig.Go(b, svc.Run, eng.Run)
	r.url = rig.Serve(b, server.New(server.Options{Token: rig.Token, Runs: c.Runs, Actions: svc, Waits: eng}))
	return r
}

// redPixels counts clearly red pixels.
func redPixels(im image.Image) int {
	n := 0
	bd := im.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			cr, cg, cb, _ := im.At(x, y).RGBA()
			if cr > 0xc000 && cg < 0x4000 && cb < 0x4000 {
				n++
			}
		}
	}
	return n * 4
}

// download starts the scenario: a counting terminal now, and the red
// window after downloadFor. It returns when the window was mapped.
func download(b *testing.B, dpy string) (doneAt func() time.Time, stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	term := exec.CommandContext(ctx, "xterm", "-display", dpy, "-geometry", "70x12+20+20", "-e",
		fmt.Sprintf("sh -c 'for i in $(seq %d); do echo downloading part $i of %d; sleep 1; done; sleep 600'", int(downloadFor.Seconds()), int(downloadFor.Seconds())))
	if err := term.Start(); err != nil {
		b.Fatal(err)
	}
	var at atomic.Int64
	x, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		b.Fatal(err)
	}
	t := time.AfterFunc(downloadFor, func() {
		scr := xproto.Setup(x).DefaultScreen(x)
		win, err := xproto.NewWindowId(x)
		if err != nil {
			return
		}
		xproto.CreateWindow(x, scr.RootDepth, win, scr.Root, 500, 300, 400, 200, 0, xproto.WindowClassInputOutput,
			scr.RootVisual, xproto.CwBackPixel, []uint32{0xff0000})
		xproto.MapWindow(x, win)
		_, _ = xproto.GetInputFocus(x).Reply()
		at.Store(time.Now().UnixNano())
	})
	return func() time.Time { return time.Unix(0, at.Load()) }, func() {
		t.Stop()
		cancel()
		_ = term.Wait()
		x.Close()
	}
}

// scriptedAnthropic is the actor: the Messages API with the computer tool.
// It reads the newest screenshot it was sent; while the red window is not
// in it, it keeps waiting, either with the computer tool's wait action
// (polling: a turn every pollWait seconds) or with one smart_wait call;
// once it sees the window it ends its turn. The condition names the
// iteration: acu remembers verdicts per frame and condition, and the
// scenario's screens repeat exactly from one iteration to the next. Usage is counted as Anthropic
// bills it: text at 4 characters a token, each image at w*h/750 tokens,
// plus the computer tool's system prompt.
func scriptedAnthropic(smart bool, iteration int) *httptest.Server {
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var images []image.Image
		text := string(body)
		for _, m := range req.Messages {
			for _, c := range m.Content {
				var tr struct {
					Content []struct {
						Type   string `json:"type"`
						Source struct {
							Data string `json:"data"`
						} `json:"source"`
					} `json:"content"`
				}
				_ = json.Unmarshal(c, &tr)
				for _, p := range tr.Content {
					if p.Type != "image" {
						continue
					}
					raw, _ := base64.StdEncoding.DecodeString(p.Source.Data)
					if im, err := png.Decode(bytes.NewReader(raw)); err == nil {
						images = append(images, im)
					}
					text = strings.Replace(text, p.Source.Data, "", 1)
				}
			}
		}
		in := toolOverhead + len(text)/4
		for _, im := range images {
			in += im.Bounds().Dx() * im.Bounds().Dy() / 750
		}
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		seen := len(images) > 0 && redPixels(images[len(images)-1]) > 10000
		var content []any
		stop := "tool_use"
		id := fmt.Sprintf("toolu_%d", turn+1)
		switch {
		case seen:
			content, stop = []any{map[string]any{"type": "text", "text": "The download has finished."}}, "end_turn"
		case turn == 0:
			content = []any{map[string]any{"type": "tool_use", "id": id, "name": "computer", "input": map[string]any{"action": "screenshot"}}}
		case smart && len(images) > 0 && !waitedAlready(req.Messages[len(req.Messages)-1].Content):
			content = []any{map[string]any{"type": "tool_use", "id": id, "name": "smart_wait",
				"input": map[string]any{"condition": fmt.Sprintf("a red window says download %d is done", iteration), "timeout_s": 120}}}
		case smart:
			content = []any{map[string]any{"type": "tool_use", "id": id, "name": "computer", "input": map[string]any{"action": "screenshot"}}}
		default:
			content = []any{map[string]any{"type": "tool_use", "id": id, "name": "computer", "input": map[string]any{"action": "wait", "duration": pollWait}}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "model": actorModel,
			"content": content, "stop_reason": stop, "usage": map[string]int{"input_tokens": in, "output_tokens": 40}})
	}))
}

// waitedAlready reports whether the last tool result is smart_wait's.
func waitedAlready(content []json.RawMessage) bool {
	for _, c := range content {
		if strings.Contains(string(c), "smart_wait ") {
			return true
		}
	}
	return false
}

// BenchmarkSmartWaitCost runs the scripted scenario with the vendor loop's
// way of waiting (the model polls with the computer tool's wait action,
// pollWait seconds a turn) and with smart_wait offered as a tool, one
// after the other in each iteration, and reports each way's model turns,
// tokens and dollars (the actor at claude-sonnet-4-5's list price, the
// judge at gemini-2.0-flash-lite's), and how long after the window opened
// the model knew. The fake model answers at once: a real model's seconds
// per turn make the polling way take fewer, slower turns.
func BenchmarkSmartWaitCost(b *testing.B) {
	r := newCostRig(b)
	cl := api.NewClient(r.url, rig.Token)
	jp, ok := llm.DefaultPrices().Lookup(judgeModel)
	if !ok {
		b.Fatalf("no price for %s", judgeModel)
	}
	judgeCost := jp.Cost(llm.Usage{InputTokens: judgeIn, OutputTokens: judgeOut})
	type way struct {
		name  string
		smart bool
	}
	totals := map[string]*[5]float64{}
	iteration := 0
	for b.Loop() {
		iteration++
		for _, w := range []way{{"poll", false}, {"smart", true}} {
			srv := scriptedAnthropic(w.smart, iteration)
			mc, err := llm.New(llm.Options{Provider: llm.Anthropic, BaseURL: srv.URL, APIKey: secret.String("sk-bench"), Model: actorModel, MaxRetries: 0})
			if err != nil {
				b.Fatal(err)
			}
			doneAt, stop := download(b, r.dpy)
			j0 := r.judgeCalls.Load()
			o := computer.LoopOptions{Vendor: api.VendorAnthropic, Task: "Wait until the download has finished.", Model: actorModel,
				Query: api.ComputerQuery{Display: r.dpy, Limit: "1280x800"}, MaxSteps: 100, Exec: cl, LLM: mc}
			if w.smart {
				o.Waits = cl
			}
			res := computer.Run(context.Background(), o)
			end := time.Now()
			stop()
			srv.Close()
			if res.Status != computer.StatusCompleted {
				b.Fatalf("%s: %+v", w.name, res)
			}
			judged := float64(r.judgeCalls.Load() - j0)
			t := totals[w.name]
			if t == nil {
				t = new([5]float64)
				totals[w.name] = t
			}
			t[0] += float64(res.Turns)
			t[1] += float64(res.TokensIn)
			t[2] += res.CostUSD
			t[3] += judged
			t[4] += end.Sub(doneAt()).Seconds()
			b.Logf("%s: %d model turns, %d tokens in, actor $%.4f, %0.f judge calls ($%.5f), total $%.4f, noticed %.1f s after the window opened",
				w.name, res.Turns, res.TokensIn, res.CostUSD, judged, judged*judgeCost, res.CostUSD+judged*judgeCost, end.Sub(doneAt()).Seconds())
		}
	}
	n := float64(b.N)
	for name, t := range totals {
		b.ReportMetric(t[0]/n, name+"_turns")
		b.ReportMetric(t[1]/n, name+"_tokens_in")
		b.ReportMetric((t[2]+t[3]*judgeCost)/n, name+"_usd")
		b.ReportMetric(t[3]/n, name+"_judge_calls")
		b.ReportMetric(t[4]/n, name+"_notice_s")
	}
}
