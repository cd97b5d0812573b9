package main

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// dbService is the service name the fleet's database must have:
// scripts/fleet-secrets.sh writes ACU_DB=postgres://acu:…@postgres:5432/acu.
const dbService = "postgres"

// minShm is the least /dev/shm a desktop gets: Chromium crashes in the
// 64 MB a container gets by default (docs/containers.md).
const minShm = 512 << 20

// summary is what a fleet that passes holds.
type summary struct {
	Desktops []string // service names, sorted
	HostIDs  []string // their ACU_HOST_IDs, in the same order
	Ports    []string // their published host addresses, in the same order
}

// checkFleet checks what docs/containers.md promises of compose.yaml, on
// the project as Docker Compose loaded it: PostgreSQL and N acu desktops
// on it, each with its own ACU_HOST_ID and Host name, a health check on
// /health, the API published on the host's loopback only, the token and
// the database URL from mounted secrets (never in the environment or the
// file), and volumes for the data. img is what the desktop image sets.
func checkFleet(p *types.Project, img image) (summary, error) {
	var sum summary
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	db, ok := p.Services[dbService]
	if !ok {
		bad("no service %q: the fleet's PostgreSQL must be named so (scripts/fleet-secrets.sh writes ACU_DB=postgres://acu:…@postgres:5432/acu)", dbService)
	} else {
		errs = append(errs, checkDB(p, db)...)
	}

	names := make([]string, 0, len(p.Services))
	for name := range p.Services {
		if name != dbService {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		bad("no desktop: add a service with its own ACU_HOST_ID beside %q", dbService)
	}
	hostIDs := map[string]string{}
	published := map[string]string{}
	for _, name := range names {
		s := p.Services[name]
		env := func(k string) string {
			if v := s.Environment[k]; v != nil {
				return *v
			}
			return img.Env[k]
		}
		id := env("ACU_HOST_ID")
		switch {
		case id == "":
			bad("service %s: no ACU_HOST_ID: every desktop of the fleet needs its own (environment: ACU_HOST_ID: %s)", name, name)
		case hostIDs[id] != "":
			bad("service %s: ACU_HOST_ID %q is also %s's: each desktop needs its own, or waits for one are judged on the other", name, id, hostIDs[id])
		default:
			hostIDs[id] = name
		}
		if !slices.Contains(strings.Split(env("ACU_ALLOWED_HOSTS"), ","), name) {
			bad("service %s: ACU_ALLOWED_HOSTS %q lacks %q, the name the other desktops reach it by: add it", name, env("ACU_ALLOWED_HOSTS"), name)
		}
		if _, ok := s.DependsOn[dbService]; !ok {
			bad("service %s: does not depend on %s: add depends_on: [%s]", name, dbService, dbService)
		}
		errs = append(errs, checkHealth(name, s, img, env("ACU_DAEMON_PORT"))...)
		errs = append(errs, checkSecrets(p, name, s, env)...)
		errs = append(errs, checkDataVolume(name, s, env("ACU_DATA_DIR"))...)
		if s.ShmSize < minShm {
			bad("service %s: shm_size %d bytes: Chromium needs at least 512 MB of /dev/shm (shm_size: 1g)", name, s.ShmSize)
		}
		api, _ := strconv.ParseUint(env("ACU_DAEMON_PORT"), 10, 32)
		var addr string
		for _, port := range s.Ports {
			if port.Target == uint32(api) && port.Published != "" {
				addr = hostAddr(port.HostIP, port.Published)
			}
			if port.Published != "" {
				if other := published[hostAddr(port.HostIP, port.Published)]; other != "" {
					bad("service %s: host port %s is also published by %s: give each desktop its own", name, hostAddr(port.HostIP, port.Published), other)
				}
				published[hostAddr(port.HostIP, port.Published)] = name
			}
		}
		if addr == "" {
			bad("service %s: the API port %d is not published on the host: add ports: [\"127.0.0.1:PORT:%d\"]", name, api, api)
		}
		sum.Desktops = append(sum.Desktops, name)
		sum.HostIDs = append(sum.HostIDs, id)
		sum.Ports = append(sum.Ports, addr)
	}
	for _, name := range append([]string{dbService}, names...) {
		s, ok := p.Services[name]
		if !ok {
			continue
		}
		for _, port := range s.Ports {
			if port.Published == "" && port.HostIP == "" {
				bad("service %s: container port %d is published on a random port of every host address: publish it on the loopback (\"127.0.0.1::%d\") or not at all", name, port.Target, port.Target)
				continue
			}
			if ip, err := netip.ParseAddr(port.HostIP); err != nil || !ip.IsLoopback() {
				host := port.HostIP
				if host == "" {
					host = "0.0.0.0 (every address)"
				}
				bad("service %s: port %s:%d is published on %s: publish on the host's loopback only (\"127.0.0.1:%s:%d\"; docs/containers.md, The live view, safely)", name, port.Published, port.Target, host, port.Published, port.Target)
			}
		}
	}
	return sum, errors.Join(errs...)
}

func hostAddr(ip, port string) string {
	if ip == "" {
		ip = "0.0.0.0"
	}
	return ip + ":" + port
}

func checkDB(p *types.Project, db types.ServiceConfig) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("service %s: "+format, append([]any{dbService}, a...)...))
	}
	if !strings.Contains(db.Image, "postgres") {
		bad("image %q is not PostgreSQL's", db.Image)
	}
	if db.Environment["POSTGRES_PASSWORD"] != nil {
		bad("POSTGRES_PASSWORD is in the environment: give it as a secret file (POSTGRES_PASSWORD_FILE: /run/secrets/pg-password)")
	}
	if m := db.Environment["POSTGRES_HOST_AUTH_METHOD"]; m != nil && *m == "trust" {
		bad("POSTGRES_HOST_AUTH_METHOD=trust lets anyone on the network in: remove it")
	}
	if f := db.Environment["POSTGRES_PASSWORD_FILE"]; f == nil {
		bad("no POSTGRES_PASSWORD_FILE: set it to a mounted secret (/run/secrets/pg-password)")
	} else if err := mountedSecret(p, db, *f); err != nil {
		bad("POSTGRES_PASSWORD_FILE: %v", err)
	}
	data := "/var/lib/postgresql/data"
	if v := db.Environment["PGDATA"]; v != nil && *v != "" {
		data = *v
	}
	if !hasVolume(db, data) {
		bad("no volume at %s: the database would be lost with the container (volumes: [pgdata:%s])", data, data)
	}
	return errs
}

// checkHealth: a desktop's health check is its own, or the image's when it
// sets none; either must ask /health on the API port.
func checkHealth(name string, s types.ServiceConfig, img image, port string) []error {
	if hc := s.HealthCheck; hc != nil {
		if hc.Disable || (len(hc.Test) > 0 && hc.Test[0] == "NONE") {
			return []error{fmt.Errorf("service %s: its health check is disabled: compose, `docker ps` and restarts need the image's check on /health; remove healthcheck", name)}
		}
		if len(hc.Test) > 0 {
			cmd := strings.Join(hc.Test[1:], " ")
			if !asksHealth(cmd, port) {
				return []error{fmt.Errorf("service %s: health check %q does not ask http://127.0.0.1:%s/health", name, cmd, port)}
			}
			return nil
		}
	}
	if img.HealthCheck == "" {
		return []error{fmt.Errorf("service %s: no health check: neither the service nor the image (Containerfile HEALTHCHECK) has one", name)}
	}
	if !asksHealth(strings.ReplaceAll(img.HealthCheck, "${ACU_DAEMON_PORT}", port), port) {
		return []error{fmt.Errorf("service %s: the image's health check %q does not ask /health on port %s (the service's ACU_DAEMON_PORT)", name, img.HealthCheck, port)}
	}
	return nil
}

func asksHealth(cmd, port string) bool {
	return strings.Contains(cmd, "127.0.0.1:"+port+"/health") || strings.Contains(cmd, "localhost:"+port+"/health")
}

// checkSecrets: the token and the database URL come from files compose
// mounts from secrets defined outside the file; neither is in the
// environment (every program acu launches on the desktop inherits it).
func checkSecrets(p *types.Project, name string, s types.ServiceConfig, env func(string) string) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("service %s: "+format, append([]any{name}, a...)...))
	}
	if s.Environment["ACU_TOKEN"] != nil {
		bad("ACU_TOKEN is in the environment (every program on the desktop inherits it, `docker inspect` shows it): mount the token as a secret and set ACU_TOKEN_FILE")
	}
	if s.Environment["ACU_DB"] != nil {
		bad("ACU_DB is in the environment, with PostgreSQL's password: put it in the acu-db.env secret and set ACU_CONFIG to it")
	}
	if f := env("ACU_TOKEN_FILE"); f == "" {
		bad("no ACU_TOKEN_FILE: the desktops of a fleet share one token, from a secret (ACU_TOKEN_FILE: /run/secrets/acu-token)")
	} else if err := mountedSecret(p, s, f); err != nil {
		bad("ACU_TOKEN_FILE: %v", err)
	}
	if f := env("ACU_CONFIG"); f == "" {
		bad("no ACU_CONFIG: the desktops need ACU_DB (PostgreSQL) from the acu-db.env secret (ACU_CONFIG: /run/secrets/acu-db.env)")
	} else if err := mountedSecret(p, s, f); err != nil {
		bad("ACU_CONFIG: %v", err)
	}
	return errs
}

// mountedSecret checks that file is where the service mounts a secret
// whose value comes from a file or a variable of the host (the schema
// admits no value in the compose file itself).
func mountedSecret(p *types.Project, s types.ServiceConfig, file string) error {
	for _, ref := range s.Secrets {
		target := ref.Target
		if target == "" {
			target = ref.Source
		}
		if !path.IsAbs(target) {
			target = "/run/secrets/" + target
		}
		if target != file {
			continue
		}
		def, ok := p.Secrets[ref.Source]
		switch {
		case !ok:
			return fmt.Errorf("secret %q is not defined", ref.Source)
		case def.File == "" && def.Environment == "":
			// docker compose refuses an external secret outside Swarm
			// ("unsupported external secret", pkg/compose/create.go), when
			// it creates the container, after loading.
			return fmt.Errorf("secret %q has no file or environment source: outside Swarm docker compose mounts only those", ref.Source)
		}
		return nil
	}
	return fmt.Errorf("%s is not a secret the service mounts: add the secret to its secrets", file)
}

func checkDataVolume(name string, s types.ServiceConfig, dir string) []error {
	if dir == "" {
		return []error{fmt.Errorf("service %s: no ACU_DATA_DIR in the service or the image", name)}
	}
	if !hasVolume(s, dir) {
		return []error{fmt.Errorf("service %s: no volume at %s (ACU_DATA_DIR): the runs, database and token would be lost with the container (volumes: [%s])", name, dir, dir)}
	}
	return nil
}

// hasVolume reports whether a writable volume or bind mount holds dir.
func hasVolume(s types.ServiceConfig, dir string) bool {
	for _, v := range s.Volumes {
		under := v.Target == dir || strings.HasPrefix(dir, strings.TrimSuffix(v.Target, "/")+"/")
		if under && (v.Type == types.VolumeTypeVolume || v.Type == types.VolumeTypeBind) && !v.ReadOnly {
			return true
		}
	}
	return false
}
