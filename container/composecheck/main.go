// Command composecheck loads a compose file exactly as Docker Compose v2
// (`docker compose`, v5.7.1, through its loader compose-go v2.16.2) does,
// with the same project options, and then checks what docs/containers.md
// promises of acu's fleet: PostgreSQL and N desktops with distinct
// ACU_HOST_IDs, each with a health check on /health, published on the
// host's loopback only, the token and the database URL from secrets, and
// volumes for the data. Debian 12 packages no Docker Compose v2, so this is
// what checks compose.yaml against it in CI (podman-compose and
// docker-compose v1 run it for real in scripts/container-test.sh). It is
// its own module so that acu's go.mod does not carry compose-go.
//
//	go run . [-containerfile ../../Containerfile] [-env-file F] [-profile P] ../../compose.yaml
//
// Interpolation takes the process's environment and the .env beside the
// compose file (or -env-file), as `docker compose` does.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("composecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	containerfile := fs.String("containerfile", "", "the desktop image's Containerfile (default: the Containerfile beside the compose file)")
	var envFiles, profiles list
	fs.Var(&envFiles, "env-file", "an env file, as docker compose --env-file (repeatable)")
	fs.Var(&profiles, "profile", "a profile to enable, as docker compose --profile (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: composecheck [flags] COMPOSE.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	file := fs.Arg(0)
	if *containerfile == "" {
		*containerfile = filepath.Join(filepath.Dir(file), "Containerfile")
	}
	sum, err := check(ctx, file, *containerfile, loadOptions{EnvFiles: envFiles, Profiles: profiles})
	if err != nil {
		fmt.Fprintf(stderr, "composecheck: %s:\n%v\n", file, err)
		return 1
	}
	fmt.Fprintf(stdout, "composecheck: %s loads with compose-go v2.16.2 as docker compose v5.7.1 loads it; PostgreSQL and %d desktops (%s) on %s\n",
		file, len(sum.Desktops), strings.Join(sum.HostIDs, ", "), strings.Join(sum.Ports, ", "))
	return 0
}

// check loads file as Docker Compose does and checks the fleet in it
// against the image the Containerfile builds.
func check(ctx context.Context, file, containerfile string, o loadOptions) (summary, error) {
	data, err := os.ReadFile(containerfile)
	if err != nil {
		return summary{}, fmt.Errorf("read the desktop image's Containerfile (-containerfile): %w", err)
	}
	img, err := parseContainerfile(string(data))
	if err != nil {
		return summary{}, fmt.Errorf("%s: %w", containerfile, err)
	}
	o.ConfigPaths = []string{file}
	p, unsupported, err := load(ctx, o)
	if err != nil {
		return summary{}, fmt.Errorf("docker compose would refuse it: %w", err)
	}
	if len(unsupported) > 0 {
		var b strings.Builder
		for _, u := range unsupported {
			fmt.Fprintf(&b, "\n  %s", u.Path)
		}
		return summary{}, fmt.Errorf("docker compose ignores these outside Swarm (it warns, and they do nothing): remove them:%s", b.String())
	}
	return checkFleet(p, img)
}
