package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/anthropic"
	"github.com/acu-dev/acu/internal/dialect/openai"
	"github.com/acu-dev/acu/internal/dialect/uitars"
)

// Desktop is what Execute needs: the dialect's Desktop and the screen's
// size.
type Desktop interface {
	dialect.Desktop
	ScreenSize(ctx context.Context, display string) (int, int, error)
}

// QueryError is a bad query parameter (not the model's mistake): the
// caller's to fix.
type QueryError struct{ Field, Message string }

func (e *QueryError) Error() string { return e.Message }

// Tools are a display's dialect tools, built from its screen size and the
// query.
type Tools struct {
	Anthropic anthropic.Tool
	OpenAI    openai.Tool
	UITARS    uitars.Tool
}

// NewTools builds the tools of a screen of size screen for q.
func NewTools(screen dialect.Size, q api.ComputerQuery) (Tools, error) {
	var limit dialect.Size
	if q.Limit != "" {
		var err error
		if limit, err = dialect.ParseSize(q.Limit); err != nil {
			return Tools{}, &QueryError{"limit", "limit: " + err.Error()}
		}
	}
	switch q.Format {
	case "", "png", "jpeg":
	case "jpg":
		q.Format = "jpeg"
	default:
		return Tools{}, &QueryError{"format", fmt.Sprintf("format %q: use png or jpeg", q.Format)}
	}
	if q.Quality < 0 || q.Quality > 100 {
		return Tools{}, &QueryError{"quality", fmt.Sprintf("quality %d: use 1..100", q.Quality)}
	}
	t := Tools{Anthropic: anthropic.New(screen, limit), OpenAI: openai.New(screen, limit)}
	if q.Version != "" {
		if _, ok := anthropic.Actions[q.Version]; !ok {
			return Tools{}, &QueryError{"version", fmt.Sprintf("version %q: use %s, %s or %s", q.Version, anthropic.Version20241022, anthropic.Version20250124, anthropic.Version20251124)}
		}
		t.Anthropic.Version = q.Version
	}
	mode := q.Mode
	if mode == "" {
		mode = uitars.Relative
	}
	if err := uitars.CheckMode(mode); err != nil {
		return Tools{}, &QueryError{"mode", err.Error()}
	}
	t.UITARS = uitars.New(screen, limit, mode)
	if q.Format != "" {
		t.Anthropic.Format, t.OpenAI.Format, t.UITARS.Format = q.Format, q.Format, q.Format
	}
	t.Anthropic.Quality, t.OpenAI.Quality, t.UITARS.Quality = q.Quality, q.Quality, q.Quality
	return t, nil
}

// Tool returns the declaration of vendor's tool for the display and the
// picture size its coordinates are in.
func Tool(ctx context.Context, d Desktop, vendor string, q api.ComputerQuery) (api.ComputerResult, error) {
	if !slices.Contains(api.Vendors, vendor) {
		return api.ComputerResult{}, &QueryError{"vendor", fmt.Sprintf("vendor %q: use %s", vendor, strings.Join(api.Vendors, ", "))}
	}
	tools, res, err := prepare(ctx, d, q)
	if err != nil {
		return res, err
	}
	switch vendor {
	case api.VendorAnthropic:
		res.Tool, _ = json.Marshal(tools.Anthropic.Definition())
	case api.VendorOpenAI:
		res.Tool, _ = json.Marshal(tools.OpenAI.Definition())
	}
	res.Status = api.ComputerActed
	return res, nil
}

func prepare(ctx context.Context, d Desktop, q api.ComputerQuery) (Tools, api.ComputerResult, error) {
	w, h, err := d.ScreenSize(ctx, q.Display)
	if err != nil {
		return Tools{}, api.ComputerResult{}, err
	}
	tools, err := NewTools(dialect.Size{W: w, H: h}, q)
	if err != nil {
		return tools, api.ComputerResult{}, err
	}
	img := tools.Anthropic.Image
	return tools, api.ComputerResult{Display: q.Display, Screen: [2]int{w, h}, Image: [2]int{img.W, img.H}}, nil
}

// Execute runs one action item of vendor on the display of q and returns
// the result item to hand back. Errors are only the caller's (a bad query,
// an unknown vendor, a display that cannot be reached): the model's
// mistakes and refusals (a malformed item, the user at the controls, a
// denied window) come back as the vendor's error result with Status
// error. A refusal that carries its wire detail (the action service's
// *actions.Error) keeps its code and retry time in the result's Error, so
// a caller in process sees user_active as the daemon's route does.
func Execute(ctx context.Context, d Desktop, vendor string, q api.ComputerQuery, item []byte) (api.ComputerResult, error) {
	run, ok := executors[vendor]
	if !ok {
		return api.ComputerResult{}, &QueryError{"vendor", fmt.Sprintf("vendor %q: use %s", vendor, strings.Join(api.Vendors, ", "))}
	}
	tools, res, err := prepare(ctx, d, q)
	if err != nil {
		return res, err
	}
	res.Status = api.ComputerActed
	x := execution{ctx: ctx, d: typed{d}, q: q, tools: tools, res: res}
	run(&x, item)
	return x.res, nil
}

// executors run one vendor's action item: decode it, plan it with the
// vendor's dialect, run the plan and answer the vendor's result item.
var executors = map[string]func(x *execution, item []byte){
	api.VendorAnthropic: (*execution).anthropic,
	api.VendorOpenAI:    (*execution).openai,
	api.VendorUITARS:    (*execution).uitars,
}

// execution is one action item being run.
type execution struct {
	ctx   context.Context
	d     Desktop
	q     api.ComputerQuery
	tools Tools
	res   api.ComputerResult
}

// run runs plan and puts its outcome on the result (Status error when it
// failed).
func (x *execution) run(plan dialect.Plan) dialect.Outcome {
	out := dialect.Run(x.ctx, x.d, x.q.Display, plan)
	x.res.Ms = out.Ms
	if out.Act != nil {
		x.res.Actions, x.res.Settle, x.res.SessionRun = out.Act.Results, out.Act.Settle, out.Act.SessionRun
	}
	x.res.Waited = out.Waited
	if out.Shot != nil {
		x.res.ShotID = out.Shot.ID
	}
	if out.Err != nil {
		x.res.Status, x.res.Error = api.ComputerError, detail(out.Err)
	}
	return out
}

func (x *execution) anthropic(item []byte) {
	tu, in, err := anthropic.Decode(item)
	var plan dialect.Plan
	if err == nil {
		plan, err = x.tools.Anthropic.Plan(in)
	}
	if err != nil {
		x.res.Status, x.res.Error = api.ComputerError, detail(err)
		x.res.Result = mustJSON(anthropic.ErrorResult(tu.ID, err))
		return
	}
	out := x.run(plan)
	x.res.Result = mustJSON(x.tools.Anthropic.Result(tu.ID, plan, out))
}

func (x *execution) openai(item []byte) {
	c, err := openai.Decode(item)
	var plan dialect.Plan
	if err == nil {
		plan, err = x.tools.OpenAI.Plan(c)
	}
	if err != nil {
		// The Responses API has no error output: the caller tells the
		// model (Error); Result is a screenshot of the unchanged screen.
		x.res.Status, x.res.Error = api.ComputerError, detail(err)
		if c.CallID != "" {
			t := x.tools.OpenAI
			out := dialect.Run(x.ctx, x.d, x.q.Display, dialect.Plan{Shot: dialect.ShotOptions(t.Image, t.Format, t.Quality)})
			x.res.Result = mustJSON(t.Result(c, out, nil))
		}
		return
	}
	if pending := openai.Unacknowledged(c, x.q.Acknowledge); len(pending) > 0 {
		x.res.Status = api.ComputerSafetyCheck
		x.res.PendingSafetyChecks = mustJSON(pending)
		x.res.Error = &api.ErrorDetail{Code: api.ComputerSafetyCheck, Message: "the model's call has pending safety checks: show them to the user and, if they agree, send it again acknowledging them (acknowledge=" + ids(pending) + ")"}
		return
	}
	out := x.run(plan)
	x.res.Result = mustJSON(x.tools.OpenAI.Result(c, out, c.PendingSafetyChecks))
}

func (x *execution) uitars(item []byte) {
	text, err := uitarsText(item)
	var plan dialect.Plan
	if err == nil {
		plan, _, err = x.tools.UITARS.Plan(text)
	}
	if err != nil {
		x.res.Status, x.res.Error = api.ComputerError, detail(err)
		x.res.Result = mustJSON(x.tools.UITARS.Result(dialect.Plan{}, dialect.Outcome{Err: err}))
		return
	}
	out := x.run(plan)
	switch {
	case out.Err != nil:
	case plan.Status == dialect.StatusFinished:
		x.res.Status, x.res.Content = api.ComputerFinished, plan.Content
	case plan.Status == dialect.StatusCallUser:
		x.res.Status, x.res.Content = api.ComputerCallUser, plan.Content
	}
	x.res.Result = mustJSON(x.tools.UITARS.Result(plan, out))
}

// uitarsText reads a UI-TARS output: a JSON string, or an OpenAI-compatible
// assistant message whose content is the output.
func uitarsText(item []byte) (string, error) {
	var s string
	if json.Unmarshal(item, &s) == nil {
		return s, nil
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(item, &m); err == nil && len(m.Content) > 0 {
		if json.Unmarshal(m.Content, &s) == nil {
			return s, nil
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Text)
			}
			return b.String(), nil
		}
	}
	return "", dialect.Invalid("", "send the model's output as a JSON string, or its assistant message")
}

func ids(cs []openai.SafetyCheck) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.ID)
	}
	return strings.Join(s, ",")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only acu's own types are marshalled
	}
	return b
}

// detail turns an error into the answer's error detail.
func detail(err error) *api.ErrorDetail {
	var ie *dialect.InvalidError
	var se *api.StatusError
	switch {
	case errors.As(err, &ie):
		return &api.ErrorDetail{Code: api.CodeInvalid, Field: ie.Field, Message: ie.Message}
	case errors.As(err, &se):
		d := se.ErrorDetail
		return &d
	}
	return &api.ErrorDetail{Code: api.CodeActionFailed, Message: err.Error()}
}
