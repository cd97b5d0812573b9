package main

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRecordCLI: acu record start, stop, list and get on the real binary
// against a daemon; the downloaded file decodes with ffprobe at the
// display's size and lasts as long as the recording, within 5%.
func TestRecordCLI(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)
	xtermShowing(t, dpy, "rec-term", "recorded line", 700*time.Millisecond)

	out, stderr, code := acu(t, env, "record", "start", "--format", "webm")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "recording_") {
		t.Fatalf("acu record start: exit %d, %q, %s", code, out, stderr)
	}
	time.Sleep(4 * time.Second)
	if out, stderr, code = acu(t, env, "record", "stop", id); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("acu record stop: exit %d, %q, %s", code, out, stderr)
	}
	if out, _, code = acu(t, env, "record", "list"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "completed") {
		t.Errorf("acu record list: exit %d:\n%s", code, out)
	}
	out, _, code = acu(t, env, "record", "list", "--json")
	var l struct {
		Recordings []struct {
			ID         string `json:"id"`
			DurationMs int64  `json:"duration_ms"`
		} `json:"recordings"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Recordings) != 1 {
		t.Fatalf("acu record list --json: exit %d: %s", code, out)
	}
	file := filepath.Join(t.TempDir(), "rec.webm")
	if out, stderr, code = acu(t, env, "record", "get", id, "-o", file); code != 0 {
		t.Fatalf("acu record get: exit %d, %q, %s", code, out, stderr)
	}
	pr, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height:format=duration",
		"-of", "csv=p=0", file).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	lines := strings.Fields(strings.TrimSpace(string(pr)))
	if len(lines) != 2 || lines[0] != "vp8,1024,600" {
		t.Fatalf("ffprobe: %q, want vp8,1024,600 and a duration", pr)
	}
	d, _ := strconv.ParseFloat(lines[1], 64)
	want := float64(l.Recordings[0].DurationMs) / 1000
	if want < 3.5 || math.Abs(d-want) > 0.05*want {
		frames, _ := exec.Command("ffprobe", "-v", "error", "-show_entries", "frame=pts_time", "-of", "csv=p=0", file).Output()
		t.Errorf("the file lasts %.3f s, the recording %.3f s: want within 5%% (and about 4 s); its frames at:\n%s", d, want, frames)
	}
}
