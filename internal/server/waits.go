package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Waits is what the server needs from the wait engine (*smartwait.Engine).
type Waits interface {
	Create(ctx context.Context, s smartwait.Spec) (smartwait.Job, error)
	Get(ctx context.Context, id string) (smartwait.Job, error)
	List(ctx context.Context, o smartwait.ListOptions) (smartwait.Page, error)
	Update(ctx context.Context, id string, u smartwait.Update) (smartwait.Job, error)
	Cancel(ctx context.Context, id, reason string) (smartwait.Job, error)
	Settle(ctx context.Context, s smartwait.SettleSpec) (smartwait.SettleResult, error)
}

// Screenshots captures a target's current frame: PNG at full resolution,
// or the judge's JPEG.
type Screenshots interface {
	Screenshot(ctx context.Context, display, target string, jpeg bool) (Shot, error)
}

// Shot is an encoded screenshot and the geometry it maps to.
type Shot struct {
	Data                    []byte
	Width, Height           int // of the encoded image
	FrameWidth, FrameHeight int // of the captured region
	ScreenWidth             int
	ScreenHeight            int
	OriginX, OriginY        int
	Target                  string
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

func durationField(field string, v float64, required bool) (time.Duration, error) {
	if v == 0 && !required {
		return 0, nil
	}
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 30*86400 {
		return 0, errInvalid(field, "%s must be a positive number of seconds, got %v", field, v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// ToAPIWait converts a job to its wire form (also used by the MCP server).
func ToAPIWait(j smartwait.Job) api.Wait {
	w := api.Wait{ID: j.ID, WaitID: j.ID, Host: j.Host, State: j.Status, Criteria: j.Criteria, Target: j.Target, Display: j.Display, Source: j.Source,
		TaskID: j.TaskID, Timeout: seconds(j.Timeout), PollInterval: seconds(j.PollInterval), CreatedAt: j.CreatedAt,
		Deadline: j.Deadline, Evaluations: j.Evaluations, JudgeErrors: j.JudgeErrors, Skipped: j.Skipped,
		LastError: j.LastError, Evidence: j.Evidence, Screenshot: j.Screenshot, FrameHash: j.FrameHash,
		Message: j.Message, Reason: j.Reason}
	if !j.EndedAt.IsZero() {
		t := j.EndedAt
		w.EndedAt = &t
	}
	if v := j.LastVerdict; v != nil {
		w.LastVerdict = &api.Verdict{At: v.At, Met: v.Met, Evidence: v.Evidence, FrameHash: v.FrameHash,
			LatencyMs: float64(v.Latency.Microseconds()) / 1000, CostUSD: v.CostUSD, CostUnknown: v.CostUnknown, Backend: v.Backend, Model: v.Model,
			Deduped: v.Deduped, Error: v.Error}
	}
	for _, r := range j.History {
		w.History = append(w.History, api.Revision{At: r.At, Criteria: r.Criteria, Timeout: seconds(r.Timeout), Deadline: r.Deadline})
	}
	return w
}

func (s *Server) waits() (Waits, error) {
	if s.opts.Waits == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "the wait engine is not running in this daemon")
	}
	return s.opts.Waits, nil
}

func (s *Server) handleCreateWait(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	var req api.CreateWait
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	crit := strings.TrimSpace(req.Criteria)
	if crit == "" {
		crit = strings.TrimSpace(req.WakeWhen)
	} else if req.WakeWhen != "" && strings.TrimSpace(req.WakeWhen) != crit {
		return errInvalid("wake_when", "give the condition once, as criteria or as wake_when, not both")
	}
	if crit == "" {
		return errInvalid("criteria", "criteria is required: the condition to wait for, e.g. \"the download finished\"")
	}
	timeout, err := durationField("timeout", req.Timeout, false)
	if err != nil {
		return err
	}
	poll, err := durationField("poll_interval", req.PollInterval, false)
	if err != nil {
		return err
	}
	// A wait for another host needs a live daemon there to claim it.
	if _, err := s.elsewhere(r.Context(), req.Host, "host"); err != nil {
		return err
	}
	job, err := eng.Create(r.Context(), smartwait.Spec{Criteria: crit, Timeout: timeout, Target: req.Target,
		Display: req.Display, TaskID: req.TaskID, PollInterval: poll, StrictTarget: req.StrictTarget, Host: req.Host})
	if err != nil {
		if ve, ok := errors.AsType[*smartwait.ValidationError](err); ok && ve.Field == "criteria" && strings.TrimSpace(req.Criteria) == "" {
			ve.Field = "wake_when" // name the field the client sent
		}
		return about(aboutWait, "", err)
	}
	w.Header().Set("Location", "/v1/waits/"+job.ID)
	writeJSON(w, http.StatusCreated, ToAPIWait(job))
	return nil
}

func (s *Server) handleGetWait(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	job, err := eng.Get(r.Context(), id)
	if err != nil {
		return about(aboutWait, id, err)
	}
	writeJSON(w, http.StatusOK, ToAPIWait(job))
	return nil
}

func (s *Server) handleListWaits(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", smartwait.DefaultListLimit, 1, smartwait.MaxListLimit)
	if err != nil {
		return err
	}
	page, err := eng.List(r.Context(), smartwait.ListOptions{State: q.Get("state"), Limit: limit, Before: q.Get("before")})
	if err != nil {
		return about(aboutWait, "", err)
	}
	out := api.WaitList{Waits: make([]api.Wait, 0, len(page.Jobs)), Total: page.Total, Next: page.Next, Truncated: page.Next != ""}
	for _, j := range page.Jobs {
		out.Waits = append(out.Waits, ToAPIWait(j))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleUpdateWait(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var req api.UpdateWait
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Criteria == nil && req.Timeout == nil {
		return errInvalid("", "give criteria, timeout (seconds from now), or both")
	}
	var u smartwait.Update
	if req.Criteria != nil {
		c := strings.TrimSpace(*req.Criteria)
		if c == "" {
			return errInvalid("criteria", "criteria must not be empty")
		}
		u.Criteria = &c
	}
	if req.Timeout != nil {
		d, err := durationField("timeout", *req.Timeout, true)
		if err != nil {
			return err
		}
		u.Timeout = &d
	}
	if err := s.mayChangeWait(r.Context(), "changing", id); err != nil {
		return err
	}
	job, err := eng.Update(r.Context(), id, u)
	if err != nil {
		return about(aboutWait, id, err)
	}
	writeJSON(w, http.StatusOK, ToAPIWait(job))
	return nil
}

func (s *Server) handleCancelWait(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	reason := r.URL.Query().Get("reason")
	if err := smartwait.CheckReason(reason); err != nil {
		return about(aboutWait, id, err)
	}
	if reason == "" {
		reason = "cancelled by a client"
	}
	if err := s.mayChangeWait(r.Context(), "cancelling", id); err != nil {
		return err
	}
	job, err := eng.Cancel(r.Context(), id, reason)
	if err != nil {
		return about(aboutWait, id, err)
	}
	writeJSON(w, http.StatusOK, ToAPIWait(job))
	return nil
}

// mayChangeWait applies mayChangeRun to wait id (a run of the same id);
// an unknown id is left to the engine's own answer.
func (s *Server) mayChangeWait(ctx context.Context, what, id string) error {
	if s.opts.Runs == nil {
		return nil
	}
	run, err := s.opts.Runs.Get(ctx, id)
	if err != nil {
		return nil
	}
	return mayChangeRun(ctx, what, id, run.Creator)
}

func (s *Server) handleSettle(w http.ResponseWriter, r *http.Request) error {
	eng, err := s.waits()
	if err != nil {
		return err
	}
	var req api.SettleRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	quiet, err := durationField("quiet", req.Quiet, false)
	if err != nil {
		return err
	}
	timeout, err := durationField("timeout", req.Timeout, false)
	if err != nil {
		return err
	}
	res, err := eng.Settle(r.Context(), smartwait.SettleSpec{Target: req.Target, Display: req.Display, Quiet: quiet, Timeout: timeout})
	if err != nil {
		return about(aboutWait, "", err)
	}
	writeJSON(w, http.StatusOK, api.SettleResult{RunID: res.RunID, Settled: res.Settled, Waited: seconds(res.Waited),
		Changes: res.Changes, FrameHash: res.FrameHash})
	return nil
}

func (s *Server) handleScreenshot(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Actions != nil {
		return s.handleShot(w, r, s.opts.Actions)
	}
	if s.opts.Screenshots == nil {
		return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "screenshots are not available in this daemon")
	}
	q := r.URL.Query()
	format := q.Get("format")
	var jpeg bool
	switch format {
	case "", "png":
	case "jpeg", "jpg":
		jpeg = true
	default:
		return errInvalid("format", "format must be png or jpeg, got %q", format)
	}
	target := q.Get("target")
	if target == "" {
		target = "screen"
	}
	shot, err := s.opts.Screenshots.Screenshot(r.Context(), q.Get("display"), target, jpeg)
	if err != nil {
		return err
	}
	h := w.Header()
	if jpeg {
		h.Set("Content-Type", "image/jpeg")
	} else {
		h.Set("Content-Type", "image/png")
	}
	h.Set(api.HeaderImageSize, fmt.Sprintf("%dx%d", shot.Width, shot.Height))
	h.Set(api.HeaderFrameSize, fmt.Sprintf("%dx%d", shot.FrameWidth, shot.FrameHeight))
	h.Set(api.HeaderScreenSize, fmt.Sprintf("%dx%d", shot.ScreenWidth, shot.ScreenHeight))
	h.Set(api.HeaderFrameOrigin, fmt.Sprintf("%d,%d", shot.OriginX, shot.OriginY))
	h.Set(api.HeaderTarget, shot.Target)
	_, _ = w.Write(shot.Data)
	return nil
}
