package relay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sinainJPEG is a base64 JPEG as sinain-hud's sense_client encodes one
// (sender.encode_image).
func sinainJPEG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestSenseMetaOnly posts events in sense_client's exact wire format
// (sender.SenseSender.send with package_roi, package_full_frame and
// package_diff) and reads them back as sinain-hud's bridge does, with
// GET /sense?meta_only=true: roi.data and diff.data are gone, every other
// field is as posted, in the order posted.
func TestSenseMetaOnly(t *testing.T) {
	h := newHarness(t, nil, nil)
	roi := sinainJPEG(t, 160, 90)
	frame := sinainJPEG(t, 320, 180)
	diff := sinainJPEG(t, 64, 64)
	events := []string{
		`{"type": "text", "ts": 1769901200000, "ocr": "def main():", "meta": {"ssim": 0.82, "app": "code", "windowTitle": "main.py", "screen": 0}, ` +
			`"roi": {"data": "` + roi + `", "bbox": [10, 20, 170, 110], "thumb": false}, "diff": {"data": "` + diff + `"}}`,
		`{"type": "context", "ts": 1769901201000, "ocr": "", "meta": {"ssim": 0.4, "app": "Google Chrome", "windowTitle": "Docs", "screen": 0}, ` +
			`"roi": {"data": "` + frame + `", "bbox": [0, 0, 320, 180], "thumb": false}}`,
		`{"type": "visual", "ts": 1769901202000, "ocr": "Build OK", "meta": {"ssim": 0.9, "app": "iTerm2", "windowTitle": null, "screen": 0}}`,
	}
	for _, e := range events {
		h.post(t, "/sense", e)
	}

	code, full := h.do(t, "GET", "/sense", "")
	if code != 200 {
		t.Fatalf("GET /sense = %d %s", code, full)
	}
	code, meta := h.do(t, "GET", "/sense?meta_only=true", "")
	if code != 200 {
		t.Fatalf("GET /sense?meta_only=true = %d %s", code, meta)
	}
	if len(meta)*20 > len(full) {
		t.Errorf("GET /sense?meta_only=true = %d bytes, /sense = %d: want the images left out", len(meta), len(full))
	}
	if bytes.Contains(meta, []byte(roi[:64])) || bytes.Contains(meta, []byte(diff[:64])) || bytes.Contains(meta, []byte(`"data"`)) {
		t.Errorf("meta_only answer carries image data:\n%s", meta)
	}
	if !bytes.Contains(full, []byte(roi)) || !bytes.Contains(full, []byte(diff)) || !bytes.Contains(full, []byte(frame)) {
		t.Errorf("GET /sense without meta_only lost image data")
	}

	var got struct {
		Events []json.RawMessage `json:"events"`
		Items  []json.RawMessage `json:"items"`
		Epoch  string            `json:"epoch"`
	}
	if err := json.Unmarshal(meta, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 3 || len(got.Items) != 3 || got.Epoch == "" {
		t.Fatalf("meta_only answer = %d events, %d items, epoch %q", len(got.Events), len(got.Items), got.Epoch)
	}
	want := []map[string]any{
		{"id": 1.0, "type": "text", "ts": 1769901200000.0, "ocr": "def main():",
			"meta": map[string]any{"ssim": 0.82, "app": "code", "windowTitle": "main.py", "screen": 0.0},
			"roi":  map[string]any{"bbox": []any{10.0, 20.0, 170.0, 110.0}, "thumb": false}, "diff": map[string]any{}},
		{"id": 2.0, "type": "context", "ts": 1769901201000.0, "ocr": "",
			"meta": map[string]any{"ssim": 0.4, "app": "Google Chrome", "windowTitle": "Docs", "screen": 0.0},
			"roi":  map[string]any{"bbox": []any{0.0, 0.0, 320.0, 180.0}, "thumb": false}},
		{"id": 3.0, "type": "visual", "ts": 1769901202000.0, "ocr": "Build OK",
			"meta": map[string]any{"ssim": 0.9, "app": "iTerm2", "windowTitle": nil, "screen": 0.0}},
	}
	for i, raw := range got.Events {
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		delete(ev, "receivedAt")
		if d := cmp.Diff(want[i], ev); d != "" {
			t.Errorf("event %d (-want +got):\n%s", i+1, d)
		}
	}
	// Members keep the order they were posted in.
	if first := string(got.Events[0]); !strings.HasPrefix(first, `{"id":1,"type":"text","ts":1769901200000,"ocr":"def main():","meta":`) ||
		!strings.Contains(first, `"roi":{"bbox":[10,20,170,110],"thumb":false},"diff":{},"receivedAt":`) {
		t.Errorf("event 1 = %s, want the posted order", first)
	}

	// with after, and the flag's other spellings; false leaves data in.
	var after struct {
		Events []map[string]any `json:"events"`
	}
	h.getJSON(t, "/sense?after=1&meta_only=1", &after)
	if len(after.Events) != 2 || after.Events[0]["roi"].(map[string]any)["data"] != nil {
		t.Errorf("/sense?after=1&meta_only=1 = %v", after.Events)
	}
	h.getJSON(t, "/sense?meta_only=false", &after)
	if after.Events[0]["roi"].(map[string]any)["data"] != roi {
		t.Errorf("/sense?meta_only=false stripped the image")
	}
}

func TestStripImages(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"type":"text","ts":1}`, ""},
		{`{"roi":{"data":"x","bbox":[1]},"ocr":"data"}`, `{"roi":{"bbox":[1]},"ocr":"data"}`},
		{`{"roi":"data","diff":{"data":null}}`, `{"roi":"data","diff":{}}`},
		{`{"meta":{"data":"kept"}}`, ""},
		{`{"roi":{"data":"x"}`, ""},
		{`{"diff":{"data":"x","n":1.50}}`, `{"diff":{"n":1.50}}`},
	}
	for _, tt := range tests {
		if got := string(stripImages([]byte(tt.in))); got != tt.want {
			t.Errorf("stripImages(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
