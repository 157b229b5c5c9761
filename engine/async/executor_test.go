package async

import (
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"
)

func TestThreadPoolRunsJobsAndCloses(t *testing.T) {
	if _, err := NewThreadPool(0); err == nil {
		t.Fatal("io_threads=0 must be an error")
	}
	p, err := NewThreadPool(3)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sum := 0
	for i := 1; i <= 100; i++ {
		wg.Add(1)
		if err := p.SubmitBlocking(func() { mu.Lock(); sum += i; mu.Unlock(); wg.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if sum != 5050 {
		t.Fatalf("sum = %d", sum)
	}
	f, err := os.CreateTemp(t.TempDir(), "read")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("hello world")
	done := make(chan string, 1)
	buf := make([]byte, 5)
	if err := p.SubmitRead(int(f.Fd()), buf, 6, func(n int, err error) { done <- string(buf[:n]) }); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "world" {
		t.Fatalf("read %q", got)
	}
	p.Close()
	if err := p.SubmitBlocking(func() {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
}

func TestSimIsDeterministic(t *testing.T) {
	run := func(seed uint64) []int {
		s := NewSim(seed, Uniform{time.Millisecond, 10 * time.Millisecond})
		var order []int
		for i := 0; i < 50; i++ {
			s.SubmitBlocking(func() { order = append(order, i) })
		}
		for s.Step() {
		}
		return order
	}
	a, b, c := run(1), run(1), run(2)
	if len(a) != 50 {
		t.Fatalf("ran %d jobs", len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed gave different completion orders")
		}
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatal("different seeds gave the same order: latency is not sampled")
	}
}

func TestSimClockAdvancesOnlyWhenStepped(t *testing.T) {
	s := NewSim(1, Fixed(0))
	fired := 0
	s.AfterFunc(time.Second, func() { fired++ })
	stop := s.AfterFunc(2*time.Second, func() { fired += 10 })
	s.AdvanceTo(SimEpoch.Add(1500 * time.Millisecond))
	if fired != 1 || !s.Now().Equal(SimEpoch.Add(1500*time.Millisecond)) {
		t.Fatalf("fired=%d now=%v", fired, s.Now())
	}
	if !stop() || stop() {
		t.Fatal("stop must cancel once")
	}
	for s.Step() {
	}
	if fired != 1 {
		t.Fatalf("cancelled timer fired: %d", fired)
	}
}

func TestParseLatency(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"", "0s", false},
		{"1ms", "1ms", false},
		{"uniform(0.5ms,2ms)", "uniform(500µs,2ms)", false},
		{"exp(1ms)", "exp(1ms)", false},
		{"uniform(2ms,1ms)", "", true},
		{"-1ms", "", true},
		{"normal(1ms)", "", true},
		{"uniform(1ms", "", true},
		{"fast", "", true},
	}
	for _, tc := range cases {
		l, err := ParseLatency(tc.in)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%q: err = %v", tc.in, err)
		}
		if err == nil {
			if l.String() != tc.want {
				t.Fatalf("%q: got %s want %s", tc.in, l, tc.want)
			}
			if d := l.Sample(r); d < 0 {
				t.Fatalf("%q: negative sample", tc.in)
			}
		}
	}
}
