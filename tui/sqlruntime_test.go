package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/session"
	"clink/state"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// sqlNexmarkDDL is an unbounded Nexmark input paced by the session's
// (simulated) clock at 2000 events/s.
const sqlNexmarkDDL = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', rate = 2000);
CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT)
  WITH (connector = 'nexmark', rate = 2000);`

// steppedSQL is a stepped session on a Sim with an event bus, and a
// SQL runtime over q whose tap stamps events with the Sim's clock.
type steppedSQL struct {
	sim *async.Sim
	h   *session.Handle
	rt  *SQLRuntime
	// ticks counts samples; tick k is at SimEpoch + k×500ms, so rates are
	// per half second of the dashboard's clock.
	ticks int
}

func newSteppedSQL(t *testing.T, ddl, q string) *steppedSQL {
	t.Helper()
	sim := async.NewSim(3, async.Fixed(time.Millisecond))
	cfg := session.Config{StateURI: "disagg-local://?latency=1ms&hot_max_bytes=8KiB", Parallelism: 2, HashSeed: 5,
		Clock: sim, Executor: sim, Idle: sim.Step, MaxInFlight: 64, Bus: event.NewBus()}
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	rt, err := NewSQLRuntime(SQLConfig{Handle: h, Session: s.Config(),
		Feed: FeedConfig{Buffer: 1 << 16, Now: sim.Now, Skip: DefaultFeedConfig.Skip}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return &steppedSQL{sim: sim, h: h, rt: rt}
}

// tick moves the Sim's clock half a second (the rate-limited source
// then has events due), runs the job until idle, hands the tapped events
// to the model and samples a snapshot.
func (s *steppedSQL) tick(t *testing.T, m *Model) {
	t.Helper()
	at := async.SimEpoch.Add(time.Duration(s.ticks+1) * 500 * time.Millisecond)
	if now := s.sim.Now(); now.Before(at) {
		s.sim.AdvanceTo(at)
	}
	if err := s.h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	var batch eventsMsg
	for len(batch) < 1<<16 {
		select {
		case e := <-s.rt.Events():
			batch = append(batch, e)
			continue
		default:
		}
		break
	}
	m.Update(batch)
	s.ticks++
	m.Update(tickMsg{at: at})
}

func renderSQL(t *testing.T, s *steppedSQL, w, h, ticks int) string {
	t.Helper()
	m := New(s.rt, Config{Start: async.SimEpoch, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for i := 0; i < ticks; i++ {
		s.tick(t, m)
	}
	return ansi.Strip(m.View().Content)
}

const groupByQuery = `SELECT auction, COUNT(*) AS bids, MAX(price) AS top_price
FROM bid GROUP BY auction`

const joinQuery = `SELECT b.auction, a.seller, COUNT(*) AS bids, MAX(b.price) AS top_price
FROM bid b JOIN auction a ON b.auction = a.id
GROUP BY b.auction, a.seller ORDER BY bids DESC, b.auction LIMIT 8`

// TestSQLRuntimeGolden renders the dashboard over a stepped Nexmark
// query (GROUP BY, and a join) at two sizes and compares with goldens.
func TestSQLRuntimeGolden(t *testing.T) {
	for _, tc := range []struct {
		name, q string
		w, h    int
	}{
		{"sql-groupby-wide", groupByQuery, 160, 48},
		{"sql-groupby-narrow", groupByQuery, 80, 24},
		{"sql-join-wide", joinQuery, 160, 48},
		{"sql-join-80", joinQuery, 80, 24},
		{"sql-join-120", joinQuery, 120, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSteppedSQL(t, sqlNexmarkDDL, tc.q)
			got := renderSQL(t, s, tc.w, tc.h, 6)
			checkSize(t, got, tc.w, tc.h)
			for _, want := range []string{"FROM bid", "disagg-local://", "Per-key gates", "Results"} {
				if tc.h > 30 && !strings.Contains(got, want) {
					t.Errorf("screen lacks %q:\n%s", want, got)
				}
			}
			golden(t, tc.name, got)
		})
	}
}

// TestSQLRuntimeDeterministic: the same stepped run renders the same
// screen twice (the golden files would be flaky otherwise).
func TestSQLRuntimeDeterministic(t *testing.T) {
	a := renderSQL(t, newSteppedSQL(t, sqlNexmarkDDL, groupByQuery), 120, 40, 4)
	b := renderSQL(t, newSteppedSQL(t, sqlNexmarkDDL, groupByQuery), 120, 40, 4)
	if a != b {
		t.Fatalf("two identical stepped runs rendered differently:\n%s\n----\n%s", a, b)
	}
}

// TestSQLRuntimeResults: changelog lines newest first for an unordered
// query; the ordered, limited result for an ORDER BY query.
func TestSQLRuntimeResults(t *testing.T) {
	s := newSteppedSQL(t, sqlNexmarkDDL, groupByQuery)
	renderSQL(t, s, 80, 24, 3)
	res := s.rt.Results(3)
	cs := s.h.Changes()
	if len(cs) < 3 || len(res) != 3 || res[0] != cs[len(cs)-1].String() || res[2] != cs[len(cs)-3].String() {
		t.Fatalf("Results(3) = %q, want the newest three of %d changes, newest first", res, len(cs))
	}
	j := newSteppedSQL(t, sqlNexmarkDDL, joinQuery)
	renderSQL(t, j, 80, 24, 6)
	res = j.rt.Results(100)
	if len(res) != 8 {
		t.Fatalf("ORDER BY ... LIMIT 8 gave %d rows: %q", len(res), res)
	}
	if !strings.Contains(res[0], " | ") {
		t.Fatalf("materialised rows should be rendered with separators: %q", res)
	}
}

// TestSQLRuntimeRecovery: c checkpoints, x crashes and restores from it,
// and the query then finishes with the same result as an uninterrupted
// run; x without a checkpoint refuses and leaves the job running.
func TestSQLRuntimeRecovery(t *testing.T) {
	ddl := `CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'values', bounded = 'false');
INSERT INTO ev VALUES (1, 10), (2, 20), (1, 30);`
	q := `SELECT k, COUNT(*), SUM(v) FROM ev GROUP BY k`
	s := newSteppedSQL(t, ddl, q)
	if err := s.h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.rt.CrashAndRestore(); err == nil || !strings.Contains(err.Error(), "no durable checkpoint") {
		t.Fatalf("x before any checkpoint: want a refusal, got %v", err)
	}
	if s.h.Job() == nil {
		t.Fatal("a refused x crashed the job")
	}
	msg, err := s.rt.Checkpoint()
	if err != nil || !strings.Contains(msg, "checkpoint 1") {
		t.Fatalf("Checkpoint() = %q, %v", msg, err)
	}
	if got := s.rt.Checkpoints(); !slices.Equal(got, []state.CheckpointID{1}) {
		t.Fatalf("Checkpoints() = %v", got)
	}
	before := rowsText(s.h)
	if _, err := s.rt.AdjustHotBudget(-1); err != nil {
		t.Fatal(err)
	}
	msg, err = s.rt.CrashAndRestore()
	if err != nil || !strings.Contains(msg, "restored from checkpoint 1") {
		t.Fatalf("CrashAndRestore() = %q, %v", msg, err)
	}
	if err := s.h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if after := rowsText(s.h); after != before {
		t.Fatalf("result after restore %q, want %q", after, before)
	}
	snap := s.rt.Snapshot()
	var hotMax int64
	for _, st := range snap.Subtasks {
		hotMax = max(hotMax, st.State.HotMaxBytes)
	}
	if hotMax != 4<<10 {
		t.Fatalf("hot budget after restore %d, want the halved 4 KiB", hotMax)
	}
}

func rowsText(h *session.Handle) string {
	var out []string
	for _, r := range h.Table() {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// TestSQLRuntimeRestoredJobRuns: after x (crash and restore) on a
// threaded query, the restored job keeps consuming its unbounded source:
// the restore's own deadline must not stop it.
func TestSQLRuntimeRestoredJobRuns(t *testing.T) {
	s, err := session.New(session.Config{StateURI: "disagg-local://?latency=1ms", Parallelism: 2, Clock: async.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), `CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark', rate = '2000')`); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(context.Background(), `SELECT auction, COUNT(*) FROM bid GROUP BY auction`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	rt, err := NewSQLRuntime(SQLConfig{Handle: h, Session: s.Config(), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	grows := func(what string) {
		t.Helper()
		n := h.Len()
		for deadline := time.Now().Add(20 * time.Second); h.Len() <= n+10; time.Sleep(10 * time.Millisecond) {
			if err := h.Err(); err != nil || time.Now().After(deadline) {
				t.Fatalf("%s: the result stopped at %d changes (err %v)", what, h.Len(), err)
			}
		}
	}
	grows("before the checkpoint")
	if msg, err := rt.Checkpoint(); err != nil {
		t.Fatalf("Checkpoint() = %q, %v", msg, err)
	}
	if msg, err := rt.CrashAndRestore(); err != nil {
		t.Fatalf("CrashAndRestore() = %q, %v", msg, err)
	}
	time.Sleep(300 * time.Millisecond) // past the runtime's checkpoint timeout
	grows("after the restore")
}

// TestSQLRuntimeRestoresHandleCheckpoints: x restores from a checkpoint
// the handle completed without the runtime (a periodic one, or one an
// attached dashboard asked for).
func TestSQLRuntimeRestoresHandleCheckpoints(t *testing.T) {
	ddl := `CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'values', bounded = 'false');
INSERT INTO ev VALUES (1, 10), (2, 20), (1, 30);`
	s := newSteppedSQL(t, ddl, `SELECT k, COUNT(*) FROM ev GROUP BY k`)
	if err := s.h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	id, err := s.h.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	msg, err := s.rt.CrashAndRestore()
	if err != nil || !strings.Contains(msg, fmt.Sprintf("restored from checkpoint %d", id)) {
		t.Fatalf("CrashAndRestore() = %q, %v; want a restore from the handle's checkpoint %d", msg, err, id)
	}
}
