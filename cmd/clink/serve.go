package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"clink/server"
	"clink/state/stateuri"
)

func init() {
	register("serve", "serve SQL over the PostgreSQL wire protocol: clink serve [--state URI] [--listen 127.0.0.1:4566] [--checkpoint-interval 1s] [--password-file FILE] [--tls-cert FILE --tls-key FILE] [--metrics 127.0.0.1:9249 [--metrics-allow-remote]]", runServe)
}

// serveFlags are clink serve's options.
type serveFlags struct {
	cfg          server.Config
	passwordFile string
	tlsCert      string
	tlsKey       string
	metricsAddr  string
	allowRemote  bool
}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	fs.StringVar(&f.cfg.StateURI, "state", "memory://", "state URI: disagg-file://DIR keeps the catalog and every job across restarts")
	fs.StringVar(&f.cfg.Listen, "listen", server.DefaultListen, "address to listen on (a non-loopback one needs a password)")
	fs.DurationVar(&f.cfg.CheckpointInterval, "checkpoint-interval", time.Second, "checkpoint every job this often; views publish their contents at each checkpoint")
	fs.DurationVar(&f.cfg.MaxOutage, "max-outage", defaultMaxOutage, "fail a job when no checkpoint completed for this long (0: never)")
	fs.IntVar(&f.cfg.Parallelism, "parallelism", 0, "parallelism of keyed operators (0: number of CPUs)")
	fs.StringVar(&f.passwordFile, "password-file", "", "file holding the password clients must give (SCRAM-SHA-256); or set CLINK_PASSWORD")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM), offered to clients that ask for TLS")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&f.metricsAddr, "metrics", "", "serve Prometheus /metrics for every job and the attach protocol (clink tui --attach) on this loopback HOST:PORT")
	fs.BoolVar(&f.allowRemote, "metrics-allow-remote", false, "allow --metrics on a non-loopback address (the endpoints have no authentication)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	if err := f.resolve(); err != nil {
		return err
	}
	f.cfg.BaseDir = "."
	f.cfg.Log = log.New(stderr, "clink serve: ", log.LstdFlags)
	if f.metricsAddr == "" && f.allowRemote {
		return errors.New("serve: --metrics-allow-remote needs --metrics ADDR")
	}
	if f.metricsAddr != "" {
		obs, err := startObserver("serve", f.metricsAddr, f.allowRemote, stderr)
		if err != nil {
			return err
		}
		defer obs.Close() // after srv.Close: every job has unregistered by then
		f.cfg.Bus, f.cfg.OnJob, f.cfg.AttachAddr = obs.bus, obs.onServerJob, obs.srv.Addr()
	}
	srv, err := server.New(f.cfg)
	if err != nil {
		return err
	}
	ln, err := srv.Listen()
	if err != nil {
		_ = srv.Close(context.Background())
		return err
	}
	f.cfg.Log.Printf("listening on %s (state %s)", ln.Addr(), redactedState(f.cfg.StateURI))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		f.cfg.Log.Printf("stopping: final checkpoint of every job")
	case err := <-served:
		_ = srv.Close(context.Background())
		return err
	}
	err = srv.Close(context.Background())
	if serr := <-served; serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	f.cfg.Log.Printf("stopped")
	return nil
}

// resolve reads the password (file or environment, never a flag value)
// and the TLS key pair.
func (f *serveFlags) resolve() error {
	switch {
	case f.passwordFile != "":
		data, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return fmt.Errorf("serve: --password-file: %w", err)
		}
		f.cfg.Password = strings.TrimRight(string(data), "\r\n")
		if f.cfg.Password == "" {
			return fmt.Errorf("serve: --password-file %s is empty", f.passwordFile)
		}
	case os.Getenv("CLINK_PASSWORD") != "":
		f.cfg.Password = os.Getenv("CLINK_PASSWORD")
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("serve: give both --tls-cert and --tls-key, or neither")
	}
	if f.tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return fmt.Errorf("serve: TLS key pair: %w", err)
		}
		f.cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	return nil
}

// redactedState prints a state URI without secrets.
func redactedState(uri string) string { return stateuri.Redact(uri) }
