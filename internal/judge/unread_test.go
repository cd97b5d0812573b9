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
	if r, ok := unreadFor(res, "Loading"); ok {
		t.Errorf("unreadFor(icon %v) = %v, true; want false", res.Unread[0], r)
	}
	res.Unread = append(res.Unread, image.Rect(100, 100, 700, 228))
	if r, ok := unreadFor(res, "Loading"); !ok || r != res.Unread[1] {
		t.Errorf("unreadFor(heading) = %v, %v; want %v, true", r, ok, res.Unread[1])
	}
}

// TestUnreadForIcon: a region taller than wide (a dialog's icon beside
// its label) too narrow for the phrase at half its height does not keep
// "gone" from being confirmed; a short word's button of that shape does.
func TestUnreadForIcon(t *testing.T) {
	res := ocr.Result{Unread: []image.Rectangle{image.Rect(65, 36, 119, 123)}}
	if r, ok := unreadFor(res, "Sync paused"); ok {
		t.Errorf("unreadFor(icon %v, Sync paused) = %v, true; want false", res.Unread[0], r)
	}
	res.Unread = []image.Rectangle{image.Rect(0, 0, 40, 28)}
	if _, ok := unreadFor(res, "OK"); !ok {
		t.Errorf("unreadFor(button %v, OK) = false, want true", res.Unread[0])
	}
}
