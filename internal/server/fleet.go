package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// Fleet is what the server needs to hand work to another host's daemon
// through the shared database (*runs.Registry): start a run stored for
// that host, which its daemon claims.
type Fleet interface {
	Host() string
	AliveHosts(ctx context.Context) ([]string, error)
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	LiveOwners(ctx context.Context) ([]runs.Owner, error)
}

// handleHosts lists every host with a live process (GET /v1/hosts): its
// processes and the displays they serve.
func (s *Server) handleHosts(w http.ResponseWriter, r *http.Request) error {
	f := s.opts.Fleet
	if f == nil {
		return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "this daemon keeps no owners")
	}
	owners, err := f.LiveOwners(r.Context())
	if err != nil {
		return err
	}
	out := api.HostList{Hosts: []api.Host{}, Self: f.Host()}
	now := time.Now()
	for _, o := range owners {
		if n := len(out.Hosts); n == 0 || out.Hosts[n-1].Host != o.Host {
			out.Hosts = append(out.Hosts, api.Host{Host: o.Host, Displays: []string{}})
		}
		h := &out.Hosts[len(out.Hosts)-1]
		h.Processes = append(h.Processes, api.RunOwner{ID: o.ID, Host: o.Host, PID: o.PID, Program: o.Program,
			StartedAt: o.StartedAt, LeaseUntil: o.LeaseUntil, Alive: !o.Expired(now)})
		for _, d := range o.Displays {
			if !slices.Contains(h.Displays, d) {
				h.Displays = append(h.Displays, d)
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// elsewhere reports whether host names another host of the fleet than this
// daemon's, checking that one of its processes is alive.
func (s *Server) elsewhere(ctx context.Context, host, field string) (bool, error) {
	if host == "" {
		return false, nil
	}
	f := s.opts.Fleet
	if f == nil {
		return false, errInvalid(field, "%s: this daemon is not part of a fleet (ACU_DB is not a shared PostgreSQL database): leave it empty", field)
	}
	if host == f.Host() {
		return false, nil
	}
	alive, err := f.AliveHosts(ctx)
	if err != nil {
		return false, err
	}
	if !slices.Contains(alive, host) {
		return false, errInvalid(field, "%s: no daemon of host %q is running (hosts now: %s): start acu serve there with ACU_HOST_ID=%s on this database",
			field, host, strings.Join(alive, ", "), host)
	}
	return true, nil
}

// Handoff hands action requests to other hosts' daemons
// (*handoff.Handoff).
type Handoff interface {
	Send(ctx context.Context, host string, req api.ActRequest, client string) (api.ActResponse, error)
}

// actElsewhere hands req to host's daemon and answers with what it
// answered.
func (s *Server) actElsewhere(w http.ResponseWriter, r *http.Request, req api.ActRequest, client string) error {
	if s.opts.Handoff == nil {
		return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "host", "this daemon hands no requests to other hosts")
	}
	resp, err := s.opts.Handoff.Send(r.Context(), req.Host, req, client)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
