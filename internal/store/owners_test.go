package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHostClash: an owner whose host id a live owner of another machine
// holds is refused, naming both; the same machine, another host id, an
// owner of no recorded machine and an expired or stopped owner are not in
// the way.
func TestHostClash(t *testing.T) {
	db, c := openTest(t)
	ctx := t.Context()
	owner := func(id, host, machine string) Owner {
		return Owner{ID: id, Host: host, PID: 100, Program: "serve", Machine: machine, LeaseUntil: c.Now().Add(15 * time.Second)}
	}
	if err := db.RegisterOwner(ctx, owner("lab-3:100:a", "lab-3", "machine-a")); err != nil {
		t.Fatal(err)
	}
	err := db.RegisterOwner(ctx, owner("lab-3:200:b", "lab-3", "machine-b"))
	clash, ok := errors.AsType[*HostClashError](err)
	if !ok || clash.Theirs.ID != "lab-3:100:a" || clash.Mine.ID != "lab-3:200:b" {
		t.Fatalf("RegisterOwner(same host, other machine) = %v, want a HostClashError", err)
	}
	for _, want := range []string{`"lab-3"`, "machine-a", "machine-b", "lab-3:100:a", "ACU_HOST_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("clash error %q does not name %s", err, want)
		}
	}
	if _, err := db.GetOwner(ctx, "lab-3:200:b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused owner was recorded: %v", err)
	}
	for _, o := range []Owner{
		owner("lab-3:300:c", "lab-3", "machine-a"), // another process of the same machine
		owner("lab-4:100:d", "lab-4", "machine-b"), // another host id
		owner("lab-3:400:e", "lab-3", ""),          // a process that records no machine
	} {
		if err := db.RegisterOwner(ctx, o); err != nil {
			t.Errorf("RegisterOwner(%s on %q) = %v", o.ID, o.Machine, err)
		}
	}
	// Once machine-a's processes are gone (stopped, or their lease ran
	// out), machine-b may take the host id.
	if err := db.StopOwner(ctx, "lab-3:100:a"); err != nil {
		t.Fatal(err)
	}
	c.Advance(16 * time.Second)
	if err := db.RegisterOwner(ctx, owner("lab-3:200:b", "lab-3", "machine-b")); err != nil {
		t.Errorf("RegisterOwner after machine-a's owners ended = %v", err)
	}
}
