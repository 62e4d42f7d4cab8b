package index

import (
	"context"
	"encoding/json"

	"github.com/perflog/perflog/provenance"
)

// The launch walks of recipes (provenance.LaunchState) are stored as
// they are first asked for, one row per key, as JSON: a later question
// resumes the walk where it stopped, so a commit costs the dry runs it
// makes necessary once. A state that does not fit the history asked
// about (another chain, a rewritten one) is walked afresh.

// LaunchState returns the stored launch walk of key, nil when there is
// none or it cannot be read.
func (ix *Index) LaunchState(ctx context.Context, key string) *provenance.LaunchState {
	var data []byte
	if err := ix.db.QueryRowContext(ctx, `SELECT data FROM launch_states WHERE key = ?`, key).Scan(&data); err != nil {
		return nil
	}
	var st provenance.LaunchState
	if json.Unmarshal(data, &st) != nil || st.Key != key {
		return nil
	}
	return &st
}

// StoreLaunchState stores a launch walk (replacing the key's).
func (ix *Index) StoreLaunchState(ctx context.Context, st *provenance.LaunchState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO launch_states(key, data) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET data = excluded.data`, st.Key, data); err != nil {
		return err
	}
	return tx.Commit()
}
