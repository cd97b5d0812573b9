package orchestrator

import (
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/session"
)

// benchMap is a 126-element map like a busy GTK window's (the size
// docs/perf/elements.md measures).
func benchMap(iter int, value string) *elements.Map {
	m := &elements.Map{Iteration: iter, Screen: image.Rect(0, 0, 1280, 720)}
	m.Elements = append(m.Elements, elements.Element{ID: "win_files", Type: elements.TypeWindow, Text: "Files", App: "zenity", Window: "Files",
		Box: image.Rect(100, 50, 1100, 700), Showing: true, Active: true, Enabled: true, Source: elements.FromTree})
	m.Elements = append(m.Elements, elements.Element{ID: "txt_1", Type: elements.TypeInput, Value: value, App: "zenity", Window: "Files",
		Box: image.Rect(120, 60, 600, 90), Showing: true, Editable: true, Clickable: true, Enabled: true, Focused: true, Source: elements.FromTree})
	for i := 0; i < 120; i++ {
		m.Elements = append(m.Elements, elements.Element{ID: fmt.Sprintf("item_report_%02d_txt", i), Type: elements.TypeItem,
			Text: fmt.Sprintf("report-%02d.txt", i), App: "zenity", Window: "Files", Box: image.Rect(120, 100+i*20, 600, 118+i*20),
			Showing: i < 28, Clickable: true, Enabled: true, Source: elements.FromTree})
	}
	for _, b := range []string{"Cancel", "OK", "Help", "Open"} {
		m.Elements = append(m.Elements, elements.Element{ID: "btn_" + b, Type: elements.TypeButton, Text: b, App: "zenity", Window: "Files",
			Box: image.Rect(800, 650, 880, 680), Showing: true, Clickable: true, Enabled: true, Source: elements.FromBoth})
	}
	return m
}

// BenchmarkIterationOverhead is the orchestrator's own work per iteration,
// excluding extraction, step execution and model calls: the tracker, the
// diff, loop detection, the enhanced task and system prompt, the
// conversation window, and parsing the fast agent's reply into steps.
func BenchmarkIterationOverhead(b *testing.B) {
	o := &Orchestrator{opts: Options{MaxIterations: 50, MaxTokens: 1024}}
	l := newLoop(o, session.Attach(nil, "task_bench", Kind, nil), Spec{Task: "Open report-07.txt from the Files dialog"})
	l.plan, _ = parsePlan(`{"approaches":[{"name":"Select and open","description":"Pick the file in the list","steps":["Click report-07.txt","Click Open"]},{"name":"Type the name","description":"Type it into the location field"}],"recommended":0}`)
	for i := 0; i < 14; i++ {
		l.history = append(l.history, llm.Message{Role: "assistant", Text: `{"thought":"t","steps":[{"action":"click","target":"item_report_07_txt"}]}`},
			llm.Message{Role: "user", Text: "Done: click item_report_07_txt."})
	}
	l.failureContext = []string{"Progress check (iter 4): clicking the same row", "Step 'click btn_Open' failed twice. First: no effect"}
	maps := [2]*elements.Map{benchMap(1, "a"), benchMap(2, "b")}
	for _, m := range maps {
		m.Get("txt_1")
	}
	reply := `{"thought":"the row is selected, open it","steps":[{"action":"type","target":"txt_1","text":"report-07.txt"},{"action":"click","target":"btn_Open"}],"complete":false}`
	var bytes int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := maps[i%2]
		obs := l.tracker.Observe(m)
		l.actions = append(l.actions[:0:0], Action{Iteration: i, Kind: "click", Target: "item_report_07_txt", Step: "click item_report_07_txt", OK: true},
			Action{Iteration: i, Kind: "click", Target: "item_report_07_txt", Step: "click item_report_07_txt", OK: true},
			Action{Iteration: i, Kind: "click", Target: "item_report_07_txt", Step: "click item_report_07_txt", OK: true})
		sys := fastPrompt(&l.sb, i+1, l.enhancedTask(m), m, obs.Diff.String(), nil)
		msgs := window(pinnedMessage(l.task, l.plan), l.history, "Iteration 2 of 50. What are your next steps?")
		r, err := parseFast(reply)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range r.Steps {
			if _, err := s.step(); err != nil {
				b.Fatal(err)
			}
		}
		bytes += len(sys) + len(msgs)
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "prompt_bytes/op")
}

// BenchmarkMarkedShot is the fast agent's screenshot per iteration: a
// 1280x720 frame copied, its 126 elements' marks drawn, and the JPEG
// encoded (q70), beside BenchmarkIterationOverhead's own work.
func BenchmarkMarkedShot(b *testing.B) {
	pix := make([]byte, 1280*720*4)
	for i := range pix {
		pix[i] = byte(i * 7 / 3)
	}
	f := frame.New(pix, 1280, 720, 1280*4, ":0", "screen", time.Now())
	l := newLoop(&Orchestrator{opts: Options{FastScreenshots: true}}, session.Attach(nil, "task_bench", Kind, nil), Spec{Task: "t"})
	maps := [2]*elements.Map{benchMap(1, "a"), benchMap(2, "b")}
	maps[0].Frame, maps[1].Frame = f, f
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		imgs := l.markedShot(maps[i%2])
		size += len(imgs[0].Data)
	}
	b.ReportMetric(float64(size)/float64(b.N)/1024, "jpeg_KiB")
}
