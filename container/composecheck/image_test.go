package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseContainerfile(t *testing.T) {
	data, err := os.ReadFile(containerfile)
	if err != nil {
		t.Fatal(err)
	}
	img, err := parseContainerfile(string(data))
	if err != nil {
		t.Fatalf("parseContainerfile(%s): %v", containerfile, err)
	}
	for k, want := range map[string]string{"ACU_DAEMON_PORT": "18790", "ACU_DATA_DIR": "/var/lib/acu", "ACU_NOTIFIERS": ""} {
		if got, ok := img.Env[k]; !ok || got != want {
			t.Errorf("ENV %s = %q (set: %v), want %q", k, got, ok, want)
		}
	}
	if !strings.Contains(img.HealthCheck, "/health") {
		t.Errorf("HEALTHCHECK = %q, want a request for /health", img.HealthCheck)
	}
}

// Without the image's HEALTHCHECK (an earlier stage's does not count) a
// fleet whose services set none has no health check.
func TestImageWithoutHealthCheck(t *testing.T) {
	_, err := check(t.Context(), "testdata/ok.yaml", "testdata/no-healthcheck.Containerfile", loadOptions{Env: noEnv})
	if err == nil || !strings.Contains(err.Error(), "no health check") {
		t.Fatalf("check(ok.yaml, no-healthcheck.Containerfile) = %v, want \"no health check\"", err)
	}
}
