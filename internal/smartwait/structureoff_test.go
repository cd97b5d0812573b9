package smartwait

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/a11yjudge"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// With the accessibility judge off, a structural condition goes, whole, to
// the judge a display without a tree gets: with the OCR judge a window's
// name becomes quoted text, and the plan event says why; a state the OCR
// judge cannot read is refused when the wait is created, naming the
// setting (on, the tree alone takes both).
func TestStructureOffGoesToOCR(t *testing.T) {
	a := a11yjudge.New(a11yjudge.Options{SessionBus: "unix:path=/nonexistent/bus"})
	t.Cleanup(a.Close)
	const off = "the accessibility judge is off (ACU_JUDGE_A11Y=off)"
	h := newHarness(t, harnessOpts{judge: ocrJudge(t), display: testx.StartXvfb(t, xvfb.Options{}), modify: func(o *Options) {
		o.Structure, o.StructureOff = a, off
	}})
	_, err := h.eng.Create(t.Context(), Spec{Criteria: "the Install button is enabled", Timeout: time.Minute})
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "ACU_JUDGE_A11Y=off") {
		t.Errorf("Create(the Install button is enabled) with the accessibility judge off and the OCR judge = %v, want a criteria error naming ACU_JUDGE_A11Y=off", err)
	}
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "the window 'Downloads' is open", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Fallback string `json:"fallback"`
		Parts    []struct {
			Text, Judge string
		} `json:"parts"`
	}
	eventually(t, "the plan event", func() bool {
		evs, err := h.db.EventsAfter(t.Context(), 0, store.EventFilter{RunID: job.ID, Streams: []string{StreamJudges}, Limit: 10})
		return err == nil && len(evs) > 0 && json.Unmarshal(evs[0].Data, &plan) == nil
	})
	if plan.Fallback != off || len(plan.Parts) != 1 || plan.Parts[0].Text != `"Downloads" is visible` || plan.Parts[0].Judge != "ocr" {
		t.Errorf("plan event = %+v, want the fallback %q and one part, \"Downloads\" is visible, for the OCR judge", plan, off)
	}
}
