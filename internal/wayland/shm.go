package wayland

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"
)

// ShmBuffer is a wl_buffer over a memfd mapped into this process: the
// compositor writes pixels into it (screencopy) and Data reads them.
type ShmBuffer struct {
	ID                    uint32
	Data                  []byte
	Width, Height, Stride int
	Format                uint32
	pool                  uint32
	fd                    int
}

// BindShm binds the compositor's wl_shm.
func BindShm(c *Conn) (uint32, error) {
	g, ok := c.Global("wl_shm")
	if !ok {
		return 0, fmt.Errorf("wayland display %s offers no wl_shm", c.path)
	}
	id, _, err := c.Bind(g, 1, nil)
	return id, err
}

// NewShmBuffer makes a buffer of height rows of stride bytes in format,
// in a pool of its own.
func NewShmBuffer(c *Conn, shm uint32, width, height, stride int, format uint32) (*ShmBuffer, error) {
	size := stride * height
	if width <= 0 || height <= 0 || stride < width*4 || size <= 0 {
		return nil, fmt.Errorf("shm buffer %dx%d stride %d: invalid size", width, height, stride)
	}
	fd, err := unix.MemfdCreate("acu-wayland", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("shm buffer: memfd: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm buffer of %d bytes: %w", size, err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shm buffer of %d bytes: mmap: %w", size, err)
	}
	b := &ShmBuffer{Data: data, Width: width, Height: height, Stride: stride, Format: format, fd: fd}
	b.pool = c.NewObject("wl_shm_pool", nil)
	if err := c.Request(shm, ShmReqCreatePool, b.pool, FD(fd), int32(size)); err != nil {
		b.unmap()
		return nil, err
	}
	b.ID = c.NewObject("wl_buffer", nil)
	if err := c.Request(b.pool, ShmPoolReqCreateBuffer, b.ID, int32(0), int32(width), int32(height), int32(stride), format); err != nil {
		b.unmap()
		return nil, err
	}
	return b, nil
}

// Destroy destroys the buffer and its pool and unmaps the memory.
func (b *ShmBuffer) Destroy(c *Conn) {
	_ = c.Request(b.ID, BufferReqDestroy)
	c.Destroyed(b.ID)
	_ = c.Request(b.pool, ShmPoolReqDestroy)
	c.Destroyed(b.pool)
	b.unmap()
}

func (b *ShmBuffer) unmap() {
	if b.Data != nil {
		_ = unix.Munmap(b.Data)
		b.Data = nil
	}
	if b.fd >= 0 {
		unix.Close(b.fd)
		b.fd = -1
	}
}

// Output is a wl_output as its events described it.
type Output struct {
	ID            uint32
	Name          string // "HEADLESS-1" (wl_output version 4), else empty
	X, Y          int
	Width, Height int // the current mode, in pixels
	Scale         int
	Transform     int
}

// BindOutputs binds every wl_output and waits for their descriptions.
func BindOutputs(ctx context.Context, c *Conn) ([]*Output, error) {
	var outs []*Output
	for _, g := range c.Globals() {
		if g.Interface != "wl_output" {
			continue
		}
		o := &Output{Scale: 1}
		id, _, err := c.Bind(g, 4, func(ev *Event) {
			switch ev.Opcode {
			case OutputEvGeometry:
				o.X, o.Y = int(ev.Int()), int(ev.Int())
				ev.Int()
				ev.Int()
				ev.Int()
				_ = ev.String()
				_ = ev.String()
				o.Transform = int(ev.Int())
			case OutputEvMode:
				flags, w, h := ev.Uint(), ev.Int(), ev.Int()
				if flags&OutputModeCurrent != 0 {
					o.Width, o.Height = int(w), int(h)
				}
			case OutputEvScale:
				o.Scale = int(ev.Int())
			case OutputEvName:
				o.Name = ev.String()
			}
		})
		if err != nil {
			return nil, err
		}
		o.ID = id
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("wayland display %s has no output", c.path)
	}
	if err := c.Roundtrip(ctx); err != nil {
		return nil, err
	}
	return outs, nil
}

// BindSeat binds the compositor's first wl_seat.
func BindSeat(c *Conn) (uint32, error) {
	g, ok := c.Global("wl_seat")
	if !ok {
		return 0, fmt.Errorf("wayland display %s offers no wl_seat", c.path)
	}
	id, _, err := c.Bind(g, 1, nil)
	return id, err
}
