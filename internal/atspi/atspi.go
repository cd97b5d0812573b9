package atspi

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// D-Bus names of the AT-SPI2 protocol.
const (
	busName       = "org.a11y.Bus"
	busPath       = "/org/a11y/bus"
	registryName  = "org.a11y.atspi.Registry"
	rootPath      = "/org/a11y/atspi/accessible/root"
	ifaceAcc      = "org.a11y.atspi.Accessible"
	ifaceApp      = "org.a11y.atspi.Application"
	ifaceComp     = "org.a11y.atspi.Component"
	ifaceAction   = "org.a11y.atspi.Action"
	ifaceText     = "org.a11y.atspi.Text"
	ifaceEditText = "org.a11y.atspi.EditableText"
	ifaceValue    = "org.a11y.atspi.Value"
	ifaceTable    = "org.a11y.atspi.Table"
	ifaceProps    = "org.freedesktop.DBus.Properties"
	nullPath      = "/org/a11y/atspi/null"
	coordScreen   = uint32(0)
)

// Defaults for zero Options fields.
const (
	DefaultCallTimeout = 2 * time.Second
	DefaultMaxNodes    = 2000
	DefaultMaxChildren = 200
	DefaultParallel    = 8
	DefaultMaxText     = 200
)

// ErrNoBus is wrapped when no accessibility bus can be found.
var ErrNoBus = errors.New("no accessibility bus: start at-spi-bus-launcher (package at-spi2-core) in the desktop session before the applications")

// Options configures a Client.
type Options struct {
	// Address is the accessibility bus address. Empty: ask the session bus
	// (org.a11y.Bus.GetAddress at SessionBus).
	Address string
	// SessionBus is the session bus address (DBUS_SESSION_BUS_ADDRESS of
	// the desktop session), used when Address is empty.
	SessionBus string
	// CallTimeout bounds each D-Bus call; default 2s. An application that
	// hangs costs at most this per call, and its subtree is skipped.
	CallTimeout time.Duration
	// MaxNodes caps the nodes visited per Tree walk; default 2000.
	MaxNodes int
	// MaxChildren caps the children read per node (long lists); default 200.
	MaxChildren int
	// Parallel is the number of nodes read concurrently; default 8.
	Parallel int
	// MaxText caps the characters read from a Text interface; default 200.
	MaxText int
	// Logger receives Debug logs of skipped nodes; nil discards.
	Logger *slog.Logger
}

// Client talks to one accessibility bus (one per display). Safe for
// concurrent use.
type Client struct {
	conn    *dbus.Conn
	opts    Options
	log     *slog.Logger
	address string

	mu     sync.Mutex
	getAll map[string]bool // by application bus name: whether Properties.GetAll is safe (false: Qt)
	pids   map[string]int  // by application bus name: its process id (0: the bus could not say)
}

// Connect finds the accessibility bus and connects to it.
func Connect(ctx context.Context, o Options) (*Client, error) {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr := o.Address
	if addr == "" {
		a, err := BusAddress(ctx, o.SessionBus, o.CallTimeout)
		if err != nil {
			return nil, err
		}
		addr = a
	}
	conn, err := dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("connect to accessibility bus %s: %w", addr, err)
	}
	return &Client{conn: conn, opts: o, log: log, address: addr, getAll: map[string]bool{}, pids: map[string]int{}}, nil
}

// BusAddress asks the session bus at sessionAddr for the accessibility
// bus address (org.a11y.Bus.GetAddress).
func BusAddress(ctx context.Context, sessionAddr string, timeout time.Duration) (string, error) {
	if sessionAddr == "" {
		return "", fmt.Errorf("find accessibility bus: no session bus address given: %w", ErrNoBus)
	}
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	conn, err := dial(ctx, sessionAddr)
	if err != nil {
		return "", fmt.Errorf("connect to session bus %s: %w", sessionAddr, err)
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var addr string
	if err := conn.Object(busName, busPath).CallWithContext(cctx, busName+".GetAddress", 0).Store(&addr); err != nil {
		return "", fmt.Errorf("ask session bus %s for the accessibility bus: %w (%w)", sessionAddr, ErrNoBus, err)
	}
	if addr == "" {
		return "", fmt.Errorf("session bus %s gave an empty accessibility bus address: %w", sessionAddr, ErrNoBus)
	}
	return addr, nil
}

func dial(ctx context.Context, addr string) (*dbus.Conn, error) {
	conn, err := dbus.Dial(addr, dbus.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		if err := conn.Auth(nil); err != nil {
			done <- err
			return
		}
		done <- conn.Hello()
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		conn.Close()
		<-done
		return nil, ctx.Err()
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// Address returns the accessibility bus address in use.
func (c *Client) Address() string { return c.address }

// Close closes the bus connection.
func (c *Client) Close() error { return c.conn.Close() }

// Ref names one accessible object: the application's bus name and the
// object's path.
type Ref struct {
	Bus  string
	Path dbus.ObjectPath
}

// IsNull reports whether r is the null reference.
func (r Ref) IsNull() bool { return r.Bus == "" || r.Path == "" || r.Path == nullPath }

func (r Ref) String() string { return r.Bus + string(r.Path) }

// Node is one accessible object as read in a Tree walk.
type Node struct {
	Ref    Ref
	Parent int    // index of the parent in the walk, -1 for applications
	Depth  int    // 0 for applications
	App    string // the application's name
	// PID is the application's process id, as the accessibility bus's
	// daemon knows its connection (0 when it cannot say); the same for
	// every object of the application.
	PID         int
	Window      string // the enclosing frame, dialog or window's name
	Role        string // AT-SPI role name: "push button", "text", "label", "frame"
	Name        string
	Description string
	// Text is the content of a Text interface, at most Options.MaxText
	// characters: read for editable text and for objects without a name.
	Text   string
	States States
	// Bounds is the extent in screen pixels; empty without a Component.
	Bounds  image.Rectangle
	Actions []string // Action interface names, in index order ("click")
	Ifaces  Ifaces
	// Value, Min and Max are the Value interface's current, minimum and
	// maximum (progress bars, sliders, spin buttons); zero without IfValue.
	Value, Min, Max float64
	// Rows is the Table interface's row count; zero without IfTable.
	Rows int

	childCount int // from the Accessible properties; -1 unknown
}

// Ifaces says which AT-SPI interfaces an object implements.
type Ifaces uint8

// Interfaces an element may offer.
const (
	IfComponent Ifaces = 1 << iota
	IfAction
	IfText
	IfEditableText
	IfValue
	IfTable
)

// Has reports whether all of f are set.
func (i Ifaces) Has(f Ifaces) bool { return i&f == f }

// States is the AT-SPI state set, bit n for state n.
type States uint64

// AT-SPI states (AtspiStateType numbering).
const (
	StateActive     = 1
	StateChecked    = 4
	StateEditable   = 7
	StateEnabled    = 8
	StateFocusable  = 11
	StateFocused    = 12
	StatePressed    = 20
	StateSelected   = 23
	StateSensitive  = 24
	StateShowing    = 25
	StateVisible    = 30
	StateIsDefault  = 39
	StateCheckable  = 41
	StateReadOnly   = 43
	stateMaxDefined = 44
)

// Has reports whether state s is set.
func (st States) Has(s int) bool { return s >= 0 && s < 64 && st&(1<<uint(s)) != 0 }

func statesFrom(v []uint32) States {
	var s States
	if len(v) > 0 {
		s |= States(v[0])
	}
	if len(v) > 1 {
		s |= States(v[1]) << 32
	}
	return s
}

var stateNames = map[int]string{
	StateActive: "active", StateChecked: "checked", StateEditable: "editable", StateEnabled: "enabled",
	StateFocusable: "focusable", StateFocused: "focused", StatePressed: "pressed", StateSelected: "selected", StateSensitive: "sensitive",
	StateShowing: "showing", StateVisible: "visible", StateIsDefault: "default", StateCheckable: "checkable",
	StateReadOnly: "read_only",
}

// String lists the states acu cares about, comma separated.
func (st States) String() string {
	var b strings.Builder
	for i := 0; i < stateMaxDefined; i++ {
		if n, ok := stateNames[i]; ok && st.Has(i) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

func (c *Client) call(ctx context.Context, r Ref, method string, args ...any) *dbus.Call {
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	return c.conn.Object(r.Bus, r.Path).CallWithContext(cctx, method, 0, args...)
}

func (c *Client) prop(ctx context.Context, r Ref, iface, name string, v any) error {
	var variant dbus.Variant
	if err := c.call(ctx, r, ifaceProps+".Get", iface, name).Store(&variant); err != nil {
		return err
	}
	return variant.Store(v)
}

// Applications lists the applications registered on the bus.
func (c *Client) Applications(ctx context.Context) ([]Ref, error) {
	kids, err := c.children(ctx, Ref{Bus: registryName, Path: rootPath})
	if err != nil {
		return nil, fmt.Errorf("list accessible applications on %s: %w", c.address, err)
	}
	return kids, nil
}

type refWire struct {
	Bus  string
	Path dbus.ObjectPath
}

func (c *Client) children(ctx context.Context, r Ref) ([]Ref, error) {
	var kids []refWire
	if err := c.call(ctx, r, ifaceAcc+".GetChildren").Store(&kids); err != nil {
		return nil, err
	}
	out := make([]Ref, 0, len(kids))
	for _, k := range kids {
		ref := Ref(k)
		if !ref.IsNull() {
			out = append(out, ref)
		}
	}
	return out, nil
}

// Read reads one object's role, name, description, states, interfaces,
// bounds, actions and text.
func (c *Client) Read(ctx context.Context, r Ref) (Node, error) {
	n := Node{Ref: r, Parent: -1}
	if err := c.read(ctx, &n); err != nil {
		return n, fmt.Errorf("read accessible %s: %w", r, err)
	}
	return n, nil
}

func (c *Client) read(ctx context.Context, n *Node) error {
	r := n.Ref
	if err := c.call(ctx, r, ifaceAcc+".GetRoleName").Store(&n.Role); err != nil {
		return err
	}
	// Qt 5 crashes on Properties.GetAll of its objects: an application
	// object, and every object of a Qt application, has its properties
	// read one by one.
	app := n.Role == "application"
	var props map[string]dbus.Variant
	if app {
		// GetAll is used only for toolkits known to survive it: a toolkit
		// that does not say its name is read one property at a time.
		var tk string
		_ = c.prop(ctx, r, ifaceApp, "ToolkitName", &tk)
		c.mu.Lock()
		c.getAll[r.Bus] = tk != "" && !strings.Contains(strings.ToLower(tk), "qt")
		c.mu.Unlock()
	}
	c.mu.Lock()
	getAll, known := c.getAll[r.Bus]
	c.mu.Unlock()
	oneByOne := app || (known && !getAll)
	if oneByOne {
		n.childCount = -1
		_ = c.prop(ctx, r, ifaceAcc, "Name", &n.Name)
		if !app {
			_ = c.prop(ctx, r, ifaceAcc, "Description", &n.Description)
		}
	} else if err := c.call(ctx, r, ifaceProps+".GetAll", ifaceAcc).Store(&props); err == nil {
		if v, ok := props["Name"]; ok {
			_ = v.Store(&n.Name)
		}
		if v, ok := props["Description"]; ok {
			_ = v.Store(&n.Description)
		}
		if v, ok := props["ChildCount"]; ok {
			var cc int32
			if v.Store(&cc) == nil {
				n.childCount = int(cc)
			}
		}
	} else {
		n.childCount = -1
		_ = c.prop(ctx, r, ifaceAcc, "Name", &n.Name)
		_ = c.prop(ctx, r, ifaceAcc, "Description", &n.Description)
	}
	if app {
		// Nothing else of an application matters, and Qt 5's crashes on
		// GetInterfaces too.
		n.PID = c.pid(ctx, r.Bus)
		return nil
	}
	var st []uint32
	if err := c.call(ctx, r, ifaceAcc+".GetState").Store(&st); err != nil {
		return err
	}
	n.States = statesFrom(st)
	var ifs []string
	if err := c.call(ctx, r, ifaceAcc+".GetInterfaces").Store(&ifs); err != nil {
		return err
	}
	for _, s := range ifs {
		switch s {
		case ifaceComp:
			n.Ifaces |= IfComponent
		case ifaceAction:
			n.Ifaces |= IfAction
		case ifaceText:
			n.Ifaces |= IfText
		case ifaceEditText:
			n.Ifaces |= IfEditableText
		case ifaceValue:
			n.Ifaces |= IfValue
		case ifaceTable:
			n.Ifaces |= IfTable
		}
	}
	if n.Ifaces.Has(IfComponent) {
		var e struct{ X, Y, W, H int32 }
		if err := c.call(ctx, r, ifaceComp+".GetExtents", coordScreen).Store(&e); err == nil && e.W > 0 && e.H > 0 {
			n.Bounds = image.Rect(int(e.X), int(e.Y), int(e.X+e.W), int(e.Y+e.H))
		}
	}
	if n.Ifaces.Has(IfAction) {
		var acts []struct{ Name, Desc, Key string }
		if err := c.call(ctx, r, ifaceAction+".GetActions").Store(&acts); err == nil {
			n.Actions = make([]string, len(acts))
			for i, a := range acts {
				n.Actions[i] = a.Name
			}
		}
	}
	if n.Ifaces.Has(IfValue) {
		// One property at a time: Qt 5 crashes on GetAll of interfaces.
		for _, v := range []struct {
			name string
			to   *float64
		}{{"CurrentValue", &n.Value}, {"MinimumValue", &n.Min}, {"MaximumValue", &n.Max}} {
			var variant dbus.Variant
			if err := c.call(ctx, r, ifaceProps+".Get", ifaceValue, v.name).Store(&variant); err == nil {
				*v.to = number(variant)
			}
		}
	}
	if n.Ifaces.Has(IfTable) {
		var rows int32
		if err := c.prop(ctx, r, ifaceTable, "NRows", &rows); err == nil {
			n.Rows = int(rows)
		}
	}
	if n.Ifaces.Has(IfText) && (n.Ifaces.Has(IfEditableText) || n.Name == "") {
		var s string
		if err := c.call(ctx, r, ifaceText+".GetText", int32(0), int32(c.opts.MaxText)).Store(&s); err == nil {
			n.Text = s
		}
	}
	return nil
}

// pid asks the accessibility bus's daemon for the process id of the
// application connected as bus, once per bus name; 0 when it cannot say
// (a peer-to-peer bus, a daemon that does not know).
func (c *Client) pid(ctx context.Context, bus string) int {
	c.mu.Lock()
	p, ok := c.pids[bus]
	c.mu.Unlock()
	if ok {
		return p
	}
	var v uint32
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	if err := c.conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, bus).Store(&v); err != nil {
		c.log.Debug("no process id for accessible application", "bus", bus, "err", err)
		if ctx.Err() != nil {
			return 0 // not cached: the walk was cancelled, not the bus
		}
	}
	c.mu.Lock()
	c.pids[bus] = int(v)
	c.mu.Unlock()
	return int(v)
}

// number reads a numeric D-Bus variant (the Value interface's doubles;
// some toolkits send integers); 0 when it is none.
func number(v dbus.Variant) float64 {
	switch x := v.Value().(type) {
	case float64:
		return x
	case int32:
		return float64(x)
	case uint32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return 0
}

// Tree walks every application's accessible tree, breadth first, and
// returns the nodes read (at most Options.MaxNodes). The children of
// objects that are not showing are not visited (their subtrees are hidden
// too); objects that fail to answer are skipped, and an application whose
// call timed out is skipped for the rest of the walk (logged at Info).
func (c *Client) Tree(ctx context.Context) ([]Node, error) {
	apps, err := c.Applications(ctx)
	if err != nil {
		return nil, err
	}
	return c.TreeOf(ctx, apps)
}

// TreeOf walks the accessible trees of the given applications only, as
// Tree walks all of them: what a reader kept up to date by events (Listen)
// calls for the one application that changed.
func (c *Client) TreeOf(ctx context.Context, apps []Ref) ([]Node, error) {
	var (
		mu    sync.Mutex
		nodes []Node
	)
	level := make([]Node, 0, len(apps))
	for _, a := range apps {
		level = append(level, Node{Ref: a, Parent: -1})
	}
	sem := make(chan struct{}, c.opts.Parallel)
	// An application that stops answering (a call timed out) is skipped
	// for the rest of the walk, so one hung program costs one timeout.
	var hungMu sync.Mutex
	hung := map[string]bool{}
	isHung := func(bus string) bool {
		hungMu.Lock()
		defer hungMu.Unlock()
		return hung[bus]
	}
	markHung := func(bus string, err error) {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			hungMu.Lock()
			if !hung[bus] {
				c.log.Info("accessible application not answering, skipped", "bus", bus, "err", err)
			}
			hung[bus] = true
			hungMu.Unlock()
		}
	}
	for depth := 0; len(level) > 0 && len(nodes) < c.opts.MaxNodes; depth++ {
		if room := c.opts.MaxNodes - len(nodes); len(level) > room {
			level = level[:room]
		}
		kids := make([][]Ref, len(level))
		ok := make([]bool, len(level))
		var wg sync.WaitGroup
		for i := range level {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				n := &level[i]
				n.Depth = depth
				if isHung(n.Ref.Bus) {
					return
				}
				if err := c.read(ctx, n); err != nil {
					markHung(n.Ref.Bus, err)
					c.log.Debug("skip accessible", "ref", n.Ref.String(), "err", err)
					return
				}
				ok[i] = true
				if depth > 0 && !n.States.Has(StateShowing) || n.childCount == 0 {
					return
				}
				ks, err := c.children(ctx, n.Ref)
				if err != nil {
					markHung(n.Ref.Bus, err)
					c.log.Debug("skip children", "ref", n.Ref.String(), "err", err)
					return
				}
				if len(ks) > c.opts.MaxChildren {
					ks = ks[:c.opts.MaxChildren]
				}
				kids[i] = ks
			}(i)
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("walk accessible tree on %s: %w", c.address, err)
		}
		var next []Node
		mu.Lock()
		for i := range level {
			if !ok[i] {
				continue
			}
			n := level[i]
			idx := len(nodes)
			if n.Parent >= 0 {
				p := nodes[n.Parent]
				n.App = p.App
				n.PID = p.PID
				n.Window = p.Window
			} else {
				n.App = n.Name
			}
			if isWindowRole(n.Role) || n.Depth == 1 {
				// An application's children are its windows, whatever
				// their role (a Qt top-level widget is a "filler").
				n.Window = n.Name
			}
			nodes = append(nodes, n)
			for _, k := range kids[i] {
				next = append(next, Node{Ref: k, Parent: idx})
			}
		}
		mu.Unlock()
		level = next
	}
	return nodes, nil
}

func isWindowRole(role string) bool {
	switch role {
	case "frame", "dialog", "window", "alert", "file chooser":
		return true
	}
	return false
}

// DoAction invokes action i of r's Action interface.
func (c *Client) DoAction(ctx context.Context, r Ref, i int) error {
	var ok bool
	if err := c.call(ctx, r, ifaceAction+".DoAction", int32(i)).Store(&ok); err != nil {
		return fmt.Errorf("do action %d on %s: %w", i, r, err)
	}
	if !ok {
		return fmt.Errorf("do action %d on %s: the application refused it", i, r)
	}
	return nil
}

// SetText replaces the content of r's EditableText.
func (c *Client) SetText(ctx context.Context, r Ref, text string) error {
	var ok bool
	if err := c.call(ctx, r, ifaceEditText+".SetTextContents", text).Store(&ok); err != nil {
		return fmt.Errorf("set text of %s: %w", r, err)
	}
	if !ok {
		return fmt.Errorf("set text of %s: the application refused it (read-only?)", r)
	}
	return nil
}

// GrabFocus gives r the keyboard focus through its Component.
func (c *Client) GrabFocus(ctx context.Context, r Ref) error {
	var ok bool
	if err := c.call(ctx, r, ifaceComp+".GrabFocus").Store(&ok); err != nil {
		return fmt.Errorf("grab focus of %s: %w", r, err)
	}
	if !ok {
		return fmt.Errorf("grab focus of %s: the application refused it", r)
	}
	return nil
}
