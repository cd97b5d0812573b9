// Package dialecttest holds the checks every vendor dialect's fuzz test
// makes of what its Decode and Plan return, whatever the vendor: a refusal
// is the model's mistake (a *dialect.InvalidError with a message, sent
// back to the model), and an accepted plan points only inside the image
// the model saw.
//
// It is imported only from *_test.go files.
package dialecttest

import (
	"errors"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
)

// Refused reports whether op (Decode, Plan) refused the input (err is not
// nil), and fails t when the refusal is not a *dialect.InvalidError with a
// message.
func Refused(t testing.TB, op string, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	var ie *dialect.InvalidError
	if !errors.As(err, &ie) || err.Error() == "" {
		t.Errorf("%s error %v (%T), want a *dialect.InvalidError with a message", op, err, err)
	}
	return true
}

// Inside fails t when a point of act (each action's position and each
// point of its path) is not inside img, the image the model saw, or does
// not name it. data is the model's output, for the message. A nil act has
// no points.
func Inside(t testing.TB, data []byte, img dialect.Size, act *api.ActRequest) {
	t.Helper()
	if act == nil {
		return
	}
	for _, a := range act.Actions {
		inside(t, data, img, a.At)
		for i := range a.Path {
			inside(t, data, img, &a.Path[i])
		}
	}
}

func inside(t testing.TB, data []byte, img dialect.Size, p *api.Point) {
	t.Helper()
	if p == nil || p.X == nil {
		return
	}
	if p.Y == nil {
		t.Errorf("Plan(%q) gives x = %d without y", data, *p.X)
	} else if *p.X < 0 || *p.X >= img.W || *p.Y < 0 || *p.Y >= img.H || p.Image != img.String() {
		t.Errorf("Plan(%q) points at %d,%d of a %s image, want a point inside %v", data, *p.X, *p.Y, p.Image, img)
	}
}
