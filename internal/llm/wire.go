package llm

import (
	"bytes"
	"fmt"
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
