package wayland

import (
	"encoding/binary"
	"testing"
)

// message builds one wire message: object, opcode, then 32-bit words.
func message(obj uint32, op uint16, words ...uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, obj)
	b = binary.LittleEndian.AppendUint32(b, uint32(8+4*len(words))<<16|uint32(op))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func newTestConn() *Conn {
	c := &Conn{objects: map[uint32]*object{}, next: displayID + 1, path: "test"}
	c.objects[displayID] = &object{iface: "wl_display", handler: c.onDisplay}
	c.registry = c.NewObject("wl_registry", c.onRegistry)
	return c
}

// TestDispatchParsesEvents feeds a registry global, a split message and a
// protocol error through the event parser.
func TestDispatchParsesEvents(t *testing.T) {
	c := newTestConn()
	// wl_registry.global(7, "wl_shm", 1): the string is length 7 with its
	// NUL, padded to 8 bytes.
	name := []byte("wl_shm\x00\x00")
	g := message(c.registry, 0, 7, 7, binary.LittleEndian.Uint32(name[0:]), binary.LittleEndian.Uint32(name[4:]), 1)
	c.rbuf = append(c.rbuf, g[:10]...)
	if c.dispatchBuffered() {
		t.Fatalf("a partial message was dispatched")
	}
	c.rbuf = append(c.rbuf, g[10:]...)
	if !c.dispatchBuffered() || c.err != nil {
		t.Fatalf("dispatch of a global: err %v", c.err)
	}
	if gl, ok := c.Global("wl_shm"); !ok || gl.Name != 7 || gl.Version != 1 {
		t.Fatalf("Global(wl_shm) = %+v, %v; want name 7 version 1", gl, ok)
	}
	// wl_display.delete_id(2) frees the registry's id for reuse.
	c.rbuf = append(c.rbuf, message(displayID, 1, c.registry)...)
	c.dispatchBuffered()
	if id := c.NewObject("x", nil); id != c.registry {
		t.Errorf("NewObject after delete_id = %d, want the freed id %d", id, c.registry)
	}
	// wl_display.error(object 5, code 3, "bad")
	c.rbuf = append(c.rbuf, message(displayID, 0, 5, 3, 4, binary.LittleEndian.Uint32([]byte("bad\x00")))...)
	c.dispatchBuffered()
	pe, ok := c.err.(*ProtocolError)
	if !ok || pe.Object != 5 || pe.Code != 3 || pe.Message != "bad" {
		t.Fatalf("err = %v, want the protocol error of object 5, code 3, \"bad\"", c.err)
	}
}

// FuzzDispatch feeds arbitrary bytes, as a compositor could send, to the
// event parser: it must fail the connection, never panic.
func FuzzDispatch(f *testing.F) {
	f.Add(message(2, 0, 7, 7, 0x735f6c77, 0x6d68, 1))
	f.Add(message(1, 0, 5, 3, 100))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 4, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newTestConn()
		c.rbuf = b
		c.dispatchBuffered()
	})
}
