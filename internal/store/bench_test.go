package store

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

var benchData = json.RawMessage(`{"answer":"NO","evidence":"progress bar at 40%","latencyMs":312,"frameHash":"9f3a1c22e0b1d4aa"}`)

func BenchmarkAppendEvent(b *testing.B) {
	db, _ := openTest(b)
	mustCreate(b, db, Run{ID: "r", Kind: "wait", Status: "running"})
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict", Data: benchData}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEventsAfter256(b *testing.B) {
	db, _ := openTest(b)
	mustCreate(b, db, Run{ID: "r", Kind: "wait", Status: "running"})
	ctx := b.Context()
	for range 1024 {
		if _, err := db.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict", Data: benchData}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		evs, err := db.EventsAfter(ctx, 512, EventFilter{Limit: 256})
		if err != nil || len(evs) != 256 {
			b.Fatal(len(evs), err)
		}
	}
}

func BenchmarkEnqueueAndDeliver(b *testing.B) {
	db, clk := openTest(b)
	ctx := b.Context()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		id, _, err := db.Enqueue(ctx, OutboxItem{Key: "k" + strconv.Itoa(i), Notifier: "exec", RunID: "r", Message: "[smart_wait resolved] Job r: x → y"})
		if err != nil {
			b.Fatal(err)
		}
		due, err := db.DueOutbox(ctx, clk.Now().Add(time.Second), 10)
		if err != nil || len(due) != 1 {
			b.Fatal(len(due), err)
		}
		if err := db.RecordAttempt(ctx, id, true, "", time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}
