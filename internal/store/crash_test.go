package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/pgtest"
)

// crashChildEnv names the database a re-executed test binary writes to
// until it is killed.
const crashChildEnv = "ACU_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		os.Exit(0)
	}
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// crashChild appends events, outbox items and task progress forever and
// prints "ack <n> <cursor>" after each acknowledged write group.
func crashChild(path string) {
	ctx := context.Background()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		ev, err := db.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict", Data: []byte(`{"i":` + strconv.Itoa(i) + `}`)})
		if err == nil {
			_, _, err = db.Enqueue(ctx, OutboxItem{Key: "k" + strconv.Itoa(i), Notifier: "exec", RunID: "r", Message: "m"})
		}
		if err == nil {
			err = db.AppendTaskProgress(ctx, "t", "r", strconv.Itoa(i))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("ack %d %d\n", i, ev.Cursor)
	}
}

// TestKill9LosesNothingAcknowledged kills a writing process with SIGKILL and
// checks that every write it acknowledged is in the reopened database.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	ctx := t.Context()
	path := testDB(t, "acu.db")
	db := openAt(t, path, nil)
	mustCreate(t, db, Run{ID: "r", Kind: "wait", Status: "running"})
	db.Close()

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked, lastCursor := -1, int64(0)
	for acked < 300 && sc.Scan() {
		var n int
		var c int64
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %d", &n, &c); err != nil {
			t.Fatalf("child printed %q: %v", sc.Text(), err)
		}
		acked, lastCursor = n, c
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if acked < 300 {
		t.Fatalf("child acknowledged only %d writes; stderr: %s", acked+1, stderr.String())
	}

	db2 := openAt(t, path, nil)
	if !onPostgres { // PostgreSQL's own crash safety is not acu's to test
		var check string
		if err := db2.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity_check = %q, %v", check, err)
		}
	}
	evs, err := db2.EventsAfter(ctx, 0, EventFilter{RunID: "r", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < acked+1 {
		t.Fatalf("reopened database has %d events, the child acknowledged %d", len(evs), acked+1)
	}
	for i := 0; i <= acked; i++ {
		if evs[i].Seq != int64(i+1) || string(evs[i].Data) != `{"i":`+strconv.Itoa(i)+`}` {
			t.Fatalf("event %d = %+v", i, evs[i])
		}
	}
	if evs[acked].Cursor != lastCursor {
		t.Errorf("last acknowledged event has cursor %d, child reported %d", evs[acked].Cursor, lastCursor)
	}
	items, err := db2.Outbox(ctx, "r")
	if err != nil || len(items) < acked+1 {
		t.Errorf("reopened outbox has %d items, %v; want at least %d", len(items), err, acked+1)
	}
	progress, err := db2.TaskProgress(ctx, "t")
	if err != nil || len(progress) < acked+1 {
		t.Errorf("reopened task log has %d entries, %v; want at least %d", len(progress), err, acked+1)
	}
	// The reopened file takes writes again where the child stopped.
	if ev, err := db2.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict"}); err != nil || ev.Seq != int64(len(evs)+1) {
		t.Errorf("AppendEvent after crash = seq %d, %v, want %d", ev.Seq, err, len(evs)+1)
	}
}
