package orchestrator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
)

// BenchmarkIterationOnDesktop runs a task of b.N iterations on a real
// zenity entry dialog; each iteration extracts the map, types one value
// (AT-SPI EditableText, verified by a second extraction) and records its
// events in SQLite. The fast model is a loopback llmtest server; the time
// spent in model calls is subtracted: ms/iter is the orchestrator's
// per-iteration cost without models. reuse_verified_map starts an
// iteration on the map the previous step was verified with (the default);
// extract_every_iteration extracts again at the top of each;
// fast_screenshot adds the fast agent's marked screenshot (resize, marks,
// JPEG encode) to every iteration.
func BenchmarkIterationOnDesktop(b *testing.B) {
	d := newDesktop(b)
	d.entry(b)
	b.Run("reuse_verified_map", func(b *testing.B) { benchIterations(b, d, 0, false) })
	b.Run("reuse_verified_map/fast_screenshot", func(b *testing.B) { benchIterations(b, d, 0, true) })
	b.Run("extract_every_iteration", func(b *testing.B) { benchIterations(b, d, -1, false) })
}

func benchIterations(b *testing.B, d *desktop, reuse time.Duration, shots bool) {
	var n counter
	m := newModels(b, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("v%d", n.next())))}
	}, llmtest.Text(planJSON("Fill", "Type")), doneReply)
	var model time.Duration
	or := d.orchestrator(b, m, func(o *orchestrator.Options) {
		o.ReuseMapAge = reuse
		o.FastScreenshots = shots
		o.OnEvent = func(_, stream string, data any) {
			switch ev := data.(type) {
			case orchestrator.IterationEvent:
				model += time.Duration(ev.Call.LatencyMs * float64(time.Millisecond))
			case orchestrator.CheckEvent:
				model += time.Duration(ev.Call.LatencyMs * float64(time.Millisecond))
			}
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	res, err := or.Run(context.Background(), orchestrator.Spec{Task: "type values", MaxIterations: b.N})
	wall := time.Since(start)
	b.StopTimer()
	if err != nil || res.Iterations != b.N {
		b.Fatalf("run: %v, %d iterations of %d", err, res.Iterations, b.N)
	}
	b.ReportMetric(float64((wall-model).Microseconds())/1000/float64(b.N), "ms/iter_excl_model")
	b.ReportMetric(float64(model.Microseconds())/1000/float64(b.N), "model_ms/iter")
}
