// Package clipboard owns and reads X selections (CLIPBOARD and PRIMARY) on
// one display, speaking ICCCM: acu keeps a selection it was asked to set,
// answering other clients' SelectionRequests (TARGETS, UTF8_STRING, STRING,
// TEXT, text/plain;charset=utf-8, image/png) until another client takes it
// over, and reads selections with ConvertSelection and SelectionNotify,
// including the INCR protocol for large transfers.
//
// It sits on internal/display (one Conn, its event reader) and under the
// server. Data larger than one X request is sent by INCR, in pieces; above
// MaxSize (64 MiB) Set refuses with a clear error.
package clipboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// MIME types acu serves and reads.
const (
	Text = "text/plain;charset=utf-8"
	PNG  = "image/png"
)

// ErrEmpty is returned (wrapped) by Get when nobody owns the selection or
// its owner cannot give it in the asked type.
var ErrEmpty = errors.New("selection is empty or not available in that type")

// ErrTooLarge is returned (wrapped) by Set for data larger than acu can
// hand over in one piece.
var ErrTooLarge = errors.New("clipboard data too large")

// Content is a selection's data and its type (Text or PNG).
type Content struct {
	MIME string
	Data []byte
}

// Clipboard is one display's selection owner and reader. Its methods are
// safe for concurrent use; Close stops its goroutine.
type Clipboard struct {
	c   *display.Conn
	log *slog.Logger
	win xproto.Window

	mu    sync.Mutex
	owned map[xproto.Atom]Content // selections acu owns now

	// sending are INCR transfers in progress, by requestor window and
	// property, under mu.
	sending map[sendKey]*transfer

	getMu sync.Mutex // one conversion at a time
	// reading carries SelectionNotify and PropertyNotify events to the
	// conversion in progress (nil when none), under mu.
	reading chan xgb.Event
	events  chan xgb.Event
	unsub   func()
	stop    chan struct{}
	done    chan struct{}
	chunk   int // the most one ChangeProperty carries
}

type sendKey struct {
	w    xproto.Window
	prop xproto.Atom
}

// transfer is one INCR send: the requestor deletes the property to ask for
// the next piece; an empty piece ends it.
type transfer struct {
	typ   xproto.Atom
	data  []byte
	off   int
	start time.Time
}

// maxSize bounds what acu will hold and hand over.
const maxSize = 64 << 20

// New creates the window acu owns selections with and starts answering
// requests for them.
func New(c *display.Conn, log *slog.Logger) (*Clipboard, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	id, err := xproto.NewWindowId(c.X)
	if err != nil {
		return nil, fmt.Errorf("clipboard window on %s: %w", c.Name, err)
	}
	if err := xproto.CreateWindowChecked(c.X, 0, id, c.Screen.Root, -10, -10, 1, 1, 0, xproto.WindowClassInputOnly, 0,
		xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check(); err != nil {
		return nil, fmt.Errorf("create the clipboard window on %s: %w", c.Name, err)
	}
	// Room for the request header and ChangeProperty's fields.
	chunk := int(xproto.Setup(c.X).MaximumRequestLength)*4 - 64
	chunk = min(chunk, 256<<10)
	cb := &Clipboard{c: c, log: log.With("display", c.Name), win: id, owned: map[xproto.Atom]Content{},
		sending: map[sendKey]*transfer{}, events: make(chan xgb.Event, 1024), stop: make(chan struct{}),
		done: make(chan struct{}), chunk: chunk}
	cb.unsub = c.Subscribe(cb.route)
	go cb.loop()
	return cb, nil
}

// Close gives up owned selections and stops answering.
func (cb *Clipboard) Close() {
	cb.unsub()
	close(cb.stop)
	<-cb.done
	_ = xproto.DestroyWindowChecked(cb.c.X, cb.win).Check()
}

// MaxSize is the largest Set acu accepts, in bytes.
func (cb *Clipboard) MaxSize() int { return maxSize }

// route runs on the display's event reader: it must not block.
func (cb *Clipboard) route(ev xgb.Event) {
	var mine bool
	switch e := ev.(type) {
	case xproto.SelectionRequestEvent:
		mine = e.Owner == cb.win
	case xproto.SelectionClearEvent:
		mine = e.Owner == cb.win
	case xproto.SelectionNotifyEvent:
		mine = e.Requestor == cb.win
	case xproto.PropertyNotifyEvent:
		mine = e.Window == cb.win
		if !mine && e.State == xproto.PropertyDelete {
			cb.mu.Lock()
			_, mine = cb.sending[sendKey{e.Window, e.Atom}]
			cb.mu.Unlock()
		}
	}
	if !mine {
		return
	}
	select {
	case cb.events <- ev:
	default:
		cb.log.Warn("clipboard events dropped: the owner loop is behind")
	}
}

func (cb *Clipboard) loop() {
	defer close(cb.done)
	for {
		select {
		case <-cb.stop:
			return
		case ev := <-cb.events:
			cb.handle(ev)
		}
	}
}

func (cb *Clipboard) handle(ev xgb.Event) {
	defer func() {
		if r := recover(); r != nil {
			cb.log.Error("clipboard event handler panicked", "panic", fmt.Sprint(r))
		}
	}()
	switch e := ev.(type) {
	case xproto.SelectionRequestEvent:
		cb.answer(e)
	case xproto.SelectionClearEvent:
		cb.mu.Lock()
		delete(cb.owned, e.Selection)
		cb.mu.Unlock()
		cb.log.Debug("selection taken over by another client", "selection", e.Selection)
	case xproto.PropertyNotifyEvent:
		if e.Window != cb.win {
			cb.sendNext(e)
			return
		}
		cb.toReader(ev)
	default:
		cb.toReader(ev)
	}
}

// toReader hands an event to the conversion in progress, if any.
func (cb *Clipboard) toReader(ev xgb.Event) {
	cb.mu.Lock()
	ch := cb.reading
	cb.mu.Unlock()
	if ch != nil {
		select {
		case ch <- ev:
		default:
		}
	}
}

func (cb *Clipboard) atom(name string) xproto.Atom {
	a, err := cb.c.Atom(name)
	if err != nil {
		return 0
	}
	return a
}

func textTargets() []string {
	return []string{"UTF8_STRING", "STRING", "TEXT", Text, "text/plain"}
}

// answer serves one SelectionRequest for a selection acu owns.
func (cb *Clipboard) answer(e xproto.SelectionRequestEvent) {
	cb.mu.Lock()
	content, ok := cb.owned[e.Selection]
	cb.mu.Unlock()
	prop := e.Property
	if prop == 0 {
		prop = e.Target // obsolete clients
	}
	refuse := func() { prop = 0 }
	targets := []string{"TARGETS", "TIMESTAMP"}
	if content.MIME == PNG {
		targets = append(targets, PNG)
	} else {
		targets = append(targets, textTargets()...)
	}
	switch {
	case !ok:
		refuse()
	case e.Target == cb.atom("TARGETS"):
		buf := make([]byte, 0, 4*len(targets))
		for _, n := range targets {
			buf = le32(buf, uint32(cb.atom(n)))
		}
		cb.put(e.Requestor, prop, xproto.AtomAtom, 32, buf, refuse)
	case e.Target == cb.atom("TIMESTAMP"):
		cb.put(e.Requestor, prop, xproto.AtomInteger, 32, le32(nil, 0), refuse)
	case content.MIME == PNG && e.Target == cb.atom(PNG):
		cb.put(e.Requestor, prop, e.Target, 8, content.Data, refuse)
	case content.MIME == Text && e.Target == xproto.AtomString:
		cb.put(e.Requestor, prop, xproto.AtomString, 8, toLatin1(content.Data), refuse)
	case content.MIME == Text && isOneOf(e.Target, cb, textTargets()):
		typ := e.Target
		if typ == cb.atom("TEXT") {
			typ = cb.atom("UTF8_STRING")
		}
		cb.put(e.Requestor, prop, typ, 8, content.Data, refuse)
	default:
		refuse()
	}
	n := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	if err := xproto.SendEventChecked(cb.c.X, false, e.Requestor, xproto.EventMaskNoEvent, string(n.Bytes())).Check(); err != nil {
		cb.log.Debug("answer a selection request", "err", err)
	}
}

func isOneOf(a xproto.Atom, cb *Clipboard, names []string) bool {
	for _, n := range names {
		if a == cb.atom(n) {
			return true
		}
	}
	return false
}

func (cb *Clipboard) put(w xproto.Window, prop, typ xproto.Atom, format byte, data []byte, refuse func()) {
	if len(data) > cb.chunk {
		cb.startIncr(w, prop, typ, data, refuse)
		return
	}
	if err := xproto.ChangePropertyChecked(cb.c.X, xproto.PropModeReplace, w, prop, typ, format,
		uint32(len(data)*8/int(format)), data).Check(); err != nil {
		cb.log.Debug("write the selection to the requestor", "err", err)
		refuse()
	}
}

// startIncr begins an INCR send: the requestor's property gets type INCR
// and the size, and acu watches it for deletions.
func (cb *Clipboard) startIncr(w xproto.Window, prop, typ xproto.Atom, data []byte, refuse func()) {
	if err := xproto.ChangeWindowAttributesChecked(cb.c.X, w, xproto.CwEventMask,
		[]uint32{xproto.EventMaskPropertyChange}).Check(); err != nil {
		cb.log.Debug("watch the requestor for INCR", "err", err)
		refuse()
		return
	}
	cb.mu.Lock()
	now := time.Now()
	for k, t := range cb.sending {
		if now.Sub(t.start) > time.Minute { // a requestor that stopped reading
			delete(cb.sending, k)
		}
	}
	cb.sending[sendKey{w, prop}] = &transfer{typ: typ, data: data, start: now}
	cb.mu.Unlock()
	if err := xproto.ChangePropertyChecked(cb.c.X, xproto.PropModeReplace, w, prop, cb.atom("INCR"), 32, 1,
		le32(nil, uint32(len(data)))).Check(); err != nil {
		cb.mu.Lock()
		delete(cb.sending, sendKey{w, prop})
		cb.mu.Unlock()
		cb.log.Debug("start an INCR send", "err", err)
		refuse()
	}
}

// sendNext writes the next INCR piece after the requestor deleted the last.
func (cb *Clipboard) sendNext(e xproto.PropertyNotifyEvent) {
	k := sendKey{e.Window, e.Atom}
	cb.mu.Lock()
	t := cb.sending[k]
	var piece []byte
	if t != nil {
		end := min(t.off+cb.chunk, len(t.data))
		piece, t.off = t.data[t.off:end], end
		if len(piece) == 0 {
			delete(cb.sending, k)
		}
	}
	cb.mu.Unlock()
	if t == nil {
		return
	}
	if err := xproto.ChangePropertyChecked(cb.c.X, xproto.PropModeReplace, e.Window, e.Atom, t.typ, 8,
		uint32(len(piece)), piece).Check(); err != nil {
		cb.mu.Lock()
		delete(cb.sending, k)
		cb.mu.Unlock()
		cb.log.Debug("send an INCR piece", "err", err)
		return
	}
	if len(piece) == 0 {
		_ = xproto.ChangeWindowAttributesChecked(cb.c.X, e.Window, xproto.CwEventMask, []uint32{0}).Check()
	}
}

func le32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func toLatin1(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if r > 255 {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// selectionAtom maps "clipboard" and "primary" to their atoms.
func (cb *Clipboard) selectionAtom(name string) (xproto.Atom, error) {
	switch name {
	case "", "clipboard":
		return cb.c.Atom("CLIPBOARD")
	case "primary":
		return xproto.AtomPrimary, nil
	}
	return 0, fmt.Errorf("selection must be clipboard or primary, got %q", name)
}

// Set makes acu the owner of the selection ("clipboard" or "primary") with
// content, until another client takes it over.
func (cb *Clipboard) Set(ctx context.Context, selection string, content Content) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sel, err := cb.selectionAtom(selection)
	if err != nil {
		return err
	}
	switch content.MIME {
	case Text:
		if !utf8.Valid(content.Data) {
			return errors.New("clipboard text must be valid UTF-8")
		}
	case PNG:
	default:
		return fmt.Errorf("clipboard type must be %s or %s, got %q", Text, PNG, content.MIME)
	}
	if len(content.Data) > maxSize {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(content.Data), maxSize)
	}
	cb.mu.Lock()
	cb.owned[sel] = content
	cb.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(cb.c.X, cb.win, sel, xproto.TimeCurrentTime).Check(); err != nil {
		return fmt.Errorf("take the %s selection on %s: %w", selection, cb.c.Name, err)
	}
	r, err := xproto.GetSelectionOwner(cb.c.X, sel).Reply()
	if err != nil || r.Owner != cb.win {
		cb.mu.Lock()
		delete(cb.owned, sel)
		cb.mu.Unlock()
		return fmt.Errorf("take the %s selection on %s: another client kept it", selection, cb.c.Name)
	}
	return nil
}

// Get reads the selection as mime (Text or PNG). Text is asked as
// UTF8_STRING, then STRING.
func (cb *Clipboard) Get(ctx context.Context, selection, mime string) (Content, error) {
	sel, err := cb.selectionAtom(selection)
	if err != nil {
		return Content{}, err
	}
	if mime != Text && mime != PNG {
		return Content{}, fmt.Errorf("clipboard type must be %s or %s, got %q", Text, PNG, mime)
	}
	r, err := xproto.GetSelectionOwner(cb.c.X, sel).Reply()
	if err != nil {
		return Content{}, fmt.Errorf("read the %s selection owner on %s: %w", selection, cb.c.Name, err)
	}
	if r.Owner == 0 {
		return Content{}, fmt.Errorf("%s on %s: %w", selection, cb.c.Name, ErrEmpty)
	}
	if r.Owner == cb.win {
		cb.mu.Lock()
		c, ok := cb.owned[sel]
		cb.mu.Unlock()
		if ok && c.MIME == mime {
			return c, nil
		}
		return Content{}, fmt.Errorf("%s on %s holds %s: %w", selection, cb.c.Name, c.MIME, ErrEmpty)
	}
	targets := []string{PNG}
	if mime == Text {
		targets = []string{"UTF8_STRING", "STRING"}
	}
	for _, t := range targets {
		data, typ, err := cb.convert(ctx, sel, cb.atom(t))
		if errors.Is(err, ErrEmpty) {
			continue
		}
		if err != nil {
			return Content{}, fmt.Errorf("read the %s selection on %s: %w", selection, cb.c.Name, err)
		}
		if mime == Text && typ == xproto.AtomString {
			data = []byte(latin1(data))
		}
		return Content{MIME: mime, Data: data}, nil
	}
	return Content{}, fmt.Errorf("%s on %s as %s: %w", selection, cb.c.Name, mime, ErrEmpty)
}

func latin1(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// convertTimeout bounds a selection owner that never answers.
const convertTimeout = 5 * time.Second

// convert asks the owner for target and reads the answer, by INCR when the
// owner sends it in pieces.
func (cb *Clipboard) convert(ctx context.Context, sel, target xproto.Atom) ([]byte, xproto.Atom, error) {
	cb.getMu.Lock()
	defer cb.getMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, convertTimeout)
	defer cancel()
	ch := make(chan xgb.Event, 256)
	cb.mu.Lock()
	cb.reading = ch
	cb.mu.Unlock()
	defer func() {
		cb.mu.Lock()
		cb.reading = nil
		cb.mu.Unlock()
	}()
	prop := cb.atom("ACU_SELECTION")
	_ = xproto.DeletePropertyChecked(cb.c.X, cb.win, prop).Check()
	if err := xproto.ConvertSelectionChecked(cb.c.X, cb.win, sel, target, prop, xproto.TimeCurrentTime).Check(); err != nil {
		return nil, 0, err
	}
	next := func() (xgb.Event, error) {
		select {
		case ev := <-ch:
			return ev, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("the selection's owner did not answer: %w", ctx.Err())
		}
	}
	for {
		ev, err := next()
		if err != nil {
			return nil, 0, err
		}
		n, ok := ev.(xproto.SelectionNotifyEvent)
		if !ok || n.Selection != sel {
			continue
		}
		if n.Property == 0 {
			return nil, 0, ErrEmpty
		}
		break
	}
	r, err := xproto.GetProperty(cb.c.X, true, cb.win, prop, xproto.GetPropertyTypeAny, 0, 1<<28).Reply()
	if err != nil {
		return nil, 0, err
	}
	if r.Type != cb.atom("INCR") {
		return r.Value, r.Type, nil
	}
	// INCR: the owner writes pieces; each deletion asks for the next, an
	// empty piece ends.
	var out []byte
	var typ xproto.Atom
	for {
		ev, err := next()
		if err != nil {
			return nil, 0, err
		}
		p, ok := ev.(xproto.PropertyNotifyEvent)
		if !ok || p.Atom != prop || p.State != xproto.PropertyNewValue {
			continue
		}
		r, err := xproto.GetProperty(cb.c.X, true, cb.win, prop, xproto.GetPropertyTypeAny, 0, 1<<28).Reply()
		if err != nil {
			return nil, 0, err
		}
		if len(r.Value) == 0 {
			return out, typ, nil
		}
		out, typ = append(out, r.Value...), r.Type
	}
}
