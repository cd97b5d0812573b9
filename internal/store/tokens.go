package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token is an extra API token: its id, a name for people, the SHA-256 of
// its secret (hex) and its scopes.
type Token struct {
	ID        string
	Name      string
	Hash      string
	Scopes    []string
	CreatedAt time.Time
	RevokedAt time.Time // zero while it is valid
}

// CreateToken records a token.
func (db *DB) CreateToken(ctx context.Context, t Token) error {
	if t.ID == "" || t.Hash == "" || len(t.Scopes) == 0 {
		return errors.New("create token: id, hash and scopes are required")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Hash, strings.Join(t.Scopes, ","), t.CreatedAt.UnixMilli())
		if err != nil {
			return fmt.Errorf("create token %q: %w", t.ID, err)
		}
		return nil
	})
}

// TokenByHash returns the valid (not revoked) token with that hash, or
// ErrNotFound.
func (db *DB) TokenByHash(ctx context.Context, hash string) (Token, error) {
	row := db.r.QueryRowContext(ctx, `SELECT id, name, hash, scopes, created_at, revoked_at FROM tokens
		WHERE hash = ? AND revoked_at IS NULL`, hash)
	t, err := scanToken(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("look up token: %w", ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("look up token: %w", err)
	}
	return t, nil
}

// Tokens lists every token, revoked ones too, oldest first.
func (db *DB) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, hash, scopes, created_at, revoked_at FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken ends a token by id or name; ErrNotFound when no valid token
// has it.
func (db *DB) RevokeToken(ctx context.Context, idOrName string) (Token, error) {
	var t Token
	err := db.tx(ctx, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `SELECT id, name, hash, scopes, created_at, revoked_at FROM tokens
			WHERE (id = ? OR name = ?) AND revoked_at IS NULL`, idOrName, idOrName)
		var err error
		if t, err = scanToken(row); err != nil {
			return err
		}
		t.RevokedAt = db.now()
		_, err = tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ?`, t.RevokedAt.UnixMilli(), t.ID)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("revoke token %q: %w", idOrName, ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("revoke token %q: %w", idOrName, err)
	}
	return t, nil
}

func scanToken(s scanner) (Token, error) {
	var t Token
	var scopes string
	var created int64
	var revoked sql.NullInt64
	if err := s.Scan(&t.ID, &t.Name, &t.Hash, &scopes, &created, &revoked); err != nil {
		return Token{}, err
	}
	t.Scopes = strings.Split(scopes, ",")
	t.CreatedAt = time.UnixMilli(created).UTC()
	if revoked.Valid {
		t.RevokedAt = time.UnixMilli(revoked.Int64).UTC()
	}
	return t, nil
}
