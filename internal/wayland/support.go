package wayland

import "fmt"

// Feature is one thing acu does on Wayland and the protocols that give it,
// preferred first.
type Feature struct {
	Name      string
	Protocols []string
}

// Features lists what acu needs of a compositor, in the order `acu
// doctor` reports them (docs/wayland.md has the table per compositor).
var Features = []Feature{
	{"capture", []string{"ext_image_copy_capture_manager_v1", "zwlr_screencopy_manager_v1"}},
	{"pointer", []string{"zwlr_virtual_pointer_manager_v1"}},
	{"keyboard", []string{"zwp_virtual_keyboard_manager_v1"}},
	{"windows", []string{"ext_foreign_toplevel_list_v1", "zwlr_foreign_toplevel_manager_v1"}},
	{"clipboard", []string{"ext_data_control_manager_v1", "zwlr_data_control_manager_v1"}},
}

// implemented are the protocols acu speaks today; the others of Features
// are planned (issue 26).
var implemented = map[string]bool{
	"zwlr_screencopy_manager_v1": true, "zwlr_virtual_pointer_manager_v1": true,
	"zwp_virtual_keyboard_manager_v1": true, "zwlr_foreign_toplevel_manager_v1": true,
	"zwlr_data_control_manager_v1": true,
}

// Support is how a compositor serves one Feature.
type Support struct {
	Feature
	Protocol string // the protocol acu would use, "" when none is offered
	Version  uint32
	// Planned is set when the compositor offers only protocols of the
	// feature that acu does not speak yet.
	Planned bool
}

// OK reports whether acu can do the feature on the compositor today.
func (s Support) OK() bool { return s.Protocol != "" && !s.Planned }

// String describes the support in a line, for `acu doctor`.
func (s Support) String() string {
	switch {
	case s.Protocol == "":
		return fmt.Sprintf("%s: not offered (needs %s)", s.Name, joinOr(s.Protocols))
	case s.Planned:
		return fmt.Sprintf("%s: %s v%d offered, which acu does not speak yet", s.Name, s.Protocol, s.Version)
	}
	return fmt.Sprintf("%s: %s v%d", s.Name, s.Protocol, s.Version)
}

func joinOr(ps []string) string {
	out := ps[0]
	for _, p := range ps[1:] {
		out += " or " + p
	}
	return out
}

// Supports tells, for each of Features, which advertised global acu uses
// for it: the first protocol acu speaks, else the first offered (Planned).
func Supports(globals []Global) []Support {
	offered := map[string]uint32{}
	for _, g := range globals {
		offered[g.Interface] = g.Version
	}
	out := make([]Support, len(Features))
	for i, f := range Features {
		out[i] = Support{Feature: f}
		for _, p := range f.Protocols {
			if v, ok := offered[p]; ok && implemented[p] {
				out[i].Protocol, out[i].Version, out[i].Planned = p, v, false
				break
			} else if ok && out[i].Protocol == "" {
				out[i].Protocol, out[i].Version, out[i].Planned = p, v, true
			}
		}
	}
	return out
}
