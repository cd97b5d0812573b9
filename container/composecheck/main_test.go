package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const containerfile = "../../Containerfile"

// noEnv is an empty environment: compose's defaults (${VAR:-default}) apply.
var noEnv = []string{}

func TestComposeYAML(t *testing.T) {
	sum, err := check(t.Context(), "../../compose.yaml", containerfile, loadOptions{Env: noEnv})
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if want := []string{"desktop-1", "desktop-2", "desktop-3"}; !slices.Equal(sum.HostIDs, want) {
		t.Errorf("ACU_HOST_IDs = %v, want %v", sum.HostIDs, want)
	}
	if want := []string{"127.0.0.1:18801", "127.0.0.1:18802", "127.0.0.1:18803"}; !slices.Equal(sum.Ports, want) {
		t.Errorf("published = %v, want %v (docs/containers.md)", sum.Ports, want)
	}
}

// The variables compose.yaml documents are interpolated from an env file
// and from the environment, and the environment wins, as in docker compose.
func TestComposeYAMLInterpolates(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "fleet.env")
	if err := os.WriteFile(envFile, []byte("FLEET_PORT_1=28801\nFLEET_PORT_2=28802\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum, err := check(t.Context(), "../../compose.yaml", containerfile, loadOptions{
		EnvFiles: []string{envFile},
		Env:      []string{"FLEET_PORT_2=38802"},
	})
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if want := []string{"127.0.0.1:28801", "127.0.0.1:38802", "127.0.0.1:18803"}; !slices.Equal(sum.Ports, want) {
		t.Errorf("published = %v, want %v", sum.Ports, want)
	}
}

func TestOK(t *testing.T) {
	sum, err := check(t.Context(), "testdata/ok.yaml", containerfile, loadOptions{Env: noEnv})
	if err != nil {
		t.Fatalf("testdata/ok.yaml: %v", err)
	}
	if len(sum.Desktops) != 2 {
		t.Errorf("desktops = %v, want 2", sum.Desktops)
	}
}

// Each testdata/bad-*.yaml is ok.yaml broken once; its first line names
// what the check must say about it.
func TestRefuses(t *testing.T) {
	files, err := filepath.Glob("testdata/bad-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/bad-*.yaml: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			want := wantLine(t, file)
			_, err := check(t.Context(), file, containerfile, loadOptions{Env: noEnv})
			if err == nil {
				t.Fatalf("check(%s) = nil, want an error containing %q", file, want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("check(%s) = %v, want an error containing %q", file, err, want)
			}
		})
	}
}

// A desktop enabled only by a profile is checked once the profile is on
// (--profile or COMPOSE_PROFILES), and left out otherwise, as docker
// compose leaves it out.
func TestProfiles(t *testing.T) {
	const file = "testdata/profile.yaml"
	if _, err := check(t.Context(), file, containerfile, loadOptions{Env: noEnv}); err != nil {
		t.Fatalf("check(%s) without the profile: %v", file, err)
	}
	want := wantLine(t, file)
	for name, o := range map[string]loadOptions{
		"--profile":        {Env: noEnv, Profiles: []string{"spare"}},
		"COMPOSE_PROFILES": {Env: []string{"COMPOSE_PROFILES=spare"}},
	} {
		_, err := check(t.Context(), file, containerfile, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: check(%s) = %v, want an error containing %q", name, file, err, want)
		}
	}
}

func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"../../compose.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("run(compose.yaml) = %d, stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "3 desktops") {
		t.Errorf("run(compose.yaml) printed %q, want the 3 desktops", out.String())
	}
	errOut.Reset()
	if code := run(t.Context(), []string{"-containerfile", containerfile, "testdata/bad-all-interfaces.yaml"}, &out, &errOut); code != 1 {
		t.Errorf("run(bad-all-interfaces.yaml) = %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "desktop-2") {
		t.Errorf("run(bad-all-interfaces.yaml) stderr = %q, want the service named", errOut.String())
	}
}

func wantLine(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	want, ok := strings.CutPrefix(s.Text(), "# want: ")
	if !ok || want == "" {
		t.Fatalf("%s: the first line must be \"# want: TEXT OF THE ERROR\"", file)
	}
	return want
}
