package uitars

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parsed is one action of a model output, as the reference parser
// (@ui-tars/action-parser) gives it: its type, its inputs as strings, box
// inputs as fractions of the picture (Boxes) and, when the picture's size
// is known, their centres in its pixels (Coords: start_coords,
// end_coords; nil when a box's numbers do not parse).
type Parsed struct {
	Reflection *string
	Thought    string
	Type       string
	Inputs     map[string]string
	Boxes      map[string][]float64
	Coords     map[string][]float64
}

// Coordinate conventions of UI-TARS versions.
const (
	// Relative: 0..1000 of the picture (UI-TARS 1.0, UI-TARS-1.5 through
	// most endpoints).
	Relative = "relative"
	// Absolute: pixels of the picture the model was sent.
	Absolute = "absolute"
	// Smart: pixels of the picture as Qwen2.5-VL's smart resize saw it
	// (UI-TARS-1.5 and other Qwen2.5-VL based models): multiples of 28,
	// between 100 and 16384 patches.
	Smart = "smart"
)

// Options says how to read coordinates: Mode (default Relative) and the
// size of the picture sent to the model, W x H.
type Options struct {
	Mode string
	W, H int
}

// Smart resize constants of Qwen2.5-VL as UI-TARS-1.5 uses them.
const (
	imageFactor = 28
	minPixels   = 100 * imageFactor * imageFactor
	maxPixels   = 16384 * imageFactor * imageFactor
	maxRatio    = 200
)

// SmartResize returns the size Qwen2.5-VL resizes a w x h picture to, or
// false when its aspect ratio is beyond 200.
func SmartResize(w, h int) (int, int, bool) {
	fw, fh := float64(w), float64(h)
	if math.Max(fw, fh)/math.Min(fw, fh) > maxRatio {
		return 0, 0, false
	}
	round := func(v float64) float64 { return jsRound(v/imageFactor) * imageFactor }
	wBar := math.Max(imageFactor, round(fw))
	hBar := math.Max(imageFactor, round(fh))
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(fh * fw / maxPixels)
		hBar = math.Floor(fh/beta/imageFactor) * imageFactor
		wBar = math.Floor(fw/beta/imageFactor) * imageFactor
	case hBar*wBar < minPixels:
		beta := math.Sqrt(minPixels / (fh * fw))
		hBar = math.Ceil(fh*beta/imageFactor) * imageFactor
		wBar = math.Ceil(fw*beta/imageFactor) * imageFactor
	}
	return int(wBar), int(hBar), true
}

// jsRound is JavaScript's Math.round: halves round up.
func jsRound(v float64) float64 { return math.Floor(v + 0.5) }

// Parse reads a UI-TARS output ("Thought: …\nAction: click(start_box=…)")
// as the reference parser does in its default mode: every action of the
// Action part (blank-line separated), each with its inputs. An action that
// does not parse is returned with an empty Type, as the reference does.
func Parse(text string, o Options) []Parsed {
	factors := [2]float64{1000, 1000}
	if o.Mode == Absolute && o.W > 0 && o.H > 0 {
		factors = [2]float64{float64(o.W), float64(o.H)}
	}
	var smart *[2]float64
	if o.Mode == Smart && o.W > 0 && o.H > 0 {
		if w, h, ok := SmartResize(o.W, o.H); ok {
			smart = &[2]float64{float64(w), float64(h)}
		}
	}
	text = jsTrim(text)
	var reflection *string
	thought := ""
	switch {
	case strings.Contains(text, "Thought:"):
		if m, ok := lazyUntilAction(text, "Thought: ", true); ok {
			thought = jsTrim(m)
		}
	case strings.HasPrefix(text, "Reflection:"):
		if r, t, ok := reflectionMatch(text); ok {
			thought = jsTrim(t)
			rr := jsTrim(r)
			reflection = &rr
		}
	case strings.HasPrefix(text, "Action_Summary:"):
		if m, ok := lazyUntilAction(text, "Action_Summary: ", false); ok {
			thought = jsTrim(m)
		}
	}
	actionStr := text
	if strings.Contains(text, "Action:") || strings.Contains(text, "Action：") {
		parts := splitAction(text)
		actionStr = parts[len(parts)-1]
	}
	var out []Parsed
	for _, raw := range strings.Split(actionStr, "\n\n") {
		p := Parsed{Reflection: reflection, Thought: thought, Inputs: map[string]string{}}
		fn, args, ok := parseCall(strings.TrimLeftFunc(strings.ReplaceAll(raw, "\n", `\n`), isJSSpace))
		if ok {
			p.Type = fn
			for _, kv := range args {
				name, param := kv[0], kv[1]
				if param == "" {
					continue
				}
				param = jsTrim(param)
				if strings.Contains(name, "start_box") || strings.Contains(name, "end_box") {
					var nums []float64
					cleaned := strings.NewReplacer("(", "", ")", "", "[", "", "]", "").Replace(param)
					idx := 0
					for _, s := range strings.Split(cleaned, ",") {
						if s == "" {
							continue
						}
						f := parseFloat(s)
						if smart != nil {
							f /= smart[idx%2]
						} else {
							f /= factors[idx%2]
						}
						nums = append(nums, f)
						idx++
					}
					if len(nums) == 2 {
						nums = append(nums, nums[0], nums[1])
					}
					if p.Boxes == nil {
						p.Boxes = map[string][]float64{}
					}
					p.Boxes[name] = nums
					if o.W > 0 && o.H > 0 {
						key := "end_coords"
						if strings.Contains(name, "start_box") {
							key = "start_coords"
						}
						if p.Coords == nil {
							p.Coords = map[string][]float64{}
						}
						p.Coords[key] = centre(nums, float64(o.W), float64(o.H), factors)
					}
					continue
				}
				p.Inputs[name] = param
			}
		}
		out = append(out, p)
	}
	return out
}

// centre is the reference's start_coords: the box's centre in pixels,
// rounded to 1/factor of a pixel; nil when a number is missing.
func centre(n []float64, w, h float64, factors [2]float64) []float64 {
	if len(n) < 2 {
		return []float64{}
	}
	x1, y1 := n[0], n[1]
	x2, y2 := x1, y1
	if len(n) > 2 {
		x2 = n[2]
	}
	if len(n) > 3 {
		y2 = n[3]
	}
	return []float64{
		jsRound((x1+x2)/2*w*factors[0]) / factors[0],
		jsRound((y1+y2)/2*h*factors[1]) / factors[1],
	}
}

// isJSSpace is JavaScript's white space and line terminators, which
// trim() removes.
func isJSSpace(r rune) bool { return (unicode.IsSpace(r) && r != '\u0085') || r == '\ufeff' }

func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// splitAction splits text at every "Action:" or "Action：".
func splitAction(text string) []string {
	var parts []string
	for {
		i, n := -1, 0
		if j := strings.Index(text, "Action:"); j >= 0 {
			i, n = j, len("Action:")
		}
		if j := strings.Index(text, "Action："); j >= 0 && (i < 0 || j < i) {
			i, n = j, len("Action：")
		}
		if i < 0 {
			return append(parts, text)
		}
		parts = append(parts, text[:i])
		text = text[i+n:]
	}
}

// actionAhead reports whether \s*Action[:：] matches at text[p:].
func actionAhead(text string, p int) bool {
	rest := strings.TrimLeftFunc(text[p:], isJSSpace)
	return strings.HasPrefix(rest, "Action:") || strings.HasPrefix(rest, "Action：")
}

// lazyUntilAction matches prefix([\s\S]+?)(?=\s*Action[:：]|$) (or with
// (.+?) when anyChar is false) at the first place it matches.
func lazyUntilAction(text, prefix string, anyChar bool) (string, bool) {
	for from := 0; ; {
		i := strings.Index(text[from:], prefix)
		if i < 0 {
			return "", false
		}
		start := from + i + len(prefix)
		if m, ok := lazyFrom(text, start, anyChar); ok {
			return m, true
		}
		from = from + i + 1
	}
}

// lazyFrom matches ([\s\S]+?)(?=\s*Action[:：]|$) at start.
func lazyFrom(text string, start int, anyChar bool) (string, bool) {
	for p := start; p < len(text); {
		_, size := utf8.DecodeRuneInString(text[p:])
		if !anyChar && isJSLineBreak(text[p:]) {
			return "", false
		}
		p += size
		if p == len(text) || actionAhead(text, p) {
			return text[start:p], true
		}
	}
	return "", false
}

func isJSLineBreak(s string) bool {
	return strings.HasPrefix(s, "\n") || strings.HasPrefix(s, "\r") || strings.HasPrefix(s, "\u2028") || strings.HasPrefix(s, "\u2029")
}

// reflectionMatch matches Reflection: ([\s\S]+?)Action_Summary: ([\s\S]+?)(?=\s*Action[:：]|$).
func reflectionMatch(text string) (string, string, bool) {
	const rp, ap = "Reflection: ", "Action_Summary: "
	for from := 0; ; {
		i := strings.Index(text[from:], rp)
		if i < 0 {
			return "", "", false
		}
		rs := from + i + len(rp)
		for af := rs + 1; af <= len(text); {
			j := strings.Index(text[af:], ap)
			if j < 0 {
				break
			}
			as := af + j
			if m, ok := lazyFrom(text, as+len(ap), true); ok {
				return text[rs:as], m, true
			}
			af = as + 1
		}
		from = from + i + 1
	}
}

// parseCall parses name(args) as the reference does: args split at commas
// outside single quotes, each key=value with one surrounding quote
// removed, <bbox> and <point> forms turned into (x,y…).
func parseCall(s string) (string, [][2]string, bool) {
	s = strings.NewReplacer("<|box_start|>", "", "<|box_end|>", "").Replace(s)
	s = replacePoint(s)
	s = jsTrim(s)
	open := strings.IndexByte(s, '(')
	if open <= 0 || !strings.HasSuffix(s, ")") || strings.ContainsAny(s, "\r\u2028\u2029") {
		return "", nil, false
	}
	name := s[:open]
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", nil, false
		}
	}
	argsStr := s[open+1 : len(s)-1]
	var out [][2]string
	if jsTrim(argsStr) == "" {
		return name, out, true
	}
	for _, pair := range argPairs(argsStr) {
		key, value, _ := strings.Cut(pair, "=")
		if key == "" {
			continue
		}
		value = jsTrim(value)
		if value != "" && (value[0] == '\'' || value[0] == '"') {
			value = value[1:]
		}
		if value != "" && (value[len(value)-1] == '\'' || value[len(value)-1] == '"') {
			value = value[:len(value)-1]
		}
		for _, tag := range []string{"bbox", "point"} {
			if strings.Contains(value, "<"+tag+">") {
				value = strings.NewReplacer("<"+tag+">", "", "</"+tag+">", "").Replace(value)
				value = "(" + strings.Join(splitSpaceRuns(value), ",") + ")"
			}
		}
		key = jsTrim(key)
		replaced := false
		for i := range out { // later keys overwrite earlier ones in place
			if out[i][0] == key {
				out[i][1], replaced = value, true
			}
		}
		if !replaced {
			out = append(out, [2]string{key, value})
		}
	}
	return name, out, true
}

// splitSpaceRuns is s.replace(/\s+/g, ',') split back at the commas it
// made, keeping empty parts at the ends.
func splitSpaceRuns(s string) []string {
	var parts []string
	cur := strings.Builder{}
	inSpace := false
	for _, r := range s {
		if isJSSpace(r) {
			if !inSpace {
				parts = append(parts, cur.String())
				cur.Reset()
			}
			inSpace = true
			continue
		}
		inSpace = false
		cur.WriteRune(r)
	}
	return append(parts, cur.String())
}

// replacePoint is the reference's
// replace(/(?<!start_|end_)point=/g, 'start_box=') then start_point= and
// end_point= to start_box= and end_box=.
func replacePoint(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "point=") && !strings.HasSuffix(s[:i], "start_") && !strings.HasSuffix(s[:i], "end_") {
			b.WriteString("start_box=")
			i += len("point=")
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	s = strings.ReplaceAll(b.String(), "start_point=", "start_box=")
	return strings.ReplaceAll(s, "end_point=", "end_box=")
}

// argPairs is argsStr.match(/([^,']|'[^']*')+/g).
func argPairs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i
		for j < len(s) {
			c := s[j]
			if c != ',' && c != '\'' {
				j++
				continue
			}
			if c == '\'' {
				if k := strings.IndexByte(s[j+1:], '\''); k >= 0 {
					j += k + 2
					continue
				}
			}
			break
		}
		if j > i {
			out = append(out, s[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}

// parseFloat is JavaScript's parseFloat: the longest number at the start
// (after white space), NaN when there is none.
func parseFloat(s string) float64 {
	s = strings.TrimLeftFunc(s, isJSSpace)
	end := 0
	best := -1
	sign := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		sign = 1
	}
	if strings.HasPrefix(s[sign:], "Infinity") {
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	// digits [. digits] [e[+-]digits]
	end = sign
	digits := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
		digits++
	}
	if digits > 0 {
		best = end
	}
	if end < len(s) && s[end] == '.' {
		e := end + 1
		frac := 0
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
			frac++
		}
		if digits+frac > 0 {
			end = e
			best = end
		}
	}
	if best > 0 && end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		e := end + 1
		if e < len(s) && (s[e] == '+' || s[e] == '-') {
			e++
		}
		ed := 0
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
			ed++
		}
		if ed > 0 {
			best = e
		}
	}
	if best < 0 {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s[:best], 64)
	if err != nil {
		return math.NaN()
	}
	return f
}
