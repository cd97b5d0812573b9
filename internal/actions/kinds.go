package actions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
)

// kind is what the service knows of one action kind: the fields it takes
// (any other set is refused by name), its own checks after the common
// ones, and how a step of it is carried out. Adding a kind is adding a
// row to kinds (and its name to api.ActionKinds).
type kind struct {
	uses     []string
	validate func(a api.Action, field string, def frameSpec) error // nil: nothing more
	exec     func(x *stepRun) error
}

var kinds = map[string]kind{
	api.ActMove:      {uses: []string{"at", "mods"}, validate: needsAt, exec: (*stepRun).move},
	api.ActClick:     {uses: []string{"at", "button", "count", "verify", "pointer", "mods"}, validate: checkClick, exec: (*stepRun).click},
	api.ActMouseDown: {uses: []string{"at", "button", "mods"}, exec: (*stepRun).mouseDown},
	api.ActMouseUp:   {uses: []string{"at", "button", "mods"}, exec: (*stepRun).mouseUp},
	api.ActDrag:      {uses: []string{"path", "button", "hold_ms", "mods"}, validate: checkDrag, exec: (*stepRun).drag},
	api.ActScroll:    {uses: []string{"at", "dx", "dy", "mods"}, validate: checkScroll, exec: (*stepRun).scroll},
	api.ActType:      {uses: []string{"at", "text", "verify", "pointer"}, validate: checkType, exec: (*stepRun).typeText},
	api.ActKey:       {uses: []string{"at", "keys", "hold_ms", "repeat", "verify", "pointer"}, validate: checkKey, exec: (*stepRun).key},
	api.ActWait:      {uses: []string{"ms"}, validate: checkWait, exec: (*stepRun).wait},
}

// checkAction validates a's syntax; field is "actions[i]": the kind, the
// fields it does not take, the fields every kind checks alike, then the
// kind's own checks.
func checkAction(a api.Action, field string, def frameSpec) error {
	k, ok := kinds[a.Kind]
	if !ok || !slices.Contains(api.ActionKinds, a.Kind) {
		if a.Kind == "" {
			return invalid(field+".kind", "%s.kind is missing: use one of %s", field, strings.Join(api.ActionKinds, ", "))
		}
		return invalid(field+".kind", "%s.kind %q is unknown: use one of %s", field, a.Kind, strings.Join(api.ActionKinds, ", "))
	}
	// Fields a kind does not use are mistakes worth naming.
	for _, f := range []struct {
		name string
		set  bool
	}{{"at", a.At != nil}, {"path", a.Path != nil}, {"button", a.Button != ""}, {"count", a.Count != 0},
		{"dx", a.DX != 0}, {"dy", a.DY != 0}, {"text", a.Text != ""}, {"keys", a.Keys != ""}, {"hold_ms", a.HoldMs != 0},
		{"repeat", a.Repeat != 0}, {"ms", a.Ms != 0}, {"verify", a.Verify}, {"pointer", a.Pointer}, {"mods", a.Mods != ""}} {
		if f.set && !slices.Contains(k.uses, f.name) {
			return invalid(field+"."+f.name, "%s.%s does not apply to %s", field, f.name, a.Kind)
		}
	}
	if err := checkCommon(a, field, def); err != nil {
		return err
	}
	if k.validate == nil {
		return nil
	}
	return k.validate(a, field, def)
}

// checkCommon checks the fields several kinds share: mods, button, at,
// verify and pointer.
func checkCommon(a api.Action, field string, def frameSpec) error {
	if a.Mods != "" {
		if err := gate.CheckMods(a.Mods); err != nil {
			return invalid(field+".mods", "%s.mods: %v", field, err)
		}
	}
	if _, ok := buttons[a.Button]; !ok {
		return invalid(field+".button", "%s.button %q: use left, right, middle, back or forward", field, a.Button)
	}
	if a.At != nil {
		if err := checkPoint(a.At, field+".at", def); err != nil {
			return err
		}
	}
	if (a.Verify || a.Pointer) && (a.At == nil || a.At.Element == "") {
		return invalid(field+".verify", "%s: verify and pointer apply to element targets only (at.element)", field)
	}
	return nil
}

func needsAt(a api.Action, field string, _ frameSpec) error {
	if a.At == nil {
		return invalid(field+".at", "%s: move needs at", field)
	}
	return nil
}

func checkClick(a api.Action, field string, _ frameSpec) error {
	if a.Count < 0 || a.Count > gate.MaxClickCount {
		return invalid(field+".count", "%s.count %d: use 1 (default) to %d", field, a.Count, gate.MaxClickCount)
	}
	return nil
}

func checkDrag(a api.Action, field string, def frameSpec) error {
	if len(a.Path) < 2 || len(a.Path) > gate.MaxPathPoints {
		return invalid(field+".path", "%s.path has %d points: give 2 to %d", field, len(a.Path), gate.MaxPathPoints)
	}
	for i := range a.Path {
		if err := checkPoint(&a.Path[i], fmt.Sprintf("%s.path[%d]", field, i), def); err != nil {
			return err
		}
	}
	return checkHold(a, field)
}

func checkHold(a api.Action, field string) error {
	if a.HoldMs < 0 || time.Duration(a.HoldMs)*time.Millisecond > gate.MaxHold {
		return invalid(field+".hold_ms", "%s.hold_ms %d: use 0 to %d", field, a.HoldMs, gate.MaxHold.Milliseconds())
	}
	return nil
}

func checkScroll(a api.Action, field string, _ frameSpec) error {
	if a.DX == 0 && a.DY == 0 {
		return invalid(field+".dy", "%s: scroll needs dy (positive scrolls down) or dx (positive scrolls right)", field)
	}
	if abs(a.DX) > gate.MaxScroll || abs(a.DY) > gate.MaxScroll {
		return invalid(field+".dy", "%s: scroll by dx=%d dy=%d: at most %d wheel clicks each", field, a.DX, a.DY, gate.MaxScroll)
	}
	return nil
}

func checkType(a api.Action, field string, _ frameSpec) error {
	if a.Text == "" {
		return invalid(field+".text", "%s: type needs text", field)
	}
	return nil
}

func checkKey(a api.Action, field string, _ frameSpec) error {
	if strings.TrimSpace(a.Keys) == "" {
		return invalid(field+".keys", "%s: key needs keys, such as ctrl+l, alt+Tab or Return", field)
	}
	if err := gate.CheckKeys(a.Keys); err != nil {
		return invalid(field+".keys", "%s.keys: %v", field, err)
	}
	if err := checkHold(a, field); err != nil {
		return err
	}
	if a.Repeat < 0 || a.Repeat > gate.MaxRepeat {
		return invalid(field+".repeat", "%s.repeat %d: use 1 (default) to %d", field, a.Repeat, gate.MaxRepeat)
	}
	return nil
}

func checkWait(a api.Action, field string, _ frameSpec) error {
	if a.Ms <= 0 || time.Duration(a.Ms)*time.Millisecond > MaxWait {
		return invalid(field+".ms", "%s.ms %d: wait 1 to %d milliseconds", field, a.Ms, MaxWait.Milliseconds())
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
