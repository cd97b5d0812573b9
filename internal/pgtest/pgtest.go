// Package pgtest runs a real PostgreSQL server for tests: Debian's
// postgresql-15 binaries, initdb in a temporary directory, a free loopback
// port, run as the unprivileged postgres user when the tests run as root
// (PostgreSQL refuses to run as root). One server serves a whole test
// binary; each test gets a fresh database of its own (DSN), dropped at its
// end. Call Stop from TestMain after m.Run; the server also dies with the
// test process (parent-death signal) if a test binary is killed.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinDir is where Debian's postgresql-15 package puts the server binaries.
var BinDir = "/usr/lib/postgresql/15/bin"

// Options tune the server.
type Options struct {
	// Durable keeps PostgreSQL's defaults (fsync, synchronous commit);
	// without it the server skips fsync, which tests of acu (not of
	// PostgreSQL's crash safety) do not need.
	Durable bool
	// MaxConnections is max_connections (default 400).
	MaxConnections int
}

// Server is a running PostgreSQL server.
type Server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

var (
	shared    *Server
	sharedErr error
	once      sync.Once
)

// Shared returns the test binary's server, starting it on first use.
func Shared(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, sharedErr = Start(Options{}) })
	if sharedErr != nil {
		t.Fatalf("start PostgreSQL for the test: %v", sharedErr)
	}
	return shared
}

// Stop stops the shared server, if one was started. Call it from TestMain.
func Stop() {
	if shared != nil {
		shared.Stop()
	}
}

// DSN creates a fresh database on the shared server for t, dropped when t
// ends, and returns its connection string.
func DSN(t testing.TB) string {
	t.Helper()
	return Shared(t).NewDB(t)
}

// Start initialises a cluster in a new temporary directory and starts the
// server on a free loopback port.
func Start(o Options) (*Server, error) {
	initdb := filepath.Join(BinDir, "initdb")
	if _, err := os.Stat(initdb); err != nil {
		return nil, fmt.Errorf("no PostgreSQL server binaries at %s (%v): install them with apt-get install postgresql-15 (scripts/install-deps.sh does)", BinDir, err)
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = 400
	}
	dir, err := os.MkdirTemp("", "acu-pg-")
	if err != nil {
		return nil, err
	}
	cred, err := runAs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	out, err := command(cred, initdb, "-D", data, "-U", "acu", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, port: port, done: make(chan struct{}), log: filepath.Join(dir, "postgres.log")}
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=" + strconv.Itoa(o.MaxConnections), "-c", "log_min_messages=warning"}
	if !o.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.cmd = command(cred, filepath.Join(BinDir, "postgres"), args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.AdminDSN())
		cancel()
		if err == nil {
			c.Close(context.Background())
			return s, nil
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(s.log)
			os.RemoveAll(dir)
			return nil, fmt.Errorf("postgres exited before accepting connections:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("postgres did not accept connections within 60s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AdminDSN is the connection string of the server's default database.
func (s *Server) AdminDSN() string {
	return fmt.Sprintf("postgres://acu@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// NewDB creates a fresh database, dropped when t ends, and returns its
// connection string.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	name, dsn, err := s.CreateDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return dsn
}

// CreateDB creates a fresh database and returns its name and connection
// string; the caller drops it (or lets Stop remove the whole cluster).
func (s *Server) CreateDB(ctx context.Context) (name, dsn string, err error) {
	b := make([]byte, 6)
	rand.Read(b)
	name = "acu_" + hex.EncodeToString(b)
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("create test database: %w", err)
	}
	return name, fmt.Sprintf("postgres://acu@127.0.0.1:%d/%s?sslmode=disable", s.port, name), nil
}

func (s *Server) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.AdminDSN())
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop shuts the server down (fast shutdown, then SIGKILL after 20 s) and
// removes its directory.
func (s *Server) Stop() {
	select {
	case <-s.done:
	default:
		s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

// runAs returns the credential to run PostgreSQL with: the postgres user
// when this process is root (owning dir), else nil (this user).
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no postgres user (%v): install postgresql-15", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	// The directory's parents must be searchable by that user.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Engine is the database engine the store's tests run on:
// ACU_TEST_ENGINE=postgres selects PostgreSQL (scripts/test.sh runs the
// store, runs and notify packages once more that way); SQLite otherwise.
func Engine() string {
	if os.Getenv("ACU_TEST_ENGINE") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// Path returns where a test's database lives on the engine under test: a
// fresh PostgreSQL database, or the file name inside a new temporary
// directory.
func Path(t testing.TB, name string) string {
	t.Helper()
	if Engine() == "postgres" {
		return DSN(t)
	}
	return filepath.Join(t.TempDir(), name)
}
