package store

import (
	"errors"
	"slices"
	"testing"
)

// TestTokenNamesUnique: a second valid token cannot take a name; a revoked
// token's name is free again; unnamed tokens do not collide.
func TestTokenNamesUnique(t *testing.T) {
	db, _ := openTest(t)
	ctx := t.Context()
	tok := func(id, name string) Token {
		return Token{ID: id, Name: name, Hash: "hash-" + id, Scopes: []string{"read"}}
	}
	if err := db.CreateToken(ctx, tok("tok_a", "ci")); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateToken(ctx, tok("tok_b", "ci")); !errors.Is(err, ErrTokenName) {
		t.Fatalf("CreateToken(second %q) = %v, want ErrTokenName", "ci", err)
	}
	for _, id := range []string{"tok_c", "tok_d"} {
		if err := db.CreateToken(ctx, tok(id, "")); err != nil {
			t.Fatalf("CreateToken(%s without a name) = %v", id, err)
		}
	}
	if _, err := db.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateToken(ctx, tok("tok_e", "ci")); err != nil {
		t.Fatalf("CreateToken(%q after the old one was revoked) = %v", "ci", err)
	}
}

// TestRevokeAmbiguousName: two valid tokens sharing a name (made before
// names had to be unique) are not revoked by that name: the error lists
// both ids and both still work; each can be revoked by id.
func TestRevokeAmbiguousName(t *testing.T) {
	db, _ := openTest(t)
	ctx := t.Context()
	for _, id := range []string{"tok_1", "tok_2"} {
		if _, err := db.w.ExecContext(ctx, `INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, 'shared', ?, 'read', 1)`, id, "h"+id); err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.RevokeToken(ctx, "shared")
	amb, ok := errors.AsType[*AmbiguousTokenError](err)
	if !ok || !slices.Equal(amb.IDs, []string{"tok_1", "tok_2"}) {
		t.Fatalf("RevokeToken(shared) = %v, want an AmbiguousTokenError listing tok_1 and tok_2", err)
	}
	for _, h := range []string{"htok_1", "htok_2"} {
		if _, err := db.TokenByHash(ctx, h); err != nil {
			t.Errorf("token %s after the refused revoke: %v, want still valid", h, err)
		}
	}
	if got, err := db.RevokedTokens(ctx, []string{"tok_1", "tok_2", "tok_gone"}); err != nil || !slices.Equal(got, []string{"tok_gone"}) {
		t.Errorf("RevokedTokens = %v, %v, want [tok_gone]", got, err)
	}
	if r, err := db.RevokeToken(ctx, "tok_2"); err != nil || r.ID != "tok_2" {
		t.Fatalf("RevokeToken(tok_2) = %+v, %v", r, err)
	}
	if got, err := db.RevokedTokens(ctx, []string{"tok_1", "tok_2"}); err != nil || !slices.Equal(got, []string{"tok_2"}) {
		t.Errorf("RevokedTokens after revoking tok_2 = %v, %v, want [tok_2]", got, err)
	}
	// One valid token left with that name: the name now revokes it.
	if r, err := db.RevokeToken(ctx, "shared"); err != nil || r.ID != "tok_1" {
		t.Errorf("RevokeToken(shared) with one left = %+v, %v, want tok_1", r, err)
	}
}
