package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/testfs"
)

// Health says what is wrong with the database file: deleted, corrupted
// header, or unwritable (a real full disk), and is nil again once the space
// is back.
func TestHealth(t *testing.T) {
	ctx := context.Background()
	t.Run("ok", func(t *testing.T) {
		db, _ := openTest(t)
		if err := db.Health(ctx); err != nil {
			t.Errorf("Health() on a fresh database = %v, want nil", err)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		sqliteOnly(t)
		db, _ := openTest(t)
		if err := os.Remove(db.Path()); err != nil {
			t.Fatal(err)
		}
		if err := db.Health(ctx); err == nil || !strings.Contains(err.Error(), "is gone") {
			t.Errorf("Health() after deleting the file = %v, want it gone", err)
		}
	})
	t.Run("replaced", func(t *testing.T) {
		sqliteOnly(t)
		db, _ := openTest(t)
		b, err := os.ReadFile(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		tmp := db.Path() + ".new"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, db.Path()); err != nil {
			t.Fatal(err)
		}
		if err := db.Health(ctx); err == nil || !strings.Contains(err.Error(), "replaced") {
			t.Errorf("Health() after replacing the file = %v, want replaced", err)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		sqliteOnly(t)
		db, _ := openTest(t)
		f, err := os.OpenFile(db.Path(), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("this is not sqlite"), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := db.Health(ctx); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("Health() after overwriting the header = %v, want corrupt", err)
		}
	})
	t.Run("disk full", func(t *testing.T) {
		sqliteOnly(t)
		fs := testfs.Tiny(t, 512<<10)
		db := openAt(t, filepath.Join(fs.Dir, "acu.db"), nil)
		if err := db.Health(ctx); err != nil {
			t.Fatalf("Health() before filling = %v", err)
		}
		fs.Fill()
		// A real write fails for want of space...
		big := strings.Repeat("x", 64<<10)
		for i := range 8 {
			_, _, err := db.Enqueue(ctx, OutboxItem{Key: "k" + string(rune('a'+i)), Notifier: "exec", Message: big})
			if err != nil {
				break
			}
			if i == 7 {
				t.Fatalf("8 writes of 64 KiB succeeded on a full disk:\n%s", fs.Df())
			}
		}
		if err := db.Health(ctx); err == nil || !strings.Contains(err.Error(), "full") {
			t.Errorf("Health() on a full disk = %v, want the write failure", err)
		}
		// ...and once the space is back, the next write works and Health is nil.
		fs.Free()
		if _, _, err := db.Enqueue(ctx, OutboxItem{Key: "after", Notifier: "exec", Message: "m", CreatedAt: time.Now()}); err != nil {
			t.Fatalf("Enqueue after freeing space = %v", err)
		}
		if err := db.Health(ctx); err != nil {
			t.Errorf("Health() after freeing space = %v, want nil", err)
		}
	})
}
