package capture

import (
	"fmt"

	"github.com/jezek/xgb/shm"
	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/display"
)

// shmSeg is one SysV shared-memory segment attached by both acu and the X
// server. It is marked for removal (IPC_RMID) as soon as the server has
// attached it, so the kernel frees it when both detach, even after a crash.
type shmSeg struct {
	seg  shm.Seg
	data []byte
}

func newSHM(c *display.Conn, size int) (*shmSeg, error) {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		return nil, fmt.Errorf("create shared memory segment: %w", err)
	}
	data, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		return nil, fmt.Errorf("attach shared memory segment: %w", err)
	}
	seg, err := shm.NewSegId(c.X)
	if err == nil {
		err = shm.AttachChecked(c.X, seg, uint32(id), false).Check()
	}
	// Removed now: the segment lives until both sides detach.
	_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	if err != nil {
		_ = unix.SysvShmDetach(data)
		return nil, fmt.Errorf("attach shared memory in the X server (a remote display?): %w", err)
	}
	return &shmSeg{seg: seg, data: data}, nil
}

// close detaches acu's mapping; the server's side goes with its connection
// (or is detached here when the connection is still alive).
func (s *shmSeg) close(c *display.Conn) {
	if c != nil && c.Alive() {
		shm.Detach(c.X, s.seg)
	}
	_ = unix.SysvShmDetach(s.data)
	s.data = nil
}
