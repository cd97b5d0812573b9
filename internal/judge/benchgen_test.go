package judge_test

import (
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
)

var update = flag.Bool("update", false, "regenerate testdata/bench screenshots under Xvfb")

const benchDir = "testdata/bench"

// buildLog is what the pretend build prints before it ends.
const buildLog = `printf '$ make -j2\n[ 10%%] Building Go object internal/frame\n[ 25%%] Building Go object internal/capture\n[ 40%%] Building Go object internal/judge\n[ 55%%] Linking acu\n'`

var xtermFont = []string{"-fa", "DejaVu Sans Mono", "-fs", "10"}

// benchScenes are the screenshots of the judge benchmark set: each is drawn
// by real programs (Tk through scenes.py, xterm) on a private Xvfb.
var benchScenes = []struct {
	name   string
	tk     string // scenes.py scene
	xterm  string // script run in an xterm on top, if any
	light  bool   // light xterm with its default bitmap font
	geomet string
}{
	{name: "build-running", tk: "desktop", xterm: buildLog},
	{name: "build-done", tk: "desktop", xterm: buildLog + `; printf '[100%%] Built target acu\nBuild succeeded in 41.2s\n$ '`},
	{name: "build-failed", tk: "desktop", xterm: buildLog + `; printf 'internal/judge/ocr.go:42: undefined: matchPhrase\nmake: *** [Makefile:12: all] Error 2\n$ '`},
	{name: "download-running", tk: "desktop", light: true, xterm: `printf '$ ./fetch-dataset.sh\nConnecting to mirror... connected.\nDownloading dataset.tar.zst  57%%  [=========>        ]  1.2 GB  18 MB/s\n'`},
	{name: "download-done", tk: "desktop", light: true, xterm: `printf '$ ./fetch-dataset.sh\nConnecting to mirror... connected.\nDownloading dataset.tar.zst 100%%  [==================]  2.1 GB  19 MB/s\nDownload complete\n$ '`},
	{name: "tests-passed", tk: "desktop", light: true, xterm: `printf '$ go test ./...\nok   github.com/acu-dev/acu/internal/ocr    3.1s\nok   github.com/acu-dev/acu/internal/judge  4.7s\nPASS: 42 tests passed\n$ '`},
	{name: "progress-40", tk: "progress-40"},
	{name: "progress-100", tk: "progress-100"},
	{name: "page-loading", tk: "page-loading"},
	{name: "page-loaded", tk: "page-loaded"},
	{name: "dialog-absent", tk: "dialog-absent"},
	{name: "dialog-present", tk: "dialog-present"},
	{name: "dialog-failed", tk: "dialog-failed"},
	{name: "ide-indexing", tk: "ide-indexing"},
	{name: "ide-ready", tk: "ide-ready"},
}

// TestGenerateBenchSet redraws the benchmark screenshots. Run it with
//
//	go test ./internal/judge -run TestGenerateBenchSet -update
//
// labels.json is written by hand: it is the ground truth.
func TestGenerateBenchSet(t *testing.T) {
	if !*update {
		t.Skip("regenerates testdata/bench; run with -update")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 with tkinter is needed to draw the scenes")
	}
	for _, sc := range benchScenes {
		t.Run(sc.name, func(t *testing.T) {
			d := ocrtest.StartXvfb(t, 1024, 600)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			mark := filepath.Join(t.TempDir(), "tk")
			d.Start(t, "python3", filepath.Join(benchDir, "scenes.py"), sc.tk, mark)
			d.WaitSettled(ctx, t, mark)
			if sc.xterm != "" {
				fg, bg, font := "#d0d0d0", "#1d1f21", xtermFont
				if sc.light {
					fg, bg, font = "black", "#fdf6e3", nil
				}
				m := d.Xterm(t, "86x14+90+90", fg, bg, font, sc.xterm+`; touch "$ACU_MARK"`)
				d.WaitSettled(ctx, t, m)
			}
			f := d.WaitSettled(ctx, t, "")
			if err := writePNG(filepath.Join(benchDir, sc.name+".png"), f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func writePNG(path string, f *frame.Frame) error {
	img := f.RGBA()
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(fh, img); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
