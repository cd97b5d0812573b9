package server_test

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
)

const recReadToken = "rec-read-token-0123456789"

// recFixture is the live fixture with a recorder behind the server, and a
// client whose token has only the read scope.
type recFixture struct {
	*liveFixture
	rec  *record.Recorder
	dir  string
	read *api.Client
}

func newRecFixture(t *testing.T, adjust func(*record.Options)) *recFixture {
	t.Helper()
	f := &recFixture{dir: t.TempDir()}
	var lv server.Live
	f.liveFixture = newLiveFixture(t, 1024, 640, func(o *server.Options) { lv = o.Live })
	ro := record.Options{Capture: f.hub, Runs: f.reg, Dir: f.dir, DefaultDisplay: f.dpy}
	if adjust != nil {
		adjust(&ro)
	}
	rec, err := record.New(ro)
	if err != nil {
		t.Fatal(err)
	}
	f.rec = rec
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rec.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(server.New(server.Options{Token: liveToken, Runs: f.reg, Recordings: rec,
		Live: lv,
		LookupToken: func(_ context.Context, secret string) (server.Principal, bool) {
			return server.Principal{ID: "reader", Scope: api.ScopeRead}, secret == recReadToken
		}}))
	t.Cleanup(srv.Close)
	f.url, f.c, f.read = srv.URL, api.NewClient(srv.URL, liveToken), api.NewClient(srv.URL, recReadToken)
	return f
}

// wantError checks err is an API error with status, code and field.
func wantError(t *testing.T, what string, err error, status int, code, field string) {
	t.Helper()
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != status || se.Code != code || se.Field != field {
		t.Errorf("%s = %v; want %d %s naming field %q", what, err, status, code, field)
	}
}

// TestRecordingAndLiveRoutesBadDisplay400: a malformed display name on the
// recording route and on every live view route (take-over, hand-back, its
// state, input, frames) is the client's to fix: 400 naming display, not
// 503.
func TestRecordingAndLiveRoutesBadDisplay400(t *testing.T) {
	f := newRecFixture(t, nil)
	ctx := t.Context()
	for _, name := range []string{":0/x", f.dpy + "/x", "tcp/127.0.0.1:0", "/tmp/.X11-unix/X0:0", "x y:1"} {
		_, err := f.c.StartRecording(ctx, api.StartRecording{Display: name})
		wantError(t, "POST /v1/recordings display="+name, err, http.StatusBadRequest, api.CodeInvalid, "display")
		_, err = f.c.TakeOver(ctx, name)
		wantError(t, "POST /v1/live/takeover display="+name, err, http.StatusBadRequest, api.CodeInvalid, "display")
		_, err = f.c.HandBack(ctx, name)
		wantError(t, "DELETE /v1/live/takeover display="+name, err, http.StatusBadRequest, api.CodeInvalid, "display")
		_, err = f.c.Takeover(ctx, name)
		wantError(t, "GET /v1/live/takeover display="+name, err, http.StatusBadRequest, api.CodeInvalid, "display")
		err = f.c.LiveInput(ctx, api.LiveInputRequest{Display: name, Events: []api.LiveInput{{Type: "move", X: 1, Y: 1}}})
		wantError(t, "POST /v1/live/input display="+name, err, http.StatusBadRequest, api.CodeInvalid, "display")
	}
	req, _ := http.NewRequest(http.MethodGet, f.url+"/v1/live/frames?display=:0/x", nil)
	req.Header.Set("Authorization", "Bearer "+liveToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"field":"display"`) {
		t.Errorf("GET /v1/live/frames?display=:0/x = %d %s; want 400 naming display", resp.StatusCode, body)
	}
	// A remote name the take-over refuses (it never dials TCP).
	_, err = f.c.TakeOver(ctx, "127.0.0.1:7")
	wantError(t, "POST /v1/live/takeover display=127.0.0.1:7", err, http.StatusBadRequest, api.CodeInvalid, "display")
	if l, err := f.c.Recordings(ctx, "", 0); err != nil || len(l.Recordings) != 0 {
		t.Errorf("recordings after bad starts = %+v, %v; want none", l, err)
	}
}

// TestRecordingScopeAndLimits: a read token cannot start (or stop) a
// recording; ACU_RECORD_MAX recordings at once, one more answers 429
// naming the setting; answers name the file, never its directory.
func TestRecordingScopeAndLimits(t *testing.T) {
	f := newRecFixture(t, func(o *record.Options) { o.Max = 1 })
	ctx := t.Context()
	_, err := f.read.StartRecording(ctx, api.StartRecording{})
	wantError(t, "POST /v1/recordings with a read token", err, http.StatusForbidden, api.CodeScope, "")
	r, err := f.c.StartRecording(ctx, api.StartRecording{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.c.StartRecording(ctx, api.StartRecording{})
	wantError(t, "a second POST /v1/recordings with ACU_RECORD_MAX=1", err, http.StatusTooManyRequests, api.CodeLimit, "")
	if err != nil && !strings.Contains(err.Error(), "ACU_RECORD_MAX") {
		t.Errorf("the 429 does not name ACU_RECORD_MAX: %v", err)
	}
	_, err = f.read.StopRecording(ctx, r.ID)
	wantError(t, "POST /v1/recordings/{id}/stop with a read token", err, http.StatusForbidden, api.CodeScope, "")
	if r, err = f.c.StopRecording(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if l, err := f.read.Recordings(ctx, "", 0); err != nil || len(l.Recordings) != 1 {
		t.Fatalf("a read token lists recordings: %+v, %v", l, err)
	}
	for _, path := range []string{"/v1/recordings", "/v1/recordings/" + r.ID, "/v1/runs/" + r.ID} {
		req, _ := http.NewRequest(http.MethodGet, f.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+recReadToken)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), f.dir) || !strings.Contains(string(body), r.ID+".mp4") {
			t.Errorf("GET %s = %d %s; want the file's name without its directory %s", path, resp.StatusCode, body, f.dir)
		}
	}
}

// TestRecordingIncompleteAnswer: a recording whose process died before
// ffmpeg wrote its movie header (a 48-byte MP4) is answered 409
// incomplete, saying why, never 200 with the broken file.
func TestRecordingIncompleteAnswer(t *testing.T) {
	f := newRecFixture(t, nil)
	id := runs.NewID(record.RunKind)
	run, err := f.reg.Start(t.Context(), runs.StartOptions{ID: id, Kind: record.RunKind,
		Spec: map[string]string{"display": f.dpy, "format": "mp4", "file": id + ".mp4"}})
	if err != nil {
		t.Fatal(err)
	}
	ftyp := []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x10free\x00\x00\x00\x00\x00\x00\x00\x00")
	if err := os.WriteFile(filepath.Join(f.dir, id+".mp4"), ftyp, 0o600); err != nil {
		t.Fatal(err)
	}
	if !f.rec.Adopt(run) {
		t.Fatal("Adopt refused a recording run")
	}
	if _, err := f.reg.Wait(t.Context(), id, time.Minute); err != nil {
		t.Fatal(err)
	}
	n, err := f.c.DownloadRecording(t.Context(), id, io.Discard)
	wantError(t, "GET /v1/recordings/{id} of a 48-byte MP4", err, http.StatusConflict, api.CodeIncomplete, "")
	if n != 0 || err == nil || !strings.Contains(err.Error(), "moov") {
		t.Errorf("the incomplete answer (%d bytes written) does not say why: %v", n, err)
	}
	l, err := f.c.Recordings(t.Context(), "", 0)
	if err != nil || len(l.Recordings) != 1 || l.Recordings[0].Incomplete == "" || l.Recordings[0].Stopped != record.StopLost {
		t.Errorf("the list = %+v, %v; want the recording marked incomplete, stopped process_lost", l, err)
	}
}

// TestRecordingSeeksToLastEvent: an MP4 recording of a run in the run
// timeline, in real Chromium: the video lasts as long as the file (within
// 2%), and clicking the run's last event (5 s in, after a burst of
// changes and seconds of still screen) seeks the video within 0.5 s of
// the event's time, to a frame that shows what the screen showed then.
func TestRecordingSeeksToLastEvent(t *testing.T) {
	f := newRecFixture(t, nil)
	task, err := f.reg.Start(t.Context(), runs.StartOptions{Kind: "task", Spec: map[string]string{"display": f.dpy}})
	if err != nil {
		t.Fatal(err)
	}
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 100, Y: 100, W: 400, H: 300, Fill: color.RGBA{R: 255, A: 255}})
	r, err := f.c.StartRecording(t.Context(), api.StartRecording{Format: "mp4", RunID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(n int) runs.Event {
		ev, err := f.reg.Emit(t.Context(), task.ID, "iteration", map[string]any{"iteration": n, "thought": fmt.Sprint("step ", n)})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	time.Sleep(300 * time.Millisecond)
	emit(1)
	for i := range 6 { // a burst of textured changes, then a still screen
		win.Paint(func(x, y int) color.RGBA {
			return color.RGBA{R: uint8((x*7 + y*13 + i*31) ^ (x * y)), G: uint8(x + i), B: 40}
		})
		time.Sleep(80 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond)
	// The window blue a second before the last event: the frame the
	// recorder writes for it is in the file before the event's time,
	// however late the loaded machine schedules the recorder.
	win.Fill(color.RGBA{B: 255, A: 255})
	time.Sleep(time.Second)
	last := emit(2)
	time.Sleep(1500 * time.Millisecond)
	if r, err = f.c.StopRecording(t.Context(), r.ID); err != nil || r.VideoStart == nil {
		t.Fatalf("StopRecording = %+v, %v", r, err)
	}
	if _, err := f.reg.End(t.Context(), task.ID, runs.StatusCompleted, "", nil); err != nil {
		t.Fatal(err)
	}
	at := last.At.Sub(*r.VideoStart).Seconds()
	want := float64(r.DurationMs) / 1000

	bctx := f.open(t, "/ui/runs?run="+task.ID, 1200, 900)
	guardtest.Poll(t, bctx, "the recording loaded in the timeline", `(() => {
		const v = document.querySelector("#timeline video.recording");
		return v && v.dataset.loaded === "1" && v.readyState >= 1;
	})()`)
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", filepath.Join(f.dir, r.File)).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	file, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if d := eval[float64](t, bctx, `document.querySelector("#timeline video.recording").duration`); math.Abs(d-file) > 0.02*file || math.Abs(d-want) > 0.05*want {
		t.Errorf("Chromium says the video lasts %.3f s, ffprobe the file %.3f s, the recording %.3f s: want within 2%% of the file, 5%% of the recording", d, file, want)
	}
	// The click seeks and plays; the test pauses the video where the seek
	// landed, to read the time and the frame there.
	eval[bool](t, bctx, `(() => {
		const v = document.querySelector("#timeline video.recording");
		v.addEventListener("seeked", () => { v.pause(); window.seekedAt = v.currentTime; }, {once: true});
		const evs = document.querySelectorAll('#timeline .ev[data-stream="iteration"]');
		evs[evs.length - 1].click();
		return true;
	})()`)
	guardtest.Poll(t, bctx, "a seek", `(() => { const v = document.querySelector("#timeline video.recording"); return window.seekedAt !== undefined && !v.seeking && v.readyState >= 2; })()`)
	if got := eval[float64](t, bctx, `window.seekedAt`); math.Abs(got-at) >= 0.5 {
		t.Errorf("the click on the last event (%.3f s in a %.3f s recording) seeked the video to %.3f s; want within 0.5 s", at, want, got)
	}
	// The frame there shows the screen after the last event: the window
	// blue.
	px := eval[[]int](t, bctx, `(() => {
		const v = document.querySelector("#timeline video.recording");
		const c = document.createElement("canvas"); c.width = v.videoWidth; c.height = v.videoHeight;
		const g = c.getContext("2d"); g.drawImage(v, 0, 0);
		return Array.from(g.getImageData(300, 250, 1, 1).data);
	})()`)
	if len(px) != 4 || px[2] < 180 || px[0] > 80 {
		t.Errorf("the frame at the last event has %v at the window's middle, want blue", px)
	}
}
