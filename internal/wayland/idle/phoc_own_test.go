package idle

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestOwnInputIsNotTheUsersOnPhoc: on phoc, 200 of acu's bracketed clicks
// and characters are never the user's, and another client's click is.
// phoc reports a pointer event twice (a click is 6 resumed events, where
// sway's is 3) and a key event once (a character is 2, as on sway).
func TestOwnInputIsNotTheUsersOnPhoc(t *testing.T) {
	w, acu, user := openOn(t, waylandtest.StartPhoc(t, 320, 200))
	ownInputIsNotTheUsers(t, w, acu, user, 6, 2)
}
