package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/acu-dev/acu/internal/gate"
)

// Limits stated in the system prompt and enforced by Parse.
const (
	MaxBBoxes          = 8
	MaxActions         = 6
	MaxObservationWord = 200
)

// Action is one model action in the seed's JSON shape: name plus normalized
// 0..1000 coordinates within the working area.
type Action struct {
	Name string `json:"name"`
	X1   int    `json:"x1"`
	Y1   int    `json:"y1"`
	X2   int    `json:"x2,omitempty"`
	Y2   int    `json:"y2,omitempty"`
	DX   int    `json:"dx,omitempty"`
	DY   int    `json:"dy,omitempty"`
	Text string `json:"text,omitempty"`
	Keys string `json:"keys,omitempty"`
}

// Box is a model-provided region of interest, normalized 0..1000.
type Box struct {
	X1 int `json:"x1"`
	Y1 int `json:"y1"`
	X2 int `json:"x2"`
	Y2 int `json:"y2"`
}

// Rejected records an action or bbox the engine refused, and why.
type Rejected struct {
	Index  int    `json:"index"` // position in the model's list, from 0
	Kind   string `json:"kind"`  // "action" or "bbox"
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

// Parse modes.
const (
	ParsedJSON      = "json"      // the whole reply was the JSON object
	ParsedExtracted = "extracted" // the first {...} block of the reply
	ParsedText      = "text"      // no JSON: the whole reply is the observation
)

// Output is a parsed model reply.
type Output struct {
	Observation string     `json:"observation"`
	BBoxes      []Box      `json:"bboxes"`
	Actions     []Action   `json:"actions"`
	Rejected    []Rejected `json:"rejected,omitempty"`
	Mode        string     `json:"mode"`
}

// Parse reads a model reply as the seed does: a strict JSON parse, else the
// first {...} block, else the whole text as the observation with no actions
// or bboxes. Coordinates are clamped into 0..1000; action names are
// case-insensitive; unknown or incomplete actions, and actions and bboxes
// beyond the per-turn limits, are dropped and recorded in Rejected.
func Parse(text string) Output {
	var obj map[string]json.RawMessage
	mode := ParsedJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &obj); err != nil || obj == nil {
		mode = ParsedExtracted
		obj = nil
		if blk := firstObject(text); blk != nil {
			if json.Unmarshal(blk, &obj) != nil {
				obj = nil
			}
		}
		if obj == nil {
			return Output{Observation: strings.TrimSpace(text), BBoxes: []Box{}, Actions: []Action{}, Mode: ParsedText}
		}
	}
	out := Output{BBoxes: []Box{}, Actions: []Action{}, Mode: mode}
	if raw, ok := obj["observation"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out.Observation = s
		} else {
			out.Observation = string(raw)
		}
	}
	var boxes []map[string]any
	if raw, ok := obj["bboxes"]; ok {
		if err := json.Unmarshal(raw, &boxes); err != nil {
			out.Rejected = append(out.Rejected, Rejected{Index: -1, Kind: "bbox", Reason: "bboxes is not a list of objects"})
		}
	}
	for i, m := range boxes {
		x1, ok1 := num(m, "x1")
		y1, ok2 := num(m, "y1")
		x2, ok3 := num(m, "x2")
		y2, ok4 := num(m, "y2")
		switch {
		case !(ok1 && ok2 && ok3 && ok4):
			out.Rejected = append(out.Rejected, Rejected{Index: i, Kind: "bbox", Reason: "a bbox needs x1, y1, x2 and y2"})
		case len(out.BBoxes) >= MaxBBoxes:
			out.Rejected = append(out.Rejected, Rejected{Index: i, Kind: "bbox", Reason: fmt.Sprintf("more than %d bboxes in one turn", MaxBBoxes)})
		default:
			b := Box{clamp(x1), clamp(y1), clamp(x2), clamp(y2)}
			if b.X2 < b.X1 {
				b.X1, b.X2 = b.X2, b.X1
			}
			if b.Y2 < b.Y1 {
				b.Y1, b.Y2 = b.Y2, b.Y1
			}
			out.BBoxes = append(out.BBoxes, b)
		}
	}
	var acts []map[string]any
	if raw, ok := obj["actions"]; ok {
		if err := json.Unmarshal(raw, &acts); err != nil {
			out.Rejected = append(out.Rejected, Rejected{Index: -1, Kind: "action", Reason: "actions is not a list of objects"})
		}
	}
	for i, m := range acts {
		a, reason := parseAction(m)
		if reason == "" && len(out.Actions) >= MaxActions {
			reason = fmt.Sprintf("more than %d actions in one turn", MaxActions)
		}
		if reason != "" {
			out.Rejected = append(out.Rejected, Rejected{Index: i, Kind: "action", Name: a.Name, Reason: reason})
			continue
		}
		out.Actions = append(out.Actions, a)
	}
	return out
}

func parseAction(m map[string]any) (Action, string) {
	name, _ := m["name"].(string)
	if name == "" {
		name, _ = m["action"].(string)
	}
	a := Action{Name: strings.ToLower(strings.TrimSpace(name))}
	if a.Name == "" {
		return a, "an action needs a name"
	}
	x1, okx := num(m, "x1", "x")
	y1, oky := num(m, "y1", "y")
	x2, okx2 := num(m, "x2")
	y2, oky2 := num(m, "y2")
	a.X1, a.Y1 = clamp(x1), clamp(y1)
	switch a.Name {
	case gate.KindMove, gate.KindClick, gate.KindRightClick, gate.KindDoubleClick, gate.KindMiddleClick:
		if !okx || !oky {
			return a, a.Name + " needs x1 and y1"
		}
	case gate.KindDrag:
		if !okx || !oky || !okx2 || !oky2 {
			return a, "drag needs x1, y1, x2 and y2"
		}
		a.X2, a.Y2 = clamp(x2), clamp(y2)
		if a.X2 == 0 && a.Y2 == 0 {
			// internal/input reads an end of 0,0 as missing.
			a.X2, a.Y2 = 1, 1
		}
	case gate.KindScroll:
		if !okx || !oky {
			a.X1, a.Y1 = 500, 500
		}
		dy, _ := num(m, "dy", "amount", "clicks")
		dx, _ := num(m, "dx")
		if d, ok := m["direction"].(string); ok {
			n := math.Abs(dy)
			if n == 0 {
				n = 3
			}
			switch strings.ToLower(d) {
			case "up":
				dy = -n
			case "down":
				dy = n
			case "left":
				dx, dy = -n, 0
			case "right":
				dx, dy = n, 0
			}
		}
		a.DX = int(max(min(math.Round(dx), gate.MaxScroll), -gate.MaxScroll))
		a.DY = int(max(min(math.Round(dy), gate.MaxScroll), -gate.MaxScroll))
		if a.DX == 0 && a.DY == 0 {
			return a, "scroll needs a non-zero dy (down) or dx (right)"
		}
	case gate.KindType:
		a.Text, _ = m["text"].(string)
		a.X1, a.Y1 = 0, 0
		if a.Text == "" {
			return a, "type needs a non-empty text"
		}
	case gate.KindKey:
		a.Keys, _ = m["keys"].(string)
		if a.Keys == "" {
			a.Keys, _ = m["key"].(string)
		}
		a.X1, a.Y1 = 0, 0
		if strings.TrimSpace(a.Keys) == "" {
			return a, "key needs keys such as \"ctrl+l\" or \"Return\""
		}
	default:
		return a, fmt.Sprintf("unknown action %q: use one of move, click, right_click, double_click, drag, scroll, type, key", a.Name)
	}
	return a, ""
}

// num reads the first of keys present as a number (JSON number or numeric
// string).
func num(m map[string]any, keys ...string) (float64, bool) {
	for _, k := range keys {
		switch v := m[k].(type) {
		case float64:
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v, true
			}
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f, true
			}
		}
	}
	return 0, false
}

func clamp(v float64) int {
	return int(math.Round(min(max(v, 0), gate.NormMax)))
}

// firstObject returns the first balanced {...} block of s (braces inside
// JSON strings ignored), else the span from the first '{' to the last '}'
// (the seed's greedy match), else nil.
func firstObject(s string) []byte {
	b := []byte(s)
	start := bytes.IndexByte(b, '{')
	for start >= 0 {
		depth, inStr, esc := 0, false, false
		for i := start; i < len(b); i++ {
			c := b[i]
			switch {
			case esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					if json.Valid(b[start : i+1]) {
						return b[start : i+1]
					}
					goto next
				}
			}
		}
	next:
		n := bytes.IndexByte(b[start+1:], '{')
		if n < 0 {
			break
		}
		start += 1 + n
	}
	first, last := bytes.IndexByte(b, '{'), bytes.LastIndexByte(b, '}')
	if first >= 0 && last > first {
		return b[first : last+1]
	}
	return nil
}

// inputAction converts a parsed action to internal/input's form.
func (a Action) inputAction() gate.Action {
	return gate.Action{Kind: a.Name, X: a.X1, Y: a.Y1, X2: a.X2, Y2: a.Y2, DX: a.DX, DY: a.DY, Text: a.Text, Keys: a.Keys}
}
