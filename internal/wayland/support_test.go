package wayland

import (
	"strings"
	"testing"
)

func TestSupports(t *testing.T) {
	got := Supports([]Global{
		{Name: 1, Interface: "zwlr_screencopy_manager_v1", Version: 3},
		{Name: 2, Interface: "ext_image_copy_capture_manager_v1", Version: 1},
		{Name: 3, Interface: "ext_foreign_toplevel_list_v1", Version: 1},
		{Name: 4, Interface: "zwp_virtual_keyboard_manager_v1", Version: 1},
	})
	want := map[string]string{
		"capture":   "capture: zwlr_screencopy_manager_v1 v3", // spoken beats preferred-but-planned
		"pointer":   "pointer: not offered (needs zwlr_virtual_pointer_manager_v1)",
		"keyboard":  "keyboard: zwp_virtual_keyboard_manager_v1 v1",
		"windows":   "windows: ext_foreign_toplevel_list_v1 v1 offered, which acu does not speak yet",
		"clipboard": "clipboard: not offered (needs ext_data_control_manager_v1 or zwlr_data_control_manager_v1)",
	}
	if len(got) != len(want) {
		t.Fatalf("Supports gave %d features, want %d", len(got), len(want))
	}
	for _, s := range got {
		if s.String() != want[s.Name] {
			t.Errorf("%s: %q, want %q", s.Name, s.String(), want[s.Name])
		}
		if ok := !strings.Contains(want[s.Name], "not"); s.OK() != ok {
			t.Errorf("%s: OK() = %v, want %v", s.Name, s.OK(), ok)
		}
	}
}
