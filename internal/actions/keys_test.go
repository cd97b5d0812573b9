package actions_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
)

// outside are characters no US keymap has: Latin-extended, symbols, CJK,
// an emoji. Each is typed through a spare keycode acu maps to it.
var outside = []string{"Zoë × ÷ ąčęř ß €", "日本語 한국 ж", "😀 ✓ № ½ Ω"}

func act(t *testing.T, svc *actions.Service, as ...api.Action) {
	t.Helper()
	resp, err := svc.Act(t.Context(), actions.Caller{}, api.ActRequest{Actions: as})
	if err != nil || !resp.OK {
		t.Fatalf("act %+v = %+v, %v", as, resp, err)
	}
}

// TestTypeOutsideKeymap: characters outside the keymap typed by XTest reach
// GTK, Qt and xterm as typed, as each application itself reports them.
func TestTypeOutsideKeymap(t *testing.T) {
	for _, tk := range []string{atspitest.GTK, atspitest.Qt} {
		t.Run(tk, func(t *testing.T) {
			r := newOrderRig(t, tk)
			for i, text := range outside {
				act(t, r.svc, api.Action{Kind: api.ActType, Text: text}, api.Action{Kind: api.ActKey, Keys: "Return"})
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				got, err := r.form.WaitGot(ctx, i+1)
				cancel()
				if err != nil || got[i] != text {
					t.Fatalf("the %s form got %q (%v), want %q", tk, got, err, text)
				}
			}
		})
	}
	t.Run("xterm", func(t *testing.T) {
		t.Setenv("LC_ALL", "C.UTF-8")
		d := atspitest.NewDesktop(t)
		out := filepath.Join(t.TempDir(), "typed")
		x := testx.StartXterm(t, d.Display, testx.XtermSpec{Geometry: "80x10+0+0", Args: []string{"-u8"},
			Command: []string{"sh", "-c", `while IFS= read -r l; do printf '%s\n' "$l" >> "$0"; done`, out}})
		svc, err := actions.New(actions.Options{Hub: d.Hub, DefaultDisplay: d.Display})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(svc.Close)
		_ = x
		act(t, svc, api.Action{Kind: api.ActClick, At: api.Pt(100, 50)}) // the pointer in the xterm: keys go there
		var want string
		for _, text := range outside {
			act(t, svc, api.Action{Kind: api.ActType, Text: text + "\n"})
			want += text + "\n"
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, _ := os.ReadFile(out)
			if string(b) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("xterm got %q, want %q", b, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestTypeIntoStalledApp: an application that reads its input late (here
// busy for 3 s, longer than acu keeps an unused mapping and than the old
// fixed hold) still gets the characters acu mapped for it: a mapping stays
// until the application has proved it read the keys (it answers a ping).
func TestTypeIntoStalledApp(t *testing.T) {
	r := newOrderRig(t, atspitest.GTK)
	text := "a×ß€日😀b"
	act(t, r.svc, api.Action{Kind: api.ActKey, Keys: "F5"}, api.Action{Kind: api.ActType, Text: text},
		api.Action{Kind: api.ActKey, Keys: "Return"})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := r.form.WaitGot(ctx, 1)
	if err != nil || got[0] != text {
		t.Fatalf("the stalled form got %q (%v), want %q", got, err, text)
	}
}
