// Command judgeset draws the OCR judge's labelled set with real Debian
// applications on private Xvfb displays (xterm, rxvt-unicode, lxterminal,
// zenity, yad, mousepad, FeatherPad: a Qt editor, galculator) and headless Chromium, and writes the screens as
// PNGs and the cases as labels.json. Run it through gen.sh:
//
//	bench/judgeset/gen.sh            # writes internal/judge/testdata/ocrset
//	go run ./bench/judgeset -only featherpad -merge   # redraws one app's screens in place
//
// Every screen shows phrases from a bank of pairs that differ in one word
// or number. For each phrase shown the set asks whether it is visible
// (YES), whether its pair is visible (NO: a near miss), whether it is gone
// (NO: it is on screen) and whether its pair is gone (YES). Screens also
// carry a phrase only partly shown (cut at a terminal's margin or a page's
// clipped box: NO) and, on two-window screens, phrases asked of the other
// window (the frame is cropped to the target window: NO).
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jezek/xgb"
)

func main() {
	out := flag.String("out", "internal/judge/testdata/ocrset", "directory to write the set to")
	only := flag.String("only", "", "generate only screens whose name contains this")
	merge := flag.Bool("merge", false, "with -only: put the screens generated into the set in -out (their cases replace the ones they had), leaving the other screens as they are")
	flag.Parse()
	log.SetFlags(0)
	xgb.Logger = log.New(io.Discard, "", 0)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	screens := plan()
	var cases []Case
	for _, s := range screens {
		if *only != "" && !strings.Contains(s.name, *only) {
			continue
		}
		t0 := time.Now()
		img, target, err := draw1(s)
		if err != nil {
			log.Fatalf("screen %s: %v", s.name, err)
		}
		file := s.name + ".png"
		if err := writePNG(filepath.Join(*out, file), img); err != nil {
			log.Fatal(err)
		}
		cs := casesOf(s, file, target)
		cases = append(cases, cs...)
		log.Printf("%s: %d cases, %s", s.name, len(cs), time.Since(t0).Round(time.Millisecond))
	}
	if *only != "" && !*merge {
		return
	}
	if *merge {
		old, err := os.ReadFile(filepath.Join(*out, "labels.json"))
		if err != nil {
			log.Fatalf("-merge: %v", err)
		}
		var kept []Case
		if err := json.Unmarshal(old, &kept); err != nil {
			log.Fatalf("-merge: labels.json: %v", err)
		}
		redrawn := map[string]bool{}
		for _, c := range cases {
			redrawn[c.Image] = true
		}
		all := kept[:0]
		for _, c := range kept {
			if !redrawn[c.Image] {
				all = append(all, c)
			}
		}
		cases = append(all, cases...)
	}
	data, err := json.MarshalIndent(cases, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "labels.json"), append(data, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	no := 0
	for _, c := range cases {
		if !c.Expect {
			no++
		}
	}
	log.Printf("%d cases, %d NO", len(cases), no)
}
