package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acu-dev/acu/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.MainThen(m, Stop, "acu-dev/acu/")
}

// A fresh database per test, on a real server, reachable and empty.
func TestDSN(t *testing.T) {
	dsn := DSN(t)
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var v string
	if err := c.QueryRow(t.Context(), "SHOW server_version").Scan(&v); err != nil || v[:2] != "15" {
		t.Fatalf("server_version = %q, %v; want 15.x", v, err)
	}
	var n int
	if err := c.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("tables in a fresh database = %d, %v", n, err)
	}
}
