# single-owner-policy: build, test, run and publish the Kubewarden policy.
#
#   make demo    run the policy on the sample requests under examples/
#   make check   every test: format, lints, unit tests, e2e through the .wasm, the demo,
#                bench smoke run, the module's size budget
#
# Both install what a fresh machine lacks first (scripts/setup).

TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RUNNER     := $(TARGET_DIR)/runner/runner
SOURCES    := $(shell find src -name '*.rs') Cargo.toml Cargo.lock
VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
IMAGE_NAME ?= $(shell sed -n 's/^image = "\(.*\)"/\1/p' Cargo.toml)
IMAGE      := $(IMAGE_NAME):v$(VERSION)

.PHONY: check
check: setup-check fmt lint test e2e-tests demo bench-smoke size

# What a fresh machine lacks: the wasm32-wasip1 target, jq and wasm-opt (and, for
# `make check`, rustfmt, clippy and bats); installed with rustup and apt-get.
.PHONY: setup setup-check
setup:
	@scripts/setup
setup-check:
	@scripts/setup --check

# wasm-opt -Oz (Debian's binaryen) takes 12% off the module; it measured no faster or slower
# (see docs/development.md, "Cost"). The features enabled are those rustc emits for wasm32-wasip1.
WASM_OPT := wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
	--enable-nontrapping-float-to-int --enable-multivalue --enable-reference-types

# Needs cargo and the wasm32-wasip1 target only; wasm-opt is used when it is on the PATH.
policy.wasm: $(SOURCES)
	cargo build --locked --target wasm32-wasip1 --release
	@if command -v wasm-opt >/dev/null; then \
		$(WASM_OPT) $(TARGET_DIR)/wasm32-wasip1/release/single_owner_policy.wasm -o policy.wasm; \
	else \
		echo "policy.wasm: wasm-opt not found (Debian: binaryen); the module is not optimised"; \
		cp $(TARGET_DIR)/wasm32-wasip1/release/single_owner_policy.wasm policy.wasm; \
	fi

# kwctl when it is on the PATH (or KWCTL=/path/to/kwctl); the repo's runner otherwise, which
# e2e-tests and demo then build and use in its place. Both evaluate the annotated module: kwctl
# grants context-aware lookups only to the kinds an annotated module's metadata lists.
KWCTL ?= $(shell command -v kwctl 2>/dev/null)
MODULE := annotated-policy.wasm
ifeq ($(KWCTL),)
EVALUATOR := $(RUNNER)
NEEDS     := annotated-policy.wasm runner
else
EVALUATOR := $(KWCTL)
NEEDS     := annotated-policy.wasm
endif

# Embeds metadata.yml and README.md in the module, as Kubewarden publishes policies: with kwctl
# when there is one, with the repo's runner otherwise (`runner annotate` writes the same
# io.kubewarden.metadata section; see runner/README.md).
annotated-policy.wasm: policy.wasm metadata.yml README.md | $(if $(KWCTL),,runner)
	$(or $(KWCTL),$(RUNNER)) annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

# The waPC runner on wasmtime that stands in for `kwctl run` (see runner/).
.PHONY: runner
runner:
	cargo build --locked --profile runner -p runner

.PHONY: fmt
fmt: | setup-check
	cargo fmt --all -- --check

.PHONY: lint
lint: | setup-check
	cargo clippy --workspace --all-targets --profile runner -- -D warnings

.PHONY: test
test: fmt lint
	cargo test
	cargo test -p runner --profile runner
	cargo test -p bench-fixtures
	cargo test -p single-owner-manifest

# Runs e2e.bats through the compiled module: with kwctl (on annotated-policy.wasm) when there is
# one, with the repo's runner otherwise.
.PHONY: e2e-tests
e2e-tests: $(NEEDS) | setup-check
	@echo "e2e-tests: evaluating with $(EVALUATOR)"
	KWCTL=$(EVALUATOR) POLICY=$(MODULE) bats e2e.bats

.PHONY: demo
demo: setup $(NEEDS)
	@echo "demo: evaluating with $(EVALUATOR)"
	@KWCTL=$(EVALUATOR) POLICY=$(MODULE) ./examples/demo

# bench/compare measures the policy against two reference modules (bench/floor, bench/sdk-path)
# on generated fixtures (bench/fixtures), built here next to the policy.
.PHONY: bench
bench: policy.wasm runner
	cargo build --target wasm32-wasip1 --release -p bench-floor -p bench-sdk-path
	cargo bench -p bench-native --bench decision
	./bench/wasm-latency $(RUNNER) policy.wasm
	./bench/compare $(RUNNER) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	cargo run --profile runner -p single-owner-manifest --example skip-rate -- --categories

# A few iterations of every benchmark, so they cannot rot; no timing is asserted (bench/compare
# does check that every module allows every fixture).
.PHONY: bench-smoke
bench-smoke: policy.wasm runner
	cargo build --target wasm32-wasip1 --release -p bench-floor -p bench-sdk-path
	cargo bench -p bench-native --bench decision -- --test
	./bench/wasm-latency $(RUNNER) policy.wasm 5
	./bench/compare --smoke $(RUNNER) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	./bench/instructions --smoke $(RUNNER) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	cargo run -p single-owner-manifest --example skip-rate -- --smoke

# The module from cargo stays within its budget, 400 KiB (docs/development.md, "Size and small
# requests"): policy-server downloads, compiles and keeps it in every worker.
MODULE_BUDGET ?= 409600
.PHONY: size
size: policy.wasm
	@size=$$(wc -c < $(TARGET_DIR)/wasm32-wasip1/release/single_owner_policy.wasm); \
	echo "size: the module from cargo is $$size bytes, the budget $(MODULE_BUDGET)"; \
	test "$$size" -le $(MODULE_BUDGET) || { echo "size: over budget" >&2; exit 1; }

# Prints the ClusterAdmissionPolicy for a settings file, with the matchConditions derived from
# the settings (manifest/; see docs/match-conditions.md); NAME overrides its name
# (single-owner-<folder of the settings file>), MODE its spec.mode (monitor or protect, the
# default).
#   make manifest SETTINGS=examples/helm/settings.yaml
#   make manifest SETTINGS=my-settings.yaml NAME=single-owner MODE=monitor > policy.yaml
MODE ?= protect
.PHONY: manifest
manifest:
	$(if $(SETTINGS),,$(error usage: make manifest SETTINGS=path/to/settings.yaml [NAME=name] [MODE=monitor|protect]))
	@cargo run --quiet -p single-owner-manifest --bin manifest -- $(SETTINGS) \
		$(if $(NAME),--name $(NAME)) --mode $(MODE)

# Fuzzes the validate and validate_settings payloads, FUZZ_SECONDS each, from the
# seeds in fuzz/seeds (cargo-fuzz on the stable toolchain, without sanitizers:
# the policy has no unsafe code). Findings land in fuzz/artifacts/.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	cd fuzz && for target in validate validate_settings; do \
		mkdir -p corpus/$$target && cp -n seeds/$$target/* corpus/$$target/ && \
		cargo fuzz run --sanitizer none $$target corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) -max_len=262144 -timeout=10 || exit 1; \
	done

.PHONY: push
push: annotated-policy.wasm
	$(if $(KWCTL),,$(error push needs kwctl: put it on the PATH or set KWCTL=/path/to/kwctl))
	$(KWCTL) push annotated-policy.wasm $(IMAGE)

.PHONY: version image
version:
	@echo $(VERSION)
image:
	@echo $(IMAGE)

.PHONY: clean
clean:
	cargo clean
	rm -f policy.wasm annotated-policy.wasm
