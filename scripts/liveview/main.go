// Command liveview opens acu's live view in headless Chromium, as a person
// would from outside a container, waits until the page has painted frames
// of the display, and saves a screenshot of the page. scripts/container-test.sh
// runs it with a one-time link (`acu open /ui/`) to a container's
// published port, then reads the screenshot with Tesseract.
//
//	go run ./scripts/liveview -url 'http://127.0.0.1:18790/ui/#code=…' -o live.png
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "liveview:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", "", "the one-time link to the live view (acu open /ui/)")
	out := flag.String("o", "live.png", "where to write the page's screenshot (PNG)")
	frames := flag.Int("frames", 1, "frames the page must have painted")
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for them")
	width := flag.Int("width", 1700, "the browser window's width: wide enough that a 1280-pixel display is shown at full size beside the page's side panel")
	height := flag.Int("height", 900, "the browser window's height")
	scale := flag.Float64("scale", 2, "device pixels per CSS pixel of the screenshot (2 reads better with OCR)")
	flag.Parse()
	if *url == "" {
		return errors.New("-url is required: the link `acu open /ui/` prints")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		return fmt.Errorf("chromium: %w (Debian: apt-get install chromium)", err)
	}
	dir, err := os.MkdirTemp("", "acu-liveview-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(dir),
		chromedp.WindowSize(*width, *height), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-device-scale-factor", fmt.Sprint(*scale)))
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, *timeout)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(*url)); err != nil {
		return fmt.Errorf("open %s: %w", *url, err)
	}
	var n int
	for {
		var err error
		if n, err = chromedp.Run(ctx, chromedp.Evaluate[int](`window.acuLive ? window.acuLive.frames : 0`)); err != nil {
			return fmt.Errorf("the live page painted %d frames before %s: %w", n, *timeout, err)
		}
		if n >= *frames {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the frame's decode and paint
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.WriteFile(*out, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("the live view painted %d frames; screenshot %s\n", n, *out)
	return nil
}
