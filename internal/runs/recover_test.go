package runs

import (
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"
)

// TestRecoverLeavesItsOwnLiveRuns: a process whose own lease is no longer
// held (stopped, as at the end of its life) does not take over and end the
// runs it still runs: only other processes' runs are recovered.
func TestRecoverLeavesItsOwnLiveRuns(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	p := &proc{}
	p.db = openProc(t, path, "", 0).db
	p.reg = New(p.db, Options{})
	release, err := p.reg.Own(t.Context(), Self("serve", ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	run := p.start(t, "wait")
	release() // the owner is stopped: its live run is in the store's unowned set
	claimed := 0
	if err := p.reg.Recover(t.Context(), func(Run) bool { claimed++; return true }); err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	if got := p.get(t, run.ID); !got.Live() || claimed != 0 {
		t.Errorf("the process's own live run after its Recover = %+v (claimed %d), want live, not offered", got, claimed)
	}
}
