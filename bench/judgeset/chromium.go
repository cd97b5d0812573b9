package main

import (
	"context"
	"fmt"
	"html"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// chromium renders a page of the screen's phrases with headless Chromium:
// plain text, text on coloured buttons, on gradients, in a serif face and
// in bold, and a phrase cut by a clipped box.
func chromium(s screen) (*image.RGBA, error) {
	dir, err := os.MkdirTemp("", "judgeset-chromium")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fg, bg := colours(s.theme)
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;padding:24px;background:%s;color:%s;font-family:"DejaVu Sans",sans-serif;font-size:%dpt}
div{margin:0 0 14px 0;white-space:nowrap}
.btn{display:inline-block;background:#1a73e8;color:#fff;border-radius:8px;padding:6px 16px}
.grad{display:inline-block;background:linear-gradient(90deg,#f6d365,#fda085);color:#222;padding:4px 12px}
.serif{font-family:"DejaVu Serif",serif}
.bold{font-weight:bold}
.clip{display:inline-block;overflow:hidden;font-family:"DejaVu Sans Mono",monospace}
</style></head><body>`, bg, fg, s.pt)
	styles := []string{"", "btn", "grad", "serif", "bold"}
	for i := range s.shown {
		st := styles[(i+s.pt)%len(styles)]
		fmt.Fprintf(&b, `<div><span class="%s">%s</span></div>`, st, html.EscapeString(phrase(s, i)))
	}
	if s.cut >= 0 {
		p := pairs[s.cut][0]
		fmt.Fprintf(&b, `<div><span class="clip" style="width:%dch">%s</span></div>`, len(p)/2, html.EscapeString(p))
	}
	b.WriteString("</body></html>")
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,720",
		"--force-device-scale-factor="+strconv.Itoa(s.scale), "--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("chromium --screenshot (apt-get install chromium): %w: %s", err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		return nil, err
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba, nil
}
