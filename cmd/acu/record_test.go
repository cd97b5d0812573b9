package main

import (
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/llm/llmtest"
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

// TestAutoRecordTask: with ACU_RECORD_RUNS=task, a real orchestrator task
// started over the API (the scripted models fill a zenity dialog found in
// its accessibility tree) is recorded from its start to its end, and the
// recording is linked to the run: listed for it, named by an event on the
// run, and a file that ffprobe decodes at the display's size, lasting
// about as long as the run.
func TestAutoRecordTask(t *testing.T) {
	dpy := startDisplay(t)
	session, app := zenityEntry(t, dpy)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := llmtest.NewOpenAI(t, taskModel)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_API_KEY="+llmtest.Key,
		"ACU_TASK_OCR=false", "ACU_RECORD_RUNS=task", "ACU_LOG_LEVEL=info")
	d := startDaemon(t, env, dataDir, port)
	run, err := d.client.CreateTask(ctx, "Enter Grace Hopper as the name and press OK", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.client.WaitRun(ctx, run.ID, 50*time.Second)
	if err != nil || res.Status != "completed" {
		t.Fatalf("task run %s = %+v (%v), want completed", run.ID, res, err)
	}
	if out, err := app.Wait(ctx); err != nil || out != "Grace Hopper\n" {
		t.Errorf("zenity printed %q (%v): the task did not fill the dialog", out, err)
	}
	ended, err := d.client.Run(ctx, run.ID)
	if err != nil || ended.EndedAt == nil {
		t.Fatalf("run %s: %+v (%v)", run.ID, ended, err)
	}
	// The recording stops with the run and ffmpeg finishes the file.
	var rec api.Recording
	eventually(t, 30*time.Second, "the task's recording completed", func() bool {
		l, err := d.client.Recordings(ctx, run.ID, 10)
		if err != nil || len(l.Recordings) != 1 {
			return false
		}
		rec = l.Recordings[0]
		return rec.Status == "completed"
	})
	if rec.RunID != run.ID || rec.Width != 1024 || rec.Height != 600 || rec.Frames < 2 {
		t.Errorf("recording %+v, want the task run's, 1024x600, with the frames of the dialog closing", rec)
	}
	evs, err := d.client.EventsAfter(ctx, api.EventQuery{RunID: run.ID, Streams: []string{"recording"}})
	if err != nil || len(evs.Events) == 0 || !strings.Contains(string(evs.Events[0].Data), rec.ID) {
		t.Errorf("the run's recording events = %+v (%v), want one naming %s", evs, err, rec.ID)
	}
	file := filepath.Join(t.TempDir(), "task.mp4")
	if _, stderr, code := acu(t, env, "record", "get", rec.ID, "-o", file); code != 0 {
		t.Fatalf("acu record get: exit %d: %s", code, stderr)
	}
	pr, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height:format=duration",
		"-of", "csv=p=0", file).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	f := strings.Fields(strings.TrimSpace(string(pr)))
	if len(f) != 2 || f[0] != "h264,1024,600" {
		t.Fatalf("ffprobe: %q, want h264,1024,600 and a duration", pr)
	}
	got, _ := strconv.ParseFloat(f[1], 64)
	runFor := ended.EndedAt.Sub(ended.StartedAt).Seconds()
	if got <= 0 || got > runFor+0.5 {
		t.Errorf("the file lasts %.2f s, the run %.2f s", got, runFor)
	}
}

// TestAutoRecordOtherProcess: with ACU_RECORD_RUNS=computer the daemon
// records an `acu computer` run, which another process owns: the daemon
// reads the run's start and end from the store, records from one to the
// other, and links the file to the run.
func TestAutoRecordOtherProcess(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=info", "ACU_RECORD_RUNS=computer")
	d := startDaemon(t, env, dataDir, port)
	xtermShowing(t, dpy, "rec-term", "recorded line", 300*time.Millisecond)
	f := anthropicFake(t, [2]int{100, 100}, [2]int{200, 200}, [2]int{300, 300})
	stdout, stderr, code := acu(t, env, "computer", "-json", "--provider", "anthropic", "--base-url", f.URL, "click around")
	if code != 0 {
		t.Fatalf("acu computer: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var first struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &first); err != nil || first.RunID == "" {
		t.Fatalf("no run id in %q", stdout)
	}
	var rec api.Recording
	eventually(t, 30*time.Second, "the computer run's recording completed", func() bool {
		l, err := d.client.Recordings(t.Context(), first.RunID, 10)
		if err != nil || len(l.Recordings) != 1 {
			return false
		}
		rec = l.Recordings[0]
		return rec.Status == "completed"
	})
	if rec.RunID != first.RunID || rec.Width != 1024 || rec.Height != 600 || rec.Frames < 1 || rec.DurationMs <= 0 {
		t.Errorf("recording %+v, want the computer run's at 1024x600", rec)
	}
	evs, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: first.RunID, Streams: []string{"recording"}})
	if err != nil || len(evs.Events) == 0 || !strings.Contains(string(evs.Events[0].Data), rec.ID) {
		t.Errorf("the run's recording events = %+v (%v), want one naming %s", evs, err, rec.ID)
	}
}
