package runs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMachineID(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "machine-id-of-the-os")
	old := machineIDFiles
	t.Cleanup(func() { machineIDFiles = old })
	machineIDFiles = []string{filepath.Join(dir, "missing"), sys}

	if err := os.WriteFile(sys, []byte("0123abcd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := MachineID("", filepath.Join(dir, "data")); err != nil || id != "0123abcd" {
		t.Errorf("MachineID with the OS's = %q, %v, want 0123abcd", id, err)
	}
	if id, err := MachineID("lab-3-vm", filepath.Join(dir, "data")); err != nil || id != "lab-3-vm" {
		t.Errorf("MachineID(override) = %q, %v, want lab-3-vm", id, err)
	}

	// No OS id (an empty file, as in many containers): one is generated
	// into the data directory once and kept.
	if err := os.WriteFile(sys, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	first, err := MachineID("", data)
	if err != nil || len(first) != 32 {
		t.Fatalf("MachineID without the OS's = %q, %v, want 32 hex digits", first, err)
	}
	if fi, err := os.Stat(filepath.Join(data, "machine-id")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("generated machine-id file: %v, %v, want mode 0600", fi, err)
	}
	if again, err := MachineID("", data); err != nil || again != first {
		t.Errorf("MachineID again = %q, %v, want the kept %q", again, err, first)
	}
	if other, _ := MachineID("", filepath.Join(dir, "other-data")); other == first {
		t.Errorf("two data directories without an OS id got the same generated id %q", other)
	}
}
