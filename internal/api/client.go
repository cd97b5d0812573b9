package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to a running acu daemon.
type Client struct {
	base   string
	token  string
	hc     *http.Client
	client string // X-Acu-Client
}

// SetClientName names this client on the daemon's audit of its actions
// (the session runs of POST /v1/actions), e.g. "mcp:claude-code" or "cli".
func (c *Client) SetClientName(name string) { c.client = name }

// NewClient returns a client for the daemon at baseURL ("http://127.0.0.1:18790").
func NewClient(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: &http.Client{}}
}

// BaseURL returns the daemon's base URL.
func (c *Client) BaseURL() string { return c.base }

// StatusError is a non-2xx answer from the daemon.
type StatusError struct {
	Status int
	ErrorDetail
}

func (e *StatusError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%s, field %s)", e.Message, e.Code, e.Field)
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

// IsCode reports whether err is a StatusError with the given code.
func IsCode(err error, code string) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.client != "" {
		req.Header.Set(HeaderClient, c.client)
	}
	return req, nil
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is `acu serve` running?)", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return decodeError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return nil
}

func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Code != "" {
		return &StatusError{Status: resp.StatusCode, ErrorDetail: eb.Error}
	}
	return &StatusError{Status: resp.StatusCode, ErrorDetail: ErrorDetail{Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(b))}}
}

// Health calls GET /health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.do(ctx, http.MethodGet, "/health", nil, &h)
}

// RunQuery filters a run listing.
type RunQuery struct {
	Kind, Status, TaskID string
	Live                 *bool
	Limit                int
	Before               string // paging cursor from RunList.Next
	Display              string // runs on this display
	Host                 string // runs of this host (a fleet)
}

// Runs lists runs, newest first.
func (c *Client) Runs(ctx context.Context, q RunQuery) (RunList, error) {
	v := url.Values{}
	set(v, "kind", q.Kind)
	set(v, "status", q.Status)
	set(v, "task_id", q.TaskID)
	set(v, "before", q.Before)
	set(v, "display", q.Display)
	set(v, "host", q.Host)
	if q.Live != nil {
		v.Set("live", strconv.FormatBool(*q.Live))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var l RunList
	return l, c.do(ctx, http.MethodGet, "/v1/runs"+query(v), nil, &l)
}

// Run gets one run.
func (c *Client) Run(ctx context.Context, id string) (Run, error) {
	var r Run
	return r, c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id), nil, &r)
}

// CancelRun cancels a live run.
func (c *Client) CancelRun(ctx context.Context, id, reason string) (Run, error) {
	var r Run
	return r, c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/cancel", CancelRequest{Reason: reason}, &r)
}

// ResumeRun answers a run waiting for the user (a computer run stopped by
// call_user or safety checks).
func (c *Client) ResumeRun(ctx context.Context, id string, req ResumeRequest) (ResumeResult, error) {
	var r ResumeResult
	return r, c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/resume", req, &r)
}

// WaitRun blocks until the run's lifecycle ends or timeout passes (an
// error with code wait_timeout).
func (c *Client) WaitRun(ctx context.Context, id string, timeout time.Duration) (WaitResult, error) {
	var r WaitResult
	p := "/v1/runs/" + url.PathEscape(id) + "/wait?timeout=" + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)
	return r, c.do(ctx, http.MethodPost, p, nil, &r)
}

// EventQuery filters the event stream.
type EventQuery struct {
	RunID   string
	Streams []string
	After   int64 // a cursor: the events after it
	Limit   int
	// FromStart makes Follow replay the stored events from the first one
	// when After is 0; otherwise Follow starts at the daemon's current
	// cursor (now). EventsAfter always starts after After.
	FromStart bool
}

func (q EventQuery) values() url.Values {
	v := url.Values{}
	set(v, "run", q.RunID)
	if len(q.Streams) > 0 {
		v.Set("stream", strings.Join(q.Streams, ","))
	}
	if q.After > 0 {
		v.Set("after", strconv.FormatInt(q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// EventsAfter is the catch-up path: the events after q.After, as JSON.
func (c *Client) EventsAfter(ctx context.Context, q EventQuery) (EventList, error) {
	var l EventList
	return l, c.do(ctx, http.MethodGet, "/v1/events"+query(q.values()), nil, &l)
}

// Follow streams events over Server-Sent Events, calling fn for each until
// ctx ends, fn returns an error, or the stream breaks. It resumes after
// q.After (sent as Last-Event-ID); with q.After 0 it starts from the first
// stored event when q.FromStart is set, else from now.
func (c *Client) Follow(ctx context.Context, q EventQuery, fn func(Event) error) error {
	after := q.After
	q.After = 0
	v := q.values()
	if after == 0 && q.FromStart {
		v.Set("from", "start")
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/events"+query(v), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("follow events: %w (is `acu serve` running?)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return decodeError(resp)
	}
	return ReadSSE(resp.Body, func(id, event string, data []byte) error {
		if event != "" && event != "message" && event != "event" {
			return nil // hello, heartbeat and other control events
		}
		var e Event
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("decode event %s: %w", id, err)
		}
		return fn(e)
	})
}

// ReadSSE parses a Server-Sent Events stream, calling fn per dispatched event.
func ReadSSE(r io.Reader, fn func(id, event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var id, event string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data != nil {
				if err := fn(id, event, bytes.TrimSuffix(data, []byte("\n"))); err != nil {
					return err
				}
			}
			event, data = "", nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "event":
			event = value
		case "data":
			data = append(append(data, value...), '\n')
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// CreateWait starts a smart wait and returns at once.
func (c *Client) CreateWait(ctx context.Context, w CreateWait) (Wait, error) {
	var out Wait
	return out, c.do(ctx, http.MethodPost, "/v1/waits", w, &out)
}

// GetWait gets a wait job.
func (c *Client) GetWait(ctx context.Context, id string) (Wait, error) {
	var out Wait
	return out, c.do(ctx, http.MethodGet, "/v1/waits/"+url.PathEscape(id), nil, &out)
}

// ListWaits lists one page of wait jobs, newest first; follow Next while
// Truncated for the rest.
func (c *Client) ListWaits(ctx context.Context, q WaitQuery) (WaitList, error) {
	v := url.Values{}
	set(v, "state", q.State)
	set(v, "before", q.Before)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out WaitList
	return out, c.do(ctx, http.MethodGet, "/v1/waits"+query(v), nil, &out)
}

// UpdateWait replaces a live job's criteria or resets its clock.
func (c *Client) UpdateWait(ctx context.Context, id string, u UpdateWait) (Wait, error) {
	var out Wait
	return out, c.do(ctx, http.MethodPatch, "/v1/waits/"+url.PathEscape(id), u, &out)
}

// CancelWait cancels a live job.
func (c *Client) CancelWait(ctx context.Context, id, reason string) (Wait, error) {
	v := url.Values{}
	set(v, "reason", reason)
	var out Wait
	return out, c.do(ctx, http.MethodDelete, "/v1/waits/"+url.PathEscape(id)+query(v), nil, &out)
}

// Settle waits until a target stops changing.
func (c *Client) Settle(ctx context.Context, s SettleRequest) (SettleResult, error) {
	var out SettleResult
	return out, c.do(ctx, http.MethodPost, "/v1/settle", s, &out)
}

// Shot is a screenshot and what it maps to.
type Shot struct {
	Data         []byte
	ContentType  string
	Width        int // the image's size
	Height       int
	FrameWidth   int // the captured region's size in screen pixels
	FrameHeight  int
	ScreenWidth  int // the whole screen's size
	ScreenHeight int
	Origin       [2]int // the region's top-left corner on the screen
	Target       string // the resolved target, e.g. window:0x1a00003
	ID           string // the screenshot's id: {"shot": ID} positions map its pixels back to the screen
}

// Screenshot returns the current frame of a target as PNG (format "png",
// full resolution) or as the judge's JPEG ("jpeg", downsized).
func (c *Client) Screenshot(ctx context.Context, display, target, format string) (Shot, error) {
	v := url.Values{}
	set(v, "display", display)
	set(v, "target", target)
	set(v, "format", format)
	return c.screenshot(ctx, v)
}

func (c *Client) screenshot(ctx context.Context, v url.Values) (Shot, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/screenshot"+query(v), nil)
	if err != nil {
		return Shot{}, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Shot{}, fmt.Errorf("screenshot: %w (is `acu serve` running?)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Shot{}, decodeError(resp)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Shot{}, err
	}
	s := Shot{Data: b, ContentType: resp.Header.Get("Content-Type"), Target: resp.Header.Get(HeaderTarget), ID: resp.Header.Get(HeaderShotID)}
	fmt.Sscanf(resp.Header.Get(HeaderImageSize), "%dx%d", &s.Width, &s.Height)
	fmt.Sscanf(resp.Header.Get(HeaderFrameSize), "%dx%d", &s.FrameWidth, &s.FrameHeight)
	fmt.Sscanf(resp.Header.Get(HeaderScreenSize), "%dx%d", &s.ScreenWidth, &s.ScreenHeight)
	fmt.Sscanf(resp.Header.Get(HeaderFrameOrigin), "%d,%d", &s.Origin[0], &s.Origin[1])
	return s, nil
}

// Headers of a screenshot answer.
const (
	HeaderImageSize   = "X-Acu-Image-Size"   // WxH of the image sent
	HeaderFrameSize   = "X-Acu-Frame-Size"   // WxH of the captured region, in screen pixels
	HeaderScreenSize  = "X-Acu-Screen-Size"  // WxH of the whole screen
	HeaderFrameOrigin = "X-Acu-Frame-Origin" // x,y of the region on the screen
	HeaderTarget      = "X-Acu-Target"       // the resolved target
	HeaderShotID      = "X-Acu-Shot-Id"      // id of the screenshot, for {"shot": id} positions of POST /v1/actions
	HeaderClient      = "X-Acu-Client"       // the client's name, recorded on its session run
)

// Act runs actions on the desktop (POST /v1/actions). Refusals come back
// as *StatusError: 400 invalid (Field names the field), 403 act_disabled,
// display_denied or window_denied, 409 user_active (ActiveMs,
// RetryAfterMs). A failure after some actions ran is an ActResponse with
// OK false and the reason in that action's result.
func (c *Client) Act(ctx context.Context, req ActRequest) (ActResponse, error) {
	var out ActResponse
	return out, c.do(ctx, http.MethodPost, "/v1/actions", req, &out)
}

// Elements reads the element map (GET /v1/elements), with a labelled
// screenshot when q.Labels is set (q.Shot sets its format and size).
func (c *Client) Elements(ctx context.Context, q ElementsQuery) (ElementMap, error) {
	v := url.Values{}
	set(v, "display", q.Display)
	set(v, "window", q.Window)
	if q.Labels {
		v.Set("labels", "true")
	}
	if o := q.Shot; o != nil {
		set(v, "image_format", o.Format)
		set(v, "region", o.Region)
		if o.MaxWidth > 0 {
			v.Set("max_width", strconv.Itoa(o.MaxWidth))
		}
		if o.Scale > 0 {
			v.Set("scale", strconv.FormatFloat(o.Scale, 'f', -1, 64))
		}
		if o.Quality > 0 {
			v.Set("quality", strconv.Itoa(o.Quality))
		}
	}
	var out ElementMap
	return out, c.do(ctx, http.MethodGet, "/v1/elements"+query(v), nil, &out)
}

// ScreenshotWith takes a screenshot with options (GET /v1/screenshot):
// format jpeg or png, max_width or scale, quality, region (a capture
// target), labels. Shot.ID maps its pixels back in Act.
func (c *Client) ScreenshotWith(ctx context.Context, display string, o ShotOptions) (Shot, error) {
	v := url.Values{}
	set(v, "display", display)
	set(v, "format", o.Format)
	set(v, "region", o.Region)
	if o.MaxWidth > 0 {
		v.Set("max_width", strconv.Itoa(o.MaxWidth))
	}
	if o.Scale > 0 {
		v.Set("scale", strconv.FormatFloat(o.Scale, 'f', -1, 64))
	}
	if o.Quality > 0 {
		v.Set("quality", strconv.Itoa(o.Quality))
	}
	if o.Labels {
		v.Set("labels", "true")
	}
	return c.screenshot(ctx, v)
}

// CreateTask starts a task on the desktop (POST /v1/tasks) and returns its
// run at once; wait on the run for its end.
func (c *Client) CreateTask(ctx context.Context, task, taskID string, maxIterations int) (Run, error) {
	var out Run
	body := map[string]any{"task": task, "taskId": taskID, "maxIterations": maxIterations}
	return out, c.do(ctx, http.MethodPost, "/v1/tasks", body, &out)
}

// CreateTaskOn starts a task on another host of a fleet (POST /v1/tasks
// with host): that host's daemon claims and runs it.
func (c *Client) CreateTaskOn(ctx context.Context, host, task, taskID string, maxIterations int) (Run, error) {
	var out Run
	body := map[string]any{"host": host, "task": task, "taskId": taskID, "maxIterations": maxIterations}
	return out, c.do(ctx, http.MethodPost, "/v1/tasks", body, &out)
}

// Hosts lists the fleet's hosts with their live processes and displays.
func (c *Client) Hosts(ctx context.Context) (HostList, error) {
	var out HostList
	return out, c.do(ctx, http.MethodGet, "/v1/hosts", nil, &out)
}

// LoginLink asks for a one-time URL that opens the web pages.
func (c *Client) LoginLink(ctx context.Context, next string) (LoginLink, error) {
	v := url.Values{}
	set(v, "next", next)
	var out LoginLink
	return out, c.do(ctx, http.MethodPost, "/v1/auth/link"+query(v), nil, &out)
}

func set(v url.Values, k, val string) {
	if val != "" {
		v.Set(k, val)
	}
}

func query(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// CreateTaskLog registers a task (POST /v1/tasklogs).
func (c *Client) CreateTaskLog(ctx context.Context, t CreateTaskLog) (TaskLog, error) {
	var out TaskLog
	return out, c.do(ctx, http.MethodPost, "/v1/tasklogs", t, &out)
}

// AppendTaskLog adds a progress line or a status to a task (POST
// /v1/tasklogs/{id}).
func (c *Client) AppendTaskLog(ctx context.Context, id string, a AppendTaskLog) (TaskLog, error) {
	var out TaskLog
	return out, c.do(ctx, http.MethodPost, "/v1/tasklogs/"+url.PathEscape(id), a, &out)
}

// TaskLog returns a task with its whole log (GET /v1/tasklogs/{id}).
func (c *Client) TaskLog(ctx context.Context, id string) (TaskLog, error) {
	var out TaskLog
	return out, c.do(ctx, http.MethodGet, "/v1/tasklogs/"+url.PathEscape(id), nil, &out)
}

// TaskLogs lists tasks, newest first (GET /v1/tasklogs), by status ("" or
// "all" for every one).
func (c *Client) TaskLogs(ctx context.Context, status string, limit int) (TaskLogList, error) {
	v := url.Values{}
	set(v, "status", status)
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out TaskLogList
	return out, c.do(ctx, http.MethodGet, "/v1/tasklogs"+query(v), nil, &out)
}

// Takeover returns display's take-over state (GET /v1/live/takeover);
// display "" is the daemon's default.
func (c *Client) Takeover(ctx context.Context, display string) (Takeover, error) {
	v := url.Values{}
	set(v, "display", display)
	var out Takeover
	return out, c.do(ctx, http.MethodGet, "/v1/live/takeover"+query(v), nil, &out)
}

// TakeOver gives display to the caller (POST /v1/live/takeover): acu's
// agents, tasks and action clients on it pause until HandBack. Call it
// again every few seconds to keep it.
func (c *Client) TakeOver(ctx context.Context, display string) (Takeover, error) {
	var out Takeover
	return out, c.do(ctx, http.MethodPost, "/v1/live/takeover", TakeoverRequest{Display: display}, &out)
}

// HandBack ends a take-over (DELETE /v1/live/takeover).
func (c *Client) HandBack(ctx context.Context, display string) (Takeover, error) {
	v := url.Values{}
	set(v, "display", display)
	var out Takeover
	return out, c.do(ctx, http.MethodDelete, "/v1/live/takeover"+query(v), nil, &out)
}

// LiveInput sends input to a display the caller took over (POST
// /v1/live/input).
func (c *Client) LiveInput(ctx context.Context, req LiveInputRequest) error {
	return c.do(ctx, http.MethodPost, "/v1/live/input", req, nil)
}

// RunFrames lists the frames a run's judgements saw (GET
// /v1/runs/{id}/frames).
func (c *Client) RunFrames(ctx context.Context, runID string) (RunFrameList, error) {
	var out RunFrameList
	return out, c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID)+"/frames", nil, &out)
}

// StartRecording starts recording a display (POST /v1/recordings).
func (c *Client) StartRecording(ctx context.Context, req StartRecording) (Recording, error) {
	var out Recording
	return out, c.do(ctx, http.MethodPost, "/v1/recordings", req, &out)
}

// StopRecording stops a recording and returns it with its file's figures
// (POST /v1/recordings/{id}/stop).
func (c *Client) StopRecording(ctx context.Context, id string) (Recording, error) {
	var out Recording
	return out, c.do(ctx, http.MethodPost, "/v1/recordings/"+url.PathEscape(id)+"/stop", nil, &out)
}

// Recordings lists recordings, newest first; runID keeps one run's.
func (c *Client) Recordings(ctx context.Context, runID string, limit int) (RecordingList, error) {
	v := url.Values{}
	set(v, "run", runID)
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out RecordingList
	return out, c.do(ctx, http.MethodGet, "/v1/recordings"+query(v), nil, &out)
}

// DownloadRecording writes a finished recording's file to w (GET
// /v1/recordings/{id}).
func (c *Client) DownloadRecording(ctx context.Context, id string, w io.Writer) (int64, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/recordings/"+url.PathEscape(id), nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET recording %s: %w (is `acu serve` running?)", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, decodeError(resp)
	}
	return io.Copy(w, resp.Body)
}

// Computer runs one computer-use model's action item on the desktop (POST
// /v1/computer/{vendor}): item is what the vendor sent (an Anthropic
// tool_use block, an OpenAI computer_call item, a UI-TARS output as a
// JSON string), and the answer's Result is what to hand back to it.
func (c *Client) Computer(ctx context.Context, vendor string, q ComputerQuery, item json.RawMessage) (ComputerResult, error) {
	var out ComputerResult
	return out, c.do(ctx, http.MethodPost, "/v1/computer/"+url.PathEscape(vendor)+"?"+q.values().Encode(), item, &out)
}

// ComputerTool returns the tool declaration and picture size of a vendor
// for a display (GET /v1/computer/{vendor}).
func (c *Client) ComputerTool(ctx context.Context, vendor string, q ComputerQuery) (ComputerResult, error) {
	var out ComputerResult
	return out, c.do(ctx, http.MethodGet, "/v1/computer/"+url.PathEscape(vendor)+"?"+q.values().Encode(), nil, &out)
}

func (q ComputerQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"display": q.Display, "limit": q.Limit, "format": q.Format, "version": q.Version, "mode": q.Mode,
		"acknowledge": strings.Join(q.Acknowledge, ",")} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Quality > 0 {
		v.Set("quality", strconv.Itoa(q.Quality))
	}
	return v
}
