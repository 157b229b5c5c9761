package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"clink/engine/async"
	"clink/state"
)

// ArgError is a malformed argument: the replay of the file stops with a
// file:line:col error pointing at it.
type ArgError struct {
	Key string
	Msg string
}

func (e *ArgError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return fmt.Sprintf("argument %s: %s", e.Key, e.Msg)
}

func argErr(key, format string, a ...any) error {
	return &ArgError{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// args reads a directive's arguments, remembering which were used so that
// an unknown one is reported.
type args struct {
	d    *Directive
	used map[string]bool
}

func newArgs(d *Directive) *args { return &args{d: d, used: map[string]bool{}} }

func (a *args) find(key string) (Arg, bool) {
	a.used[key] = true
	for _, x := range a.d.Args {
		if x.Key == key {
			return x, true
		}
	}
	return Arg{}, false
}

// has reports whether a bare or valued argument key is present.
func (a *args) has(key string) bool {
	_, ok := a.find(key)
	return ok
}

// str returns key's single value.
func (a *args) str(key, def string) (string, bool, error) {
	x, ok := a.find(key)
	if !ok {
		return def, false, nil
	}
	if len(x.Vals) != 1 {
		return "", true, argErr(key, "want exactly one value, as %s=VALUE", key)
	}
	return x.Vals[0], true, nil
}

func (a *args) integer(key string, def, min int64) (int64, error) {
	s, ok, err := a.str(key, "")
	if err != nil || !ok {
		return def, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, argErr(key, "%q is not an integer", s)
	}
	if n < min {
		return 0, argErr(key, "%d is below the minimum %d", n, min)
	}
	return n, nil
}

func (a *args) boolean(key string, def bool) (bool, error) {
	x, ok := a.find(key)
	if !ok {
		return def, nil
	}
	if len(x.Vals) == 0 {
		return true, nil
	}
	if len(x.Vals) != 1 {
		return false, argErr(key, "want true or false")
	}
	v, err := strconv.ParseBool(x.Vals[0])
	if err != nil {
		return false, argErr(key, "%q is not true or false", x.Vals[0])
	}
	return v, nil
}

func (a *args) bytes(key string, def int64) (int64, bool, error) {
	s, ok, err := a.str(key, "")
	if err != nil || !ok {
		return def, ok, err
	}
	n, err := state.ParseBytes(s)
	if err != nil {
		return 0, true, argErr(key, "%v", err)
	}
	return n, true, nil
}

// latency reads a distribution; its values may be given in parentheses
// (uniform(1ms,2ms) splits on the comma, so the parts are rejoined).
func (a *args) latency(key string) (async.Latency, bool, error) {
	x, ok := a.find(key)
	if !ok {
		return nil, false, nil
	}
	if len(x.Vals) == 0 {
		return nil, true, argErr(key, "want a duration, uniform(min,max) or exp(mean)")
	}
	l, err := async.ParseLatency(strings.Join(x.Vals, ","))
	if err != nil {
		return nil, true, argErr(key, "%v", err)
	}
	return l, true, nil
}

func (a *args) duration(key string) (time.Duration, bool, error) {
	s, ok, err := a.str(key, "")
	if err != nil || !ok {
		return 0, ok, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, true, argErr(key, "%q is not a non-negative duration", s)
	}
	return d, true, nil
}

// list returns every value of key (key=(a,b) or key=a).
func (a *args) list(key string) []string {
	x, _ := a.find(key)
	return x.Vals
}

// bare returns the arguments given without a value, in order, marking
// them used.
func (a *args) bare() []string {
	var out []string
	for _, x := range a.d.Args {
		if len(x.Vals) == 0 {
			out = append(out, x.Key)
			a.used[x.Key] = true
		}
	}
	return out
}

// done reports the first argument no handler code asked for.
func (a *args) done() error {
	for _, x := range a.d.Args {
		if !a.used[x.Key] {
			return argErr(x.Key, "unknown argument of %s", a.d.Cmd)
		}
	}
	return nil
}
