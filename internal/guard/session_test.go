package guard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func exchange(t *testing.T, s *Sessions, body string) (int, SessionResponse) {
	t.Helper()
	w := httptest.NewRecorder()
	s.Exchange("run `acu open`").ServeHTTP(w, httptest.NewRequest("POST", "/auth/session", strings.NewReader(body)))
	var out SessionResponse
	if w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("exchange answer %s: %v", w.Body, err)
		}
	}
	if len(w.Result().Cookies()) != 0 || w.Header().Get("Set-Cookie") != "" {
		t.Errorf("exchange set a cookie: %v", w.Header())
	}
	return w.Code, out
}

func withSession(id string) *http.Request {
	r := httptest.NewRequest("GET", "/x", nil)
	if id != "" {
		r.Header.Set(SessionHeader, id)
	}
	return r
}

// TestSessions: a code in the fragment of a login URL is redeemed once,
// within LoginCodeTTL, into a session that only the X-Acu-Session header
// carries; the same value in a cookie counts for nothing.
func TestSessions(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := NewSessions(c.now)
	u, exp := s.LoginURL("http://127.0.0.1:18790", "/v1/runs")
	code, ok := strings.CutPrefix(u, "http://127.0.0.1:18790/#code=")
	if !ok || code == "" || !exp.Equal(c.t.Add(LoginCodeTTL)) {
		t.Fatalf("LoginURL = %q, %v; want the code in the fragment, expiring in %v", u, exp, LoginCodeTTL)
	}
	status, got := exchange(t, s, `{"code":"`+code+`"}`)
	if status != 200 || got.Session == "" || got.Next != "/v1/runs" || !got.ExpiresAt.Equal(c.t.Add(SessionTTL)) {
		t.Fatalf("exchange = %d %+v", status, got)
	}
	if !s.Valid(withSession(got.Session)) {
		t.Error("Valid(header with the session) = false")
	}
	cookie := withSession("")
	cookie.AddCookie(&http.Cookie{Name: "acu_session", Value: got.Session})
	if s.Valid(cookie) {
		t.Error("Valid(the session as a cookie) = true, want false: cookies are never credentials")
	}
	if s.Valid(withSession("")) || s.Valid(withSession("forged")) {
		t.Error("Valid without or with a forged session = true")
	}
	if status, _ := exchange(t, s, `{"code":"`+code+`"}`); status != http.StatusUnauthorized {
		t.Errorf("second exchange of a code = %d, want 401", status)
	}

	code2, _ := s.NewCode("")
	c.t = c.t.Add(LoginCodeTTL)
	if status, _ := exchange(t, s, `{"code":"`+code2+`"}`); status != http.StatusUnauthorized {
		t.Errorf("exchange of an expired code = %d, want 401", status)
	}
	if status, _ := exchange(t, s, `not json`); status != http.StatusBadRequest {
		t.Errorf("exchange of garbage = %d, want 400", status)
	}
	c.t = c.t.Add(SessionTTL)
	if s.Valid(withSession(got.Session)) {
		t.Error("a session outlived SessionTTL")
	}
}

func TestScript(t *testing.T) {
	w := httptest.NewRecorder()
	Script(w, httptest.NewRequest("GET", "/session.js", nil))
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") || !strings.Contains(w.Body.String(), SessionHeader) {
		t.Errorf("GET /session.js = %q %.80s", ct, w.Body)
	}
	if strings.Contains(strings.ToLower(w.Body.String()), "document.cookie") {
		t.Error("session.js touches cookies")
	}
}
