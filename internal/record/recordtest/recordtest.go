// Package recordtest holds what the tests of recordings share, in
// internal/record and in cmd/acu (through the real daemon): the screen a
// killed recording is checked against, the recording's ffmpeg found among
// a process's children, and what ffprobe says of the file.
//
// It is imported only from *_test.go files.
package recordtest

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ChangeThenStill paints the screen the kill -9 tests record: fill (a test
// window's Fill) turns green, 300 ms later blue (the last change), then the
// screen stays still for 3.5 s, long enough for the recording's heartbeat
// to write the still screen. It returns the time of the last change.
func ChangeThenStill(fill func(color.RGBA)) (lastChange time.Time) {
	fill(color.RGBA{G: 200, A: 255})
	time.Sleep(300 * time.Millisecond)
	fill(color.RGBA{B: 200, A: 255})
	lastChange = time.Now()
	time.Sleep(3500 * time.Millisecond)
	return lastChange
}

// ChildNamed is the pid of a child process of pid whose name (comm) is
// comm, 0 if none.
func ChildNamed(pid int, comm string) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, p := range tasks {
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			c, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(c)) == comm {
				n, _ := strconv.Atoi(f)
				return n
			}
		}
	}
	return 0
}

// Probe is what ffprobe says of a video file's first video stream.
type Probe struct {
	Codec    string
	W, H     int
	Duration float64 // seconds: the file's (container's)
	// Track is the video track's own duration in seconds, or the
	// container's when it has none (WebM); OwnTrack says it has one.
	Track    float64
	OwnTrack bool
	Frames   int // the frames ffprobe decoded
}

// FFprobe runs ffprobe on path, decoding its frames; it fails the test
// when ffprobe fails or finds no video stream.
func FFprobe(t testing.TB, path string) Probe {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames,duration:format=duration", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var j struct {
		Streams []struct {
			CodecName    string `json:"codec_name"`
			Width        int    `json:"width"`
			Height       int    `json:"height"`
			NbReadFrames string `json:"nb_read_frames"`
			Duration     string `json:"duration"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &j); err != nil || len(j.Streams) != 1 {
		t.Fatalf("ffprobe %s: %s (%v)", path, out, err)
	}
	s := j.Streams[0]
	p := Probe{Codec: s.CodecName, W: s.Width, H: s.Height}
	p.Duration, _ = strconv.ParseFloat(j.Format.Duration, 64)
	p.Frames, _ = strconv.Atoi(s.NbReadFrames)
	p.Track = p.Duration
	if v, err := strconv.ParseFloat(s.Duration, 64); err == nil {
		p.Track, p.OwnTrack = v, true
	}
	return p
}
