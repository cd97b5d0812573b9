package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/acu-dev/acu/internal/api"
)

// httpError is an error with a client-facing status, code and message:
// what handlers return for a request they refuse themselves, and what
// response (errmap.go) makes of the services' errors. writeError answers
// with it; an error no rule knows is logged and answered as a generic 500.
type httpError struct {
	status int
	detail api.ErrorDetail
}

func (e *httpError) Error() string { return e.detail.Message }

func newErr(status int, code, field, format string, args ...any) *httpError {
	return &httpError{status: status, detail: api.ErrorDetail{Code: code, Message: fmt.Sprintf(format, args...), Field: field}}
}

func errInvalid(field, format string, args ...any) error {
	return fail(classInvalid, "", field, format, args...)
}
func errNotFound(format string, args ...any) error {
	return fail(classNotFound, "", "", format, args...)
}
func errConflict(format string, args ...any) error {
	return fail(classConflict, "", "", format, args...)
}
func errUnauthorized(format string, args ...any) error {
	return fail(classUnauthorized, "", "", format, args...)
}
func errTooLarge(limit int64) error {
	return fail(classTooLarge, "", "", "request body is larger than %d bytes (ACU_MAX_BODY_BYTES)", limit)
}

// writeError answers with the error body; internals go to the log only.
// (errmap.go says which errors are the client's and how).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	he, _ := response(err)
	writeJSON(w, he.status, api.ErrorBody{Error: he.detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads one JSON object into v, strictly: unknown fields,
// trailing data, wrong types and oversized bodies are errors that name the
// problem and, where there is one, the field.
func decodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return errInvalid("", "Content-Type must be application/json, got %q", ct)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errInvalid("", "request body has data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return jsonError(err)
		}
		return errInvalid("", "request body has data after the JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		tooL *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooL):
		return errTooLarge(tooL.Limit)
	case errors.As(err, &syn):
		return errInvalid("", "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		f := typ.Field
		return errInvalid(f, "field %q must be %s, got JSON %s", f, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.EOF):
		return errInvalid("", "request body is empty: send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errInvalid("", "malformed JSON: the body ends early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return errInvalid(f, "unknown field %q", f)
	default:
		return errInvalid("", "malformed JSON: %v", err)
	}
}

func jsonKind(k string) string {
	switch k {
	case "float64", "float32", "int", "int64", "int32", "uint", "uint64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return k
}
