package main

import (
	"fmt"
	"math/rand/v2"
)

type screen struct {
	name   string
	app    string
	theme  string
	scale  int
	pt     int
	font   string // "aa" (anti-aliased TrueType) or "bitmap"
	shown  []int  // pair indexes shown
	flip   []bool // show the second phrase of the pair instead
	cut    int    // a pair shown only in part (-1 none)
	second string // app of a second window on top (other-window cases)
	shown2 []int  // pairs shown in the second window
	// more: a "near" screen, whose phrases are also asked with their
	// third (one word differs) and with one word more.
	more bool
	// number: galculator's display; numbers2 are shown in the second
	// window (other-window cases). rng draws the near misses' digits.
	number   string
	numbers2 []string
	seed     uint64
}

// plan lists the screens: every app in both themes at 1x and 2x, sizes
// from 8 to 96 pt spread over them, phrases drawn from the bank with a
// fixed seed so the set is the same on every run.
func plan() []screen {
	rng := rand.New(rand.NewPCG(28, 2))
	sizes := []int{8, 10, 12, 16, 24, 36, 48, 72, 96}
	apps := []appSpec{
		{"xterm", "aa", sizes},
		{"xterm", "bitmap", []int{8, 10, 12, 16}},
		{"urxvt", "aa", sizes},
		{"lxterminal", "aa", sizes},
		{"zenity", "aa", sizes},
		{"yad", "aa", sizes},
		{"mousepad", "aa", []int{10}},
		{"chromium", "aa", sizes},
	}
	var out []screen
	out = appScreens(rng, apps, out)
	// Two windows: phrases of one asked of the other.
	for i, spec := range []struct{ app, second, theme string }{
		{"xterm", "yad", "dark"}, {"xterm", "yad", "light"},
		{"lxterminal", "yad", "light"}, {"urxvt", "yad", "dark"},
	} {
		s := screen{app: spec.app, second: spec.second, theme: spec.theme, scale: 1 + i%2, pt: []int{10, 12}[i%2], font: "aa", cut: -1}
		s.name = fmt.Sprintf("two-%s-%s-%s-%dx", spec.app, spec.second, spec.theme, s.scale)
		perm := rng.Perm(len(pairs))
		s.shown, s.shown2 = perm[:3], perm[3:6]
		s.flip = []bool{false, true, false}
		out = append(out, s)
	}
	// Apps added since draw from a seed of their own, so the screens
	// above stay as they were: FeatherPad, a Qt editor.
	out = appScreens(rand.New(rand.NewPCG(28, 3)), []appSpec{{"featherpad", "aa", []int{10, 16, 24, 36}}}, out)
	out = galculatorScreens(rand.New(rand.NewPCG(28, 4)), out)
	return nearScreens(rand.New(rand.NewPCG(28, 5)), out)
}

// galculatorScreens adds galculator's display (numbers only) in both
// themes at 1x and 2x, at two sizes each, and four screens of galculator
// beside an xterm showing other numbers, the frame cropped to galculator.
func galculatorScreens(rng *rand.Rand, out []screen) []screen {
	sizes := []int{12, 16, 26, 36}
	k := 0
	for _, theme := range []string{"light", "dark"} {
		for _, scale := range []int{1, 2} {
			for i := 0; i < 2; i++ {
				pt := sizes[(k+i*2)%len(sizes)]
				s := screen{app: "galculator", theme: theme, scale: scale, pt: pt, font: "aa", cut: -1,
					number: numbers[rng.IntN(len(numbers))], seed: rng.Uint64()}
				s.name = fmt.Sprintf("galculator-aa-%s-%dx-%dpt", theme, scale, pt)
				out = append(out, s)
			}
			k++
		}
	}
	for i, theme := range []string{"light", "dark", "dark", "light"} {
		s := screen{app: "galculator", second: "xterm", theme: theme, scale: 1 + i/2, pt: []int{16, 26}[i%2], font: "aa", cut: -1, seed: rng.Uint64()}
		perm := rng.Perm(len(numbers))
		s.number = numbers[perm[0]]
		s.numbers2 = []string{numbers[perm[1]], numbers[perm[2]], numbers[perm[3]]}
		s.name = fmt.Sprintf("two-galculator-xterm-%s-%dx-%dpt", theme, s.scale, s.pt)
		out = append(out, s)
	}
	return out
}

// nearScreens adds screens whose phrases are asked with more near misses:
// each app once in each theme, at 1x and 2x in turn.
func nearScreens(rng *rand.Rand, out []screen) []screen {
	apps := []struct {
		app   string
		sizes []int
	}{
		{"xterm", []int{10, 16}}, {"urxvt", []int{12, 24}}, {"lxterminal", []int{10, 16}},
		{"zenity", []int{12, 24}}, {"yad", []int{10, 16}}, {"chromium", []int{12, 24}},
		{"mousepad", []int{10, 12}}, {"featherpad", []int{12, 16}},
	}
	for i, a := range apps {
		for j, theme := range []string{"light", "dark"} {
			scale := 1 + (i+j)%2
			pt := a.sizes[j]
			s := screen{app: a.app, theme: theme, scale: scale, pt: pt, font: "aa", cut: -1, more: true}
			s.name = fmt.Sprintf("near-%s-aa-%s-%dx-%dpt", a.app, theme, scale, pt)
			fit := phrasesThatFit(pt+4, scale) // room for a word more
			for _, p := range rng.Perm(len(pairs)) {
				if len(s.shown) == 5 {
					break
				}
				if fit(p) {
					s.shown = append(s.shown, p)
					s.flip = append(s.flip, rng.IntN(2) == 1)
				}
			}
			if a.app != "zenity" && a.app != "yad" && a.app != "mousepad" && a.app != "featherpad" {
				for _, p := range rng.Perm(len(pairs)) {
					if !contains(s.shown, p) {
						s.cut = p
						break
					}
				}
			}
			out = append(out, s)
		}
	}
	return out
}

type appSpec struct {
	app   string
	font  string
	sizes []int
}

// appScreens adds each app's screens to out: both themes at 1x and 2x,
// sizes spread over them, phrases drawn from the bank with rng.
func appScreens(rng *rand.Rand, apps []appSpec, out []screen) []screen {
	k := 0
	for _, a := range apps {
		for _, theme := range []string{"light", "dark"} {
			for _, scale := range []int{1, 2} {
				n := 2
				if a.app == "mousepad" || a.app == "featherpad" || a.font == "bitmap" {
					n = 1
				}
				for i := 0; i < n; i++ {
					pt := a.sizes[(k+i*4)%len(a.sizes)]
					s := screen{app: a.app, theme: theme, scale: scale, pt: pt, font: a.font, cut: -1}
					s.name = fmt.Sprintf("%s-%s-%s-%dx-%dpt", a.app, a.font, theme, scale, pt)
					fit := phrasesThatFit(pt, scale)
					lines := min(5, max(1, 560*scale/(pt*2*scale)))
					perm := rng.Perm(len(pairs))
					for _, p := range perm {
						if len(s.shown) == lines {
							break
						}
						if fit(p) {
							s.shown = append(s.shown, p)
							s.flip = append(s.flip, rng.IntN(2) == 1)
						}
					}
					if a.app != "mousepad" && a.app != "featherpad" && a.app != "zenity" && a.app != "yad" && pt <= 48 {
						for _, p := range perm {
							if fit(p) && !contains(s.shown, p) {
								s.cut = p
								break
							}
						}
					}
					out = append(out, s)
				}
				k++
			}
		}
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// phrasesThatFit says which pairs fit across a 1280-pixel-wide screen at
// pt (an estimate: a character is at most 0.62 em wide).
func phrasesThatFit(pt, scale int) func(int) bool {
	return func(p int) bool {
		n := max(len(pairs[p][0]), len(pairs[p][1]))
		px := float64(pt) * 4 / 3
		return float64(n)*0.62*px < 1100
	}
}
