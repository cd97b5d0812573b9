package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrCircuitOpen is returned (wrapped) by Chat while the client's circuit
// breaker is open: the backend kept failing and calls are refused without
// touching the network until the cool-down ends. Health says until when.
var ErrCircuitOpen = errors.New("circuit breaker open: the model backend kept failing, calls are refused until the cool-down ends")

// APIError is a failed attempt: an HTTP error status from the provider, a
// 2xx reply that could not be used (Status 200: malformed JSON, no choices),
// or a transport failure or attempt timeout (Status 0, Err set).
type APIError struct {
	Status     int           // HTTP status; 0 for network errors and timeouts
	Provider   string        // the service, e.g. "openrouter", "anthropic"
	Message    string        // the provider's message (keys scrubbed) or what went wrong
	Hint       string        // what to do, e.g. "check OPENROUTER_API_KEY"
	Retryable  bool          // whether another attempt could succeed
	RetryAfter time.Duration // from a Retry-After header, capped; 0 when absent
	Err        error         // the underlying transport error, if any

	auth bool // the key was refused (401, 403, or Gemini's 400 "API key not valid")
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d from %s: %s", e.Status, e.Provider, e.Message)
	} else {
		fmt.Fprintf(&b, "%s: %s", e.Provider, e.Message)
	}
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the transport error, if any.
func (e *APIError) Unwrap() error { return e.Err }

// retryableStatus reports whether an HTTP status may succeed on retry.
func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests:
		return true
	case code >= 500:
		return true
	}
	return false
}

// breakerCounts reports whether an error says the backend is unhealthy or
// unusable (and so counts towards opening the breaker), as opposed to a
// request-specific rejection such as 400 or 413, which proves the backend is
// up.
func breakerCounts(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return true
	}
	if ae.Retryable || ae.auth {
		return true
	}
	switch ae.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusPaymentRequired:
		return true
	}
	return false
}

// hintFor says what to do about a non-retryable status.
func hintFor(code int, keyEnv string) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		if keyEnv != "" {
			return "check " + keyEnv
		}
		return "check the API key"
	case http.StatusPaymentRequired:
		return "check the account's credits"
	case http.StatusNotFound:
		return "check the model name and the base URL"
	case http.StatusRequestEntityTooLarge:
		return "send a smaller request (fewer or smaller images)"
	}
	return ""
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs {
			return 0, false
		}
		if secs > 1e6 {
			secs = 1e6
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// providerMessage pulls a human message out of an error body in any of the
// shapes providers use: {"error":{"message":..}} (OpenAI, Anthropic, Gemini,
// OpenRouter), {"error":"..."} (Ollama), {"message":..} (vLLM), {"detail":..}.
// Otherwise it returns the body's start as text, or the status text.
func providerMessage(body []byte, status int) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) > 0 {
			var obj struct {
				Message  string `json:"message"`
				Metadata struct {
					Raw          any    `json:"raw"`
					ProviderName string `json:"provider_name"`
				} `json:"metadata"`
			}
			if json.Unmarshal(v.Error, &obj) == nil && obj.Message != "" {
				// OpenRouter wraps upstream failures: "Provider returned
				// error" plus the upstream's own words in metadata.raw.
				if raw, ok := obj.Metadata.Raw.(string); ok && raw != "" {
					from := "upstream"
					if obj.Metadata.ProviderName != "" {
						from = obj.Metadata.ProviderName
					}
					return clip(obj.Message + " (" + from + ": " + raw + ")")
				}
				return clip(obj.Message)
			}
			var s string
			if json.Unmarshal(v.Error, &s) == nil && s != "" {
				return clip(s)
			}
		}
		if v.Message != "" {
			return clip(v.Message)
		}
		if len(v.Detail) > 0 {
			var s string
			if json.Unmarshal(v.Detail, &s) == nil && s != "" {
				return clip(s)
			}
			return clip(string(v.Detail))
		}
	}
	if t := strings.TrimSpace(string(body)); t != "" && utf8.ValidString(t) {
		return clip(t)
	}
	if status != 0 {
		return strings.ToLower(http.StatusText(status))
	}
	return "empty reply"
}

// clip keeps a message short enough for a log line or an error.
func clip(s string) string {
	const max = 300
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
