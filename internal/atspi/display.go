package atspi

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// DisplayBusAddress reads the accessibility bus address that
// at-spi-bus-launcher publishes on the display's root window (the AT_SPI_BUS
// property). Each X display has its own, so several desktops sharing one
// session bus can still be told apart; pass the result as Options.Address.
func DisplayBusAddress(ctx context.Context, c *display.Conn) (string, error) {
	atom, err := c.Atom("AT_SPI_BUS")
	if err != nil {
		return "", fmt.Errorf("read AT_SPI_BUS on %s: %w", c.Name, err)
	}
	type reply struct {
		r   *xproto.GetPropertyReply
		err error
	}
	ch := make(chan reply, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- reply{nil, display.PanicError("read AT_SPI_BUS on "+c.Name, p)}
			}
		}()
		r, err := xproto.GetProperty(c.X, false, c.Screen.Root, atom, xproto.AtomAny, 0, 1024).Reply()
		ch <- reply{r, err}
	}()
	var rep reply
	select {
	case rep = <-ch:
	case <-ctx.Done():
		return "", fmt.Errorf("read AT_SPI_BUS on %s: %w", c.Name, ctx.Err())
	}
	if rep.err != nil {
		return "", fmt.Errorf("read AT_SPI_BUS on %s: %w", c.Name, rep.err)
	}
	if rep.r == nil || rep.r.ValueLen == 0 {
		return "", fmt.Errorf("display %s has no AT_SPI_BUS property: %w", c.Name, ErrNoBus)
	}
	return string(rep.r.Value), nil
}
