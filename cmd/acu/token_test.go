package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestEnsureTokenFile: the first call generates a 0600 token; processes
// (here goroutines) that start together all get that one token; an empty
// file is replaced.
func TestEnsureTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "relay-token")
	const n = 8
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tok, err := ensureTokenFile(path)
			if err != nil {
				t.Errorf("ensureTokenFile: %v", err)
			}
			got[i] = tok.Reveal()
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Fatalf("tokens = %q, want one and the same", got)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v, want mode 0600", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", di.Mode().Perm())
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := ensureTokenFile(path)
	if err != nil || tok.Reveal() == "" || tok.Reveal() == got[0] {
		t.Errorf("after emptying the file: %q %v, want a new token", tok.Reveal(), err)
	}
	again, _ := ensureTokenFile(path)
	if again != tok {
		t.Errorf("token changed between calls")
	}
	if left, _ := filepath.Glob(path + ".*.tmp"); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
