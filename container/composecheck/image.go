package main

import (
	"fmt"
	"strings"
)

// image is what the desktop image itself sets, read from its Containerfile:
// compose can only see the service, not the image it runs.
type image struct {
	Env         map[string]string // ENV
	Volumes     []string          // VOLUME
	HealthCheck string            // HEALTHCHECK's command, "" when none
}

// parseContainerfile reads the ENV, VOLUME and HEALTHCHECK instructions of
// the last stage of a Containerfile (continuation lines joined, comments
// dropped).
func parseContainerfile(data string) (image, error) {
	img := image{Env: map[string]string{}}
	var logical []string
	var cur strings.Builder
	for _, line := range strings.Split(data, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur.WriteString(strings.TrimSuffix(t, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(t)
		if s := strings.TrimSpace(cur.String()); s != "" {
			logical = append(logical, s)
		}
		cur.Reset()
	}
	stages := 0
	for _, l := range logical {
		word, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(word) {
		case "FROM":
			stages++
			img = image{Env: map[string]string{}}
		case "ENV":
			for _, f := range strings.Fields(rest) {
				k, v, ok := strings.Cut(f, "=")
				if !ok {
					return img, fmt.Errorf("ENV %q: only the KEY=VALUE form is read here", l)
				}
				img.Env[k] = strings.Trim(v, `"`)
			}
		case "VOLUME":
			img.Volumes = append(img.Volumes, strings.Fields(strings.Trim(rest, "[]"))...)
		case "HEALTHCHECK":
			if strings.EqualFold(rest, "NONE") {
				img.HealthCheck = ""
				continue
			}
			if _, cmd, ok := strings.Cut(rest, "CMD "); ok {
				img.HealthCheck = strings.TrimSpace(cmd)
			}
		}
	}
	if stages == 0 {
		return img, fmt.Errorf("no FROM: not a Containerfile")
	}
	return img, nil
}
