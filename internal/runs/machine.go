package runs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// machineIDFiles are where the operating system keeps this machine's id.
var machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}

// MachineID returns the id of the machine this process runs on, which a
// run owner records (store.Owner.Machine) so two machines sharing a host
// id are told apart: override when not empty (ACU_MACHINE_ID), else the
// operating system's (/etc/machine-id), else one generated once and kept
// in dataDir/machine-id (containers often have none).
func MachineID(override, dataDir string) (string, error) {
	if override != "" {
		return override, nil
	}
	for _, f := range machineIDFiles {
		if b, err := os.ReadFile(f); err == nil {
			if id := strings.TrimSpace(string(b)); id != "" {
				return id, nil
			}
		}
	}
	p := filepath.Join(dataDir, "machine-id")
	if b, err := os.ReadFile(p); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the machine id %s: %w", p, err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("keep a machine id in %s: %w", dataDir, err)
	}
	// O_EXCL: of two processes generating at once, one id wins; the other
	// reads it.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		b, err := os.ReadFile(p)
		if id := strings.TrimSpace(string(b)); err == nil && id != "" {
			return id, nil
		}
		return "", fmt.Errorf("the machine id file %s is empty or unreadable (%v): delete it, or set ACU_MACHINE_ID", p, err)
	}
	if err != nil {
		return "", fmt.Errorf("keep a machine id in %s: %w", p, err)
	}
	_, err = f.WriteString(id + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("keep a machine id in %s: %w", p, err)
	}
	return id, nil
}
