package store

import "testing"

// TestRunCreator: a run's creator is stored and read back, in lists and
// in the live runs too.
func TestRunCreator(t *testing.T) {
	db, _ := openTest(t)
	ctx := t.Context()
	if err := db.CreateRun(ctx, Run{ID: "wait_1", Kind: "wait", Status: StatusRunning, Creator: "tok_reader"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(ctx, Run{ID: "wait_2", Kind: "wait", Status: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.GetRun(ctx, "wait_1"); err != nil || r.Creator != "tok_reader" {
		t.Errorf("GetRun(wait_1) = %+v, %v; want creator tok_reader", r, err)
	}
	live, err := db.LiveRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range live {
		got[r.ID] = r.Creator
	}
	if got["wait_1"] != "tok_reader" || got["wait_2"] != "" || len(got) != 2 {
		t.Errorf("LiveRuns creators = %v; want wait_1 tok_reader, wait_2 none", got)
	}
}
