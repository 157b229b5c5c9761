package engine

import (
	"fmt"

	"clink/engine/async"
)

// fakeKV is a keyed store with a hot set and cold loads that complete only
// when the test says so, in any order it likes.
type fakeKV struct {
	c     *Controller
	hot   map[uint64]int
	cold  map[uint64]int
	loads []*load
	fail  map[uint64]error
}

type load struct {
	key   uint64
	order int64
	t     *async.Task[int]
}

func newFakeKV(c *Controller) *fakeKV {
	return &fakeKV{c: c, hot: map[uint64]int{}, cold: map[uint64]int{}, fail: map[uint64]error{}}
}

// get returns (v, nil) on a hit and a lazy task on a miss.
func (kv *fakeKV) get(key uint64, order int64) (int, *async.Task[int]) {
	if v, ok := kv.hot[key]; ok {
		return v, nil
	}
	return 0, async.New(func(t *async.Task[int]) {
		kv.loads = append(kv.loads, &load{key: key, order: order, t: t})
	})
}

// complete finishes load i off the runner, handing it back via the controller.
func (kv *fakeKV) complete(i int) {
	l := kv.loads[i]
	kv.loads = append(kv.loads[:i], kv.loads[i+1:]...)
	kv.c.ScheduleResume(async.HandleFunc(func() {
		if err := kv.fail[l.key]; err != nil {
			l.t.Complete(0, err)
			return
		}
		v := kv.cold[l.key]
		kv.hot[l.key] = v
		l.t.Complete(v, nil)
	}), l.order)
}

// counterRec increments its key's count and logs "key:seq@count".
type counterRec struct {
	kv    *fakeKV
	key   uint64
	seq   int
	order int64
	out   *[]string
	panic bool
}

func (b *counterRec) Label() string { return fmt.Sprint(b.key) }

func (b *counterRec) Run(r *Record) {
	v, t := b.kv.get(b.key, b.order)
	if t == nil {
		b.apply(r, v, nil)
		return
	}
	Await(r, t, b.apply)
}

func (b *counterRec) apply(r *Record, v int, err error) {
	if b.panic {
		panic(fmt.Sprintf("record %d", b.seq))
	}
	if err != nil {
		r.Finish(err)
		return
	}
	b.kv.hot[b.key] = v + 1
	*b.out = append(*b.out, fmt.Sprintf("%d:%d@%d", b.key, b.seq, v+1))
	r.Finish(nil)
}
