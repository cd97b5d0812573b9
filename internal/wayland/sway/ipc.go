package sway

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"net"
	"time"
)

// sway's IPC (the i3 protocol): "i3-ipc", a payload length and a message
// type, both 32-bit in the host's order (little-endian here), then the
// payload; the reply has the same header.
const (
	ipcMagic      = "i3-ipc"
	ipcRunCommand = 0
	ipcGetTree    = 4
)

// Node is a window (a view) in sway's tree.
type Node struct {
	ID      int64           // sway's container id (con_id)
	Name    string          // the title
	AppID   string          // the Wayland app_id ("" for an X11 window)
	PID     int             // the client's process id
	Rect    image.Rectangle // the window on screen, with its title bar and borders
	Content image.Rectangle // the client's own surface on screen
	Focused bool
	Visible bool
	// Shell is how the client speaks to sway: "xdg_shell" for a native
	// Wayland window, "xwayland" for an X11 one (whose own idea of its
	// position is the screen's).
	Shell string
}

// Windows returns the windows (views) in sway's tree, in tree order. ipc
// is the IPC socket (SWAYSOCK).
func Windows(ctx context.Context, ipc string) ([]Node, error) {
	b, err := request(ctx, ipc, ipcGetTree, "")
	if err != nil {
		return nil, err
	}
	var root treeNode
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("sway IPC %s: get_tree: %w", ipc, err)
	}
	var out []Node
	var walk func(n *treeNode)
	walk = func(n *treeNode) {
		if n.PID > 0 && (n.Type == "con" || n.Type == "floating_con") {
			// sway's rect leaves out the title bar, which sits just above
			// it (deco_rect); the window on screen has both.
			r := image.Rect(n.Rect.X, n.Rect.Y-n.DecoRect.H, n.Rect.X+n.Rect.W, n.Rect.Y+n.Rect.H)
			c := image.Rect(n.Rect.X+n.WindowRect.X, n.Rect.Y+n.WindowRect.Y,
				n.Rect.X+n.WindowRect.X+n.WindowRect.W, n.Rect.Y+n.WindowRect.Y+n.WindowRect.H)
			appID := ""
			if n.AppID != nil {
				appID = *n.AppID
			}
			out = append(out, Node{ID: n.ID, Name: n.Name, AppID: appID, PID: n.PID, Rect: r, Content: c,
				Focused: n.Focused, Visible: n.Visible == nil || *n.Visible, Shell: n.Shell})
		}
		for i := range n.Nodes {
			walk(&n.Nodes[i])
		}
		for i := range n.FloatingNodes {
			walk(&n.FloatingNodes[i])
		}
	}
	walk(&root)
	return out, nil
}

// MoveResize floats window id (a con_id) and places it, title bar and
// borders included, at r.
func MoveResize(ctx context.Context, ipc string, id int64, r image.Rectangle) error {
	if r.Dx() <= 0 || r.Dy() <= 0 {
		return fmt.Errorf("move and resize window %d to %v: the rectangle is empty", id, r)
	}
	return Command(ctx, ipc, fmt.Sprintf("[con_id=%d] floating enable, resize set width %d px height %d px, move absolute position %d %d",
		id, r.Dx(), r.Dy(), r.Min.X, r.Min.Y))
}

// Command runs sway commands ("[con_id=12] focus") and returns the first
// failure sway reports.
func Command(ctx context.Context, ipc, cmd string) error {
	b, err := request(ctx, ipc, ipcRunCommand, cmd)
	if err != nil {
		return err
	}
	var res []struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("sway IPC %s: command %q: %w", ipc, cmd, err)
	}
	for _, r := range res {
		if !r.Success {
			return fmt.Errorf("sway command %q: %s", cmd, r.Error)
		}
	}
	return nil
}

type treeNode struct {
	ID         int64   `json:"id"`
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	AppID      *string `json:"app_id"`
	PID        int     `json:"pid"`
	Shell      string  `json:"shell"`
	Focused    bool    `json:"focused"`
	Visible    *bool   `json:"visible"`
	Rect       ipcRect `json:"rect"`
	WindowRect ipcRect `json:"window_rect"`
	DecoRect   ipcRect `json:"deco_rect"`

	Nodes         []treeNode `json:"nodes"`
	FloatingNodes []treeNode `json:"floating_nodes"`
}

type ipcRect struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"width"`
	H int `json:"height"`
}

func request(ctx context.Context, ipc string, typ uint32, payload string) ([]byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", ipc)
	if err != nil {
		return nil, fmt.Errorf("sway IPC %s: %w", ipc, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	msg := make([]byte, 0, 14+len(payload))
	msg = append(msg, ipcMagic...)
	msg = binary.LittleEndian.AppendUint32(msg, uint32(len(payload)))
	msg = binary.LittleEndian.AppendUint32(msg, typ)
	msg = append(msg, payload...)
	if _, err := conn.Write(msg); err != nil {
		return nil, fmt.Errorf("sway IPC %s: %w", ipc, err)
	}
	hdr := make([]byte, 14)
	if _, err := io.ReadFull(conn, hdr); err != nil {
		return nil, fmt.Errorf("sway IPC %s: reply: %w", ipc, err)
	}
	if string(hdr[:6]) != ipcMagic {
		return nil, fmt.Errorf("sway IPC %s: reply without the i3-ipc magic", ipc)
	}
	n := binary.LittleEndian.Uint32(hdr[6:])
	if n > 64<<20 {
		return nil, fmt.Errorf("sway IPC %s: reply of %d bytes", ipc, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, fmt.Errorf("sway IPC %s: reply: %w", ipc, err)
	}
	return body, nil
}
