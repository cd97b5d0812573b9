package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/store"
)

func init() {
	featureCommands = append(featureCommands, command{"token", "create, list or revoke API tokens with a scope: read, act or admin", runToken})
}

// tokenHash is how a token is kept in the store: SHA-256, hex.
func tokenHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// lookupToken finds an extra token for the API server.
func lookupToken(db *store.DB) func(ctx context.Context, secret string) (server.Principal, bool) {
	return func(ctx context.Context, secret string) (server.Principal, bool) {
		t, err := db.TokenByHash(ctx, tokenHash(secret))
		if err != nil || len(t.Scopes) == 0 {
			return server.Principal{}, false
		}
		return server.Principal{ID: t.ID, Name: t.Name, Scope: t.Scopes[0]}, true
	}
}

func runToken(ctx context.Context, e *env, args []string) error {
	usage := "create --scope read|act|admin [--name NAME]  |  list  |  revoke ID|NAME"
	if len(args) == 0 {
		return &exitError{code: 2, msg: "acu token: " + usage}
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, c.DB, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	t := tokenCommand{e: e, c: c, db: db}
	do, ok := map[string]func(context.Context, []string) error{"create": t.create, "list": t.list, "revoke": t.revoke}[args[0]]
	if !ok {
		return &exitError{code: 2, msg: "acu token: " + usage}
	}
	return do(ctx, args[1:])
}

// tokenCommand is `acu token`'s subcommands, on the store.
type tokenCommand struct {
	e  *env
	c  *config.Config
	db *store.DB
}

func (tc tokenCommand) create(ctx context.Context, args []string) error {
	fs := newFlags(tc.e, "token create", "--scope read|act|admin [--name NAME]")
	scope := fs.String("scope", "", "read (screenshots, waits, state), act (also input, windows, launch, clipboard, tasks) or admin (everything)")
	name := fs.String("name", "", "a name to recognise it by in `acu token list`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !slices.Contains(api.Scopes, *scope) {
		return &exitError{code: 2, msg: fmt.Sprintf("acu token create: --scope must be one of %s", strings.Join(api.Scopes, ", "))}
	}
	if strings.HasPrefix(*name, "tok_") {
		return &exitError{code: 2, msg: fmt.Sprintf("acu token create: --name %q looks like a token id (tok_...): choose a name without that prefix", *name)}
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := "acu_" + base64.RawURLEncoding.EncodeToString(b)
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	t := store.Token{ID: "tok_" + hex.EncodeToString(id), Name: *name, Hash: tokenHash(secret), Scopes: []string{*scope}}
	if err := tc.db.CreateToken(ctx, t); errors.Is(err, store.ErrTokenName) {
		return &exitError{code: 1, msg: fmt.Sprintf("acu token create: a valid token is already named %q: choose another --name, or revoke that token first (`acu token list`)", *name)}
	} else if err != nil {
		return err
	}
	fmt.Fprintln(tc.e.stdout, secret)
	fmt.Fprintf(tc.e.stderr, "token %s (scope %s) created; it is shown only now. Revoke it with `acu token revoke %s`.\n", t.ID, *scope, t.ID)
	return nil
}

func (tc tokenCommand) list(ctx context.Context, _ []string) error {
	ts, err := tc.db.Tokens(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(tc.e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSCOPE\tCREATED\tREVOKED")
	fmt.Fprintf(w, "(token file)\t%s\tadmin\t\t\n", tc.c.TokenPath())
	for _, t := range ts {
		rev := ""
		if !t.RevokedAt.IsZero() {
			rev = t.RevokedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), t.CreatedAt.Local().Format(time.DateTime), rev)
	}
	return w.Flush()
}

func (tc tokenCommand) revoke(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return &exitError{code: 2, msg: "acu token revoke ID|NAME"}
	}
	t, err := tc.db.RevokeToken(ctx, args[0])
	if amb, ok := errors.AsType[*store.AmbiguousTokenError](err); ok {
		return &exitError{code: 1, msg: fmt.Sprintf("acu token revoke: %d valid tokens are named %q, so none was revoked: revoke each by its id: %s", len(amb.IDs), amb.Name, strings.Join(amb.IDs, ", "))}
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no valid token with id or name %q: see `acu token list`", args[0])
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(tc.e.stdout, "token %s revoked\n", t.ID)
	return nil
}
