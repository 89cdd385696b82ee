package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// presenceClass is the first key of every presence lock (pg_advisory_lock(int4, int4)), so that
// they never meet the other advisory locks of the database ("kass").
const presenceClass = 0x6b617373

// presenceAlive is the SQL condition "the process whose presence id is the integer expression
// owner is alive": its presence lock is held in this database. A process killed by SIGKILL
// loses it as soon as PostgreSQL sees its connection closed (at once: the kernel closes the
// socket), without any lease to wait out.
func presenceAlive(owner string) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
		  AND l.classid = %d AND l.objid = (%s)::oid
		  AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))`, presenceClass, owner)
}

// Presence marks this process as running, in the database, for as long as it runs: it holds an
// advisory lock, named by its id, on a connection of its own (not one of the pool's, so it
// never takes a connection from the requests). Work that one process runs for a while
// outside any transaction (a test clock advance) records the id of its process; another
// process may take that work over when the lock is gone, and only then. There is no lease:
// a process killed at any point is seen gone as soon as its connection closes.
//
// Should the connection break while the process lives (a database restart), Presence opens
// another and takes the same lock again; in between, other processes may take over this
// process's work, which then runs twice at worst (the work that uses it must be safe to run
// twice: sweeps are).
type Presence struct {
	id  int32
	db  *sql.DB
	log *slog.Logger

	mu   sync.Mutex
	conn *sql.Conn

	stop func()
	done chan struct{}
}

// NewPresence connects to url and takes a presence lock under a fresh random id.
func NewPresence(ctx context.Context, url string, log *slog.Logger) (*Presence, error) {
	db, err := open(ctx, url, UnitOfWorkStatementTimeout, UnitOfWorkIdleTimeout)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	if log == nil {
		log = slog.Default()
	}
	p := &Presence{db: db.DB, log: log, done: make(chan struct{})}
	for range 10 {
		p.id = rand.Int32N(1<<31-1) + 1 //nolint:gosec // G404: a process id, not a secret; a taken one is refused below
		ok, err := p.lock(ctx)
		if err != nil {
			_ = db.Close()
			return nil, err
		}
		if ok {
			wctx, stop := context.WithCancel(context.Background())
			p.stop = stop
			go p.watch(wctx)
			return p, nil
		}
	}
	_ = db.Close()
	return nil, errors.New("postgres: presence: no free id")
}

// ID is the process's presence id.
func (p *Presence) ID() int32 { return p.id }

// lock opens the presence connection and takes the lock; false when another process holds it.
func (p *Presence) lock(ctx context.Context) (bool, error) {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("postgres: presence: %w", err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, presenceClass, p.id).Scan(&ok); err != nil {
		_ = conn.Close()
		return false, fmt.Errorf("postgres: presence: %w", err)
	}
	if !ok {
		_ = conn.Close()
		return false, nil
	}
	p.mu.Lock()
	p.conn = conn
	p.mu.Unlock()
	return true, nil
}

// watch checks the connection every few seconds and takes the lock again on a new one when it
// broke.
func (p *Presence) watch(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		conn := p.conn
		p.mu.Unlock()
		if conn != nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := conn.PingContext(pctx)
			cancel()
			if err == nil || ctx.Err() != nil {
				continue
			}
			p.log.Warn("presence: connection lost; taking the presence lock again", "error", err.Error())
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // discard it, never back to the pool
			_ = conn.Close()
			p.mu.Lock()
			p.conn = nil
			p.mu.Unlock()
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := p.lock(lctx)
		cancel()
		switch {
		case err != nil:
			p.log.Warn("presence: cannot take the presence lock yet", "error", err.Error())
		case !ok:
			p.log.Warn("presence: the presence lock is still held by the lost connection; trying again")
		}
	}
}

// Close gives the presence up: the lock goes with the connection.
func (p *Presence) Close() error {
	p.stop()
	<-p.done
	p.mu.Lock()
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
	p.mu.Unlock()
	return p.db.Close()
}
