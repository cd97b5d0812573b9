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
// per-iteration cost without models.
func BenchmarkIterationOnDesktop(b *testing.B) {
	d := newDesktop(b)
	d.entry(b)
	var n counter
	m := newModels(b, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("v%d", n.next())))}
	}, llmtest.Text(planJSON("Fill", "Type")), doneReply)
	var model time.Duration
	or := d.orchestrator(b, m, func(o *orchestrator.Options) {
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
