package llm_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// providers is every wire format, for table tests.
var providers = []llm.Provider{llm.OpenAI, llm.Anthropic, llm.Gemini}

// testImage is a w x h picture: red left half, blue right half.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{200, 20, 20, 255}
			if x >= w/2 {
				c = color.RGBA{20, 20, 200, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 72}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newClient starts a fake of provider and a client for it; adjust tweaks the
// options before New.
func newClient(t *testing.T, provider llm.Provider, h llmtest.Handler, adjust func(*llm.Options)) (*llm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t, provider, h)
	opts := srv.Options()
	if adjust != nil {
		adjust(&opts)
	}
	c, err := llm.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, srv
}

func ask(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: "user", Text: text}}, MaxTokens: 50, Temperature: 0.1}
}
