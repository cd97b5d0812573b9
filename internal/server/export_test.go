package server

import "time"

// SetRemoteActTimeout shortens how long an action handed to another host
// waits for its answer, for a test; it returns a function restoring it.
func SetRemoteActTimeout(d time.Duration) (restore func()) {
	old := remoteActTimeout
	remoteActTimeout = d
	return func() { remoteActTimeout = old }
}
