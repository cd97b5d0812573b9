package uitars_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/acu-dev/acu/internal/dialect/uitars"
)

// oracleCase is one call of the reference parser's actionParser.
type oracleCase struct {
	Prediction    string     `json:"prediction"`
	Factor        [2]float64 `json:"factor"`
	ScreenContext struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"screenContext"`
	ModelVer string `json:"modelVer"`
}

type oracleAction struct {
	Reflection   *string                    `json:"reflection"`
	Thought      string                     `json:"thought"`
	ActionType   string                     `json:"action_type"`
	ActionInputs map[string]json.RawMessage `json:"action_inputs"`
}

func corpus(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range strings.Split(string(b), "\n===\n") {
		out = append(out, strings.TrimSuffix(c, "\n"))
	}
	return out
}

// runOracle runs the reference parser under Node on cases. Node and the
// package are installed by scripts/install-deps.sh; a missing one fails.
func runOracle(t *testing.T, cases []oracleCase) [][]oracleAction {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/install-deps.sh (the UI-TARS oracle runs under Node)")
	}
	dir, _ := filepath.Abs("testdata/oracle")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ui-tars", "action-parser")); err != nil {
		t.Fatalf("the reference parser is not installed: run scripts/install-deps.sh (npm install --prefix %s)", dir)
	}
	in, _ := json.Marshal(cases)
	cmd := exec.CommandContext(t.Context(), node, "parse.js")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node parse.js: %v\n%s", err, stderr.String())
	}
	var res [][]oracleAction
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oracle output: %v\n%s", err, out)
	}
	return res
}

// floats reads a number array the oracle gave (a box as a JSON string,
// coords as an array); null is NaN.
func floats(t *testing.T, raw json.RawMessage) []float64 {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var vs []*float64
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatalf("oracle numbers %s: %v", raw, err)
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

// TestOracle requires acu's parser to agree with @ui-tars/action-parser on
// every action, input, box and coordinate of the corpus, in every
// coordinate convention and at several picture sizes.
func TestOracle(t *testing.T) {
	texts := corpus(t)
	type cfg struct {
		mode string
		w, h int
	}
	var cfgs []cfg
	for _, mode := range []string{uitars.Relative, uitars.Absolute, uitars.Smart} {
		for _, sz := range [][2]int{{1280, 800}, {1280, 720}, {1024, 768}, {1366, 768}, {1000, 625}} {
			cfgs = append(cfgs, cfg{mode, sz[0], sz[1]})
		}
	}
	var cases []oracleCase
	for _, c := range cfgs {
		for _, text := range texts {
			oc := oracleCase{Prediction: text, Factor: [2]float64{1000, 1000}, ModelVer: "1.0"}
			oc.ScreenContext.Width, oc.ScreenContext.Height = c.w, c.h
			switch c.mode {
			case uitars.Absolute:
				oc.Factor = [2]float64{float64(c.w), float64(c.h)}
			case uitars.Smart:
				oc.ModelVer = "1.5"
			}
			cases = append(cases, oc)
		}
	}
	want := runOracle(t, cases)
	if len(want) != len(cases) {
		t.Fatalf("oracle answered %d cases, want %d", len(want), len(cases))
	}
	nan := cmpopts.EquateNaNs()
	actions := 0
	for i, oc := range cases {
		c := cfgs[i/len(texts)]
		got := uitars.Parse(oc.Prediction, uitars.Options{Mode: c.mode, W: c.w, H: c.h})
		name := strings.SplitN(oc.Prediction, "\n", 2)[0]
		if len(got) != len(want[i]) {
			t.Errorf("%s %dx%d %q: %d actions, oracle %d", c.mode, c.w, c.h, name, len(got), len(want[i]))
			continue
		}
		for j, w := range want[i] {
			g := got[j]
			actions++
			if g.Type != w.ActionType || g.Thought != w.Thought || !cmp.Equal(g.Reflection, w.Reflection) {
				t.Errorf("%s %q action %d: type %q thought %q reflection %v, oracle %q %q %v", c.mode, name, j, g.Type, g.Thought, g.Reflection, w.ActionType, w.Thought, w.Reflection)
			}
			seen := map[string]bool{}
			for k, raw := range w.ActionInputs {
				seen[k] = true
				switch {
				case k == "start_coords" || k == "end_coords":
					if d := cmp.Diff(floats(t, raw), g.Coords[k], nan); d != "" {
						t.Errorf("%s %dx%d %q action %d %s (-oracle +acu):\n%s", c.mode, c.w, c.h, name, j, k, d)
					}
				case strings.Contains(k, "start_box") || strings.Contains(k, "end_box"):
					if d := cmp.Diff(floats(t, raw), g.Boxes[k], nan); d != "" {
						t.Errorf("%s %dx%d %q action %d %s (-oracle +acu):\n%s", c.mode, c.w, c.h, name, j, k, d)
					}
				default:
					var s string
					_ = json.Unmarshal(raw, &s)
					if g.Inputs[k] != s {
						t.Errorf("%s %q action %d input %s = %q, oracle %q", c.mode, name, j, k, g.Inputs[k], s)
					}
				}
			}
			for k := range g.Inputs {
				if !seen[k] {
					t.Errorf("%s %q action %d: input %s = %q, which the oracle lacks", c.mode, name, j, k, g.Inputs[k])
				}
			}
			for k := range g.Boxes {
				if !seen[k] {
					t.Errorf("%s %q action %d: box %s, which the oracle lacks", c.mode, name, j, k)
				}
			}
		}
	}
	t.Logf("%d outputs x %d conventions and sizes: %d actions agree with the reference parser", len(texts), len(cfgs), actions)
}
