package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"clink/engine/async"
	"clink/engine/event"
	"clink/repl"
	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/session"
	"clink/tui"
)

// tuiDemoSQL is the SQL demo: the Nexmark generator, unbounded and paced
// at %[1]g events/s, into a GROUP BY (bids per auction with their count
// and top price) and a join of bids with their auctions (bids per
// seller's auction), both on the demo's disaggregated state tier.
const tuiDemoSQL = `-- clink tui --demo: Nexmark, unbounded, %[1]g events/s
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', rate = %[1]g);
CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', rate = %[1]g);

-- the GROUP BY: bids per auction, with their count and top price
SELECT auction, COUNT(*) AS bids, MAX(price) AS top_price
FROM bid GROUP BY auction;

-- the join: each bid meets its auction; the busiest auctions and sellers
SELECT b.auction, a.seller, COUNT(*) AS bids, MAX(b.price) AS top_price
FROM bid b JOIN auction a ON b.auction = a.id
GROUP BY b.auction, a.seller ORDER BY bids DESC LIMIT 20;
`

// tuiDemoStateURI is the dashboard demo's tier: about 2 ms reads. The hot
// budget is set per job (-hot-budget) so that it can change on restore.
const tuiDemoStateURI = "disagg-local://?latency=uniform(1ms,3ms)&io_threads=2"

// demoMaxInFlight caps each subtask's in-flight records low enough that
// the gate gauges move.
const demoMaxInFlight = 256

// demoSQLState is the SQL demo's tier: ~2 ms remote reads and the
// -hot-budget per subtask.
func demoSQLState(hot int64) string {
	if hot%1024 == 0 {
		return fmt.Sprintf("%s&hot_max_bytes=%dKiB", tuiDemoStateURI, hot/1024)
	}
	return fmt.Sprintf("%s&hot_max_bytes=%dB", tuiDemoStateURI, hot)
}

// sqlScript is a script to run under the dashboard: its statements, and
// which SELECT to show.
type sqlScript struct {
	name    string // file name, for errors
	dir     string // resolves relative csv / jsonl paths
	text    string
	selects []parser.Stmt
	others  []parser.Stmt // everything before the chosen SELECT but SELECTs
	chosen  parser.Stmt
}

// loadSQLScript reads a .sql file or a notebook (.md: its ```sql cells
// in order, backslash commands and cells marked `error` left out).
func loadSQLScript(path string, pick int) (*sqlScript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tui -f: %w", err)
	}
	text := string(b)
	if strings.HasSuffix(strings.ToLower(path), ".md") {
		nb := repl.ParseNotebook(text)
		nb.Path = path
		if err := nb.Check(); err != nil {
			return nil, fmt.Errorf("tui -f: %w", err)
		}
		text = notebookSQL(nb)
	}
	return parseSQLScript(path, filepath.Dir(path), text, pick)
}

// notebookSQL joins a notebook's SQL cells, without backslash commands.
func notebookSQL(nb *repl.Notebook) string {
	var b strings.Builder
	for _, c := range nb.Cells() {
		if c.ExpectError() {
			continue
		}
		for _, ch := range repl.SplitCommands(c.SQL) {
			if !ch.Command {
				b.WriteString(ch.Text)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// parseSQLScript splits text into statements and picks SELECT number
// pick (1-based; 0: the last).
func parseSQLScript(name, dir, text string, pick int) (*sqlScript, error) {
	stmts, err := parser.ParseScript(text)
	if err != nil {
		return nil, errors.New(repl.RenderError(&session.Error{SQL: text, Err: err}, name))
	}
	s := &sqlScript{name: name, dir: dir, text: text}
	var at []int // statement index of each SELECT
	for i, st := range stmts {
		if _, ok := st.AST.(*ast.QueryStmt); ok {
			s.selects = append(s.selects, st)
			at = append(at, i)
		}
	}
	if len(s.selects) == 0 {
		return nil, fmt.Errorf("tui -f %s: no SELECT to show", name)
	}
	if pick < 0 || pick > len(s.selects) {
		return nil, fmt.Errorf("tui -f %s: -query %d: the script has %d SELECTs", name, pick, len(s.selects))
	}
	if pick == 0 {
		pick = len(s.selects)
	}
	s.chosen = s.selects[pick-1]
	for _, st := range stmts[:at[pick-1]] {
		if _, ok := st.AST.(*ast.QueryStmt); !ok {
			s.others = append(s.others, st)
		}
	}
	return s, nil
}

// sqlDashboard is a script's session and chosen query under the
// dashboard.
type sqlDashboard struct {
	sess *session.Session
	h    *session.Handle
	rt   *tui.SQLRuntime
}

// startSQLDashboard runs the script's statements before the chosen
// SELECT (other SELECTs are not run), starts that SELECT threaded, and
// wraps it for the dashboard.
func startSQLDashboard(ctx context.Context, s *sqlScript, o tuiOptions) (*sqlDashboard, error) {
	cfg := session.Config{StateURI: o.state, Parallelism: o.parallelism, MaxInFlight: demoMaxInFlight,
		BaseDir: s.dir, Clock: async.RealClock{}, Bus: event.NewBus(), Resume: o.restore, SoftMemoryLimit: true}
	sess, err := session.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("tui: %w", err)
	}
	for _, st := range s.others {
		if _, err := sess.Exec(ctx, st.Text); err != nil {
			return nil, errors.New(repl.RenderError(err, s.name))
		}
	}
	h, err := sess.Query(ctx, s.chosen.Text)
	if err != nil {
		return nil, errors.New(repl.RenderError(err, s.name))
	}
	fc := tui.DefaultFeedConfig
	if o.tap {
		fc = tui.FeedConfig{Buffer: 1 << 15}
	}
	rt, err := tui.NewSQLRuntime(tui.SQLConfig{Handle: h, Session: sess.Config(), Feed: fc, Every: o.every})
	if err != nil {
		h.Close()
		return nil, err
	}
	return &sqlDashboard{sess: sess, h: h, rt: rt}, nil
}

// Close stops the dashboard's runtime, then the query.
func (d *sqlDashboard) Close() error {
	return errors.Join(d.rt.Close(), d.h.Close())
}
