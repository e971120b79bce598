# The two commands of the README: `make run` and `make test`. Both install
# what they need on a fresh Debian machine with Go.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/lekta
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT   := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get
# Arguments for `make run`, e.g. make run ARGS='--addr 127.0.0.1:9090'.
ARGS  ?=
# The build `make bench` compares today's against: the last commit before
# waiters were woken by the report's news instead of a 200 ms poll, and
# before River's fetch cooldown and Chromium's own process group (issue 37).
BENCH_BASE ?= 160fb4d
BENCH_ARGS ?=
# The docs SPA `make bench` audits besides testdata/site: docsify from the
# npm registry, pinned to one version whose tarball must match the sha512
# the registry published for it (`npm view docsify@4.13.1 dist.integrity`).
# Fetched into BENCH_ASSETS once, never committed.
BENCH_ASSETS      ?= .bench
DOCSIFY_VERSION   := 4.13.1
DOCSIFY_INTEGRITY := sha512-BsDypTBhw0mfslw9kZgAspCMZSM+sUIIDg5K/t1hNLkvbem9h64ZQc71e1IpY+iWsi/KdeqfazDfg52y2Lmm0A==
DOCSIFY_TGZ       := $(BENCH_ASSETS)/docsify-$(DOCSIFY_VERSION).tgz

.PHONY: build run test bench bench-store bench-assets chromium redis postgres node vet bin/lekta-base

build:
	$(GO) build -o $(BIN) ./cmd/lekta

## run: build, install Chromium if missing, start the server; state in the SQLite file in the data dir.
run: build chromium
	./$(BIN) serve $(ARGS)

## test: install Chromium, redis-server, PostgreSQL and Node.js if missing, start Redis if none answers, run every test.
## Tests start their own throw-away PostgreSQL clusters (initdb, pg_ctl); they never use the system's.
## The framework corpus (internal/corpus) fetches its pinned npm packages into .cache/corpus on first use.
test: chromium redis postgres node vet
	$(GO) test -race -timeout 25m ./...

vet:
	$(GO) vet ./...

## bench: Go benchmarks, then today's build against BENCH_BASE in one window:
## warm audits of each kind of delayed content (duration_ms, and through the API
## as a client: POST then ?wait=), throughput, cold start against --dump-dom;
## warm audits with request records on and off (median ratio).
bench: chromium redis postgres build bin/lekta-base bench-assets
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
	$(GO) test -run '^$$' -bench ServeTimeToReport -benchtime 20x ./cmd/lekta
	$(GO) test -run '^$$' -bench CLICacheHitProcess -benchtime 20x ./cmd/lekta
	$(GO) test -run '^$$' -bench AuditRecords -benchtime 40x ./audit
	$(GO) run ./cmd/lekta-bench -base bin/lekta-base -new $(BIN) -assets $(BENCH_ASSETS) $(BENCH_ARGS)

## bench-store: the store's traffic of BENCH_STORE_ARGS' audits (default
## 20000 at 116 a second, 10× a million a day, then half as many flat out)
## without Chromium, on PostgreSQL before and after partitioning, in one
## run: latencies, bytes per audit, the sweeps' cost, the sustained rate.
## BENCH_STORE_ARGS="-database-url postgres://… -audits N" uses a server of
## yours (it creates a database per schema there); by default a throw-away
## cluster. Redis: 127.0.0.1:6379 (-redis-url).
bench-store: redis postgres
	$(GO) run ./cmd/lekta-bench store $(BENCH_STORE_ARGS)

## bench-assets: docsify's script and theme in BENCH_ASSETS/docsify, from the
## pinned, checked tarball; fetched only when missing or the pin changed.
## The theme loses its @import of Google Fonts: the bench stays on the test site.
bench-assets: $(BENCH_ASSETS)/docsify/docsify.min.js $(BENCH_ASSETS)/docsify/vue.css

$(DOCSIFY_TGZ):
	@command -v npm >/dev/null || { echo "bench-assets: npm is needed to fetch docsify@$(DOCSIFY_VERSION)"; exit 1; }
	mkdir -p $(BENCH_ASSETS)
	npm pack --silent --pack-destination $(BENCH_ASSETS) docsify@$(DOCSIFY_VERSION) >/dev/null
	@got="sha512-$$(openssl dgst -sha512 -binary $@ | base64 -w0)"; \
		if [ "$$got" != "$(DOCSIFY_INTEGRITY)" ]; then \
			echo "bench-assets: $@ is $$got, want $(DOCSIFY_INTEGRITY)"; rm -f $@; exit 1; fi

$(BENCH_ASSETS)/docsify/docsify.min.js: $(DOCSIFY_TGZ)
	mkdir -p $(@D)
	tar -xzOf $< package/lib/docsify.min.js >$@.tmp && mv $@.tmp $@

$(BENCH_ASSETS)/docsify/vue.css: $(DOCSIFY_TGZ)
	mkdir -p $(@D)
	tar -xzOf $< package/lib/themes/vue.css | sed 's/@import url([^)]*);//' >$@.tmp && mv $@.tmp $@

## bin/lekta-base: lekta built from BENCH_BASE in a temporary worktree.
bin/lekta-base:
	@dir=$$(mktemp -d) && git worktree add --detach -q $$dir $(BENCH_BASE) && \
		(cd $$dir && $(GO) build -o $(CURDIR)/bin/lekta-base ./cmd/lekta); \
		status=$$?; git worktree remove --force $$dir; exit $$status

## chromium: Debian's Chromium headless shell, which renders (render.FindBrowser
## prefers it), and the browser, for `make bench`'s cold --dump-dom.
chromium:
	@want=""; \
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || want="chromium"; \
	[ -x /usr/lib/chromium/chromium-headless-shell ] || command -v chrome-headless-shell >/dev/null || want="$$want chromium-headless-shell"; \
	if [ -n "$$want" ]; then echo "installing$$want (Debian packages)"; $(APT) update -qq && $(APT) install -y -qq $$want >/dev/null; fi

## node: Node.js runs the framework corpus's server renderers and Svelte's compiler.
node:
	@command -v node >/dev/null || { echo "installing nodejs (Debian package)"; $(APT) update -qq && $(APT) install -y -qq nodejs >/dev/null; }

postgres:
	@command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		{ echo "installing postgresql (Debian package)"; $(APT) update -qq && $(APT) install -y -qq postgresql >/dev/null; }

redis:
	@command -v redis-server >/dev/null || { echo "installing redis-server (Debian package)"; $(APT) update -qq && $(APT) install -y -qq redis-server >/dev/null; }
	@if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then \
		echo "starting redis-server on 127.0.0.1:6379"; \
		redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /tmp >/dev/null; \
		for i in $$(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && break; sleep 0.1; done; \
	fi
