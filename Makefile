# Routine actions. `make run` starts clink on its embedded defaults (the live
# runtime dashboard over a demo job); `make test` is what CI runs (.ci/run).
GO ?= go
BIN := bin/clink

.PHONY: build run serve test lint bench bench-quick bench-e2e bench-go replay s3 s3-stop kafka kafka-stop soak fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/clink

run: build
	./$(BIN) tui --demo

# serve runs clink serve in the foreground on 127.0.0.1:4566 with its
# catalog and checkpoints in .serve-state/ (Ctrl-C: a final checkpoint,
# then exit); connect with psql -h 127.0.0.1 -p 4566.
SERVE_STATE ?= .serve-state
serve: build
	./$(BIN) serve --state disagg-file://$(abspath $(SERVE_STATE))

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint
	$(GO) test -race -count=1 -timeout 20m ./...

# soak: the kill -9 and fault soak tests for SOAK each (against the S3
# server when CLINK_S3_ENDPOINT is set: make s3; eval "$$(scripts/s3.sh env)"),
# then the damage, concurrent-writer, write-error and bad-input tests, and
# the report table (kills / corruptions / writers / write errors / bad
# inputs, docs/durability.md); SOAK_REPORT=FILE also writes it to FILE.
SOAK ?= 10m
SOAK_TESTS := TestKill9|TestFaultSoak|TestConcurrentWriters|TestDamageRefused|TestCorruptionSweep|TestCheckpointFailuresLoud|TestDiskFullReported|TestBadInputs
soak:
	$(GO) test -count=1 -timeout 120m -run '^($(SOAK_TESTS))$$' -v ./e2e -args -soak=$(SOAK) $(if $(SOAK_REPORT),-soak-report=$(abspath $(SOAK_REPORT)))

# fuzz: every parser of user input for FUZZTIME each.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./sql/parser
	$(GO) test -run '^$$' -fuzz '^FuzzScenario$$' -fuzztime $(FUZZTIME) ./scenarios
	$(GO) test -run '^$$' -fuzz '^FuzzNotebook$$' -fuzztime $(FUZZTIME) ./repl
	$(GO) test -run '^$$' -fuzz '^FuzzCSVRows$$' -fuzztime $(FUZZTIME) ./sql/connector
	$(GO) test -run '^$$' -fuzz '^FuzzJSONLRows$$' -fuzztime $(FUZZTIME) ./sql/connector
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./state/stateuri

# bench runs `clink bench` (every figure a ratio measured in one run) and
# writes the report, JSON and plot to bench-out/; bench-go runs the Go
# micro-benchmarks with -benchmem.
bench: build
	./$(BIN) bench --out bench-out

bench-quick: build
	./$(BIN) bench --quick

# bench-e2e measures the user's path (`clink run` over generated CSV/JSONL
# files to a file, vs plain Go, awk and OctoSQL; cost growth; peak RSS):
# about 12 minutes on 2 cores today (per-figure budgets and caps bound
# it); --quick is smaller.
bench-e2e: build
	./$(BIN) bench --out bench-out e2e

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./engine/... ./state/...

replay: build
	./$(BIN) replay scenarios/

# s3 starts a loopback-only S3 server (SeaweedFS) for the S3 integration
# tests and `remote-read://` experiments; s3-stop stops it.
s3:
	scripts/s3.sh build
	scripts/s3.sh start
	@echo 'now: eval "$$(scripts/s3.sh env)" && go test -race ./state/s3pool'

s3-stop:
	scripts/s3.sh stop

# kafka starts a loopback-only Kafka broker (clink dev kafka: kfake, in
# process) on 127.0.0.1:9092 in the background, with topics bids (3
# partitions) and out; kafka-stop stops it.
kafka: build
	@if [ -f .kafka.pid ] && kill -0 $$(cat .kafka.pid) 2>/dev/null; then echo "kafka already running (pid $$(cat .kafka.pid))"; exit 0; fi
	./$(BIN) dev kafka --port 9092 --topics bids:3,out:1 > .kafka.log 2>&1 & echo $$! > .kafka.pid
	@for i in $$(seq 50); do grep -q listening .kafka.log && break; sleep 0.1; done; cat .kafka.log

kafka-stop:
	@if [ -f .kafka.pid ]; then kill $$(cat .kafka.pid) 2>/dev/null || true; rm -f .kafka.pid; echo "kafka stopped"; fi

clean:
	rm -rf bin
