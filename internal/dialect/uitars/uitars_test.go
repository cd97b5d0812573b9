package uitars_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/uitars"
)

// TestPlan translates UI-TARS outputs into acu actions on a 1280x800
// picture, in each coordinate convention.
func TestPlan(t *testing.T) {
	size := dialect.Size{W: 1280, H: 800}
	img := func(x, y int) *api.Point { return dialect.ImagePoint(x, y, size) }
	shot := &api.ShotOptions{Format: "png", MaxWidth: 1280}
	acts := func(a ...api.Action) dialect.Plan {
		return dialect.Plan{Act: &api.ActRequest{Actions: a, Settle: &api.SettleOptions{}}, Shot: shot}
	}
	tests := []struct {
		name, mode, in string
		want           dialect.Plan
		bad            bool
	}{
		{"relative click", uitars.Relative, "Thought: ok\nAction: click(start_box='(500,500)')", acts(api.Action{Kind: api.ActClick, At: img(640, 400)}), false},
		{"absolute click", uitars.Absolute, "Action: click(start_box='(640,400)')", acts(api.Action{Kind: api.ActClick, At: img(640, 400)}), false},
		// 1280x800 smart-resizes to 1288x812: (644,406) is the centre.
		{"smart click", uitars.Smart, "Action: click(start_box='(644,406)')", acts(api.Action{Kind: api.ActClick, At: img(640, 400)}), false},
		{"box centre", uitars.Relative, "Action: click(start_box='(100,100,200,200)')", acts(api.Action{Kind: api.ActClick, At: img(192, 120)}), false},
		{"left_double", uitars.Relative, "Action: left_double(start_box='(0,0)')", acts(api.Action{Kind: api.ActClick, At: img(0, 0), Count: 2}), false},
		{"right_single", uitars.Relative, "Action: right_single(start_box='(999,999)')", acts(api.Action{Kind: api.ActClick, At: img(1278, 799), Button: "right"}), false},
		{"drag", uitars.Relative, "Action: drag(start_box='(100,500)', end_box='(800,500)')",
			acts(api.Action{Kind: api.ActDrag, Path: []api.Point{*img(128, 400), *img(1024, 400)}}), false},
		{"hotkey", uitars.Relative, "Action: hotkey(key='ctrl c')", acts(api.Action{Kind: api.ActKey, Keys: "ctrl+c"}), false},
		{"hotkey enter", uitars.Relative, "Action: hotkey(key='enter')", acts(api.Action{Kind: api.ActKey, Keys: "Return"}), false},
		{"type", uitars.Relative, "Action: type(content='Ada')", acts(api.Action{Kind: api.ActType, Text: "Ada"}), false},
		{"type and enter", uitars.Relative, `Action: type(content='Ada\n')`, acts(api.Action{Kind: api.ActType, Text: "Ada"}, api.Action{Kind: api.ActKey, Keys: "Return"}), false},
		{"scroll", uitars.Relative, "Action: scroll(start_box='(500,500)', direction='down')", acts(api.Action{Kind: api.ActScroll, At: img(640, 400), DY: 5}), false},
		{"scroll here", uitars.Relative, "Action: scroll(direction='up')", acts(api.Action{Kind: api.ActScroll, DY: -5}), false},
		{"wait", uitars.Relative, "Action: wait()", dialect.Plan{Wait: 5 * time.Second, Shot: shot}, false},
		{"finished", uitars.Relative, "Action: finished(content='done')", dialect.Plan{Status: dialect.StatusFinished, Content: "done"}, false},
		{"call_user", uitars.Relative, "Action: call_user()", dialect.Plan{Status: dialect.StatusCallUser}, false},
		{"two actions", uitars.Relative, "Action: click(start_box='(500,500)')\n\ntype(content='x')",
			acts(api.Action{Kind: api.ActClick, At: img(640, 400)}, api.Action{Kind: api.ActType, Text: "x"}), false},

		{"not a call", uitars.Relative, "Action: I will click", dialect.Plan{}, true},
		{"unknown action", uitars.Relative, "Action: teleport(start_box='(1,1)')", dialect.Plan{}, true},
		{"click without box", uitars.Relative, "Action: click()", dialect.Plan{}, true},
		{"box not numbers", uitars.Relative, "Action: click(start_box='(a,b)')", dialect.Plan{}, true},
		{"outside", uitars.Relative, "Action: click(start_box='(1200,10)')", dialect.Plan{}, true},
		{"scroll no direction", uitars.Relative, "Action: scroll(start_box='(1,1)')", dialect.Plan{}, true},
		{"type nothing", uitars.Relative, "Action: type(content='')", dialect.Plan{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := uitars.New(size, dialect.Size{}, tt.mode)
			got, _, err := tool.Plan(tt.in)
			if tt.bad {
				var ie *dialect.InvalidError
				if !errors.As(err, &ie) {
					t.Fatalf("Plan(%q) error = %v, want invalid", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan(%q): %v", tt.in, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Plan(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestSmartResize(t *testing.T) {
	for _, tt := range []struct{ w, h, ww, wh int }{
		{1280, 800, 1288, 812}, {1920, 1080, 1932, 1092}, {1024, 768, 1036, 756}, {100, 100, 280, 280},
	} {
		w, h, ok := uitars.SmartResize(tt.w, tt.h)
		if !ok || w != tt.ww || h != tt.wh {
			t.Errorf("SmartResize(%d, %d) = %d, %d, %v, want %d, %d", tt.w, tt.h, w, h, ok, tt.ww, tt.wh)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range []string{"Thought: a\nAction: click(start_box='(1,2)')", "Reflection: r Action_Summary: s\nAction: wait()",
		"Action: type(content='a, b')\n\nhotkey(key='ctrl c')", "click(point='<point>1 2</point>')", "Action：drag(start_box='(1,2)', end_box='(3,4)')"} {
		f.Add(c)
	}
	tool := uitars.New(dialect.Size{W: 1280, H: 800}, dialect.Size{}, uitars.Smart)
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = tool.Plan(s)
	})
}
