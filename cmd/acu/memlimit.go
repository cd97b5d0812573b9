package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/acu-dev/acu/internal/config"
)

// applyMemoryLimit sets the runtime's soft memory limit from
// ACU_MEMORY_LIMIT for a long-running process. GOMEMLIMIT, the runtime's
// own variable, wins when set: the runtime has read it already.
func applyMemoryLimit(c *config.Config, getenv func(string) string, log *slog.Logger) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		log.Debug("memory limit from GOMEMLIMIT", "limit", v)
		return
	}
	if c.MemoryLimit <= 0 {
		return
	}
	debug.SetMemoryLimit(c.MemoryLimit)
	log.Debug("soft memory limit", "limit", config.FormatByteSize(c.MemoryLimit))
}
