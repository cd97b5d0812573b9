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
