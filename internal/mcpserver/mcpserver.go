// Package mcpserver exposes acu's agent-facing tools over the Model Context
// Protocol (with the official Go SDK): smart_wait, wait_status,
// wait_update, wait_cancel, settle and screenshot. The tools are a thin
// skin over the daemon's public HTTP API (the Backend interface, which
// *api.Client satisfies), so `acu mcp` over stdio and the daemon's /mcp
// endpoint behave exactly like the HTTP API and share its validation and
// error messages.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// Backend is what the tools need from acu (*api.Client).
type Backend interface {
	CreateWait(ctx context.Context, w api.CreateWait) (api.Wait, error)
	GetWait(ctx context.Context, id string) (api.Wait, error)
	UpdateWait(ctx context.Context, id string, u api.UpdateWait) (api.Wait, error)
	CancelWait(ctx context.Context, id, reason string) (api.Wait, error)
	WaitRun(ctx context.Context, id string, timeout time.Duration) (api.WaitResult, error)
	Settle(ctx context.Context, s api.SettleRequest) (api.SettleResult, error)
	Screenshot(ctx context.Context, display, target, format string) (api.Shot, error)
}

// Options configure the server.
type Options struct {
	Version string
	Logger  *slog.Logger
	// MaxBlock caps how long smart_wait and wait_status may block in one
	// call (default 55 s: MCP clients tend to time tool calls out after
	// about a minute; agents call wait_status again to keep waiting).
	MaxBlock time.Duration
	// ProgressEvery is the interval of progress notifications while a call
	// blocks (default 2 s).
	ProgressEvery time.Duration
	// Conformance adds the MCP conformance suite's test fixtures
	// (conformance.go; ACU_MCP_CONFORMANCE). Never on in production.
	Conformance bool
}

type tools struct {
	b    Backend
	act  ActBackend // nil: screenshot takes no options beyond format
	opts Options
}

// New returns an MCP server with acu's tools.
func New(b Backend, opts Options) *mcp.Server {
	if opts.MaxBlock <= 0 {
		opts.MaxBlock = 55 * time.Second
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	so := &mcp.ServerOptions{Logger: opts.Logger, Instructions: instructions}
	if opts.Conformance {
		withConformance(so)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "acu", Title: "acu: eyes and hands on a Linux desktop", Version: opts.Version}, so)
	t := &tools{b: b, opts: opts}
	addTool(s, &mcp.Tool{Name: "smart_wait", Description: smartWaitDesc, Annotations: additive}, t.smartWait)
	addTool(s, &mcp.Tool{Name: "wait_status", Description: waitStatusDesc, Annotations: readOnly}, t.waitStatus)
	addTool(s, &mcp.Tool{Name: "wait_update", Description: waitUpdateDesc, Annotations: additive}, t.waitUpdate)
	addTool(s, &mcp.Tool{Name: "wait_cancel", Description: waitCancelDesc, Annotations: destructive}, t.waitCancel)
	addTool(s, &mcp.Tool{Name: "settle", Description: settleDesc, Annotations: readOnly}, t.settle)
	addTool(s, &mcp.Tool{Name: "screenshot", Description: screenshotDesc, Annotations: readOnly}, t.screenshot)
	if tb, ok := b.(TaskBackend); ok {
		AddTaskTools(s, tb, opts)
	}
	if ab, ok := b.(ActBackend); ok {
		t.act = ab
		AddActTools(s, ab)
	}
	if db, ok := b.(DesktopBackend); ok {
		AddDesktopTools(s, db)
	}
	if tl, ok := b.(TaskLogBackend); ok {
		AddDETMTools(s, t, tl)
	}
	if cb, ok := b.(ComputerBackend); ok {
		AddComputerTools(s, cb)
	}
	if rb, ok := b.(RunResumer); ok {
		addTool(s, &mcp.Tool{Name: "run_resume", Description: runResumeDesc, Annotations: additive}, (&resumeTool{rb}).resume)
	}
	if opts.Conformance {
		addConformance(s)
	}
	s.AddReceivingMiddleware(refuseNotOffered)
	return s
}

const instructions = `acu watches this computer's screen for you. Instead of taking screenshots in a loop, call smart_wait with a plain-language condition and a timeout: acu judges the screen cheaply whenever it changes and wakes you when the condition holds (or at the timeout). Use settle after an action instead of guessing a sleep.`

const smartWaitDesc = `Wait until a condition is visible on screen, instead of polling screenshots yourself.
acu watches the target, asks a cheap judge "is this condition met?" whenever the screen changes (and at least every poll_interval seconds), and ends the wait the moment the answer is YES, or at the timeout.
Give the condition as something visible: "the download finished", "\"Build succeeded\" is visible", "the Save dialog is gone". With the built-in OCR judge (no API key), quote the exact text: "\"Done\" is visible" or "\"Loading...\" is gone". Windows, controls and progress are read from the accessibility tree with no key at all: "the Save dialog is open", "the Install button is enabled", "the download progress reaches 100%", "the window 'Downloads' is gone".
By default returns at once with the job (id, state "watching"); the agent is woken by acu's notifier when it ends. Set block_seconds (up to 55) to wait here instead, with progress notifications; if it is still watching when that runs out, call wait_status with block_seconds to keep waiting.
Final states: resolved (evidence says what was seen), timeout, cancelled, error.`

const waitStatusDesc = `Get a smart_wait job's state, judgements so far, last verdict and evidence. Set block_seconds (up to 55) to wait for the job to end first.`

const waitUpdateDesc = `Change a live smart_wait job: replace its criteria, or reset its clock with a new timeout counted from now (for when you were woken too early). Its history is kept.`

const waitCancelDesc = `Cancel a live smart_wait job, with an optional reason.`

const settleDesc = `Wait until the screen (or a window) stops changing for quiet seconds, at most timeout seconds. Model-free and exact: use it after clicking or typing instead of a fixed sleep. Returns settled=false if it kept changing until the timeout.`

const screenshotDesc = `Take a screenshot of the screen, a window (target "window:<title or id>") or a region (target "crop:x1,y1,x2,y2" in 0..1000). Returns the image and the sizes it maps to: image size, the captured region's size and origin in screen pixels, and the screen size, and the screenshot's id: click its pixels with click(x, y, shot=id). format "jpeg" (default) is downsized to max_width (default 960) or by scale; "png" is full resolution. labels=true draws each element id (from desktop_state) on it.`

// WaitArgs are smart_wait's arguments.
type WaitArgs struct {
	Criteria     string  `json:"criteria,omitempty" jsonschema:"the condition to wait for, in plain language"`
	WakeWhen     string  `json:"wake_when,omitempty" jsonschema:"another name for criteria"`
	Timeout      float64 `json:"timeout,omitempty" jsonschema:"seconds before giving up (default 300)"`
	Target       string  `json:"target,omitempty" jsonschema:"screen (default), window:<title or id>, crop:x1,y1,x2,y2 (0..1000), pty:<tmux session>"`
	Display      string  `json:"display,omitempty" jsonschema:"X display such as :99 (default: the daemon's)"`
	TaskID       string  `json:"task_id,omitempty" jsonschema:"task whose progress log gets the outcome"`
	PollInterval float64 `json:"poll_interval,omitempty" jsonschema:"backstop seconds between judgements when nothing changes (default 1)"`
	StrictTarget bool    `json:"strict_target,omitempty" jsonschema:"fail at once when the target window is not open (default: wait for it to open)"`
	Host         string  `json:"host,omitempty" jsonschema:"in a fleet of daemons sharing one database: the host (ACU_HOST_ID) whose display to watch; its daemon runs the wait (default: this daemon's)"`
	BlockSeconds float64 `json:"block_seconds,omitempty" jsonschema:"wait here up to this many seconds (max 55) before returning; 0 returns at once"`
}

// StatusArgs are wait_status's arguments.
type StatusArgs struct {
	ID           string  `json:"id,omitempty" jsonschema:"the job id smart_wait returned; omit both id and wait_id to list every live job"`
	WaitID       string  `json:"wait_id,omitempty" jsonschema:"another name for id"`
	BlockSeconds float64 `json:"block_seconds,omitempty" jsonschema:"wait up to this many seconds (max 55) for the job to end"`
}

// UpdateArgs are wait_update's arguments.
type UpdateArgs struct {
	ID       string  `json:"id,omitempty" jsonschema:"the job id"`
	WaitID   string  `json:"wait_id,omitempty" jsonschema:"another name for id"`
	Criteria string  `json:"criteria,omitempty" jsonschema:"the new condition"`
	WakeWhen string  `json:"wake_when,omitempty" jsonschema:"another name for criteria"`
	Timeout  float64 `json:"timeout,omitempty" jsonschema:"a new timeout in seconds, counted from now"`
	Message  string  `json:"message,omitempty" jsonschema:"a note for the job's history (its task's log when it has a task_id)"`
}

// CancelArgs are wait_cancel's arguments.
type CancelArgs struct {
	ID     string `json:"id,omitempty" jsonschema:"the job id"`
	WaitID string `json:"wait_id,omitempty" jsonschema:"another name for id"`
	Reason string `json:"reason,omitempty" jsonschema:"why it is cancelled"`
}

// SettleArgs are settle's arguments.
type SettleArgs struct {
	Target  string  `json:"target,omitempty" jsonschema:"what must stop changing (default screen)"`
	Display string  `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
	Quiet   float64 `json:"quiet,omitempty" jsonschema:"seconds without change that count as settled (default 1)"`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"give up after this many seconds (default 30)"`
}

// ShotArgs are screenshot's arguments.
type ShotArgs struct {
	Target   string  `json:"target,omitempty" jsonschema:"screen (default), window:<title or id>, crop:x1,y1,x2,y2"`
	Region   string  `json:"region,omitempty" jsonschema:"another name for target"`
	Display  string  `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
	Format   string  `json:"format,omitempty" jsonschema:"jpeg (default, downsized) or png (full resolution)"`
	MaxWidth int     `json:"max_width,omitempty" jsonschema:"jpeg: at most this many pixels wide (default 960)"`
	Scale    float64 `json:"scale,omitempty" jsonschema:"scale the image by this factor, 0..1, instead of max_width"`
	Quality  int     `json:"quality,omitempty" jsonschema:"jpeg quality 1..100 (default 72)"`
	Labels   bool    `json:"labels,omitempty" jsonschema:"draw each element id on the image (set-of-marks)"`
}

// ShotInfo is screenshot's structured result.
type ShotInfo struct {
	ID           string `json:"id,omitempty"`
	Target       string `json:"target"`
	ImageWidth   int    `json:"image_width"`
	ImageHeight  int    `json:"image_height"`
	RegionX      int    `json:"region_x"`
	RegionY      int    `json:"region_y"`
	RegionWidth  int    `json:"region_width"`
	RegionHeight int    `json:"region_height"`
	ScreenWidth  int    `json:"screen_width"`
	ScreenHeight int    `json:"screen_height"`
}

func (t *tools) smartWait(ctx context.Context, req *mcp.CallToolRequest, in WaitArgs) (*mcp.CallToolResult, api.Wait, error) {
	block, err := blockDuration(in.BlockSeconds, t.opts.MaxBlock)
	if err != nil {
		return nil, api.Wait{}, err
	}
	w, err := t.b.CreateWait(ctx, api.CreateWait{Criteria: in.Criteria, WakeWhen: in.WakeWhen, Timeout: in.Timeout,
		Target: in.Target, Display: in.Display, TaskID: in.TaskID, PollInterval: in.PollInterval, StrictTarget: in.StrictTarget, Host: in.Host})
	if err != nil {
		return nil, api.Wait{}, err
	}
	if block > 0 {
		w, err = t.blockOn(ctx, req, w, block)
		return textResult(describe(w)), w, err
	}
	// DETM's answer, which its clients parse: JSON text.
	b, _ := json.Marshal(map[string]string{"wait_id": w.ID, "status": w.State, "target": w.Target, "message": describe(w)})
	return textResult(string(b)), w, nil
}

// WaitStatus is wait_status's structured result: one job, or with no id
// the live jobs (DETM's listing call).
type WaitStatus struct {
	api.Wait
	Waits []api.Wait `json:"waits,omitempty"`
	// Total and Truncated come with Waits: how many live jobs there are in
	// all, and whether Waits leaves some out.
	Total     int  `json:"total,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
}

func (t *tools) waitStatus(ctx context.Context, req *mcp.CallToolRequest, in StatusArgs) (*mcp.CallToolResult, WaitStatus, error) {
	id, err := oneID(in.ID, in.WaitID)
	if err != nil {
		return nil, WaitStatus{}, err
	}
	if id == "" {
		if l, ok := t.b.(waitLister); ok {
			return t.listWaits(ctx, l)
		}
		return nil, WaitStatus{}, errors.New("wait_status: give the job's id")
	}
	block, err := blockDuration(in.BlockSeconds, t.opts.MaxBlock)
	if err != nil {
		return nil, WaitStatus{}, err
	}
	w, err := t.b.GetWait(ctx, id)
	if err != nil {
		return nil, WaitStatus{}, err
	}
	if block > 0 && w.State == "watching" {
		w, err = t.blockOn(ctx, req, w, block)
	}
	return textResult(describe(w)), WaitStatus{Wait: w}, err
}

// oneID is the job id given as id or as DETM's wait_id.
func oneID(id, waitID string) (string, error) {
	if id != "" && waitID != "" && id != waitID {
		return "", fmt.Errorf("id %q and wait_id %q name different jobs: give one", id, waitID)
	}
	if id == "" {
		id = waitID
	}
	return id, nil
}

// blockOn waits up to d for the job to end, sending progress notifications
// when the client asked for them.
func (t *tools) blockOn(ctx context.Context, req *mcp.CallToolRequest, w api.Wait, d time.Duration) (api.Wait, error) {
	err := waitForRun(ctx, t.b, req, w.ID, d, t.opts.ProgressEvery, func() (string, bool) {
		cur, err := t.b.GetWait(ctx, w.ID)
		return progressLine(cur), err == nil
	})
	if err != nil {
		return w, err
	}
	return t.b.GetWait(ctx, w.ID)
}

// runWaiter is what waitForRun needs: the run wait that resolves on the
// run's lifecycle end.
type runWaiter interface {
	WaitRun(ctx context.Context, id string, timeout time.Duration) (api.WaitResult, error)
}

// waitForRun blocks until run id's lifecycle ends or d passes (which is
// not an error: the caller reports the run as it is). While it waits it
// sends a progress notification every interval when the client gave a
// progress token; progress returns the message, or false to skip one.
func waitForRun(ctx context.Context, b runWaiter, req *mcp.CallToolRequest, id string, d, every time.Duration, progress func() (string, bool)) error {
	done := make(chan struct{})
	wctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		_, _ = b.WaitRun(wctx, id, d)
	}()
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	step := 0.0
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if token == nil || req.Session == nil {
				continue
			}
			msg, ok := progress()
			if !ok {
				continue
			}
			step++
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: step, Message: msg})
		}
	}
}

// blockDuration validates block_seconds and caps it at limit.
func blockDuration(secs float64, limit time.Duration) (time.Duration, error) {
	if secs < 0 {
		return 0, fmt.Errorf("block_seconds must not be negative")
	}
	return min(time.Duration(secs*float64(time.Second)), limit), nil
}

func progressLine(w api.Wait) string {
	el := time.Since(w.CreatedAt).Truncate(time.Second)
	msg := fmt.Sprintf("%s/%gs, %d judgements", el, w.Timeout, w.Evaluations)
	if v := w.LastVerdict; v != nil {
		if v.Error != "" {
			msg += ", judge error: " + v.Error
		} else if v.Evidence != "" {
			msg += ", last: " + v.Evidence
		}
	}
	return msg
}

func describe(w api.Wait) string {
	switch w.State {
	case "watching":
		return fmt.Sprintf("Job %s is watching %s for: %s (timeout %gs, %d judgements so far). You will be woken when it ends; wait_status with block_seconds waits here.",
			w.ID, w.Target, w.Criteria, w.Timeout, w.Evaluations)
	default:
		if w.Message != "" {
			return w.Message
		}
		return fmt.Sprintf("Job %s ended %s. %s", w.ID, w.State, w.Reason)
	}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (t *tools) waitUpdate(ctx context.Context, _ *mcp.CallToolRequest, in UpdateArgs) (*mcp.CallToolResult, api.Wait, error) {
	id, err := oneID(in.ID, in.WaitID)
	if err != nil || id == "" {
		return nil, api.Wait{}, errors.Join(err, errors.New("wait_update: give the job's id (id or wait_id)"))
	}
	crit := strings.TrimSpace(in.Criteria)
	if crit == "" {
		crit = strings.TrimSpace(in.WakeWhen)
	}
	var u api.UpdateWait
	if crit != "" {
		u.Criteria = &crit
	}
	if in.Timeout != 0 {
		u.Timeout = &in.Timeout
	}
	var w api.Wait
	if u.Criteria == nil && u.Timeout == nil {
		w, err = t.b.GetWait(ctx, id) // a note only
	} else {
		w, err = t.b.UpdateWait(ctx, id, u)
	}
	if err != nil {
		return nil, api.Wait{}, err
	}
	text := describe(w)
	if in.Message != "" {
		if tl, ok := t.b.(TaskLogBackend); ok && w.TaskID != "" {
			if _, err := tl.AppendTaskLog(ctx, w.TaskID, api.AppendTaskLog{Message: "wait " + w.ID + ": " + in.Message}); err != nil {
				return nil, api.Wait{}, err
			}
			text += " Note logged on task " + w.TaskID + "."
		} else {
			text += " (The note was not kept: the job has no task_id.)"
		}
	}
	return textResult(text), w, nil
}

func (t *tools) waitCancel(ctx context.Context, _ *mcp.CallToolRequest, in CancelArgs) (*mcp.CallToolResult, api.Wait, error) {
	id, err := oneID(in.ID, in.WaitID)
	if err != nil || id == "" {
		return nil, api.Wait{}, errors.Join(err, errors.New("wait_cancel: give the job's id (id or wait_id)"))
	}
	w, err := t.b.CancelWait(ctx, id, in.Reason)
	if err != nil {
		return nil, api.Wait{}, err
	}
	return textResult(fmt.Sprintf("Job %s cancelled.", w.ID)), w, nil
}

func (t *tools) settle(ctx context.Context, _ *mcp.CallToolRequest, in SettleArgs) (*mcp.CallToolResult, api.SettleResult, error) {
	r, err := t.b.Settle(ctx, api.SettleRequest{Target: in.Target, Display: in.Display, Quiet: in.Quiet, Timeout: in.Timeout})
	if err != nil {
		return nil, api.SettleResult{}, err
	}
	msg := fmt.Sprintf("Settled after %.2fs (%d changes seen).", r.Waited, r.Changes)
	if !r.Settled {
		msg = fmt.Sprintf("Still changing after %.2fs (%d changes seen): not settled.", r.Waited, r.Changes)
	}
	return textResult(msg), r, nil
}

func (t *tools) screenshot(ctx context.Context, _ *mcp.CallToolRequest, in ShotArgs) (*mcp.CallToolResult, ShotInfo, error) {
	format := in.Format
	if format == "" {
		format = "jpeg"
	}
	target := in.Target
	if target == "" {
		target = in.Region
	}
	var s api.Shot
	var err error
	if t.act != nil {
		s, err = t.act.ScreenshotWith(ctx, in.Display, api.ShotOptions{Format: format, Region: target, MaxWidth: in.MaxWidth,
			Scale: in.Scale, Quality: in.Quality, Labels: in.Labels})
	} else {
		if in.MaxWidth != 0 || in.Scale != 0 || in.Quality != 0 || in.Labels {
			return nil, ShotInfo{}, fmt.Errorf("this acu cannot size or label screenshots: leave max_width, scale, quality and labels out")
		}
		s, err = t.b.Screenshot(ctx, in.Display, target, format)
	}
	if err != nil {
		return nil, ShotInfo{}, err
	}
	info := ShotInfo{ID: s.ID, Target: s.Target, ImageWidth: s.Width, ImageHeight: s.Height, RegionX: s.Origin[0], RegionY: s.Origin[1],
		RegionWidth: s.FrameWidth, RegionHeight: s.FrameHeight, ScreenWidth: s.ScreenWidth, ScreenHeight: s.ScreenHeight}
	text := fmt.Sprintf("%s: image %dx%d showing the region %dx%d at (%d,%d) of a %dx%d screen.",
		s.Target, s.Width, s.Height, s.FrameWidth, s.FrameHeight, s.Origin[0], s.Origin[1], s.ScreenWidth, s.ScreenHeight)
	if s.ID != "" {
		text += fmt.Sprintf(" Its id is %s: click its pixels with click(x, y, shot=%q).", s.ID, s.ID)
	}
	mime := s.ContentType
	if mime == "" {
		mime = "image/" + format
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: s.Data, MIMEType: mime}, &mcp.TextContent{Text: text}}}, info, nil
}
