package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
)

// loadConfig builds the configuration from the environment and config file
// (client commands take no configuration flags; `acu serve` does).
func loadConfig(e *env) (*config.Config, error) {
	c, _, warnings, err := config.Load(e.getenv, e.environ, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "acu: warning:", w)
	}
	return c, nil
}

// readToken returns ACU_TOKEN or the daemon's generated token file.
func readToken(c *config.Config) (string, error) {
	if c.Token.Set() {
		return c.Token.Reveal(), nil
	}
	b, err := os.ReadFile(c.TokenPath())
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no token at %s: start the daemon with `acu serve` (it creates the token), or set ACU_TOKEN", c.TokenPath())
	}
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// newClient returns an API client for the configured daemon.
func newClient(e *env) (*api.Client, *config.Config, error) {
	c, err := loadConfig(e)
	if err != nil {
		return nil, nil, err
	}
	tok, err := readToken(c)
	if err != nil {
		return nil, nil, err
	}
	return api.NewClient("http://"+c.DialAddr(), tok), c, nil
}

func runConfig(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "config", "[--list]")
	list := fs.Bool("list", false, "also print each setting's description, accepted values and default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	c.Dump(e.stdout, *list)
	return nil
}

var _ = flag.ErrHelp
