package store

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestRunFrames: a frame is stored once per hash however many runs and
// judgements see it; retention removes the links of old runs and then the
// frames nobody links to, and keeps the rest.
func TestRunFrames(t *testing.T) {
	db, clk := openTest(t)
	ctx := t.Context()
	now := clk.Now()
	for _, id := range []string{"old", "recent"} {
		if _, err := db.CreateRunEvent(ctx, Run{ID: id, Kind: "wait", Status: "running", StartedAt: now}, Event{RunID: id, Stream: "lifecycle", Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	a := Frame{Hash: "aaa", JPEG: []byte("jpeg-a"), Width: 2, Height: 1}
	b := Frame{Hash: "bbb", JPEG: []byte("jpeg-b"), Width: 2, Height: 1}
	for i, put := range []struct {
		run string
		f   Frame
	}{{"old", a}, {"old", a}, {"old", b}, {"recent", b}, {"old", a}} {
		if err := db.PutRunFrame(ctx, put.run, put.f, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.RunFrames(ctx, "old")
	if err != nil || len(list) != 2 || list[0].Hash != "aaa" || !list[0].At.Equal(now) || list[1].Hash != "bbb" {
		t.Fatalf("RunFrames(old) = %+v, %v; want aaa (first seen at the start), bbb", list, err)
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM frames`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d frames stored (%v), want 2", n, err)
	}
	if got, err := db.GetFrame(ctx, "aaa"); err != nil || !bytes.Equal(got.JPEG, a.JPEG) || got.Width != 2 {
		t.Errorf("GetFrame(aaa) = %+v, %v", got, err)
	}
	if _, err := db.GetFrame(ctx, "zzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetFrame(zzz) = %v, want ErrNotFound", err)
	}

	if _, _, err := db.EndRunEvent(ctx, RunEnd{ID: "old", Status: "resolved", EndedAt: now.Add(-48 * time.Hour)}, Event{RunID: "old", Stream: "lifecycle", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneEvents(ctx, now.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if list, _ := db.RunFrames(ctx, "old"); len(list) != 0 {
		t.Errorf("the old run keeps %d frames after retention, want 0", len(list))
	}
	if _, err := db.GetFrame(ctx, "aaa"); !errors.Is(err, ErrNotFound) {
		t.Errorf("frame aaa, seen by the old run only, = %v after retention; want gone", err)
	}
	if _, err := db.GetFrame(ctx, "bbb"); err != nil {
		t.Errorf("frame bbb, still seen by a recent run, = %v; want kept", err)
	}
}
