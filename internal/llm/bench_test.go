package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchFrame is a 960x540 JPEG at quality 72 with UI-like content (flat
// areas, text-like stripes, a gradient), about the size the judge sends.
func benchFrame(b *testing.B) []byte {
	b.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 960, 540))
	for y := 0; y < 540; y++ {
		for x := 0; x < 960; x++ {
			c := color.RGBA{30, 30, 36, 255}
			switch {
			case y < 30:
				c = color.RGBA{uint8(x / 4), 80, 160, 255}
			case (y/16)%3 == 0 && x%200 < 150 && ((x/4)*7+(y/3)*5)%13 < 4:
				c = color.RGBA{220, 220, 220, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 72}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchRequest(b *testing.B) Request {
	return Request{
		System:      "You judge screenshots. Answer YES or NO, then one sentence of evidence.",
		Messages:    []Message{{Role: "user", Text: "Condition: the terminal shows \"Build succeeded\". Waiting 12s.", Images: []Image{{MIME: "image/jpeg", Data: benchFrame(b)}}}},
		MaxTokens:   150,
		Temperature: 0.1,
	}
}

// BenchmarkEncode: building one judge request body per provider.
func BenchmarkEncode(b *testing.B) {
	req := benchRequest(b)
	b.Logf("frame: %d bytes JPEG", len(req.Messages[0].Images[0].Data))
	shared := req
	im := req.Messages[0].Images[0]
	im.Base64 = base64.StdEncoding.AppendEncode(nil, im.Data)
	shared.Messages = []Message{{Role: "user", Text: req.Messages[0].Text, Images: []Image{im}}}
	for p, w := range wires {
		for _, v := range []struct {
			name string
			req  *Request
		}{{"", &req}, {"/shared-base64", &shared}} {
			b.Run(string(p)+v.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(im.Data)))
				for b.Loop() {
					if _, err := w.encode(v.req, "google/gemini-2.0-flash-lite-001"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecode: parsing a typical judge reply per provider.
func BenchmarkDecode(b *testing.B) {
	bodies := map[Provider]string{
		OpenAI:    `{"id":"gen-1","object":"chat.completion","created":1,"model":"google/gemini-2.0-flash-lite-001","choices":[{"index":0,"message":{"role":"assistant","content":"YES: the terminal shows Build succeeded.","reasoning":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":1310,"completion_tokens":9,"total_tokens":1319}}`,
		Anthropic: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"YES: the terminal shows Build succeeded."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1310,"output_tokens":9}}`,
		Gemini:    `{"candidates":[{"content":{"parts":[{"text":"YES: the terminal shows Build succeeded."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1310,"candidatesTokenCount":9,"totalTokenCount":1319},"modelVersion":"gemini-2.0-flash-lite-001"}`,
	}
	for p, body := range bodies {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			data := []byte(body)
			for b.Loop() {
				if _, err := wires[p].decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChat: a whole call over loopback against a canned server that
// discards the body, so the figure is the client's own cost plus loopback.
func BenchmarkChat(b *testing.B) {
	req := benchRequest(b)
	reply := []byte(`{"model":"google/gemini-2.0-flash-lite-001","choices":[{"message":{"content":"NO: still compiling"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1310,"completion_tokens":6}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	b.Cleanup(srv.Close)
	c, err := New(Options{Provider: OpenAI, BaseURL: srv.URL + "/v1", Model: "google/gemini-2.0-flash-lite-001", APIKey: "k", Name: "judge"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(req.Messages[0].Images[0].Data)))
	for b.Loop() {
		if _, err := c.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
