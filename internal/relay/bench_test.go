package relay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func benchRelay(b *testing.B) *Relay {
	b.Helper()
	r, err := New(b.Context(), Options{Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkAddSense(b *testing.B) {
	r := benchRelay(b)
	body := []byte(senseBody("text", "code", strings.Repeat("x", 2000), time.Now().UnixMilli()))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := r.AddSense(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPostSenseHandler(b *testing.B) {
	r := benchRelay(b)
	h := r.Handler()
	body := senseBody("text", "code", strings.Repeat("x", 2000), time.Now().UnixMilli())
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/sense", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

func BenchmarkGetFeedHandler(b *testing.B) {
	r := benchRelay(b)
	for i := range FeedCapacity {
		r.AddFeed(fmt.Sprintf("message %d with some words in it", i), "normal", "")
	}
	h := r.Handler()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/feed?after=90", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkContextAndPrompt(b *testing.B) {
	now := time.Now().UnixMilli()
	var feed []FeedItem
	for i := range FeedCapacity {
		feed = append(feed, FeedItem{ID: int64(i + 1), TS: now, Text: "[PERIODIC]\n[1s ago, openrouter] words words words " + fmt.Sprint(i)})
	}
	var sense []SenseEvent
	for i := range SenseCapacity {
		sense = append(sense, SenseEvent{ID: int64(i + 1), Type: "text", App: "code", OCR: strings.Repeat("y", 2000) + fmt.Sprint(i), TS: now, ReceivedAt: now})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = BuildPrompt(BuildContextWindow(feed, sense, now, 120000))
	}
}
