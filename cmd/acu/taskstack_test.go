package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestTasksBuildOnTheActionServiceStack: the daemon's task service acts
// through the action service's desktop stack of its display: it opens no
// accessibility connection of its own (this process's connections counted
// on the display's accessibility bus), where `acu run`'s own stack opens
// one.
func TestTasksBuildOnTheActionServiceStack(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	sess := atspitest.Start(t, dpy)
	bus, err := dbus.Connect(sess.A11yBus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	clients := func() int {
		t.Helper()
		var names []string
		if err := bus.BusObject().Call("org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
			t.Fatal(err)
		}
		n := 0 // connections of this process
		for _, name := range names {
			var pid uint32
			if !strings.HasPrefix(name, ":") || bus.BusObject().Call("org.freedesktop.DBus.GetConnectionUnixProcessID", 0, name).Store(&pid) != nil {
				continue
			}
			if int(pid) == os.Getpid() {
				n++
			}
		}
		return n
	}
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	g := gate.New(gate.Options{DefaultDisplay: dpy})
	t.Cleanup(g.Close)
	acts, err := actions.New(actions.Options{Hub: hub, Gate: g, DefaultDisplay: dpy, SessionBus: sess.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(acts.Close)
	st, err := acts.Stack(t.Context(), dpy)
	if err != nil || st.Tree == nil || st.Hands == nil {
		t.Fatalf("the action service's stack = %+v, %v; want hands and a tree", st, err)
	}
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	getenv, environ := mapEnv(map[string]string{"HOME": t.TempDir(), "ACU_TASK_DISPLAY": dpy, "ACU_TASK_OCR": "false",
		"ACU_TASK_BASE_URL": "http://127.0.0.1:9/v1", "ACU_TASK_PAUSE_ON_USER": "false", "DBUS_SESSION_BUS_ADDRESS": sess.SessionBus})
	c, _, _, err := config.Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	parts := taskParts{hub: hub, gate: g, reg: runs.New(db, runs.Options{})}

	before := clients()
	d := &daemon{cfg: c, hub: hub, acts: acts, desktop: g, runs: parts.reg, db: db, ledger: llm.NewLedger()}
	shared := d.serveTasks(t.Context(), t.TempDir(), log)
	if shared == nil {
		t.Fatal("the daemon's task service did not start")
	}
	t.Cleanup(shared.Close)
	if got := clients(); got != before {
		t.Errorf("the daemon's task service: %d clients on the accessibility bus, %d before: want none added", got, before)
	}

	own := &taskService{}
	parts.stack = own.ownStack(g, sess.SessionBus, log)
	if err := own.build(t.Context(), c, parts, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	if got := clients(); got != before+1 {
		t.Errorf("acu run's own stack: %d clients on the accessibility bus, %d before: want one added", got, before)
	}
}

// mapEnv is an environment of m's variables.
func mapEnv(m map[string]string) (getenv func(string) string, environ []string) {
	for k, v := range m {
		environ = append(environ, k+"="+v)
	}
	return func(k string) string { return m[k] }, environ
}
