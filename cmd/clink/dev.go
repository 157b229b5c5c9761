package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func init() {
	register("dev", "local development services: clink dev kafka [--port 9092] [--topics bids:3,out:1] [--dir DIR]", runDev)
}

// runDev starts a development service in the foreground until SIGINT or
// SIGTERM. `clink dev kafka` is an in-process Kafka broker (kfake, the
// real wire protocol, transactions and groups) listening on 127.0.0.1
// only, for the README's quickstart and local experiments (make kafka).
func runDev(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "kafka" {
		return errors.New("usage: clink dev kafka [--port 9092] [--topics bids:3,out:1] [--dir DIR]")
	}
	fs := flag.NewFlagSet("dev kafka", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 9092, "port on 127.0.0.1")
	topics := fs.String("topics", "", "topics to create, name:partitions, comma-separated")
	dir := fs.String("dir", "", "keep the broker's data in DIR across restarts (default: in memory)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(*port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1)}
	if *dir != "" {
		opts = append(opts, kfake.DataDir(*dir))
	}
	for _, t := range strings.Split(*topics, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		name, ps, _ := strings.Cut(t, ":")
		n, err := strconv.Atoi(ps)
		if ps == "" {
			n, err = 1, nil
		}
		if err != nil || n < 1 {
			return fmt.Errorf("--topics: want name:partitions, got %q", t)
		}
		opts = append(opts, kfake.SeedTopics(int32(n), name))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("start kafka on 127.0.0.1:%d: %w", *port, err)
	}
	defer c.Close()
	fmt.Fprintf(stdout, "kafka (kfake) listening on %s; stop with Ctrl-C or make kafka-stop\n", strings.Join(c.ListenAddrs(), ","))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}
