package display

import (
	"context"
	"net"

	"github.com/jezek/xgb/xproto"
)

// RawConn is a connection after the X handshake, for a reader that speaks
// the protocol itself: xgb reads every event as 32 bytes, so it cannot
// read the XInput2 generic events (longer than 32 bytes) that input's user
// clock needs. The socket is the caller's to read, write and close.
type RawConn struct {
	Name   string
	Screen Screen
	Setup  *xproto.SetupInfo
	Socket net.Conn
}

// OpenRaw connects to the display name as OpenImage does (same names,
// same authority) and returns the connection after the handshake.
func OpenRaw(ctx context.Context, name string, opts Options) (*RawConn, error) {
	ic, setup, err := openImage(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &RawConn{Name: name, Screen: ic.Screen, Setup: setup, Socket: ic.nc}, nil
}
