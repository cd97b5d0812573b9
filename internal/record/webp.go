package record

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of the stills
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Still is one picture of an exported animation: a JPEG and how long it
// stays on screen.
type Still struct {
	JPEG []byte
	Show time.Duration
	Hash string // the frame's, to name it in errors
}

// AnimateWebP encodes stills as a looping animated WebP through ffmpeg's
// libwebp_anim encoder, each shown for its Show (at least 10 ms), every
// picture scaled to the first one's size. ffmpeg reads the stills with
// its concat demuxer, whose per-file durations keep the timing exact: no
// frame is duplicated to fill a fixed rate.
func (r *Recorder) AnimateWebP(ctx context.Context, stills []Still) ([]byte, error) {
	if len(stills) == 0 {
		return nil, errors.New("animate: no pictures")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(stills[0].JPEG))
	if err != nil {
		return nil, fmt.Errorf("animate: read the first picture: %w", err)
	}
	dir, err := os.MkdirTemp("", "acu-webp-")
	if err != nil {
		return nil, fmt.Errorf("animate: %w", err)
	}
	defer os.RemoveAll(dir)
	var list strings.Builder
	list.WriteString("ffconcat version 1.0\n")
	for i, s := range stills {
		name := fmt.Sprintf("f%05d.jpg", i)
		if err := os.WriteFile(filepath.Join(dir, name), s.JPEG, 0o600); err != nil {
			return nil, fmt.Errorf("animate: %w", err)
		}
		// framerate 1000: each picture's time base is 1 ms, not the image
		// demuxer's 1/25 s, which would round every duration to 40 ms.
		fmt.Fprintf(&list, "file %s\noption framerate 1000\nduration %.3f\n", name, showOf(s).Seconds())
	}
	if err := os.WriteFile(filepath.Join(dir, "list.ffconcat"), []byte(list.String()), 0o600); err != nil {
		return nil, fmt.Errorf("animate: %w", err)
	}
	out := filepath.Join(dir, "out.webp")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.opts.FFmpeg, "-hide_banner", "-loglevel", "error", "-nostdin",
		"-f", "concat", "-safe", "0", "-i", filepath.Join(dir, "list.ffconcat"),
		"-vf", fmt.Sprintf("scale=%d:%d", cfg.Width, cfg.Height),
		"-fps_mode", "passthrough", "-c:v", "libwebp_anim", "-q:v", "70", "-loop", "0", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("animate with ffmpeg: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("animate: read ffmpeg's file: %w", err)
	}
	// The encoder gives the last picture a duration of its own choosing
	// (ffmpeg 5.1: 1 s, whatever the list says): set it in the container.
	if err := setLastDuration(b, showOf(stills[len(stills)-1])); err != nil {
		return nil, fmt.Errorf("animate: ffmpeg's WebP: %w", err)
	}
	return b, nil
}

func showOf(s Still) time.Duration { return max(s.Show, 10*time.Millisecond) }

// setLastDuration sets the duration of an animated WebP's last frame: the
// 24-bit little-endian milliseconds at offset 12 of its ANMF chunk (the
// WebP container specification).
func setLastDuration(b []byte, d time.Duration) error {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return errors.New("not a WebP file")
	}
	last := -1
	for p := 12; p+8 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[p+4 : p+8]))
		if p+8+n > len(b) {
			return fmt.Errorf("chunk %q overruns the file", b[p:p+4])
		}
		if string(b[p:p+4]) == "ANMF" && n >= 16 {
			last = p + 8
		}
		p += 8 + n + n%2
	}
	if last < 0 {
		return errors.New("no animation frame")
	}
	ms := min(d.Milliseconds(), 1<<24-1)
	b[last+12], b[last+13], b[last+14] = byte(ms), byte(ms>>8), byte(ms>>16)
	return nil
}
