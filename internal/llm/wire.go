package llm

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
)

// checkRole validates message i's role; "" means "user".
func checkRole(i int, role string) (string, error) {
	switch role {
	case "", "user":
		return "user", nil
	case "assistant":
		return role, nil
	}
	return "", fmt.Errorf("message %d: role %q: use \"user\" or \"assistant\" (the system prompt goes in Request.System)", i, role)
}

// checkImage validates image j of message i.
func checkImage(i, j int, im Image) error {
	if len(im.Data) == 0 {
		return fmt.Errorf("message %d image %d: no data", i, j)
	}
	switch imageMIME(im) {
	case "image/jpeg", "image/png", "image/webp", "image/gif":
		return nil
	}
	return fmt.Errorf("message %d image %d: type %q: send image/jpeg or image/png", i, j, im.MIME)
}

// imageMIME is the image's MIME type, sniffed from its first bytes when unset.
func imageMIME(im Image) string {
	if im.MIME != "" {
		return im.MIME
	}
	switch {
	case bytes.HasPrefix(im.Data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(im.Data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case len(im.Data) >= 12 && string(im.Data[:4]) == "RIFF" && string(im.Data[8:12]) == "WEBP":
		return "image/webp"
	case bytes.HasPrefix(im.Data, []byte("GIF8")):
		return "image/gif"
	}
	return ""
}

// Images go into request bodies as base64, tens to hundreds of kilobytes
// each. Adapters marshal the body with a short placeholder per image, then
// spliceImages cuts the JSON at each placeholder and puts the image's base64
// between the pieces: the body is a list of segments that the HTTP request
// streams in order. An image whose caller supplied its base64 (Image.Base64)
// is not copied at all, so a thousand waits judging one frame share one
// base64 copy of it; otherwise it is encoded once into a buffer of its own.
// encoding/json never touches the base64.

// body is a request body as segments, sent in order.
type body [][]byte

// Len is the body's size in bytes.
func (b body) Len() int {
	n := 0
	for _, s := range b {
		n += len(s)
	}
	return n
}

// reader streams the body without copying it.
func (b body) reader() io.Reader {
	rs := make([]io.Reader, len(b))
	for i, s := range b {
		rs[i] = bytes.NewReader(s)
	}
	return io.MultiReader(rs...)
}

// Bytes joins the segments (tests and logs only).
func (b body) Bytes() []byte { return bytes.Join(b, nil) }

// placeholder is the JSON string value that stands for image i.
func placeholder(i int) string { return "acu-image;" + strconv.Itoa(i) }

// spliceImages replaces each `"<key>":"acu-image;<i>"` in js with the
// image's base64 (as a data: URI when dataURI). Text fields cannot forge the
// sequence: encoding/json escapes the quotes in them.
func spliceImages(js []byte, images []Image, key string, dataURI bool) (body, error) {
	if len(images) == 0 {
		return body{js}, nil
	}
	out := make(body, 0, 2*len(images)+1)
	rest := js
	var marker []byte
	for i, im := range images {
		marker = append(marker[:0], '"')
		marker = append(marker, key...)
		marker = append(marker, `":"`...)
		marker = append(marker, placeholder(i)...)
		marker = append(marker, '"')
		at := bytes.Index(rest, marker)
		if at < 0 {
			return nil, fmt.Errorf("image %d placeholder not found in the request body", i)
		}
		// rest[:at] then `"key":"` (and the data: prefix) as one segment.
		head := rest[:at+len(marker)-len(placeholder(i))-1]
		if dataURI {
			head = append(head[:len(head):len(head)], "data:"+imageMIME(im)+";base64,"...)
		}
		b64 := im.Base64
		if len(b64) == 0 {
			b64 = base64.StdEncoding.AppendEncode(nil, im.Data)
		}
		out = append(out, head, b64)
		rest = rest[at+len(marker)-1:] // from the closing quote on
	}
	return append(out, rest), nil
}
