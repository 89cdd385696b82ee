package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// ResealReport is what ResealSecrets did.
type ResealReport struct {
	Resealed   int // endpoints whose secrets were clear or under an older key, now under the current one
	Unreadable int // endpoints whose secrets no configured key opens (left as they are)
}

type resealRow struct {
	MerchantID     string `db:"merchant_id"`
	Environment    string `db:"environment"`
	ID             string `db:"id"`
	SecretSealed   []byte `db:"secret_sealed"`
	PreviousSealed []byte `db:"previous_secret_sealed"`
}

// ResealSecrets brings every stored webhook secret under the sealer's current key: rows
// written in clear (before a key was configured) and rows sealed under an older key of the
// ring are opened and sealed again, each in a transaction of its own under a row lock, so it
// can run while other processes serve. Rows no key opens are counted and left alone. `kassa
// serve` runs it at start-up.
func (s *WebhookStore) ResealSecrets(ctx context.Context) (ResealReport, error) {
	var rep ResealReport
	var rows []resealRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT merchant_id, environment, id, secret_sealed, previous_secret_sealed
		FROM webhook_endpoints ORDER BY seq`); err != nil {
		return rep, fmt.Errorf("webhook_endpoints: reseal: %w", err)
	}
	for _, r := range rows {
		if s.current(r) {
			continue
		}
		resealed, unreadable, err := s.reseal(ctx, r)
		if err != nil {
			return rep, err
		}
		if resealed {
			rep.Resealed++
		}
		if unreadable {
			rep.Unreadable++
		}
	}
	// App webhook endpoints (their copies per merchant environment are rows of
	// webhook_endpoints, re-sealed above).
	var apps []struct {
		ID           string `db:"id"`
		SecretSealed []byte `db:"secret_sealed"`
	}
	if err := s.db.SelectContext(ctx, &apps, `SELECT id, secret_sealed FROM app_webhook_endpoints ORDER BY seq`); err != nil {
		return rep, fmt.Errorf("app_webhook_endpoints: reseal: %w", err)
	}
	for _, a := range apps {
		if s.sealer.Current(a.SecretSealed, a.ID) {
			continue
		}
		err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
			var sealed []byte
			if err := tx.GetContext(ctx, &sealed, `SELECT secret_sealed FROM app_webhook_endpoints WHERE id = $1 FOR UPDATE`, a.ID); errors.Is(err, sql.ErrNoRows) {
				return nil
			} else if err != nil {
				return err
			}
			if s.sealer.Current(sealed, a.ID) {
				return nil
			}
			secret, err := s.sealer.Open(sealed, a.ID)
			if err != nil {
				rep.Unreadable++
				return nil
			}
			if sealed, err = s.sealer.Seal(secret, a.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE app_webhook_endpoints SET secret_sealed = $2 WHERE id = $1`, a.ID, sealed); err != nil {
				return fmt.Errorf("app_webhook_endpoints: reseal: %w", err)
			}
			rep.Resealed++
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// current reports whether both stored secrets of r are under the current key.
func (s *WebhookStore) current(r resealRow) bool {
	return s.sealer.Current(r.SecretSealed, r.ID) && (r.PreviousSealed == nil || s.sealer.Current(r.PreviousSealed, r.ID))
}

// reseal re-seals one endpoint's secrets under a row lock (reading them again: another
// process may have rotated or re-sealed them meanwhile).
func (s *WebhookStore) reseal(ctx context.Context, r resealRow) (resealed, unreadable bool, err error) {
	err = inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var cur resealRow
		if err := tx.GetContext(ctx, &cur, `SELECT merchant_id, environment, id, secret_sealed, previous_secret_sealed
			FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 AND id = $3 FOR UPDATE`,
			r.MerchantID, r.Environment, r.ID); errors.Is(err, sql.ErrNoRows) {
			return nil // deleted meanwhile
		} else if err != nil {
			return err
		}
		if s.current(cur) {
			return nil
		}
		secret, err := s.sealer.Open(cur.SecretSealed, cur.ID)
		if err != nil {
			unreadable = true
			return nil
		}
		sealed, err := s.sealer.Seal(secret, cur.ID)
		if err != nil {
			return err
		}
		var prevSealed []byte
		if cur.PreviousSealed != nil {
			prev, err := s.sealer.Open(cur.PreviousSealed, cur.ID)
			if err != nil {
				unreadable = true
				return nil
			}
			if prevSealed, err = s.sealer.Seal(prev, cur.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET secret_sealed = $4, previous_secret_sealed = $5
			WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
			cur.MerchantID, cur.Environment, cur.ID, sealed, prevSealed); err != nil {
			return fmt.Errorf("webhook_endpoints: reseal: %w", err)
		}
		resealed = true
		return nil
	})
	return resealed, unreadable, err
}
