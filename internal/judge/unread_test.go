package judge

import (
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/ocr"
)

// TestUnreadFor: a region of unread text wide enough for the phrase keeps
// "gone" from being confirmed; an icon-sized one does not.
func TestUnreadFor(t *testing.T) {
	res := ocr.Result{Unread: []image.Rectangle{image.Rect(0, 0, 20, 10)}}
	if r, ok := unreadFor(res, "Loading", image.Rectangle{}); ok {
		t.Errorf("unreadFor(icon %v) = %v, true; want false", res.Unread[0], r)
	}
	res.Unread = append(res.Unread, image.Rect(100, 100, 700, 228))
	if r, ok := unreadFor(res, "Loading", image.Rectangle{}); !ok || r != res.Unread[1] {
		t.Errorf("unreadFor(heading) = %v, %v; want %v, true", r, ok, res.Unread[1])
	}
}

// TestUnreadForIcon: a region taller than wide (a dialog's icon beside
// its label) too narrow for the phrase at half its height does not keep
// "gone" from being confirmed; a short word's button of that shape does.
func TestUnreadForIcon(t *testing.T) {
	res := ocr.Result{Unread: []image.Rectangle{image.Rect(65, 36, 119, 123)}}
	if r, ok := unreadFor(res, "Sync paused", image.Rectangle{}); ok {
		t.Errorf("unreadFor(icon %v, Sync paused) = %v, true; want false", res.Unread[0], r)
	}
	res.Unread = []image.Rectangle{image.Rect(0, 0, 40, 28)}
	if _, ok := unreadFor(res, "OK", image.Rectangle{}); !ok {
		t.Errorf("unreadFor(button %v, OK) = false, want true", res.Unread[0])
	}
}

// TestUnreadForSeen: where the phrase was read before, only an unread
// region over that place keeps "gone" from being confirmed; where it was
// never read, a region as tall as the text read (a row of toolbar icons)
// does not, and one twice as tall (a heading) does.
func TestUnreadForSeen(t *testing.T) {
	res := ocr.Result{
		Lines:  []ocr.Line{{Box: image.Rect(0, 100, 300, 114), Conf: 95}, {Box: image.Rect(0, 120, 300, 134), Conf: 95}},
		Unread: []image.Rectangle{image.Rect(800, 10, 960, 33)},
	}
	if r, ok := unreadFor(res, "Loading", image.Rectangle{}); ok {
		t.Errorf("unreadFor(toolbar %v beside 14 px lines) = %v, true; want false", res.Unread[0], r)
	}
	if r, ok := unreadFor(res, "Loading", image.Rect(810, 12, 900, 30)); !ok || r != res.Unread[0] {
		t.Errorf("unreadFor(over where it was seen) = %v, %v; want %v, true", r, ok, res.Unread[0])
	}
	if r, ok := unreadFor(res, "Loading", image.Rect(0, 200, 90, 214)); ok {
		t.Errorf("unreadFor(seen elsewhere, now blank) = %v, true; want false", r)
	}
	if r, ok := unreadFor(ocr.Result{Unread: []image.Rectangle{image.Rect(12, 31, 21, 50)}}, "Loading...", image.Rect(12, 31, 100, 50)); ok {
		t.Errorf("unreadFor(a text cursor where it was seen) = %v, true; want false", r)
	}
	res.Unread = append(res.Unread, image.Rect(0, 300, 600, 360))
	if r, ok := unreadFor(res, "Loading", image.Rectangle{}); !ok || r != res.Unread[1] {
		t.Errorf("unreadFor(heading) = %v, %v; want %v, true", r, ok, res.Unread[1])
	}
}
