package relay

import (
	"encoding/json"
	"strings"
)

// AudioEvent is one transcript chunk extracted from a feed item.
type AudioEvent struct {
	TS   int64  `json:"ts"`
	Text string `json:"text"`
}

// ScreenEvent is one sense event as the context window sees it.
type ScreenEvent struct {
	TS   int64    `json:"ts"`
	Type string   `json:"type"`
	App  string   `json:"app"`
	OCR  string   `json:"ocr"`
	SSIM *float64 `json:"ssim,omitempty"`
}

// AppSwitch is one entry of the app timeline.
type AppSwitch struct {
	App string `json:"app"`
	TS  int64  `json:"ts"`
}

// ContextWindow is the seed's buildContextWindow result.
type ContextWindow struct {
	CurrentApp  string        `json:"currentApp"`
	AppHistory  []AppSwitch   `json:"appHistory"`
	Audio       []AudioEvent  `json:"audio"`
	Screen      []ScreenEvent `json:"screen"`
	AudioCount  int           `json:"audioCount"`
	ScreenCount int           `json:"screenCount"`
	WindowMs    int64         `json:"windowMs"`
}

// Window limits of the seed.
const (
	maxAudioInWindow  = 5
	maxScreenInWindow = 10
	maxOCRInPrompt    = 200 // characters per screen event
	maxAudioInPrompt  = 300 // characters per transcript chunk
)

// BuildContextWindow is the seed's buildContextWindow over snapshots of the
// feed and sense buffers (oldest first), at now (unix ms), looking back
// maxAgeMs: transcript lines ("openrouter]" lines of [PERIODIC] items),
// screen events received in the window, consecutive identical OCR dropped
// (app switches without text always kept), the app timeline, the last 5
// transcript chunks and the last 10 screen events.
func BuildContextWindow(feed []FeedItem, sense []SenseEvent, now, maxAgeMs int64) ContextWindow {
	cutoff := now - maxAgeMs
	var audio []AudioEvent
	for i := range feed {
		m := &feed[i]
		if m.TS < cutoff {
			continue
		}
		if !strings.Contains(m.Text, "[PERIODIC]") && !strings.Contains(m.Text, "openrouter]") {
			continue
		}
		var parts []string
		for _, l := range strings.Split(m.Text, "\n") {
			if !strings.Contains(l, "openrouter]") {
				continue
			}
			if t := strings.TrimSpace(stripSpeakerTag(l)); t != "" {
				parts = append(parts, t)
			}
		}
		if t := strings.Join(parts, " "); t != "" {
			audio = append(audio, AudioEvent{TS: m.TS, Text: t})
		}
	}

	screen := make([]ScreenEvent, 0, len(sense))
	for i := range sense {
		e := &sense[i]
		if e.ReceivedAt < cutoff {
			continue
		}
		app := e.App
		if app == "" {
			app = "unknown"
		}
		screen = append(screen, ScreenEvent{TS: e.TS, Type: e.Type, App: app, OCR: e.OCR, SSIM: e.SSIM})
	}

	cw := ContextWindow{CurrentApp: "unknown", AudioCount: len(audio), ScreenCount: len(screen), WindowMs: maxAgeMs,
		AppHistory: []AppSwitch{}, Audio: []AudioEvent{}, Screen: []ScreenEvent{}}
	if len(screen) > 0 {
		cw.CurrentApp = screen[len(screen)-1].App
	}
	var deduped []ScreenEvent
	lastOCR := ""
	for _, e := range screen {
		if e.OCR != "" && e.OCR != lastOCR {
			deduped = append(deduped, e)
			lastOCR = e.OCR
		} else if e.OCR == "" && e.Type == "context" {
			deduped = append(deduped, e)
		}
	}
	lastApp := ""
	for _, e := range screen {
		if e.App != lastApp {
			cw.AppHistory = append(cw.AppHistory, AppSwitch{App: e.App, TS: e.TS})
			lastApp = e.App
		}
	}
	cw.Audio = append(cw.Audio, lastN(audio, maxAudioInWindow)...)
	cw.Screen = append(cw.Screen, lastN(deduped, maxScreenInWindow)...)
	return cw
}

// stripSpeakerTag removes a leading "[... openrouter]" tag: the seed's
// l.replace(/^\[.*?openrouter\]\s*/, ”).
func stripSpeakerTag(l string) string {
	if !strings.HasPrefix(l, "[") {
		return l
	}
	i := strings.Index(l, "openrouter]")
	if i < 0 {
		return l
	}
	return strings.TrimLeft(l[i+len("openrouter]"):], " \t\r\n\f\v")
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// appNames is the seed's APP_NAMES table.
var appNames = map[string]string{
	"idea":             "IntelliJ IDEA",
	"code":             "VS Code",
	"code - insiders":  "VS Code Insiders",
	"webstorm":         "WebStorm",
	"pycharm":          "PyCharm",
	"datagrip":         "DataGrip",
	"google chrome":    "Chrome",
	"firefox":          "Firefox",
	"safari":           "Safari",
	"telegram lite":    "Telegram",
	"telegram":         "Telegram",
	"iterm2":           "iTerm",
	"terminal":         "Terminal",
	"finder":           "Finder",
	"audio midi setup": "Audio MIDI Setup",
}

// NormalizeAppName is the seed's normalizeAppName: a known application's
// display name, else app unchanged.
func NormalizeAppName(app string) string {
	if n, ok := appNames[strings.ToLower(app)]; ok {
		return n
	}
	return app
}

// clipRunes is JavaScript's s.slice(0, n) for text that is mostly BMP: it
// cuts at n characters, never inside a UTF-8 sequence.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// BuildPrompt is the seed's buildPrompt: the structured-output prompt for
// one context window.
func BuildPrompt(cw ContextWindow) string {
	var screen strings.Builder
	for i, e := range cw.Screen {
		if i > 0 {
			screen.WriteByte('\n')
		}
		ocr := "(no text)"
		if e.OCR != "" {
			ocr = clipRunes(strings.ReplaceAll(e.OCR, "\n", " "), maxOCRInPrompt)
		}
		screen.WriteString("[" + NormalizeAppName(e.App) + "] " + ocr)
	}
	var audio strings.Builder
	for i, e := range cw.Audio {
		if i > 0 {
			audio.WriteByte('\n')
		}
		audio.WriteString(clipRunes(e.Text, maxAudioInPrompt))
	}
	apps := make([]string, len(cw.AppHistory))
	for i, a := range cw.AppHistory {
		apps[i] = NormalizeAppName(a.App)
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	return `You are an AI monitoring a user's screen and audio in real-time.
You produce TWO outputs as JSON.

Active app: ` + NormalizeAppName(cw.CurrentApp) + `
App history: ` + or(strings.Join(apps, " → "), "(none)") + `

Screen (OCR text, newest last):
` + or(screen.String(), "(no screen data)") + `

Audio transcript (newest last):
` + or(audio.String(), "(silence)") + `

Respond with ONLY valid JSON, no markdown:
{
  "hud": "<max 15 words: what user is doing NOW. Terse. No filler.>",
  "digest": "<3-5 sentences: detailed description of user activity, what's on screen, what was said, what they might need help with. Include specifics from OCR text. Mention errors, questions, or tasks if visible.>"
}

Rules:
- "hud" is for a minimal overlay display. Example: "Editing hud-relay.mjs in IDEA"
- "digest" is for an AI assistant to understand the full situation and offer help.
- If nothing is happening, hud="Idle" and digest explains what was last seen.
- Include specific filenames, URLs, error messages, UI text from OCR in digest.
- Do NOT suggest actions in digest — just describe the situation factually.`
}

// noValue is the seed's placeholder for a missing hud or digest.
const noValue = "—"

// Reply is a parsed model answer.
type Reply struct {
	HUD      string
	Digest   string
	ParsedOK bool
}

// ParseReply parses the model's answer as the seed does: strip a markdown
// fence, parse the JSON object, and fall back to the raw text (the first
// 80 characters as the hud line, all of it as the digest). It also finds a
// JSON object embedded in prose, as the seed's relay later learned to.
func ParseReply(raw string) Reply {
	raw = strings.TrimSpace(strings.ToValidUTF8(raw, "\uFFFD"))
	var v struct {
		HUD    any `json:"hud"`
		Digest any `json:"digest"`
	}
	try := func(s string, needHUD bool) bool {
		v.HUD, v.Digest = nil, nil
		if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &v) != nil {
			return false
		}
		return !needHUD || v.HUD != nil
	}
	// The seed: JSON.parse of the unfenced reply, any object counts.
	ok := try(stripFence(raw), false)
	if !ok {
		// A JSON object with a hud inside prose.
		if i, j := strings.IndexByte(raw, '{'), strings.LastIndexByte(raw, '}'); i >= 0 && j > i {
			ok = try(raw[i:j+1], true)
		}
	}
	if ok {
		return Reply{HUD: jsString(v.HUD), Digest: jsString(v.Digest), ParsedOK: true}
	}
	r := Reply{HUD: clipRunes(raw, 80), Digest: raw}
	if r.HUD == "" {
		r.HUD = noValue
	}
	if r.Digest == "" {
		r.Digest = noValue
	}
	return r
}

// jsString renders a parsed JSON value as `parsed.x || '—'` would show it.
func jsString(v any) string {
	switch t := v.(type) {
	case string:
		if t == "" {
			return noValue
		}
		return t
	case nil:
		return noValue
	case bool:
		if !t {
			return noValue
		}
		return "true"
	case float64:
		if t == 0 {
			return noValue
		}
		b, _ := json.Marshal(t)
		return string(b)
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// stripFence removes a leading ```json (or ```) line and a trailing ```.
func stripFence(s string) string {
	if strings.HasPrefix(s, "```") {
		s = s[3:]
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
			s = s[nl+1:]
		} else {
			s = strings.TrimPrefix(s, "json")
		}
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, "```")
	return strings.TrimSpace(s)
}
