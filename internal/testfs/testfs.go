// Package testfs gives tests a real, tiny filesystem to fill up: a tmpfs
// of a few hundred KiB mounted on a temporary directory, so "disk full"
// is the kernel's ENOSPC, not a simulation. Mounting needs root (or
// CAP_SYS_ADMIN); without it the test is skipped, saying why.
package testfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// FS is a mounted tmpfs.
type FS struct {
	t   testing.TB
	Dir string // the mount point
	pad string // the file Fill grows
}

// Tiny mounts a tmpfs of size bytes on a new directory and unmounts it at
// cleanup.
func Tiny(t testing.TB, size int) *FS {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mount a %d-byte tmpfs for a real disk-full test: %v (run as root or with CAP_SYS_ADMIN)", size, err)
		}
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return &FS{t: t, Dir: dir, pad: filepath.Join(dir, ".pad")}
}

// Fill writes to a padding file until the filesystem is full (ENOSPC).
func (fs *FS) Fill() {
	fs.t.Helper()
	f, err := os.OpenFile(fs.pad, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fs.t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			fs.t.Fatalf("fill %s: %v", fs.Dir, err)
		}
	}
	// Byte-sized writes take the last partial block too.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
	}
}

// Free deletes the padding: the space is back.
func (fs *FS) Free() {
	fs.t.Helper()
	if err := os.Remove(fs.pad); err != nil && !errors.Is(err, os.ErrNotExist) {
		fs.t.Fatal(err)
	}
}

// Df returns df's line for the mount, for failure messages.
func (fs *FS) Df() string {
	out, _ := exec.Command("df", "-k", fs.Dir).CombinedOutput()
	return string(out)
}
