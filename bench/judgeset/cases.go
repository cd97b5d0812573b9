package main

import (
	"fmt"
	"image"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Case is one labelled question, as internal/judge loads it.
type Case struct {
	Name      string `json:"name"`
	Image     string `json:"image"`
	Condition string `json:"condition"`
	Expect    bool   `json:"expect"`
	Crop      []int  `json:"crop,omitempty"` // x0 y0 x1 y1: the target window
	Size      int    `json:"size_pt"`
	Px        int    `json:"size_px"`
	Theme     string `json:"theme"`
	App       string `json:"app"`
	Scale     int    `json:"scale"`
	Kind      string `json:"kind"`
	Note      string `json:"note,omitempty"`
}

// digitMisses returns up to n numbers that differ from num in one digit
// (each at another position), and num with one digit more at its end.
func digitMisses(num string, n int, rng *rand.Rand) []string {
	var pos []int
	for i, r := range num {
		if r >= '0' && r <= '9' {
			pos = append(pos, i)
		}
	}
	rng.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	var out []string
	for _, i := range pos {
		if len(out) == n {
			break
		}
		d := int(num[i] - '0')
		nd := (d + 1 + rng.IntN(9)) % 10
		if i == 0 && nd == 0 {
			nd = (d + 1) % 10
			if nd == 0 {
				nd = 1
			}
		}
		out = append(out, num[:i]+strconv.Itoa(nd)+num[i+1:])
	}
	return append(out, num+strconv.Itoa(1+rng.IntN(9)))
}

func phrase(s screen, i int) string {
	p := pairs[s.shown[i]]
	if s.flip[i] {
		return p[1]
	}
	return p[0]
}

func other(s screen, i int) string {
	p := pairs[s.shown[i]]
	if s.flip[i] {
		return p[0]
	}
	return p[1]
}

// casesOf labels a screen.
func casesOf(s screen, file string, target image.Rectangle) []Case {
	base := Case{Image: file, Size: s.pt, Px: s.pt * 4 / 3 * s.scale, Theme: s.theme, App: s.app, Scale: s.scale}
	if s.font == "bitmap" {
		base.App = s.app + "-bitmap"
	}
	var cs []Case
	add := func(kind, cond string, expect bool, crop bool) {
		c := base
		c.Name = fmt.Sprintf("%s/%d", s.name, len(cs))
		c.Kind, c.Condition, c.Expect = kind, cond, expect
		if crop {
			c.Crop = []int{target.Min.X, target.Min.Y, target.Max.X, target.Max.Y}
		}
		cs = append(cs, c)
	}
	q := strconv.Quote
	if s.number != "" {
		rng := rand.New(rand.NewPCG(s.seed, 28))
		crop := s.second != ""
		add("visible", q(s.number)+" is visible", true, crop)
		add("gone-present", q(s.number)+" is gone", false, crop)
		misses := digitMisses(s.number, 7, rng)
		for i, m := range misses {
			add("near", q(m)+" is visible", false, crop)
			if i < 2 {
				add("gone-absent", q(m)+" is gone", true, crop)
			}
		}
		for _, n := range s.numbers2 {
			add("other-window", q(n)+" is visible", false, true)
			add("other-window-gone", q(n)+" is gone", true, true)
		}
		return cs
	}
	for i := range s.shown {
		p, o := phrase(s, i), other(s, i)
		add("visible", q(p)+" is visible", true, s.second != "")
		add("near", q(o)+" is visible", false, s.second != "")
		add("gone-present", q(p)+" is gone", false, s.second != "")
		add("gone-absent", q(o)+" is gone", true, s.second != "")
		if s.more {
			t := thirds[s.shown[i]]
			add("near", q(strings.Replace(p, t[0], t[1], 1))+" is visible", false, false)
			add("near", q(p+" "+extras[(s.shown[i]+i)%len(extras)])+" is visible", false, false)
			add("near", q(prefixes[(s.shown[i]+2*i)%len(prefixes)]+" "+p)+" is visible", false, false)
			if strings.ContainsAny(p, "0123456789") {
				// One digit differs, where the pair's does not.
				rng := rand.New(rand.NewPCG(uint64(s.shown[i]), uint64(s.pt)))
				for _, m := range digitMisses(p, 3, rng) {
					if m != o && !strings.HasPrefix(m, p) {
						add("near", q(m)+" is visible", false, false)
						break
					}
				}
			}
		}
	}
	if s.cut >= 0 {
		add("partial", q(pairs[s.cut][0])+" is visible", false, false)
	}
	for _, p := range s.shown2 {
		add("other-window", q(pairs[p][0])+" is visible", false, true)
		add("other-window-gone", q(pairs[p][0])+" is gone", true, true)
	}
	return cs
}
