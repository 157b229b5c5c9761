package state

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"clink/engine/event"
)

// Options configures what every backend shares: how it names itself in
// events and which key groups it owns.
type Options struct {
	// Name and Subtask label the backend's runtime events.
	Name    string
	Subtask int
	// Bus receives the backend's runtime events; nil is silent.
	Bus *event.Bus
	// HashSeed seeds Hash for key-group assignment; every subtask of a job
	// must use the same seed.
	HashSeed uint64
	// MaxKeyGroups is the job's key-group count (0: DefaultMaxKeyGroups).
	MaxKeyGroups int
	// KeyGroupLo and KeyGroupHi bound the half-open range of key groups the
	// backend owns (both 0: all of them). Restore and warm-up use it.
	KeyGroupLo, KeyGroupHi int
}

func (o *Options) normalize() error {
	if o.MaxKeyGroups == 0 {
		o.MaxKeyGroups = DefaultMaxKeyGroups
	}
	if o.MaxKeyGroups < 0 {
		return fmt.Errorf("max key groups must be positive, got %d", o.MaxKeyGroups)
	}
	if o.KeyGroupLo == 0 && o.KeyGroupHi == 0 {
		o.KeyGroupHi = o.MaxKeyGroups
	}
	if o.KeyGroupLo < 0 || o.KeyGroupHi > o.MaxKeyGroups || o.KeyGroupLo > o.KeyGroupHi {
		return fmt.Errorf("key group range [%d,%d) not within [0,%d)", o.KeyGroupLo, o.KeyGroupHi, o.MaxKeyGroups)
	}
	return nil
}

// keyGroup returns the key group of key under o's seed.
func (o *Options) keyGroup(key []byte) int {
	return KeyGroup(Hash(o.HashSeed, key), o.MaxKeyGroups)
}

// owns reports whether key group kg is in o's range.
func (o *Options) owns(kg int) bool { return kg >= o.KeyGroupLo && kg < o.KeyGroupHi }

// ForSubtask returns a copy of o owning subtask's key-group range at the
// given parallelism.
func (o Options) ForSubtask(subtask, parallelism int) Options {
	if o.MaxKeyGroups == 0 {
		o.MaxKeyGroups = DefaultMaxKeyGroups
	}
	o.Subtask = subtask
	o.KeyGroupLo, o.KeyGroupHi = KeyGroupRange(subtask, o.MaxKeyGroups, parallelism)
	return o
}

// MinHotMaxBytes is the floor of the default hot-tier budget.
const MinHotMaxBytes = 64 << 20

// DefaultHotMaxBytes is the default hot-tier budget of one backend: a
// quarter of physical RAM, at least MinHotMaxBytes.
func DefaultHotMaxBytes() int64 {
	total, err := physicalMemory("/proc/meminfo")
	if err != nil || total/4 < MinHotMaxBytes {
		return MinHotMaxBytes
	}
	return total / 4
}

func physicalMemory(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal: %w", path, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal line", path)
}

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// ParseBytes reads a byte size: plain bytes ("1048576") or a number with a
// unit ("64MiB", "1GiB", "512KiB", "100MB"). Negative sizes are an error.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" {
		return 0, fmt.Errorf("size %q: want bytes or a number with a unit such as 64MiB", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("size %q: must not be negative", s)
	}
	v := n * float64(mult)
	if v > float64(1<<62) {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(v), nil
}

// FormatBytes renders n with a binary unit when it divides evenly.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return fmt.Sprintf("%d%s", n/u.m, u.s)
		}
	}
	return strconv.FormatInt(n, 10)
}
