package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Texts that end up in a notification (criteria, wake_when, cancel reasons)
// are refused with a 400 naming the field when they hold NUL or another
// control character, or are too long: exec could never deliver them.
func TestTextFieldsRejected(t *testing.T) {
	f := newFixtureWith(t, func(o *Options, reg *runs.Registry) {
		o.MaxBody = 1 << 20
		o.Waits = smartwait.New(smartwait.Options{Runs: reg})
	})
	long := strings.Repeat("x", 4001)
	for _, tc := range []struct {
		name, method, path, body, field, inMsg string
	}{
		{"NUL in criteria", "POST", "/v1/waits", `{"criteria":"done\u0000rm -rf"}`, "criteria", "control characters"},
		{"escape in criteria", "POST", "/v1/waits", `{"criteria":"done\u001b[2J"}`, "criteria", "control characters"},
		{"DEL in criteria", "POST", "/v1/waits", `{"criteria":"done\u007f"}`, "criteria", "control characters"},
		{"NUL in wake_when", "POST", "/v1/waits", `{"wake_when":"done\u0000"}`, "wake_when", "control characters"},
		{"long criteria", "POST", "/v1/waits", `{"criteria":"` + long + `"}`, "criteria", "at most 4000 bytes"},
		{"NUL in update", "PATCH", "/v1/waits/wait_x", `{"criteria":"a\u0000"}`, "criteria", "control characters"},
		{"NUL in wait cancel reason", "DELETE", "/v1/waits/wait_x?reason=" + url.QueryEscape("a\x00b"), "", "reason", "control characters"},
		{"long wait cancel reason", "DELETE", "/v1/waits/wait_x?reason=" + long, "", "reason", "at most 4000 bytes"},
		{"NUL in run cancel reason", "POST", "/v1/runs/run_x/cancel", `{"reason":"a\u0000"}`, "reason", "control characters"},
		{"long run cancel reason", "POST", "/v1/runs/run_x/cancel", `{"reason":"` + strings.Repeat("y", 200<<10) + `"}`, "reason", "at most 4000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(tc.method, tc.path, tc.body, nil)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s %s = %d %s, want 400", tc.method, tc.path, resp.StatusCode, body)
			}
			e := errorOf(t, body)
			if e.Code != api.CodeInvalid || e.Field != tc.field || !strings.Contains(e.Message, tc.inMsg) {
				t.Errorf("error = %+v, want field %q and a message containing %q", e, tc.field, tc.inMsg)
			}
		})
	}
}
