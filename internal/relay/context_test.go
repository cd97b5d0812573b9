package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sev(id int64, typ, app, ocr string, at int64) SenseEvent {
	return SenseEvent{ID: id, Type: typ, App: app, OCR: ocr, TS: at, ReceivedAt: at}
}

func TestBuildContextWindow(t *testing.T) {
	const now = 1_000_000
	tests := []struct {
		name  string
		feed  []FeedItem
		sense []SenseEvent
		want  ContextWindow
	}{
		{
			name: "empty",
			want: ContextWindow{CurrentApp: "unknown", AppHistory: []AppSwitch{}, Audio: []AudioEvent{}, Screen: []ScreenEvent{}, WindowMs: 120000},
		},
		{
			name: "transcript lines only from openrouter tags",
			feed: []FeedItem{
				{ID: 1, TS: now - 1000, Text: "[PERIODIC] (normal)\nContext (2 entries):\n[2s ago, openrouter] first part\n[1s ago, openrouter]   second part  \nunrelated line"},
				{ID: 2, TS: now - 500, Text: "advice from the assistant"},
				{ID: 3, TS: now - 400, Text: "[PERIODIC] nothing tagged"},
				{ID: 4, TS: now - 300, Text: "[x openrouter] tagged without PERIODIC"},
				{ID: 5, TS: now - 200_000, Text: "[PERIODIC]\n[old, openrouter] too old"},
			},
			want: ContextWindow{CurrentApp: "unknown", AppHistory: []AppSwitch{}, Screen: []ScreenEvent{}, WindowMs: 120000, AudioCount: 2,
				Audio: []AudioEvent{{TS: now - 1000, Text: "first part second part"}, {TS: now - 300, Text: "tagged without PERIODIC"}}},
		},
		{
			name: "dedup of consecutive OCR, app switches kept, app history",
			sense: []SenseEvent{
				sev(1, "text", "code", "a", now-5000),
				sev(2, "text", "code", "a", now-4000),
				sev(3, "visual", "code", "", now-3500),
				sev(4, "context", "Google Chrome", "", now-3000),
				sev(5, "text", "Google Chrome", "b", now-2000),
				sev(6, "text", "", "a", now-1000),
			},
			want: ContextWindow{CurrentApp: "unknown", WindowMs: 120000, ScreenCount: 6, Audio: []AudioEvent{},
				AppHistory: []AppSwitch{{"code", now - 5000}, {"Google Chrome", now - 3000}, {"unknown", now - 1000}},
				Screen: []ScreenEvent{
					{TS: now - 5000, Type: "text", App: "code", OCR: "a"},
					{TS: now - 3000, Type: "context", App: "Google Chrome"},
					{TS: now - 2000, Type: "text", App: "Google Chrome", OCR: "b"},
					{TS: now - 1000, Type: "text", App: "unknown", OCR: "a"},
				}},
		},
		{
			name: "last 10 screen events, last 5 transcripts, window by receivedAt",
			feed: func() []FeedItem {
				var f []FeedItem
				for i := range 7 {
					f = append(f, FeedItem{ID: int64(i + 1), TS: now - int64(10-i), Text: "[PERIODIC]\n[1s, openrouter] t" + string(rune('0'+i))})
				}
				return f
			}(),
			sense: func() []SenseEvent {
				s := []SenseEvent{{ID: 1, Type: "text", App: "old", OCR: "old", TS: now, ReceivedAt: now - 121_000}}
				for i := range 12 {
					s = append(s, sev(int64(i+2), "text", "code", "o"+string(rune('a'+i)), now-int64(20-i)))
				}
				return s
			}(),
			want: func() ContextWindow {
				cw := ContextWindow{CurrentApp: "code", WindowMs: 120000, ScreenCount: 12, AudioCount: 7,
					AppHistory: []AppSwitch{{"code", now - 20}}}
				for i := 2; i < 7; i++ {
					cw.Audio = append(cw.Audio, AudioEvent{TS: now - int64(10-i), Text: "t" + string(rune('0'+i))})
				}
				for i := 2; i < 12; i++ {
					cw.Screen = append(cw.Screen, ScreenEvent{TS: now - int64(20-i), Type: "text", App: "code", OCR: "o" + string(rune('a'+i))})
				}
				return cw
			}(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BuildContextWindow(tc.feed, tc.sense, now, 120000)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BuildContextWindow() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeAppName(t *testing.T) {
	for in, want := range map[string]string{
		"idea": "IntelliJ IDEA", "IDEA": "IntelliJ IDEA", "Code": "VS Code", "code - insiders": "VS Code Insiders",
		"Google Chrome": "Chrome", "iTerm2": "iTerm", "Telegram Lite": "Telegram", "Audio MIDI Setup": "Audio MIDI Setup",
		"XTerm": "XTerm", "unknown": "unknown", "": "",
	} {
		if got := NormalizeAppName(in); got != want {
			t.Errorf("NormalizeAppName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuildPrompt(t *testing.T) {
	long := strings.Repeat("é", 250)
	cw := ContextWindow{
		CurrentApp: "code",
		AppHistory: []AppSwitch{{"google chrome", 1}, {"telegram", 2}, {"idea", 3}},
		Screen: []ScreenEvent{
			{Type: "context", App: "telegram"},
			{Type: "text", App: "idea", OCR: "line one\nline two"},
			{Type: "text", App: "XTerm", OCR: long},
		},
		Audio: []AudioEvent{{Text: strings.Repeat("w", 400)}, {Text: "short"}},
	}
	p := BuildPrompt(cw)
	for _, want := range []string{
		"Active app: VS Code\n",
		"App history: Chrome → Telegram → IntelliJ IDEA\n",
		"Screen (OCR text, newest last):\n[Telegram] (no text)\n[IntelliJ IDEA] line one line two\n[XTerm] " + strings.Repeat("é", 200) + "\n\nAudio",
		"Audio transcript (newest last):\n" + strings.Repeat("w", 300) + "\nshort\n\nRespond with ONLY valid JSON, no markdown:",
		`- If nothing is happening, hud="Idle" and digest explains what was last seen.`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	empty := BuildPrompt(BuildContextWindow(nil, nil, 0, 1000))
	for _, want := range []string{"Active app: unknown\n", "App history: (none)\n", "\n(no screen data)\n", "\n(silence)\n"} {
		if !strings.Contains(empty, want) {
			t.Errorf("empty prompt lacks %q", want)
		}
	}
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Reply
	}{
		{"plain JSON", `{"hud":"h","digest":"d"}`, Reply{"h", "d", true}},
		{"fenced json", "```json\n{\"hud\":\"h\",\"digest\":\"d\"}\n```", Reply{"h", "d", true}},
		{"fenced bare", "```\n{\"hud\":\"h\",\"digest\":\"d\"}\n```", Reply{"h", "d", true}},
		{"fenced one line", "```json{\"hud\":\"h\",\"digest\":\"d\"}```", Reply{"h", "d", true}},
		{"surrounding space", "  \n{\"hud\":\"h\",\"digest\":\"d\"}\n ", Reply{"h", "d", true}},
		{"missing digest", `{"hud":"h"}`, Reply{"h", "—", true}},
		{"missing hud", `{"digest":"d"}`, Reply{"—", "d", true}},
		{"empty hud", `{"hud":"","digest":"d"}`, Reply{"—", "d", true}},
		{"number hud", `{"hud":42,"digest":"d"}`, Reply{"42", "d", true}},
		{"embedded", `Here you go: {"hud":"h","digest":"d"} done`, Reply{"h", "d", true}},
		{"plain text", "User is idle", Reply{"User is idle", "User is idle", false}},
		{"long text", strings.Repeat("x", 100), Reply{strings.Repeat("x", 80), strings.Repeat("x", 100), false}},
		{"empty", "", Reply{"—", "—", false}},
		{"garbage", "{{{{", Reply{"{{{{", "{{{{", false}},
		{"array", `["hud"]`, Reply{`["hud"]`, `["hud"]`, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseReply(tc.raw); got != tc.want {
				t.Errorf("ParseReply(%q) = %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}

func TestRing(t *testing.T) {
	r := newRing[int](3)
	for i := int64(1); i <= 5; i++ {
		r.push(i, int(i))
	}
	if got := r.after(nil, 0); !cmp.Equal(got, []int{3, 4, 5}) {
		t.Errorf("after(0) = %v", got)
	}
	if got := r.after(nil, 3); !cmp.Equal(got, []int{4, 5}) {
		t.Errorf("after(3) = %v", got)
	}
	if got := r.after(nil, 9); len(got) != 0 {
		t.Errorf("after(9) = %v", got)
	}
	if got := r.tail(nil, 2); !cmp.Equal(got, []int{5, 4}) {
		t.Errorf("tail(2) = %v", got)
	}
	if v, _ := r.last(); v != 5 || r.len() != 3 {
		t.Errorf("last = %d len = %d", v, r.len())
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{`{"hud":"h","digest":"d"}`, "```json\n{}\n```", "plain", "{", "```", "\xff{\"hud\":1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := ParseReply(raw)
		if r.HUD == "" || r.Digest == "" {
			t.Errorf("ParseReply(%q) = %+v: hud and digest must never be empty", raw, r)
		}
	})
}

func FuzzAddSense(f *testing.F) {
	for _, s := range []string{`{"type":"text","ts":1,"ocr":"x","meta":{"app":"a","ssim":0.5}}`, `{"type":"t","ts":1,"id":3}`, `{}`, `[]`, `{"type":"x","ts":1e30}`} {
		f.Add([]byte(s))
	}
	r, err := New(f.Context(), Options{Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := r.AddSense(body)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(ev.raw, &m); err != nil {
			t.Fatalf("served event %q is not JSON: %v", ev.raw, err)
		}
		if m["id"] != float64(ev.ID) {
			t.Errorf("served id %v, want %d", m["id"], ev.ID)
		}
	})
}
