# single-owner-policy: build, test, run and publish the Kubewarden policy.
#
#   make demo    run the policy on the sample requests under examples/
#   make check   every test: format, lints, unit tests, e2e through the .wasm, the demo,
#                bench smoke run, the module's size report
#
# Both install what a fresh machine lacks first (scripts/setup).

TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RUNNER     := $(TARGET_DIR)/runner/runner
BENCH      := $(TARGET_DIR)/runner/wasm-bench
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

# The bench harness on the runner's host (bench/wasm): latency, linear memory, host calls.
.PHONY: wasm-bench
wasm-bench:
	cargo build --locked --profile runner -p bench-wasm

.PHONY: fmt
fmt: | setup-check
	cargo fmt --all -- --check

.PHONY: lint
lint: | setup-check
	cargo clippy --workspace --all-targets --profile runner -- -D warnings

.PHONY: test
test: fmt lint
	cargo test
	cargo test -p runner -p bench-wasm --profile runner
	cargo test -p bench-fixtures
	cargo test -p single-owner-manifest

# Runs e2e.bats through the compiled module: with kwctl (on annotated-policy.wasm) when there is
# one, with the repo's runner otherwise; the runner's build brings wasm-bench too, which counts
# the host calls of the samples (skipped under kwctl unless it has been built).
.PHONY: e2e-tests
e2e-tests: $(NEEDS) $(if $(KWCTL),,wasm-bench) | setup-check
	@echo "e2e-tests: evaluating with $(EVALUATOR)"
	KWCTL=$(EVALUATOR) POLICY=$(MODULE) BENCH=$(BENCH) bats e2e.bats

.PHONY: demo
demo: setup $(NEEDS)
	@echo "demo: evaluating with $(EVALUATOR)"
	@KWCTL=$(EVALUATOR) POLICY=$(MODULE) ./examples/demo

# bench/compare measures the policy against two reference modules (bench/floor, bench/sdk-path)
# on generated fixtures (bench/fixtures), built here next to the policy.
.PHONY: bench
bench: policy.wasm wasm-bench
	cargo build --target wasm32-wasip1 --release -p bench-floor -p bench-sdk-path
	cargo bench -p bench-native --bench decision
	./bench/wasm-latency $(BENCH) policy.wasm
	./bench/compare $(BENCH) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	cargo run --profile runner -p single-owner-manifest --example skip-rate -- --categories

# End to end through Kubewarden's policy-server (bench/policy-server): the policy against the
# floor, AdmissionReviews POSTed on loopback with wrk. POLICY_SERVER is policy-server's binary
# (on the PATH, or e.g. POLICY_SERVER=../shared/kubewarden/policy-server-1.36.0-beta.1).
# STAMP=1 measures the mutating path: each fixture a CREATE the policy stamps.
POLICY_SERVER ?= $(shell command -v policy-server 2>/dev/null)
.PHONY: bench-policy-server
bench-policy-server: policy.wasm runner
	$(if $(POLICY_SERVER),,$(error bench-policy-server: set POLICY_SERVER=path/to/policy-server))
	cargo build --target wasm32-wasip1 --release -p bench-floor
	cargo run --quiet -p bench-fixtures -- $(TARGET_DIR)/bench-fixtures
	./bench/policy-server $(if $(STAMP),--stamp) $(POLICY_SERVER) $(RUNNER) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm

# What of the benchmarks can fail, run once so that it cannot rot; no timing is asserted. The
# native bench's checks of its fixtures' verdicts (in a test build, not the bench profile's LTO),
# every module allowing every fixture through wasm-bench (bench/compare --smoke), wasm-bench
# taking every module bench/instructions counts, and the skip-rate traffic's checks.
.PHONY: bench-smoke
bench-smoke: policy.wasm wasm-bench
	cargo build --target wasm32-wasip1 --release -p bench-floor -p bench-sdk-path
	cargo test -p bench-native --benches
	./bench/compare --smoke $(BENCH) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	./bench/instructions --smoke $(BENCH) policy.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_floor.wasm \
		$(TARGET_DIR)/wasm32-wasip1/release/bench_sdk_path.wasm
	cargo run -p single-owner-manifest --example skip-rate -- --smoke

# Reports the module from cargo: its size and its growth since the release Cargo.toml's version
# names ([package.metadata.release] module-bytes, measured when releasing). It fails only above a
# ceiling far from today's size (640 KiB), which a runaway dependency would reach, not a rule:
# size is weighed against what it buys, with the figures of docs/development.md ("Size and small
# requests"), never met by bending the code.
MODULE_CEILING ?= 655360
RELEASED_BYTES := $(shell sed -n 's/^module-bytes = \([0-9]*\).*/\1/p' Cargo.toml)
.PHONY: size
size: policy.wasm
	@size=$$(wc -c < $(TARGET_DIR)/wasm32-wasip1/release/single_owner_policy.wasm); \
	awk -v size=$$size -v released=$(RELEASED_BYTES) -v ceiling=$(MODULE_CEILING) 'BEGIN { \
		printf "size: the module from cargo is %d bytes, %+d (%+.1f%%) since v$(VERSION) (%d); ceiling %d\n", \
			size, size - released, 100 * (size - released) / released, released, ceiling }'; \
	test "$$size" -le $(MODULE_CEILING) || { echo "size: over the ceiling of $(MODULE_CEILING) bytes" >&2; exit 1; }

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
	@cargo run --quiet -p single-owner-manifest --bin kubectl-single_owner -- manifest $(SETTINGS) \
		$(if $(NAME),--name $(NAME)) --mode $(MODE)

# Prints what policy-server's service account needs to read what the policy of a settings file
# reads (its contextAwareResources, the kinds its clusterWriters derive from and its marks'
# owners included): a ClusterRole of get on each kind read by name, list and watch on Helm's
# records, and its binding.
.PHONY: rbac
.PHONY: vap
# The webhook-free form: a ValidatingAdmissionPolicy the API server evaluates in-process, for
# settings that need no lookup (docs/vap.md); the generator names what it refuses.
# WITHOUT_LOOKUPS=1 drops ownerLookup, which the API server cannot read.
#   make vap SETTINGS=examples/app-id/settings.yaml [NAME=name] [MODE=monitor|protect] [WITHOUT_LOOKUPS=1]
vap:
	$(if $(SETTINGS),,$(error usage: make vap SETTINGS=path/to/settings.yaml [NAME=name] [MODE=monitor|protect] [WITHOUT_LOOKUPS=1] [SPLIT=1]))
	@cargo run --quiet -p single-owner-manifest --bin kubectl-single_owner -- vap $(SETTINGS) \
		$(if $(NAME),--name $(NAME)) --mode $(MODE) $(if $(WITHOUT_LOOKUPS),--without-lookups) \
		$(if $(SPLIT),--split)

rbac:
	$(if $(SETTINGS),,$(error usage: make rbac SETTINGS=path/to/settings.yaml [NAME=name]))
	@cargo run --quiet -p single-owner-manifest --bin kubectl-single_owner -- rbac $(SETTINGS) \
		$(if $(NAME),--name $(NAME))

# Who owns what in a cluster, by the policy's reading of a settings file's marks: reads the List
# `kubectl get <kinds> -A -o json` prints (INPUT, or standard input), as a table or, with
# OUTPUT=json, JSON (the kubectl plugin's `kubectl single-owner inventory`; README, "Inventory").
#   kubectl get crd,deployments -A -o json | make -s inventory SETTINGS=examples/helm/settings.yaml
.PHONY: inventory
inventory:
	$(if $(SETTINGS),,$(error usage: make inventory SETTINGS=path/to/settings.yaml [INPUT=list.json] [OUTPUT=json]))
	@cargo run --quiet --profile runner -p single-owner-manifest --bin kubectl-single_owner -- inventory \
		--settings $(SETTINGS) $(if $(INPUT),-f $(INPUT)) $(if $(OUTPUT),-o $(OUTPUT))

# Regenerates each example's policy.yaml from its settings.yaml with `make manifest`, keeping the
# lines before the generated part (the example's comments and any rules it adds), and its
# vap.yaml with `make vap` (without the owner lookups if need be) where the settings allow one;
# manifest/tests/examples.rs fails until the examples are regenerated after a change of the
# conditions or the webhook's rules.
.PHONY: examples
examples:
	@for settings in examples/*/settings.yaml; do \
		policy=$${settings%settings.yaml}policy.yaml; \
		$(MAKE) -s manifest SETTINGS=$$settings > $$policy.generated || exit 1; \
		if [ -f $$policy ]; then \
			{ sed '/^  # Generated from the settings by `make manifest`/,$$d' $$policy; \
			  sed -n '/^  # Generated from the settings by `make manifest`/,$$p' $$policy.generated; } > $$policy.new; \
			mv $$policy.new $$policy; rm $$policy.generated; \
		else mv $$policy.generated $$policy; fi; \
		vap=$${settings%settings.yaml}vap.yaml; \
		$(MAKE) -s vap SETTINGS=$$settings > $$vap 2>/dev/null \
			|| $(MAKE) -s vap SETTINGS=$$settings WITHOUT_LOOKUPS=1 > $$vap 2>/dev/null \
			|| $(MAKE) -s vap SETTINGS=$$settings SPLIT=1 > $$vap 2>/dev/null \
			|| $(MAKE) -s vap SETTINGS=$$settings SPLIT=1 WITHOUT_LOOKUPS=1 > $$vap 2>/dev/null \
			|| rm -f $$vap; \
	done

# Applies each planted bug of tests/planted/ to a clean worktree and expects the suite to fail on
# it (scripts/planted-bugs; about 6 minutes on two cores): a test earns its place by failing on
# the bug it names.
.PHONY: planted
planted:
	scripts/planted-bugs

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
