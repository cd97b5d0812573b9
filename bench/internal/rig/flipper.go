package rig

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Flipper is an X client's window that changes colour once on every button
// press: a screen that settles right after each click, and says when.
type Flipper struct {
	still atomic.Int64 // unix ns of the last change, drawn
}

// Still is when the window last finished changing.
func (f *Flipper) Still() time.Time { return time.Unix(0, f.still.Load()) }

// NewFlipper maps a w×h flipper at x,y on dpy, closed at the cleanup.
func NewFlipper(tb testing.TB, dpy string, x, y, w, h int) *Flipper {
	tb.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	win, err := xproto.NewWindowId(c)
	if err != nil {
		tb.Fatal(err)
	}
	err = xproto.CreateWindowChecked(c, scr.RootDepth, win, scr.Root, int16(x), int16(y), uint16(w), uint16(h), 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask, []uint32{0x336699, xproto.EventMaskButtonPress}).Check()
	if err != nil {
		tb.Fatal(err)
	}
	xproto.MapWindow(c, win)
	xproto.ClearArea(c, false, win, 0, 0, 0, 0)
	if _, err := xproto.GetInputFocus(c).Reply(); err != nil {
		tb.Fatal(err)
	}
	f := &Flipper{}
	go func() {
		colour := uint32(0x336699)
		for {
			ev, err := c.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			if _, ok := ev.(xproto.ButtonPressEvent); !ok {
				continue
			}
			colour ^= 0xffffff
			xproto.ChangeWindowAttributes(c, win, xproto.CwBackPixel, []uint32{colour})
			xproto.ClearArea(c, false, win, 0, 0, 0, 0)
			_, _ = xproto.GetInputFocus(c).Reply() // drawn
			f.still.Store(time.Now().UnixNano())
		}
	}()
	return f
}
