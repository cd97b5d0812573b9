package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

type display struct {
	name string
	cmd  *exec.Cmd
	conn *xgb.Conn
	w, h int
	home string
	kids []*exec.Cmd
}

func startX(w, h int) (*display, error) {
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", w, h), "-dpi", "96", "-nolisten", "tcp", "-ac", "-br")
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start Xvfb (apt-get install xvfb): %w", err)
	}
	wr.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("read Xvfb display number: %w", err)
	}
	d := &display{name: ":" + strings.TrimSpace(line), cmd: cmd, w: w, h: h}
	if d.conn, err = xgb.NewConnDisplay(d.name); err != nil {
		d.stop()
		return nil, err
	}
	d.home, _ = os.MkdirTemp("", "judgeset")
	return d, nil
}

func (d *display) stop() {
	for _, k := range d.kids {
		k.Process.Kill()
		k.Wait()
	}
	if d.conn != nil {
		d.conn.Close()
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	if d.home != "" {
		os.RemoveAll(d.home)
	}
}

func (d *display) env(extra ...string) []string {
	env := append(os.Environ(), "DISPLAY="+d.name, "HOME="+d.home, "XDG_CONFIG_HOME="+filepath.Join(d.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(d.home, ".cache"), "NO_AT_BRIDGE=1", "GSETTINGS_BACKEND=memory", "LANG=C.UTF-8")
	return append(env, extra...)
}

func (d *display) start(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = d.home
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	d.kids = append(d.kids, cmd)
	return nil
}

func (d *display) grab() (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, d.w, d.h))
	root := xproto.Setup(d.conn).DefaultScreen(d.conn).Root
	band := max(1, (1<<20)/(d.w*4))
	for y := 0; y < d.h; y += band {
		h := min(band, d.h-y)
		r, err := xproto.GetImage(d.conn, xproto.ImageFormatZPixmap, xproto.Drawable(root), 0, int16(y), uint16(d.w), uint16(h), 0xffffffff).Reply()
		if err != nil {
			return nil, err
		}
		for i := 0; i < d.w*h; i++ {
			p := r.Data[i*4 : i*4+4]
			o := img.Pix[(y*d.w+i)*4:]
			o[0], o[1], o[2], o[3] = p[2], p[1], p[0], 255
		}
	}
	return img, nil
}

// settle waits for ready (a file the client's script touches, "" for
// none) and a screen that stays the same over three grabs.
func (d *display) settle(ready string, minWait time.Duration) (*image.RGBA, error) {
	deadline := time.Now().Add(20 * time.Second)
	time.Sleep(minWait)
	var prev []byte
	same := 0
	for time.Now().Before(deadline) {
		if ready != "" {
			if _, err := os.Stat(ready); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		img, err := d.grab()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(img.Pix, prev) && !blank(img) {
			same++
			if same >= 2 {
				return img, nil
			}
		} else {
			same = 0
		}
		prev = img.Pix
		time.Sleep(250 * time.Millisecond)
	}
	return nil, fmt.Errorf("screen of %s did not settle", d.name)
}

func blank(img *image.RGBA) bool {
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] != img.Pix[0] || img.Pix[i+1] != img.Pix[1] || img.Pix[i+2] != img.Pix[2] {
			return false
		}
	}
	return true
}

// geometry returns the rectangle of the first window whose title matches
// the regular expression title.
func (d *display) geometry(title string) (image.Rectangle, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	args := []string{"search", "--sync", "--limit", "1", "--name", title, "getwindowgeometry", "--shell"}
	if title == galculatorTitle {
		// Its first window of that name is a 10x10 one never shown.
		args = slices.Insert(args, 2, "--onlyvisible")
	}
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = d.env()
	out, err := cmd.Output()
	if err != nil {
		return image.Rectangle{}, fmt.Errorf("find window %q (apt-get install xdotool): %w", title, err)
	}
	v := map[string]int{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, val, ok := strings.Cut(l, "="); ok {
			v[k], _ = strconv.Atoi(val)
		}
	}
	return image.Rect(v["X"], v["Y"], v["X"]+v["WIDTH"], v["Y"]+v["HEIGHT"]), nil
}

const galculatorTitle = "^galculator$"
