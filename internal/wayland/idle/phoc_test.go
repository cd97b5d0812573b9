package idle_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestOtherClientsInputIsTheUsersOnPhoc: on phoc, a second wlroots
// compositor (org_kde_kwin_idle v1 too), wtype's typing and another
// client's click move LastUser.
func TestOtherClientsInputIsTheUsersOnPhoc(t *testing.T) {
	waylandtest.Need(t, "wtype")
	otherClientsInput(t, waylandtest.StartPhoc(t, 320, 200))
}
