package connector

import (
	"strings"
	"testing"
	"time"

	"clink/engine"
)

// TestKafkaSourceOutageLimit takes the broker away from a source for
// longer than connect.max-outage: the scan fails with one error naming the
// topic, the broker's address and the limit, and never waits forever. A
// bounded scan stopped before its first fetch and a live scan stopped
// mid-run both end so.
func TestKafkaSourceOutageLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bounded string
		before  int // rows read before the broker goes
	}{
		{"bounded, gone before the first fetch", "latest-offset", 0},
		{"live, gone mid-run", "unbounded", 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startOutageBroker(t, 2, "t")
			produceKV(t, b.addr, "t", 0, 300)
			src, err := openKafka(kafkaTable(b.addr, "connect.timeout", "500ms", "connect.max-outage", "2s",
				"scan.bounded.mode", tc.bounded), Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for n := 0; n < tc.before; {
				el, ok, err := nextOrWait(t, src, 20*time.Second)
				if err != nil || !ok {
					t.Fatalf("before the outage: %v (ok %v)", err, ok)
				}
				if el.Kind == engine.Data {
					n++
				}
			}
			b.stop()
			err = within(t, 30*time.Second, "the scan without its broker", func() error {
				for {
					el, ok, err := src.Next()
					if err != nil {
						return err
					}
					if ok && el.Kind == engine.EndOfInput {
						return nil
					}
					time.Sleep(5 * time.Millisecond)
				}
			})
			if err == nil || !strings.Contains(err.Error(), b.addr) || !strings.Contains(err.Error(), `topic "t"`) ||
				!strings.Contains(err.Error(), "connect.max-outage 2s") {
				t.Fatalf("want an error naming the broker %s, topic \"t\" and the limit, got %v", b.addr, err)
			}
			t.Log(err)
		})
	}
}

// TestKafkaJobOutageDefault: the job's outage limit (clink run
// --max-outage, Env.MaxOutage) is a kafka table's connect.max-outage
// unless the table sets its own; a negative one waits forever, zero keeps
// the connector's 10m.
func TestKafkaJobOutageDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table []string
		job   time.Duration
		want  time.Duration
	}{
		{"job limit", nil, 3 * time.Second, 3 * time.Second},
		{"job never", nil, -1, 0},
		{"no job limit", nil, 0, 10 * time.Minute},
		{"the table's own wins", []string{"connect.max-outage", "7s"}, 3 * time.Second, 7 * time.Second},
		{"the table's own 0 wins", []string{"connect.max-outage", "0s"}, 3 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := kafkaTable("127.0.0.1:1", tc.table...)
			o, err := ParseKafka(tab)
			if err != nil {
				t.Fatal(err)
			}
			o.jobOutage(tab, tc.job)
			if o.MaxOutage != tc.want {
				t.Fatalf("connect.max-outage %s, want %s", o.MaxOutage, tc.want)
			}
		})
	}
}
