package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
)

// computerDesktop runs the computer-use dialects' plans on the action
// service for one caller. computer.Execute hands the service's refusals to
// the dialects typed (user_active with its retry time); a bad screen size
// reaches the error map as it is.
type computerDesktop struct {
	svc Actions
	who actions.Caller
}

func (d computerDesktop) Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error) {
	return d.svc.Act(ctx, d.who, req)
}

func (d computerDesktop) Shot(ctx context.Context, dpy string, o api.ShotOptions) (*api.ActShot, error) {
	return d.svc.Shot(ctx, dpy, o)
}

func (d computerDesktop) Pointer(ctx context.Context, dpy string) (int, int, error) {
	p, err := d.svc.Pointer(ctx, dpy)
	return p.X, p.Y, err
}

func (d computerDesktop) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	return d.svc.ScreenSize(ctx, dpy)
}

func (d computerDesktop) Settle(ctx context.Context, dpy string, quiet, timeout time.Duration) (api.SettleResult, error) {
	return d.svc.Settle(ctx, dpy, quiet, timeout)
}

// maxComputerItem bounds an action item's size.
const maxComputerItem = 1 << 20

func computerQuery(r *http.Request) (api.ComputerQuery, error) {
	q := r.URL.Query()
	cq := api.ComputerQuery{Display: q.Get("display"), Limit: q.Get("limit"), Format: q.Get("format"), Version: q.Get("version"), Mode: q.Get("mode")}
	if v := q.Get("quality"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cq, errInvalid("quality", "quality must be a whole number 1..100, got %q", v)
		}
		cq.Quality = n
	}
	for _, id := range strings.Split(q.Get("acknowledge"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			cq.Acknowledge = append(cq.Acknowledge, id)
		}
	}
	return cq, nil
}

// handleComputer serves POST /v1/computer/{vendor}: the model's action
// item as the vendor sent it in, the vendor's result item out.
func (s *Server) handleComputer(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.actions()
	if err != nil {
		return err
	}
	q, err := computerQuery(r)
	if err != nil {
		return err
	}
	item, err := io.ReadAll(io.LimitReader(r.Body, maxComputerItem+1))
	if err != nil {
		return errInvalid("", "read the action item: %v", err)
	}
	if len(item) > maxComputerItem {
		return errInvalid("", "the action item is larger than %d bytes", maxComputerItem)
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") { // a UI-TARS output as text
		item, _ = json.Marshal(string(item))
	}
	client := strings.TrimSpace(r.Header.Get(api.HeaderClient))
	if len(client) > 64 {
		client = client[:64]
	}
	res, err := computer.Execute(r.Context(), computerDesktop{svc: svc, who: actions.Caller{Client: client, Remote: r.RemoteAddr}}, r.PathValue("vendor"), q, item)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleComputerTool serves GET /v1/computer/{vendor}: the tool
// declaration for the display and the picture size.
func (s *Server) handleComputerTool(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.actions()
	if err != nil {
		return err
	}
	q, err := computerQuery(r)
	if err != nil {
		return err
	}
	res, err := computer.Tool(r.Context(), computerDesktop{svc: svc}, r.PathValue("vendor"), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
