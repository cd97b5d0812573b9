package llm

import (
	"bytes"
	"encoding/base64"
	"fmt"
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
// spliceImages encodes the images straight into one buffer of the exact
// size: one large allocation per call, and encoding/json never touches the
// base64.

// placeholder is the JSON string value that stands for image i.
func placeholder(i int) string { return "acu-image;" + strconv.Itoa(i) }

// spliceImages replaces each `"<key>":"acu-image;<i>"` in body with the
// image's base64 (as a data: URI when dataURI). Text fields cannot forge the
// sequence: encoding/json escapes the quotes in them.
func spliceImages(body []byte, images []Image, key string, dataURI bool) ([]byte, error) {
	if len(images) == 0 {
		return body, nil
	}
	size := len(body)
	for _, im := range images {
		size += len("data:;base64,") + len(imageMIME(im)) + base64.StdEncoding.EncodedLen(len(im.Data))
	}
	out := make([]byte, 0, size)
	rest := body
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
		out = append(out, rest[:at]...)
		out = append(out, '"')
		out = append(out, key...)
		out = append(out, `":"`...)
		if dataURI {
			out = append(out, "data:"...)
			out = append(out, imageMIME(im)...)
			out = append(out, ";base64,"...)
		}
		out = base64.StdEncoding.AppendEncode(out, im.Data)
		out = append(out, '"')
		rest = rest[at+len(marker):]
	}
	return append(out, rest...), nil
}
