# Routine actions. `make run` starts clink on its embedded defaults; `make test`
# is what CI runs (.ci/run).
GO ?= go
BIN := bin/clink

.PHONY: build run test lint bench replay s3 s3-stop clean

build:
	$(GO) build -o $(BIN) ./cmd/clink

run: build
	./$(BIN)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine/... ./state/...

replay: build
	./$(BIN) replay scenarios/

clean:
	rm -rf bin
