package elements

import (
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/atspi"
)

// TestPlaceMatchesWindows: each accessible window of a Wayland client is
// moved by the content origin of its compositor window (by process, then
// title, then size), its objects with it; an Xwayland client's and an
// unmatched window's objects keep the bounds their toolkit reported.
func TestPlaceMatchesWindows(t *testing.T) {
	r := func(x, y, w, h int) image.Rectangle { return image.Rect(x, y, x+w, y+h) }
	wins := []Window{
		{PID: 10, Title: "Editor", Content: r(100, 50, 400, 300)},
		{PID: 10, Title: "Find", Content: r(600, 80, 200, 100)},
		{PID: 20, Title: "Only", Content: r(30, 400, 300, 200)},
		{PID: 30, Title: "xterm", Content: r(700, 400, 200, 150), Screen: true},
		{PID: 40, Title: "Twin", Content: r(10, 10, 50, 50)},
		{PID: 40, Title: "Twin", Content: r(300, 10, 80, 60)},
	}
	nodes := []atspi.Node{
		{Depth: 0, Parent: -1, PID: 10, Role: "application"},
		{Depth: 1, Parent: 0, PID: 10, Role: "frame", Name: "Find", Bounds: r(0, 0, 200, 100)},          // 1: by title
		{Depth: 2, Parent: 1, PID: 10, Role: "push button", Name: "Next", Bounds: r(150, 70, 40, 20)},   // 2
		{Depth: 1, Parent: 0, PID: 10, Role: "frame", Name: "Editor", Bounds: r(0, 0, 400, 300)},        // 3: by title
		{Depth: 2, Parent: 3, PID: 10, Role: "filler"},                                                  // 4: no bounds
		{Depth: 3, Parent: 4, PID: 10, Role: "text", Bounds: r(5, 5, 390, 250)},                         // 5: grandchild
		{Depth: 0, Parent: -1, PID: 20, Role: "application"},                                            // 6
		{Depth: 1, Parent: 6, PID: 20, Role: "frame", Name: "Renamed since", Bounds: r(0, 0, 300, 200)}, // 7: its process's only window
		{Depth: 0, Parent: -1, PID: 30, Role: "application"},                                            // 8
		{Depth: 1, Parent: 8, PID: 30, Role: "frame", Name: "xterm", Bounds: r(700, 400, 200, 150)},     // 9: Xwayland: as it is
		{Depth: 0, Parent: -1, PID: 40, Role: "application"},                                            // 10
		{Depth: 1, Parent: 10, PID: 40, Role: "frame", Name: "Twin", Bounds: r(0, 0, 80, 60)},           // 11: by size
		{Depth: 1, Parent: 10, PID: 40, Role: "window", Name: "", Bounds: r(0, 0, 10, 10)},              // 12: unmatched
		{Depth: 0, Parent: -1, PID: 0, Role: "application"},                                             // 13: the bus knows no pid
		{Depth: 1, Parent: 13, PID: 0, Role: "frame", Name: "Only", Bounds: r(0, 0, 300, 200)},          // 14: by title among all
		{Depth: 2, Parent: 14, PID: 0, Role: "push button", Name: "OK", Bounds: r(10, 20, 30, 40)},      // 15
		{Depth: 0, Parent: -1, PID: 50, Role: "application"},                                            // 16: no window of its own
		{Depth: 1, Parent: 16, PID: 50, Role: "frame", Name: "Nowhere", Bounds: r(0, 0, 60, 60)},        // 17: unmatched
		{Depth: 2, Parent: 17, PID: 50, Role: "push button", Name: "Stay", Bounds: r(1, 2, 3, 4)},       // 18
	}
	placed, unplaced := place(nodes, wins)
	want := map[int]image.Rectangle{
		1: r(600, 80, 200, 100), 2: r(750, 150, 40, 20),
		3: r(100, 50, 400, 300), 5: r(105, 55, 390, 250),
		7:  r(30, 400, 300, 200),
		9:  r(700, 400, 200, 150),
		11: r(300, 10, 80, 60), 12: r(0, 0, 10, 10),
		14: r(30, 400, 300, 200), 15: r(40, 420, 30, 40),
		17: r(0, 0, 60, 60), 18: r(1, 2, 3, 4),
	}
	for i, w := range want {
		if got := nodes[i].Bounds; got != w {
			t.Errorf("node %d (%s %q): bounds %v, want %v", i, nodes[i].Role, nodes[i].Name, got, w)
		}
	}
	if !nodes[4].Bounds.Empty() {
		t.Errorf("an object without bounds got %v", nodes[4].Bounds)
	}
	if placed != 5 || unplaced != 2 {
		t.Errorf("placed %d, unplaced %d; want 5 and 2 (the Xwayland window is neither)", placed, unplaced)
	}
}
