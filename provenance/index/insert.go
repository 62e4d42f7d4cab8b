package index

import (
	"context"
	"database/sql"
	"strings"
)

// batchVars bounds the parameters of one statement (SQLite allows 32766).
// Each parameter costs the prepared statement a register of about 56
// bytes in SQLite's memory: 4000 made each statement 220 KB, allocated
// fresh (with a page fault per 4 KiB) for each inserter's statements;
// 1000 keeps most of the gain of multi-row statements.
const batchVars = 1000

// inserter writes the rows of one table with multi-row INSERT statements:
// a statement per row costs database/sql and the driver more than
// SQLite's own work (a full build inserts ~25k rows).
type inserter struct {
	ctx   context.Context
	tx    *sql.Tx
	head  string // INSERT INTO t(a, b)
	ncols int
	per   int // rows per full statement
	full  *sql.Stmt
	args  []any
}

func newInserter(ctx context.Context, tx *sql.Tx, table string, cols ...string) *inserter {
	return &inserter{ctx: ctx, tx: tx, head: "INSERT INTO " + table + "(" + strings.Join(cols, ", ") + ") VALUES ",
		ncols: len(cols), per: max(1, batchVars/len(cols))}
}

// bigRows makes the inserter write one row per statement (prepared once):
// for rows of large texts or blobs, which a multi-row statement binds all
// at once, each in a fresh allocation of the driver's.
func (in *inserter) bigRows() *inserter {
	in.per = 1
	return in
}

func (in *inserter) statement(rows int) string {
	one := placeholders(in.ncols)
	return in.head + strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

// add queues one row (len(vals) must be the number of columns).
func (in *inserter) add(vals ...any) error {
	in.args = append(in.args, vals...)
	if len(in.args) < in.per*in.ncols {
		return nil
	}
	if in.full == nil {
		st, err := in.tx.PrepareContext(in.ctx, in.statement(in.per))
		if err != nil {
			return err
		}
		in.full = st
	}
	_, err := in.full.ExecContext(in.ctx, in.args...)
	in.args = in.args[:0]
	return err
}

// flush writes the queued rows and releases the statement.
func (in *inserter) flush() error {
	defer func() {
		if in.full != nil {
			in.full.Close()
			in.full = nil
		}
	}()
	if len(in.args) == 0 {
		return nil
	}
	_, err := in.tx.ExecContext(in.ctx, in.statement(len(in.args)/in.ncols), in.args...)
	in.args = in.args[:0]
	return err
}
