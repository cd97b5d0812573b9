package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/actions"
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

// KindAction is the run of an action request handed to another host.
const KindAction = "action"

// remoteActTimeout bounds how long a request handed to another host waits
// for that daemon's answer.
var remoteActTimeout = 5 * time.Minute

// remoteAction is the spec of an action run: the request and who sent it.
type remoteAction struct {
	Request api.ActRequest `json:"request"`
	Client  string         `json:"client,omitempty"`
	Origin  string         `json:"origin"` // the host whose daemon received it
}

// remoteActionResult is an action run's result: the answer, or the error
// with its HTTP status, as the host that ran it would have answered.
type remoteActionResult struct {
	Response *api.ActResponse `json:"response,omitempty"`
	Status   int              `json:"status,omitempty"`
	Error    *api.ErrorDetail `json:"error,omitempty"`
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

// actElsewhere hands req to host's daemon and answers with what it
// answered.
func (s *Server) actElsewhere(w http.ResponseWriter, r *http.Request, req api.ActRequest, client string) error {
	ctx := r.Context()
	host := req.Host
	req.Host = ""
	run, err := s.opts.Fleet.Start(ctx, runs.StartOptions{Kind: KindAction, Host: host,
		Spec: remoteAction{Request: req, Client: client, Origin: s.opts.Fleet.Host()}})
	if err != nil {
		return err
	}
	res, err := s.opts.Runs.Wait(ctx, run.ID, remoteActTimeout)
	if err != nil {
		if errors.Is(err, runs.ErrWaitTimeout) {
			_, _ = s.opts.Runs.End(context.WithoutCancel(ctx), run.ID, runs.StatusError, "no answer from host "+host+" in time", nil)
			return newErr(http.StatusGatewayTimeout, api.CodeUnavailable, "", "host %q did not answer the request within %s: is its daemon stuck? see GET /v1/runs/%s", host, remoteActTimeout, run.ID)
		}
		return err
	}
	ended, err := s.opts.Runs.Get(ctx, run.ID)
	if err != nil {
		return err
	}
	var out remoteActionResult
	if len(ended.Result) > 0 {
		_ = json.Unmarshal(ended.Result, &out)
	}
	switch {
	case out.Response != nil:
		writeJSON(w, http.StatusOK, out.Response)
		return nil
	case out.Error != nil:
		return &httpError{status: out.Status, detail: *out.Error}
	}
	return newErr(http.StatusBadGateway, api.CodeUnavailable, "", "host %q ended the request %s without an answer: %s", host, res.Status, res.Error)
}

// ClaimAction runs an action request another daemon stored for this host
// (a claimed run of kind action) in the background and ends its run with
// the answer. It reports whether run is one it takes.
func (s *Server) ClaimAction(run runs.Run) bool {
	if run.Kind != KindAction || s.opts.Actions == nil {
		return false
	}
	var ra remoteAction
	if err := json.Unmarshal(run.Spec, &ra); err != nil {
		return false
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), remoteActTimeout)
		defer cancel()
		client := "fleet:" + ra.Origin
		if ra.Client != "" {
			client += ":" + ra.Client
		}
		resp, err := s.opts.Actions.Act(ctx, actions.Caller{Client: client, Remote: "host " + ra.Origin}, ra.Request)
		status, errMsg := runs.StatusCompleted, ""
		out := remoteActionResult{Response: &resp}
		if err != nil {
			he, known := response(err)
			if !known {
				he = fail(classInternal, "", "", "%s", err.Error())
			}
			out = remoteActionResult{Status: he.status, Error: &he.detail}
			status, errMsg = runs.StatusError, fmt.Sprintf("%s (%d)", he.detail.Message, he.status)
		}
		if _, err := s.opts.Runs.End(context.WithoutCancel(ctx), run.ID, status, errMsg, out); err != nil && !errors.Is(err, runs.ErrEnded) {
			s.log.Warn("end an action run from another host", "run_id", run.ID, "err", err)
		}
	}()
	return true
}
