package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/state"
	"clink/state/stateuri"
)

// maxRuns bounds how many runs of one query a pool prefix may hold; the
// probe for the newest run stops there.
const maxRuns = 1000

// Durable reports whether uri keeps checkpoints across processes
// (disagg-file:// and remote-read://).
func Durable(uri string) bool {
	cfg, _, err := stateuri.Parse(uri)
	if err != nil {
		return false
	}
	return cfg.Scheme == stateuri.DisaggFile || cfg.Scheme == stateuri.RemoteRead
}

// QueryName names a query's checkpoints: "q-" and the first 12 hex digits
// of the SHA-256 of its canonical SQL, so the same query in a restarted
// process finds its own checkpoints and two queries never share state.
func QueryName(q *ast.Query) string {
	sum := sha256.Sum256([]byte(ast.String(q)))
	return "q-" + hex.EncodeToString(sum[:6])
}

// queryName is QueryName with "-2", "-3", ... for repeats of the same query
// within the session.
func (s *Session) queryName(q *ast.Query) string {
	name := QueryName(q)
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	s.seen[name]++
	if n := s.seen[name]; n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	return name
}

// QueryURI returns the state URI of run `run` of query name under a
// durable base URI: the directory or bucket prefix gains "/NAME/rRUN".
func QueryURI(base, name string, run int) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("state uri: %w", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + name + "/r" + strconv.Itoa(run)
	if u.Host == "" && !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	return u.String(), nil
}

// runChoice is the pool a query runs on: its run number and the
// checkpoint to restore (0: a fresh start).
type runChoice struct {
	uri     string
	run     int
	restore state.CheckpointID
	latest  state.CheckpointID // the run's newest checkpoint when chosen (state.LatestDamaged: unknown)
	damaged error              // the run's pointer to its newest checkpoint is damaged
}

// ParseRestore reads a --restore value: "latest", or a checkpoint id.
func ParseRestore(s string) (latest bool, id state.CheckpointID, err error) {
	switch s = strings.TrimSpace(s); s {
	case "", "none":
		return false, 0, nil
	case "latest":
		return true, 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return false, 0, fmt.Errorf("restore %q: want latest or a checkpoint id", s)
	}
	return false, state.CheckpointID(n), nil
}

// chooseRun probes runs 1, 2, ... of query name for their newest
// checkpoint. A fresh start takes the first run without one; a resume
// takes the newest run that has one (restoring its latest or the given
// checkpoint), or starts fresh if there is none and latest was asked. A
// run whose CURRENT is damaged has checkpoints but no known latest: it
// restores by id only, and --restore latest fails naming the ids.
func (s *Session) chooseRun(ctx context.Context, base, name, resume string) (runChoice, error) {
	latest, id, err := ParseRestore(resume)
	if err != nil {
		return runChoice{}, err
	}
	var last runChoice
	for run := 1; run <= maxRuns; run++ {
		uri, err := QueryURI(base, name, run)
		if err != nil {
			return runChoice{}, err
		}
		ckpt, damaged, err := latestOf(ctx, uri, s.cfg)
		if err != nil {
			return runChoice{}, fmt.Errorf("query %s run %d: %w", name, run, err)
		}
		if ckpt > 0 {
			last = runChoice{uri: uri, run: run, restore: ckpt, latest: ckpt, damaged: damaged}
			continue
		}
		switch {
		case resume == "" || resume == "none" || (latest && last.run == 0):
			return runChoice{uri: uri, run: run}, nil
		case last.run == 0:
			return runChoice{}, fmt.Errorf("restore checkpoint %d: query %s has no checkpoints", id, name)
		case last.damaged != nil && latest:
			return runChoice{}, fmt.Errorf("restore latest: query %s run %d: %w", name, last.run, last.damaged)
		case id != 0:
			if last.damaged == nil && id > last.restore {
				return runChoice{}, fmt.Errorf("restore checkpoint %d: query %s's newest checkpoint is %d", id, name, last.restore)
			}
			last.restore = id
		}
		return last, nil
	}
	return runChoice{}, fmt.Errorf("query %s: more than %d runs under one state prefix", name, maxRuns)
}

// latestOf opens uri's pool and asks for its newest checkpoint. A
// damaged CURRENT is returned as damaged, with state.LatestDamaged.
func latestOf(ctx context.Context, uri string, cfg Config) (id state.CheckpointID, damaged, err error) {
	f, err := stateuri.Open(uri, stateuri.Options{HashSeed: cfg.HashSeed})
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	id, err = f.Pool().Latest(ctx)
	switch {
	case errors.Is(err, state.ErrCorrupt):
		return state.LatestDamaged, err, nil
	case err != nil && !errors.Is(err, state.ErrNoCheckpoint):
		return 0, nil, err
	}
	return id, nil, nil
}
