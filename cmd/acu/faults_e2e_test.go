package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// A notifier that always fails: after ACU_NOTIFY_MAX_ATTEMPTS the row is
// dead-lettered, an event lands on the wait's run, the metric counts it, and
// `acu doctor` lists it and exits 1.
func TestDeadLetterInDoctor(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_NOTIFY_COMMAND=sh -c 'echo gateway down >&2; exit 7' sh {message}", "ACU_NOTIFY_MAX_ATTEMPTS=2")
	d := startDaemon(t, env, dataDir, port)

	out, _, code := acu(t, env, "wait", `"Never shown" is visible`, "--timeout", "1", "--json")
	var w api.Wait
	if err := json.Unmarshal([]byte(out), &w); err != nil || code != 2 {
		t.Fatalf("acu wait: exit %d, %q (%v), want a timeout", code, out, err)
	}
	var dead []api.Event
	eventually(t, 60*time.Second, "the dead-letter event", func() bool {
		l, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: w.ID, Streams: []string{"dead_letter"}})
		dead = l.Events
		return err == nil && len(dead) == 1
	})
	if !strings.Contains(string(dead[0].Data), "gateway down") || !strings.Contains(string(dead[0].Data), `"attempts":2`) {
		t.Errorf("dead-letter event = %s, want the last error and 2 attempts", dead[0].Data)
	}
	metrics := d.get(t, "/metrics")
	if !strings.Contains(metrics, `acu_notify_dead_letters_total{notifier="exec"} 1`) {
		t.Errorf("metrics lack one dead letter:\n%s", grepLines(metrics, "dead_letter"))
	}
	out, errOut, code := acu(t, env, "doctor")
	if code != 1 || !strings.Contains(out, "FAIL outbox") || !strings.Contains(out, "1 notification(s) dead-lettered") ||
		!strings.Contains(out, "run "+w.ID+" via exec after 2 attempts") {
		t.Errorf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// get fetches path from the daemon with its token and returns the body.
func (d *daemonProc) get(t *testing.T, path string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", d.client.BaseURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(d.dataDir, "token"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// /health turns degraded, with the reason, when the OCR judge's Tesseract
// disappears and when the database file is deleted under the daemon.
func TestHealthDegraded(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	real, err := exec.LookPath("tesseract")
	if err != nil {
		t.Fatalf("tesseract: %v (install tesseract-ocr)", err)
	}
	bin := filepath.Join(t.TempDir(), "tesseract")
	if err := os.Symlink(real, bin); err != nil {
		t.Fatal(err)
	}
	env = append(env, "ACU_TESSERACT="+bin)
	d := startDaemon(t, env, dataDir, port)
	health := func() api.Health {
		t.Helper()
		h, err := d.client.Health(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := health(); h.Status != "ok" || len(h.Problems) != 0 {
		t.Fatalf("health at start = %+v, want ok", h)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if h := health(); h.Status != "degraded" || !strings.Contains(strings.Join(h.Problems, "\n"), "Tesseract") {
		t.Errorf("health without tesseract = %+v, want degraded naming Tesseract", h)
	}
	if err := os.Symlink(real, bin); err != nil {
		t.Fatal(err)
	}
	if h := health(); h.Status != "ok" {
		t.Errorf("health with tesseract back = %+v, want ok", h)
	}
	if err := os.Remove(filepath.Join(dataDir, "acu.db")); err != nil {
		t.Fatal(err)
	}
	if h := health(); h.Status != "degraded" || !strings.Contains(strings.Join(h.Problems, "\n"), "acu.db is gone") {
		t.Errorf("health without the database file = %+v, want degraded saying it is gone", h)
	}
}

// With no judge at all (no Tesseract, no key, no Ollama), acu serve starts:
// runs, settle and screenshots work; a wait is refused with a 503 that says
// what to install or set; /health says why it is degraded.
func TestServeWithoutJudge(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_VISION_BACKEND=", "ACU_TESSERACT="+filepath.Join(t.TempDir(), "no-tesseract"),
		"ACU_OLLAMA_URL=http://127.0.0.1:"+strconv.Itoa(freePort(t)),
		"OPENROUTER_API_KEY=", "ANTHROPIC_API_KEY=", "GEMINI_API_KEY=", "OPENAI_API_KEY=")
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()

	h, err := d.client.Health(ctx)
	if err != nil || h.Status != "degraded" || h.Judge == nil || h.Judge.Backend != "none" ||
		!strings.Contains(strings.Join(h.Problems, "\n"), "tesseract-ocr") {
		t.Errorf("health = %+v, %v; want degraded, judge none, advice to install tesseract-ocr", h, err)
	}
	_, err = d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Done" is visible`, Timeout: 5})
	var ae *api.StatusError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Code != api.CodeUnavailable ||
		!strings.Contains(ae.Message, "apt-get install tesseract-ocr") || !strings.Contains(ae.Message, "OPENROUTER_API_KEY") {
		t.Errorf("CreateWait without a judge = %v, want 503 naming what to install or set", err)
	}
	_, errOut, code := acu(t, env, "wait", `"Done" is visible`, "--timeout", "5")
	if code != 1 || !strings.Contains(errOut, "tesseract-ocr") {
		t.Errorf("acu wait without a judge: exit %d, stderr %q", code, errOut)
	}
	if res, err := d.client.Settle(ctx, api.SettleRequest{Quiet: 0.3, Timeout: 10}); err != nil || !res.Settled {
		t.Errorf("settle without a judge = %+v, %v; want settled", res, err)
	}
	if _, err := d.client.Runs(ctx, api.RunQuery{}); err != nil {
		t.Errorf("runs without a judge: %v", err)
	}
	if shot, err := d.client.Screenshot(ctx, "", "screen", "png"); err != nil || len(shot.Data) == 0 {
		t.Errorf("screenshot without a judge: %d bytes, %v", len(shot.Data), err)
	}
}

// ACU_NOTIFY_EXEC_TIMEOUT bounds one exec attempt: a command that hangs is
// killed after it, and the attempt's error says so.
func TestNotifyExecTimeoutSetting(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_NOTIFY_COMMAND=sh -c 'sleep 600' sh {message}", "ACU_NOTIFY_EXEC_TIMEOUT=1s", "ACU_NOTIFY_MAX_ATTEMPTS=1")
	d := startDaemon(t, env, dataDir, port)
	if strings.Contains(d.log.String(), "ACU_NOTIFY_EXEC_TIMEOUT is ignored") {
		t.Fatalf("the setting is unknown:\n%s", d.log)
	}
	out, _, code := acu(t, env, "wait", `"Never shown" is visible`, "--timeout", "1", "--json")
	var w api.Wait
	if err := json.Unmarshal([]byte(out), &w); err != nil || code != 2 {
		t.Fatalf("acu wait: exit %d, %q (%v), want a timeout", code, out, err)
	}
	var dead []api.Event
	eventually(t, 60*time.Second, "the dead-letter event", func() bool {
		l, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: w.ID, Streams: []string{"dead_letter"}})
		dead = l.Events
		return err == nil && len(dead) == 1
	})
	if !strings.Contains(string(dead[0].Data), "timed out after 1s and was killed") {
		t.Errorf("dead-letter event = %s, want the attempt killed after 1s", dead[0].Data)
	}
}

// An ACU_NOTIFY_COMMAND whose shell script holds {message} is warned about
// at start and by `acu doctor`.
func TestShellCommandWarned(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_NOTIFY_COMMAND=sh -c 'echo {message} >> "+filepath.Join(dataDir, "wakes")+"'")
	d := startDaemon(t, env, dataDir, port)
	if !strings.Contains(d.log.String(), "runs as code") {
		t.Errorf("start-up log lacks the warning:\n%s", d.log)
	}
	out, errOut, _ := acu(t, env, "doctor")
	if !strings.Contains(out, "warn notify") || !strings.Contains(out, "runs as code") || !strings.Contains(out, "$ACU_MESSAGE") {
		t.Errorf("doctor lacks the warning:\n%s\n%s", out, errOut)
	}
}

// Like ssh, acu serve refuses a data directory others can write to and a
// token file others can read, saying how to fix it; doctor reports it.
func TestLoosePermissionsRefused(t *testing.T) {
	dpy := startDisplay(t)
	for _, tc := range []struct {
		name  string
		setup func(dataDir string)
		want  string
	}{
		{"world-writable data dir", func(dir string) { os.Chmod(dir, 0o777) }, "chmod 700 "},
		{"group-readable token", func(dir string) {
			os.WriteFile(filepath.Join(dir, "token"), []byte("tok-0123456789\n"), 0o640)
			os.Chmod(filepath.Join(dir, "token"), 0o640)
		}, "chmod 600 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, dataDir, _ := newEnv(t, dpy)
			tc.setup(dataDir)
			_, errOut, code := acu(t, env, "serve")
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("serve: exit %d, stderr %q; want a refusal saying %q", code, errOut, tc.want)
			}
			out, _, code := acu(t, env, "doctor")
			if code != 1 || !strings.Contains(out, "FAIL data dir") || !strings.Contains(out, tc.want) {
				t.Errorf("doctor: exit %d\n%s", code, out)
			}
		})
	}
}
