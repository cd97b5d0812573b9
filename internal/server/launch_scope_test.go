package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestLaunchArgvScope: launching an argv needs admin by default, act with
// LaunchArgv act (ACU_LAUNCH_ARGV=act); an act token launches desktop
// entries either way, and a refused argv launch runs nothing.
func TestLaunchArgvScope(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	const actToken = "act-token-0123456789"
	for _, tc := range []struct {
		setting string
		actArgv bool
	}{{"", false}, {"admin", false}, {"act", true}} {
		t.Run("ACU_LAUNCH_ARGV="+tc.setting, func(t *testing.T) {
			dir := t.TempDir()
			entry, argv := filepath.Join(dir, "entry"), filepath.Join(dir, "argv")
			if err := os.WriteFile(filepath.Join(dir, "marker.desktop"), []byte("[Desktop Entry]\nType=Application\nName=Marker\nExec=touch "+entry+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			svc := gate.New(gate.Options{DefaultDisplay: dpy, AppDirs: []string{dir}, Env: os.Environ()})
			t.Cleanup(svc.Close)
			s := New(Options{Token: testToken, Desktop: svc, LaunchArgv: tc.setting,
				LookupToken: func(_ context.Context, secret string) (Principal, bool) {
					return Principal{ID: "actor", Scope: api.ScopeAct}, secret == actToken
				}})
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			act := api.NewClient(srv.URL, actToken)
			ctx := t.Context()
			_, err := act.Launch(ctx, api.LaunchRequest{Argv: []string{"touch", argv}})
			if tc.actArgv {
				if err != nil {
					t.Fatalf("argv launch with act = %v", err)
				}
			} else {
				statusOf(t, err, http.StatusForbidden, "argv")
			}
			if _, err := act.Launch(ctx, api.LaunchRequest{DesktopEntry: "Marker"}); err != nil {
				t.Fatalf("desktop entry launch with act = %v", err)
			}
			waitFile(t, entry)
			if tc.actArgv {
				waitFile(t, argv)
			} else if _, err := os.Stat(argv); err == nil {
				t.Errorf("a refused argv launch ran")
			}
			// The table says the same.
			var raised string
			for _, r := range s.Routes() {
				if r.Key() == "POST /v1/apps/launch" {
					for _, x := range r.Raises {
						if x.When == "argv" {
							raised = x.Scope
						}
					}
				}
			}
			if want := map[bool]string{false: api.ScopeAdmin, true: ""}[tc.actArgv]; raised != want {
				t.Errorf("the table raises argv launches to %q, want %q", raised, want)
			}
		})
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
