# ptybroker: build, test, install, bench, fuzz.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man/man1
# Where bash-completion, zsh and fish look for completions under PREFIX.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
CARGO   ?= cargo
# A musl target for `make static` (default x86_64-unknown-linux-musl) and,
# when set, the static build `make install` installs instead of the host one.
# Both musl targets' settings are in .cargo/config.toml.
TARGET  ?=
STATIC_TARGET = $(or $(TARGET),x86_64-unknown-linux-musl)

.PHONY: all build static test install uninstall bench size fuzz clean

all: build

build:
	$(CARGO) build --release --locked

# One static file with no dynamic section: for scratch containers and boards.
static:
	$(CARGO) build --release --locked --target $(STATIC_TARGET)
	@echo "static binary: target/$(STATIC_TARGET)/release/ptybroker"

# The one test command: formatting, lints, the library's docs (no broken
# links, nothing undocumented), then every unit, integration and doc test
# (which builds and runs the examples too).
test:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets --locked -- -D warnings
	RUSTDOCFLAGS='-D warnings' $(CARGO) doc --no-deps --locked
	$(CARGO) test --locked

# The completion scripts come from the binary itself (`ptybroker completions`).
# A static build for another architecture may not run here: its scripts
# come from the host build of the same source, which prints the same ones.
ifeq ($(TARGET),)
INSTALL_FROM = build
INSTALL_BIN  = target/release/ptybroker
else
INSTALL_FROM = static
INSTALL_BIN  = target/$(TARGET)/release/ptybroker
endif

install: $(INSTALL_FROM)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/ptybroker
	install -m 644 man/ptybroker.1 $(DESTDIR)$(MANDIR)/ptybroker.1
	mkdir -p target/completions
	gen=$(INSTALL_BIN); \
	if ! $$gen --version >/dev/null 2>&1; then \
	  echo "$$gen does not run on this machine: completions from the host build"; \
	  $(CARGO) build --release --locked && gen=target/release/ptybroker || gen=; \
	fi; \
	if [ -z "$$gen" ]; then \
	  echo "completions not installed (no build runs here): run \`ptybroker completions bash|zsh|fish\` on the target"; \
	  exit 0; fi; \
	for sh in bash zsh fish; do \
	  $$gen completions $$sh > target/completions/$$sh || exit 1; done; \
	install -m 644 target/completions/bash $(DESTDIR)$(BASHCOMPDIR)/ptybroker && \
	install -m 644 target/completions/zsh $(DESTDIR)$(ZSHCOMPDIR)/_ptybroker && \
	install -m 644 target/completions/fish $(DESTDIR)$(FISHCOMPDIR)/ptybroker.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ptybroker $(DESTDIR)$(MANDIR)/ptybroker.1 \
	  $(DESTDIR)$(BASHCOMPDIR)/ptybroker $(DESTDIR)$(ZSHCOMPDIR)/_ptybroker \
	  $(DESTDIR)$(FISHCOMPDIR)/ptybroker.fish

# Side by side with tmux; writes BENCHMARKS.md. Not a test: numbers, not verdicts.
bench: build
	python3 bench/bench.py

# Coverage-guided fuzzing (not run in CI): needs a nightly toolchain and
# `cargo install cargo-fuzz`. FUZZ_SECONDS per target (default 600).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= vt rpc driver mcp
fuzz:
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) || exit 1; done

# Size of the stripped release binary, the libraries it needs, and where its
# bytes go per crate and feature area (bench/size.py reads a second build of
# the same profile with symbols kept, in target/size).
size: build
	@ls -l target/release/ptybroker | awk '{print "binary: " $$5 " bytes"}'
	@ldd target/release/ptybroker 2>/dev/null || true
	CARGO_PROFILE_RELEASE_STRIP=false RUSTFLAGS='-C symbol-mangling-version=v0' \
	  $(CARGO) build --release --locked --target-dir target/size
	python3 bench/size.py target/size/release/ptybroker target/release/ptybroker

clean:
	$(CARGO) clean
