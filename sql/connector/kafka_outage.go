package connector

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaReach tracks whether a client can reach its brokers, from the
// client's own connection hooks: an outage starts at the first failed dial
// or read since the last read that succeeded, and ends at the next
// successful read. A quiet topic is not an outage (its fetches long-poll
// and answer); a broker that went away is. Safe from any goroutine (the
// client calls the hooks from its own).
type kafkaReach struct {
	mu      sync.Mutex
	since   time.Time // start of the current outage (zero: none)
	lastErr error
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (r *kafkaReach) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		r.failed(err)
	}
}

// OnBrokerRead implements kgo.HookBrokerRead.
func (r *kafkaReach) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		r.failed(err)
		return
	}
	r.mu.Lock()
	r.since, r.lastErr = time.Time{}, nil
	r.mu.Unlock()
}

func (r *kafkaReach) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		r.since = time.Now()
	}
	r.lastErr = err
}

// check fails once the current outage has lasted limit (0: never), with
// an error naming the table, the brokers, the topic and the last error.
func (r *kafkaReach) check(t *Table, o *KafkaOptions, limit time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if limit <= 0 || r.since.IsZero() {
		return nil
	}
	d := time.Since(r.since)
	if d < limit {
		return nil
	}
	return fmt.Errorf("table %s: Kafka at %s unreachable for %s (connect.max-outage %s) while reading topic %q: %w",
		t.Name, strings.Join(o.Brokers, ","), d.Round(100*time.Millisecond), limit, o.Topic, r.lastErr)
}
