package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
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

// ErrTokenName: a valid token already has the name a new token asked for.
var ErrTokenName = errors.New("a valid token already has this name")

// AmbiguousTokenError: a revoke named several valid tokens (tokens created
// before names had to be unique may share one); IDs lists them.
type AmbiguousTokenError struct {
	Name string
	IDs  []string
}

func (e *AmbiguousTokenError) Error() string {
	return fmt.Sprintf("%d valid tokens are named %q (%s): revoke one by its id", len(e.IDs), e.Name, strings.Join(e.IDs, ", "))
}

// CreateToken records a token. A name (when not empty) must not be held
// by another valid token: ErrTokenName. Revoked tokens' names are free.
func (db *DB) CreateToken(ctx context.Context, t Token) error {
	if t.ID == "" || t.Hash == "" || len(t.Scopes) == 0 {
		return errors.New("create token: id, hash and scopes are required")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if t.Name != "" {
			if err := db.tokenLock(ctx, tx); err != nil {
				return fmt.Errorf("create token %q: %w", t.ID, err)
			}
			var holder string
			err := tx.QueryRowContext(ctx, `SELECT id FROM tokens WHERE name = ? AND revoked_at IS NULL ORDER BY created_at, id LIMIT 1`, t.Name).Scan(&holder)
			if err == nil {
				return fmt.Errorf("create token %q named %q: %w (%s)", t.ID, t.Name, ErrTokenName, holder)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("create token %q: %w", t.ID, err)
			}
		}
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
// has it. An id wins over a name; a name that several valid tokens share
// revokes nothing: *AmbiguousTokenError lists their ids.
func (db *DB) RevokeToken(ctx context.Context, idOrName string) (Token, error) {
	var t Token
	err := db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, name, hash, scopes, created_at, revoked_at FROM tokens
			WHERE (id = ? OR name = ?) AND revoked_at IS NULL ORDER BY created_at, id`, idOrName, idOrName)
		if err != nil {
			return err
		}
		var byID *Token
		var byName []Token
		for rows.Next() {
			m, err := scanToken(rows)
			if err != nil {
				rows.Close()
				return err
			}
			if m.ID == idOrName {
				byID = &m
			} else {
				byName = append(byName, m)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		switch {
		case byID != nil:
			t = *byID
		case len(byName) == 1:
			t = byName[0]
		case len(byName) == 0:
			return sql.ErrNoRows
		default:
			amb := &AmbiguousTokenError{Name: idOrName}
			for _, m := range byName {
				amb.IDs = append(amb.IDs, m.ID)
			}
			return amb
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

// RevokedTokens returns which of the token ids are revoked (or no longer
// exist): the daemon asks about the tokens of its open requests, to end
// them when another process revokes one.
func (db *DB) RevokedTokens(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := `SELECT id FROM tokens WHERE revoked_at IS NULL AND id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("check tokens for revocation: %w", err)
	}
	defer rows.Close()
	valid := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("check tokens for revocation: %w", err)
		}
		valid[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check tokens for revocation: %w", err)
	}
	var out []string
	for _, id := range ids {
		if !valid[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// tokenLock serializes token creation across processes on PostgreSQL (a
// transaction-scoped advisory lock), so two creates of one name cannot
// both find it free; SQLite's write transactions are serial already.
func (db *DB) tokenLock(ctx context.Context, tx *sql.Tx) error {
	return db.xactLock(ctx, tx, tokenLockKey)
}

// ownerLock serializes owner registrations the same way (RegisterOwner's
// host id check).
func (db *DB) ownerLock(ctx context.Context, tx *sql.Tx) error {
	return db.xactLock(ctx, tx, ownerLockKey)
}

func (db *DB) xactLock(ctx context.Context, tx *sql.Tx, key int) error {
	if !db.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(key)+`)`)
	return err
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
