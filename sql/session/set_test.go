package session_test

import (
	"context"
	"strings"
	"testing"
)

// TestSetEventTimeErrors: bad values of the event-time settings are
// refused naming the setting; good ones are accepted.
func TestSetEventTimeErrors(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "CREATE TABLE ok (k BIGINT);")
	for _, key := range []string{"window.allowed-lateness", "watermark.idle-timeout"} {
		for _, bad := range []string{"5", "soon", "-1s"} {
			_, err := s.Exec(context.Background(), "SET '"+key+"' = '"+bad+"';")
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("SET %s = %q: error %v does not name the setting", key, bad, err)
			}
		}
		if _, err := s.Exec(context.Background(), "SET '"+key+"' = '250ms';"); err != nil {
			t.Errorf("SET %s = '250ms': %v", key, err)
		}
	}
	if _, err := s.Exec(context.Background(), "SET 'nope' = '1';"); err == nil || !strings.Contains(err.Error(), "window.allowed-lateness") {
		t.Errorf("unknown setting: error %v does not list the known ones", err)
	}
}

// TestIdleTimeoutSessionDefault: SET 'watermark.idle-timeout' makes
// sources without the table option go idle (the windows held back by the
// quiet source fire, at the timeout on the session clock), and a table's
// own option (here '0': never) wins over it.
func TestIdleTimeoutSessionDefault(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s, sim := idleSession(t, v.uri, v.par, "SET 'watermark.idle-timeout' = '2s';\n"+idleDDL(""))
			start := sim.Now()
			h, err := s.Query(context.Background(), idleQuery)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if n := len(h.Table()); n != 4 {
				t.Fatalf("with the session idle timeout: %d windows, want 4: %v", n, h.Table())
			}
			if el := sim.Now().Sub(start); el < 2e9 {
				t.Fatalf("windows fired after %v, before the 2s timeout", el)
			}

			s, _ = idleSession(t, v.uri, v.par, "SET 'watermark.idle-timeout' = '2s';\n"+idleDDL("0"))
			h2, err := s.Query(context.Background(), idleQuery)
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			if err := h2.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if n := len(h2.Table()); n != 0 {
				t.Fatalf("table option '0' should win over the session default: %d windows fired", n)
			}
		})
	}
}

// TestShowSettings: SHOW ALL lists every setting with its current value
// (the state URI redacted), SHOW name gives one, an unknown name is a
// positioned error.
func TestShowSettings(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "SET 'window.allowed-lateness' = '1500ms'; SET parallelism = 3;")
	res, err := s.Exec(context.Background(), "SHOW ALL;")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, row := range res[0].Rows {
		got[row[0]] = row[1]
	}
	want := map[string]string{"parallelism": "3", "state": "memory://", "window.allowed-lateness": "1.5s", "watermark.idle-timeout": "0s"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("SHOW ALL: %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	for _, q := range []string{"SHOW 'window.allowed-lateness';", "SHOW window.allowed_lateness;"} {
		res, err := s.Exec(context.Background(), q)
		if q == "SHOW window.allowed_lateness;" {
			if err == nil || !strings.Contains(err.Error(), "unknown setting") || !strings.Contains(err.Error(), "1:6") {
				t.Errorf("%s: error %v, want a positioned unknown-setting error", q, err)
			}
			continue
		}
		if err != nil || len(res[0].Rows) != 1 || res[0].Rows[0][0] != "1.5s" {
			t.Errorf("%s: %v %v", q, res, err)
		}
	}
}

// TestShowRedactsState: SHOW never prints a state URI's secret.
func TestShowRedactsState(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "")
	if _, err := s.Exec(context.Background(), "SET state = 'remote-read://bucket/p?endpoint=http://127.0.0.1:1&secret_key=hunter2';"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(context.Background(), "SHOW state;")
	if err != nil {
		t.Fatal(err)
	}
	if v := res[0].Rows[0][0]; strings.Contains(v, "hunter2") {
		t.Fatalf("SHOW state printed the secret: %s", v)
	}
}
