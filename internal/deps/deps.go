// Package deps pins the modules acu's packages are built on while they are being written.
// It is removed once every module here is imported by real code.
package deps

import (
	_ "github.com/cenkalti/backoff/v5"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/jezek/xgb"
	_ "github.com/jezek/xgb/damage"
	_ "github.com/jezek/xgb/shm"
	_ "github.com/jezek/xgb/xcmisc"
	_ "github.com/jezek/xgb/xfixes"
	_ "github.com/jezek/xgb/xproto"
	_ "github.com/jezek/xgb/xtest"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "golang.org/x/sync/errgroup"
	_ "golang.org/x/sys/unix"
	_ "modernc.org/sqlite"
)
