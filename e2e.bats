#!/usr/bin/env bats
# End-to-end tests: the compiled module, run the way Kubewarden runs it.
#
#   KWCTL=target/runner/runner POLICY=annotated-policy.wasm bats e2e.bats (make e2e-tests)
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e.bats               (make e2e-tests KWCTL=kwctl)
#
# Both print kwctl's AdmissionResponse; the assertions read it with jq.
#
# What is tested here is what only the compiled module and its host show: the waPC protocol and
# the answers' JSON, every example's samples under its settings file (with the sessions of their
# lookups), settings refused at load, warnings and audit annotations, mutations as JSON patches,
# audit replays, bytes no request holds. The rules themselves are Rust's tables (tests/,
# src/*/tests), and each message's text is asserted once, in src/violation.rs: a denial here is
# asserted by its verdict, its status code and the mark and rule of each of its lines
# (denied_by), and at least one case per rule runs through the module.

bats_require_minimum_version 1.5.0

setup() {
    KWCTL=${KWCTL:-target/runner/runner}
    POLICY=${POLICY:-annotated-policy.wasm}
}

# evaluate SETTINGS REQUEST [SESSION]: SETTINGS is a file, or inline JSON when it starts with
# "{"; SESSION, kwctl's session of what the host answers the policy's lookups (context-aware).
evaluate() {
    local settings=(--settings-path "$1") host=()
    [[ $1 != "{"* ]] || settings=(--settings-json "$1")
    [ -z "${3:-}" ] || host=(--allow-context-aware --replay-host-capabilities-interactions "$3")
    run --separate-stderr "$KWCTL" run "${settings[@]}" "${host[@]}" --request-path "$2" "$POLICY"
    echo "stdout: $output"
    echo "stderr: $stderr"
    [ "$status" -eq 0 ]
}

# A request whose marks are given as JSON (null: no object): the keys of annotation marks
# (Camel K's, Helm's, Argo CD's) and the offer go to the annotations, every other key to the
# labels:
#   request GROUP KIND NAMESPACE OPERATION OLD NEW [USER]
request() {
    local file="$BATS_TEST_TMPDIR/request-$RANDOM.json"
    jq -n --arg group "$1" --arg kind "$2" --arg ns "$3" --arg op "$4" \
        --argjson old "$5" --argjson new "$6" --arg user "${7:-kubernetes-admin}" "$GROUPS_JQ"'
        def in_namespace: if $ns == "" then . else . + {namespace: $ns} end;
        def annotation: test("^(camel[.]apache[.]org/operator[.]id|meta[.]helm[.]sh/.*|argocd[.]argoproj[.]io/tracking-id|single-owner-policy[.]io/offer)$");
        def side($marks): if $marks == null then null else {
            apiVersion: (if $group == "" then "v1" else "\($group)/v1" end), kind: $kind,
            metadata: ({name: "x", labels: ($marks | if type == "object" then with_entries(select(.key | annotation | not)) else . end),
                        annotations: ($marks | if type == "object" then with_entries(select(.key | annotation)) else {} end)} | in_namespace)
        } end;
        {
            uid: "e2e", kind: {group: $group, version: "v1", kind: $kind},
            resource: {group: $group, version: "v1", resource: ($kind | ascii_downcase + "s")},
            name: "x", operation: $op,
            userInfo: {username: $user, groups: groups_of($user)},
            object: side($new), oldObject: side($old)
        } | in_namespace' >"$file"
    echo "$file"
}

# The groups the API server gives a user: a service account's (MakeGroupNames), a node's, and
# every authenticated user's; the policy takes such a name only with its groups.
GROUPS_JQ='def groups_of($user):
    if $user | startswith("system:serviceaccount:") then
        ["system:serviceaccounts", "system:serviceaccounts:\($user | split(":")[2])"]
    elif $user | startswith("system:node:") then ["system:nodes"]
    else [] end + ["system:authenticated"];'

# The JSON patch of a mutating response, decoded.
patch() {
    jq -c '.patch | @base64d | fromjson' <<<"$output"
}

allowed() {
    [ "$(jq -r .allowed <<<"$output")" = true ]
    [ "$(jq -r '.status.message // empty' <<<"$output")" = "" ]
}

# A denial by the rules: denied_by MARK RULE [MARK RULE]... [CODE]. Each line of the message is
# one violation, `{mark}: {rule} denied for {object} ...` (src/violation.rs), one line per
# MARK RULE pair, in order; the status code is CODE, 403 unless given.
denied_by() {
    local code=403 lines
    if (($# % 2)); then
        code=${!#}
        set -- "${@:1:$#-1}"
    fi
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = "$code" ]
    mapfile -t lines < <(jq -r .status.message <<<"$output")
    [ "${#lines[@]}" -eq $(($# / 2)) ] || { echo "want $(($# / 2)) violations, got ${#lines[@]}"; false; }
    local line
    for line in "${lines[@]}"; do
        [[ $line == "$1: $2 denied for "* ]] || { echo "want: $1: $2 denied for …"; echo "got:  $line"; false; }
        shift 2
    done
}

# An audit replay's report: reported_by MARK RULE [MARK RULE]..., each line in the replay's form,
# `{mark}: {rule}: {object} is owned by {owner}: ...`, which judges a stored state, not an act.
reported_by() {
    local lines
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = 403 ]
    mapfile -t lines < <(jq -r .status.message <<<"$output")
    [ "${#lines[@]}" -eq $(($# / 2)) ] || { echo "want $(($# / 2)) violations, got ${#lines[@]}"; false; }
    local line
    for line in "${lines[@]}"; do
        [[ $line == "$1: $2: "*" is owned by "* ]] || { echo "want: $1: $2: … is owned by …"; echo "got:  $line"; false; }
        shift 2
    done
}

# An exempt requester's bypass: bypassed_by WHO MARK RULE. Allowed, with one warning that says who
# bypassed which rule, and the same words in the audit annotation.
bypassed_by() {
    allowed
    [ "$(jq -r '.warnings | length' <<<"$output")" = 1 ]
    local warning
    warning=$(jq -r '.warnings[0]' <<<"$output")
    [[ $warning == "$1 bypassed: $2: $3 denied for "* ]] || { echo "got: $warning"; false; }
    [ "$(jq -r '.auditAnnotations["single-owner-policy-exemption"]' <<<"$output")" = "$warning" ]
}

# Settings refused when the host loads the policy, in kwctl's words, the policy's message starting
# with TEXT: settings_rejected TEXT
settings_rejected() {
    echo "stdout: $output"
    echo "stderr: $stderr"
    [ "$status" -ne 0 ]
    [[ $stderr == *"Provided settings are not valid: $1"* ]]
}

# --- every example's samples ------------------------------------------------------------

# The mark and rule of each line of each denied sample's answer (examples/<setup>/<sample>.json),
# in order: sample|mark|rule[|mark|rule]...
SAMPLES='
app-id/denied-configmap-in-other-namespace|label appID|namespace scope
app-id/denied-crd-claimed-by-extension|label appID|cluster scope
app-id/denied-crd-overwritten-by-helm-hook|label appID|owner change
app-id/denied-job-unknown-owner-kind|label appID|owner value
app-id/denied-namespace-claimed-by-extension|label appID|cluster scope
argo-cd/denied-configmap-of-helm-release-synced-by-app|annotation argocd.argoproj.io/tracking-id|one owner
argo-cd/denied-deployment-taken-over-by-second-app|annotation argocd.argoproj.io/tracking-id|owner change
argo-cd/denied-deployment-tracking-id-without-its-object|annotation argocd.argoproj.io/tracking-id|owner value
camel-k/denied-deployment-controller-unreadable|annotation camel.apache.org/operator.id|owner change|annotation camel.apache.org/operator.id in spec.template|owner change
camel-k/denied-deployment-follows-an-undeclared-kind|annotation camel.apache.org/operator.id|owner change|annotation camel.apache.org/operator.id in spec.template|owner change
camel-k/denied-deployment-moved-ahead-of-its-integration|annotation camel.apache.org/operator.id|owner change|annotation camel.apache.org/operator.id in spec.template|owner change
camel-k/denied-deployment-pointed-at-an-integration-of-operator-2|annotation camel.apache.org/operator.id|owner change|annotation camel.apache.org/operator.id in spec.template|owner change
camel-k/denied-deployment-repointed-at-an-integration-of-operator-2|annotation camel.apache.org/operator.id|controller
camel-k/denied-integration-empty-operator-id|annotation camel.apache.org/operator.id|owner value
camel-k/denied-integration-handoff-offer-not-consumed|annotation single-owner-policy.io/offer|offer
camel-k/denied-integration-handoff-taken-by-another-operator|annotation camel.apache.org/operator.id|owner change
camel-k/denied-integration-moved-between-operators|annotation camel.apache.org/operator.id|owner change
camel-k/denied-integration-released-to-global-operator|annotation camel.apache.org/operator.id|orphaning
flux/denied-certificaterequest-copied-by-a-requester-that-may-not-derive|label kustomize.toolkit.fluxcd.io/name|identity
flux/denied-clusterrole-pruned-by-other-kustomization|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-crd-relabelled-by-other-kustomization|label kustomize.toolkit.fluxcd.io/name|owner change
flux/denied-deployment-deleted-by-a-person|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-deployment-of-helmrelease-adopted-by-kustomization|label kustomize.toolkit.fluxcd.io/name|one owner
flux/denied-deployment-orphan-finalizer-removed-by-other-kustomization|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-deployment-redeleted-in-the-foreground-by-other-kustomization|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-deployment-relabelled-by-a-person|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-deployment-orphan-finalizer-stripped-through-status-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-deployment-reconcile-disabled-through-status-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-namespace-given-a-dangling-owner-through-status-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-route-offered-by-knative-ahead-of-its-service|annotation single-owner-policy.io/offer|offer
flux/denied-pod-annotated-through-a-binding-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-pod-of-a-kustomizations-deployment-debugged-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-pod-of-a-kustomizations-deployment-force-deleted-by-other-tenant|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-hpa-aimed-at-a-kustomizations-deployment-by-a-person|label kustomize.toolkit.fluxcd.io/name|owner writes
flux/denied-validatingwebhookconfiguration-rewritten-by-other-release|label kustomize.toolkit.fluxcd.io/name|owner writes
helm-accounts/denied-crd-labelled-for-other-release|label appID|identity
helm-accounts/denied-crd-orphaned-by-admin|label appID|identity
helm-accounts/denied-crd-patched-by-other-release-hook|label appID|owner writes
helm-accounts/denied-crd-upgrade-by-a-certificate-named-like-the-release|label appID|owner writes
helm-accounts/denied-deployment-foregrounddeletion-finalizer-removed-by-other-release|label appID|owner writes
helm-accounts/denied-deployment-restarted-by-a-person|label appID|owner writes
helm-accounts/denied-deployment-scaled-by-another-release|label appID|owner writes
helm-accounts/denied-deployment-template-claims-other-release|label appID in spec.template|identity
helm-accounts/denied-deployment-whose-template-claims-a-release-deleted-by-another|label appID in spec.template|owner writes
helm-accounts/denied-deployment-whose-template-claims-a-release-reimaged-by-another|label appID in spec.template|owner writes
helm-accounts/denied-job-deleted-by-other-release-hook|label appID|owner writes
helm-accounts/denied-mutatingwebhookconfiguration-repointed-by-cainjector|label appID|owner writes
helm-accounts/denied-pod-binding-carrying-an-owner-label|label appID|binding
helm-accounts/denied-pod-ephemeral-container-injected-by-other-release|label appID|owner writes
helm-accounts/denied-pod-status-relabelled-for-other-release|label appID|owner change
helm-accounts/denied-resourceclaimtemplate-claiming-another-release|label appID in spec|identity
helm/denied-crd-annotated-without-release-namespace|annotation meta.helm.sh/release-name|owner value
helm/denied-deployment-handoff-taken-by-another-release|annotation meta.helm.sh/release-name|owner change
helm/denied-deployment-taken-over-by-other-release|annotation meta.helm.sh/release-name|owner change
olm-v1/denied-crd-labelled-by-a-person|label olm.operatorframework.io/owner-name|owner writes
olm-v1/denied-crd-orphaned-by-cainjector|label olm.operatorframework.io/owner-name|identity
olm-v1/denied-crd-taken-over-by-second-install|label olm.operatorframework.io/owner-name|owner change
olm-v1/denied-crd-taken-while-its-extension-cannot-be-read|label olm.operatorframework.io/owner-name|owner change
olm-v1/denied-crd-taken-while-its-extension-is-being-deleted|label olm.operatorframework.io/owner-name|owner change
olm-v1/denied-deployment-claimed-by-an-installed-operators-service-account|label olm.operatorframework.io/owner-name|identity
olm-v1/denied-deployment-half-pair|label olm.operatorframework.io/owner-name|owner value
'

# The one check that each sample gets the verdict its name announces, with the settings of its
# example: allowed-… (no message; no warning or audit annotation but an exempt requester's, whose
# bypass is recorded in both), or denied-… by the marks and rules SAMPLES gives it (403, one line
# per violation); …-stamped when the policy adds the owner mark (a patch), and only then. The
# settings are the examples' YAML files, which the host reads as JSON. A sample whose object
# follows its controller runs with the session of its lookups (sessions/<sample>.yml): every
# exchange used, none other made; every other sample with a session of none, so that a lookup
# fails the run (under the repo's runner, which refuses a call its session does not hold). Every
# mismatch is listed before the test fails.
@test "every example's samples get the verdicts their names announce, a denial by the marks and rules of SAMPLES (examples/*/)" {
    local setups=0 samples wrong=() rows=() listed session sample name expected got
    mapfile -t rows < <(grep . <<<"$SAMPLES")
    for setup in examples/*/; do
        setups=$((setups + 1))
        samples=0
        for file in "$setup"*.json; do
            samples=$((samples + 1))
            sample=$(basename "$setup")/$(basename "$file" .json)
            name=$(basename "$file")
            session="${setup}sessions/$(basename "$file" .json).yml"
            [ -f "$session" ] || session=test_data/sessions/no-lookups.yml
            evaluate "${setup}settings.yaml" "$file" "$session"
            # what the answer is: allowed[, warned][, stamped], or denied by mark|rule|...
            got=$(jq -r 'if .allowed then "allowed"
                    + if .status.message then ", with a message" else "" end
                    + if .warnings then ", warned" else "" end
                    + if .auditAnnotations then ", audited" else "" end
                    + if .patch then ", stamped" else "" end
                elif .status.code == 403 then "denied|" + (.status.message | split("\n")
                    | map(capture("^(?<mark>[^:]+): (?<rule>[a-z ]+) denied for ") // {mark: "unread: \(.)", rule: ""}
                          | "\(.mark)|\(.rule)") | join("|"))
                else "refused: \(.status.code): \(.status.message)" end' <<<"$output")
            if [[ $name == allowed-* ]]; then
                expected=allowed
                [[ $name != *-exempt-* ]] || expected+=", warned, audited"
                [[ $name != *-stamped.json ]] || expected+=", stamped"
            else
                listed=$(printf '%s\n' "${rows[@]}" | grep -m 1 "^$sample|" || true)
                expected="denied|${listed#*|}"
                [ -n "$listed" ] || expected="denied (no row for $sample in SAMPLES)"
            fi
            [ "$got" = "$expected" ] || wrong+=("$sample: want $expected, got $got")
        done
        [ "$samples" -ge 4 ]
    done
    # every row is a denied sample's, and each sample has one row
    for row in "${rows[@]}"; do
        [ -f "examples/${row%%|*}.json" ] && [[ ${row%%|*} == */denied-* ]] || wrong+=("SAMPLES: ${row%%|*} is no denied sample")
    done
    while read -r twice; do
        wrong+=("SAMPLES: $twice has two rows")
    done < <(printf '%s\n' "${rows[@]%%|*}" | sort | uniq -d)
    printf '%s\n' "${wrong[@]}"
    [ "${#wrong[@]}" -eq 0 ]
    [ "$setups" -ge 6 ]
}

# Host calls, counted per evaluation by the bench harness on the runner's host (wasm-bench): a
# sample the rules allow without its controller makes none; one with a session makes each lookup
# its session answers, once: a derived one its controller's, an unmarked child's each controller
# up its chain.
@test "release: every example pulls the release of the version built here, whose module accepts its settings" {
    local version dir others
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
    for dir in examples/*/; do
        # every policy of the file (a stamping pair has two) pulls this version's module
        [ "$(grep -c '^  module: ' "${dir}policy.yaml")" -ge 1 ]
        others=$(grep '^  module: ' "${dir}policy.yaml" | grep -v ":v$version\$" || true)
        [ -z "$others" ] || { echo "${dir}policy.yaml: $others, not v$version"; false; }
        # and the module built here, that version, loads the example's settings
        evaluate "${dir}settings.yaml" test_data/configmap-create-own-namespace.json test_data/sessions/no-lookups.yml
    done
}

@test "demo: one verdict line per sample, each within the terminal's width, and nothing else from the host" {
    run --separate-stderr env COLUMNS=100 KWCTL="$KWCTL" POLICY="$POLICY" examples/demo
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    local samples verdicts
    samples=$(find examples -mindepth 2 -maxdepth 2 -name '*.json' | wc -l)
    verdicts=$(grep -cE '^(ALLOWED|DENIED) ' <<<"$output")
    [ "$verdicts" -eq "$samples" ] || { echo "$verdicts verdicts for $samples samples"; false; }
    [ "$(grep -ci 'warn' <<<"$output")" -eq 0 ]
    [ -z "$(awk 'length($0) > 100' <<<"$output")" ]
}

@test "lookups: only where the rules deny without them (a controller, an owner), each of the session once (wasm-bench)" {
    local bench=${BENCH:-target/runner/wasm-bench}
    [ -x "$bench" ] || skip "needs wasm-bench (make wasm-bench), whose --json counts host calls"
    local counted=0 session calls expected
    for sample in examples/*/allowed-*.json examples/*/denied-*.json; do
        setup=$(dirname "$sample")
        session="$setup/sessions/$(basename "$sample" .json).yml"
        host=()
        [ ! -f "$session" ] || host=(--allow-context-aware --replay-host-capabilities-interactions "$session")
        run --separate-stderr "$bench" --json -n 1 --warmup 0 "${host[@]}" \
            --settings-path "$setup/settings.yaml" --request-path "$sample" "$POLICY"
        [ "$status" -eq 0 ]
        calls=$(jq -c .host_calls <<<"$output")
        if [ -f "$session" ]; then
            expected=$(grep -c '^- type: Exchange' "$session")
            [ "$(jq '[.host_calls[]] | add' <<<"$output")" = "$expected" ] || { echo "$sample: $calls, not $expected"; false; }
            counted=$((counted + 1))
        elif [[ $(basename "$sample") == allowed-* ]]; then
            [ "$calls" = '{}' ] || { echo "$sample: $calls"; false; }
        fi
    done
    [ "$counted" -ge 19 ]
}

# --- every example, on its own marks; the cluster's own writes --------------------------

# nth_mark SETUP N: the N-th owner mark of examples/SETUP/settings.yaml as JSON (null when
# there is none), read from the example's own lines (`- label: K` or `- annotation: K`, then
# `kindKey`, `namespaceKey`, `format` and the first of `clusterKinds`).
nth_mark() {
    awk -v n="$2" '/^ownerMarks:/ { on = 1; next }
         on && /^[^ #]/ { exit }
         on && /^  - / { mark++ }
         on && mark == n { sub(/^  - /, "    "); split($0, kv, ": "); gsub(/^ +/, "", kv[1]);
              if (kv[1] != "") { gsub(/[][]/, "", kv[2]); sub(/,.*/, "", kv[2]);
                                 printf "%s\t%s\n", kv[1], kv[2] } }' "examples/$1/settings.yaml" |
        jq -R -s 'split("\n") | map(select(length > 0) | split("\t") | {(.[0]): .[1]}) | add'
}

# mark_name SETUP N: the N-th owner mark of examples/SETUP/settings.yaml as a message names it,
# `label K` or `annotation K`.
mark_name() {
    nth_mark "$1" "$2" | jq -r 'if .label then "label \(.label)" else "annotation \(.annotation)" end'
}

# The jq functions that write owner `o` under a mark `$mark` (from nth_mark) on an object of
# the request `$request`: owner ids in namespace `$ns` for `<namespace>/<name>` owners.
MARKS_JQ='. as $request |
    def key($mark): $mark.label // $mark.annotation;
    def place($mark): if $mark.label then "labels" else "annotations" end;
    def id($mark; $o): if $mark.kindKey or $mark.clusterKinds then "\($mark.clusterKinds).\($o)"
                       elif $mark.namespaceKey then "\($ns)/\($o)" else $o end;
    def values($mark; $o; $metadata):
        if $mark.kindKey then {(key($mark)): $o, ($mark.kindKey): $mark.clusterKinds}
        elif $mark.namespaceKey then {(key($mark)): $o, ($mark.namespaceKey): $ns}
        elif $mark.format == "ArgoCDTrackingID" then
            {(key($mark)): "\($o):\($request.kind.group)/\($request.kind.kind):\($metadata.namespace // "")/\($metadata.name // $request.name)"}
        else {(key($mark)): id($mark; $o)} end;
    def mark($mark; $o): . as $metadata | .[place($mark)] = ((.[place($mark)] // {}) + values($mark; $o; $metadata));
    def offer($from; $o; $to): "\(key($from)): \(id($from; $o)) -> "
        + (if $to == $from then id($to; "b") else "\(key($to)): \(id($to; "b"))" end);'

# cluster_write SETUP FILE: a request of test_data/cluster-writes/, its `@owner` placeholders
# (written in labels) expanded into SETUP's first owner mark for owner a or b — in the labels
# or the annotations, with its companion, or as a tracking id of the object — and `@offer-b`
# into that mark's offer from a to b.
cluster_write() {
    local file="$BATS_TEST_TMPDIR/$1--$(basename "$2")"
    jq --argjson mark "$(nth_mark "$1" 1)" --arg ns owners "$MARKS_JQ"'
        walk(if type == "object" and (.labels? | type) == "object" and (.labels | has("@owner"))
                  then .labels["@owner"] as $o | .labels |= del(.["@owner"]) | mark($mark; $o)
                       | if (.labels | length) == 0 then del(.labels) else . end
               elif type == "string" and startswith("@offer-") then offer($mark; "a"; $mark)
               else . end)' "$2" >"$file"
    echo "$file"
}

# requester SETUP: who acts for SETUP's owners in team-a: the first user of its first
# identity, a `*` in it read as team-a; kubernetes-admin for an example without identities.
requester() {
    local user
    user=$(awk '/^identities:/ { on = 1 } on && /users: \[/ { match($0, /"[^"]*"/);
               print substr($0, RSTART + 1, RLENGTH - 2); exit }' "examples/$1/settings.yaml")
    user=${user:-kubernetes-admin}
    echo "${user//\*/team-a}"
}

# marked SETUP OLD NEW: test_data/marks/deployment-update.json by SETUP's requester, its
# sides marked with words: `a` or `b` (SETUP's first mark names that owner), `other-b` (its
# second mark names b), `offer-b` (owner a offers the Deployment to b, under the first mark),
# `offer-other-b` (owner a offers it to b of the second mark); `-` for none.
marked() {
    local file="$BATS_TEST_TMPDIR/marked-$RANDOM.json"
    jq --argjson first "$(nth_mark "$1" 1)" --argjson second "$(nth_mark "$1" 2)" --arg ns team-a \
        --arg user "$(requester "$1")" --arg old "$2" --arg new "$3" "$MARKS_JQ$GROUPS_JQ"'
        def apply($words): reduce ($words | split(" ")[]) as $word (.;
              if $word == "a" or $word == "b" then mark($first; $word)
              elif $word == "other-b" then mark($second; "b")
              elif $word == "offer-b" then .annotations["single-owner-policy.io/offer"] = offer($first; "a"; $first)
              elif $word == "offer-other-b" then .annotations["single-owner-policy.io/offer"] = offer($first; "a"; $second)
              else . end);
          .userInfo = {username: $user, groups: groups_of($user)}
          | .oldObject.metadata |= apply($old) | .object.metadata |= apply($new)' \
        test_data/marks/deployment-update.json >"$file"
    echo "$file"
}

@test "every example, on its own marks: a move without an offer is denied, offer and accept hand over, keeping is allowed, a second tool's mark is denied" {
    local crossed=0
    for dir in examples/*/; do
        local setup
        setup=$(basename "$dir")
        evaluate "${dir}settings.yaml" "$(marked "$setup" a b)"
        denied_by "$(mark_name "$setup" 1)" "owner change"
        evaluate "${dir}settings.yaml" "$(marked "$setup" a "a offer-b")"
        allowed
        evaluate "${dir}settings.yaml" "$(marked "$setup" "a offer-b" b)"
        allowed
        evaluate "${dir}settings.yaml" "$(marked "$setup" a a)"
        allowed
        # A second mark of another tool: one that does not name the same owner as the first
        local linked
        linked=$(jq -n --argjson first "$(nth_mark "$setup" 1)" --argjson second "$(nth_mark "$setup" 2)" '
            def key($m): $m.label // $m.annotation;
            $second == null or $second.sameOwnerAs == key($first) or $first.sameOwnerAs == key($second)')
        if [[ $linked == false ]]; then
            crossed=$((crossed + 1))
            evaluate "${dir}settings.yaml" "$(marked "$setup" a "a other-b")"
            denied_by "$(mark_name "$setup" 2)" "one owner"
            evaluate "${dir}settings.yaml" "$(marked "$setup" a "a offer-other-b")"
            allowed
            evaluate "${dir}settings.yaml" "$(marked "$setup" "a offer-other-b" other-b)"
            allowed
        fi
    done
    # argo-cd and flux guard several tools
    [ "$crossed" -ge 2 ]
}

@test "cluster writes: the control plane is allowed without warnings under every example, people and impostors are still judged (test_data/cluster-writes/table.tsv)" {
    local header setups=() wrong=() rows=0
    IFS=$'\t' read -r -a header <test_data/cluster-writes/table.tsv
    setups=("${header[@]:1:${#header[@]}-2}")
    # One column per example, and an example per column.
    [ "$(printf '%s\n' "${setups[@]}" | sort)" = "$(cd examples && ls -d */ | tr -d / | sort)" ]
    while IFS=$'\t' read -r -a row; do
        [[ ${row[0]} != request ]] || continue
        rows=$((rows + 1))
        local request=${row[0]}
        # (not `i`: bats' `run` uses it)
        for column in "${!setups[@]}"; do
            local setup=${setups[$column]} expected=${row[$((column + 1))]}
            evaluate "examples/$setup/settings.yaml" "$(cluster_write "$setup" "test_data/cluster-writes/$request")"
            local got
            got=$(jq -r 'if .allowed and (.warnings // [] | length) == 0 and (.auditAnnotations // {} | length) == 0
                             and .patch == null then "allow"
                         elif .allowed then "allow with warnings or a patch"
                         elif .status.code == 403 then "deny"
                         else "refused: \(.status.code)" end' <<<"$output")
            [[ $got == "$expected" ]] ||
                wrong+=("$setup: $request: want $expected, got $got: $(jq -c '.status.message // .warnings' <<<"$output")")
        done
    done <test_data/cluster-writes/table.tsv
    printf '%s\n' "${wrong[@]}"
    [ "$rows" -ge 80 ]
    [ "${#wrong[@]}" -eq 0 ]
}

# --- what no sample shows -------------------------------------------------------------------

@test "adoption: allowed by default, denied under adoption: Deny (no example denies it)" {
    evaluate '{}' test_data/crd-update-adoption.json
    allowed
    evaluate '{"adoption": "Deny"}' test_data/crd-update-adoption.json
    denied_by "label appID" adoption
}

# --- exemptions: a bypass is allowed with a warning and an audit annotation -------------------

@test "exemptions: an exempt user or group bypasses a denial, writes: Owner included, with a warning and an audit annotation" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-clusterrole-takeover-by-exempt-admin.json
    bypassed_by "exempt user break-glass-admin" "label olm.operatorframework.io/owner-name" "owner change"
    # an exempt requester bypasses writes: Owner too
    jq '.userInfo = {username: "break-glass-admin", groups: ["system:authenticated"]}' \
        examples/olm-v1/denied-crd-labelled-by-a-person.json >"$BATS_TEST_TMPDIR/break-glass.json"
    evaluate examples/olm-v1/settings.yaml "$BATS_TEST_TMPDIR/break-glass.json"
    bypassed_by "exempt user break-glass-admin" "label olm.operatorframework.io/owner-name" "owner writes"
    evaluate '{"exemptions": {"groups": ["system:serviceaccounts"]}}' test_data/crd-update-owner-change.json
    bypassed_by "user system:serviceaccount:kube-system:helm-hooks of exempt group system:serviceaccounts" "label appID" "owner change"
}

# --- the cluster's writers ----------------------------------------------------------------

# Each writer of the catalogue (src/settings/writers.rs, docs/writers.md), under
# test_data/writers/settings.yaml: its writes (test_data/writers/<name>/allowed-*.json, shaped
# from its source as test_data/writers/<name>/SOURCE cites) are allowed with it enabled, and
# denied without it, the denial naming the writer to enable; a write one step wider than its
# grants (wider-*.json) is denied with it enabled. A sample that reads the host has its session
# in test_data/writers/<name>/sessions/<sample>.yml.
@test "cluster writers: each writer's writes pass with it enabled, are denied without it, naming it, and one step wider (test_data/writers/)" {
    local writers=0 wrong=() name dir enabled file sample session message binds
    for name in $(grep -o '^| `[a-z-]*`' docs/writers.md | tr -d '|` '); do
        writers=$((writers + 1))
        # a writer whose row binds nothing writes nothing an owner marks: its writes pass without it
        binds=true
        ! grep -q "^| \`$name\` | [^|]* | nothing |" docs/writers.md || binds=false
        dir=test_data/writers/$name
        [ -d "$dir" ] || { wrong+=("$name: no samples in $dir"); continue; }
        enabled=$BATS_TEST_TMPDIR/$name.yaml
        { cat test_data/writers/settings.yaml; printf 'clusterWriters:\n  - name: %s\n' "$name"; } >"$enabled"
        for file in "$dir"/allowed-*.json "$dir"/wider-*.json; do
            [ -f "$file" ] || continue
            sample=$name/$(basename "$file" .json)
            session="$dir/sessions/$(basename "$file" .json).yml"
            [ -f "$session" ] || session=test_data/sessions/no-lookups.yml
            evaluate "$enabled" "$file" "$session"
            case $(basename "$file") in
            allowed-*)
                [ "$(jq -r .allowed <<<"$output")" = true ] && [ "$(jq -r .status.message <<<"$output")" = null ] ||
                    wrong+=("$sample: want allowed with $name enabled, got $(jq -c .status <<<"$output")")
                # without the writer, nothing is followed: no lookup is made
                evaluate test_data/writers/settings.yaml "$file" test_data/sessions/no-lookups.yml
                message=$(jq -r .status.message <<<"$output")
                if $binds; then
                    [[ $(jq -r .allowed <<<"$output") == false && $message == *"it is the writer $name of the catalogue: enable it with clusterWriters"* ]] ||
                        wrong+=("$sample: want denied without $name, naming it, got: $message")
                else
                    [ "$(jq -r .allowed <<<"$output")" = true ] ||
                        wrong+=("$sample: $name binds nothing, want allowed without it too, got: $message")
                fi
                ;;
            wider-*)
                [ "$(jq -r .allowed <<<"$output")" = false ] && [ "$(jq -r .status.code <<<"$output")" = 403 ] ||
                    wrong+=("$sample: want denied one step wider, got allowed")
                ;;
            esac
        done
        compgen -G "$dir/allowed-*.json" >/dev/null || wrong+=("$name: no allowed-*.json")
        compgen -G "$dir/wider-*.json" >/dev/null || wrong+=("$name: no wider-*.json")
    done
    [ "$writers" -ge 22 ] || wrong+=("docs/writers.md lists $writers writers")
    printf '%s\n' "${wrong[@]}"
    [ "${#wrong[@]}" -eq 0 ]
}

# --- lookups: what the host answers the policy ------------------------------------------------

@test "scale: under writes: Owner, a target the host will not read is denied, carrying the host's words" {
    # run without the session of its lookups, which the samples' scale writes have
    evaluate examples/helm-accounts/settings.yaml test_data/deployment-scale-update.json
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = 403 ]
    [[ $(jq -r .status.message <<<"$output") == 'cannot judge the scale of Deployment cert-manager/cert-manager-webhook under writes: Owner: reading it failed ('?*'); '* ]]
}

@test "scale: a cached target that is another object than the Scale's is read again past the cache; still another, the scale is denied" {
    local sample=examples/helm-accounts/allowed-deployment-scaled-by-cluster-admin
    local held=examples/helm-accounts/sessions/allowed-deployment-scaled-by-cluster-admin.yml
    local session=$BATS_TEST_TMPDIR/recreated.yml uid=8cedbf6f-ab56-561e-a6f8-923bd9876e44
    # the cache holds a Deployment since deleted; past it, the API server has one created again
    sed "s/$uid/0d2b6e91-4c7a-5f38-9e1d-7a5c3b8f2e64/" "$held" >"$session"
    sed -n '/^- type: Exchange/,$p' "$held" |
        sed -e 's/disable_cache: false/disable_cache: true/' \
            -e "s/$uid/f4a81c3e-6b2d-5d09-8e7f-1c9a2b5d4e36/" >>"$session"
    evaluate examples/helm-accounts/settings.yaml "$sample.json" "$session"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [[ $(jq -r .status.message <<<"$output") == 'cannot judge the scale of Deployment cert-manager/cert-manager under writes: Owner: the Scale is of uid 8cedbf6f-ab56-561e-a6f8-923bd9876e44, and the Deployment read has uid f4a81c3e-6b2d-5d09-8e7f-1c9a2b5d4e36: '* ]]
}

# --- settings refused at load -------------------------------------------------------------

# Each row: settings|the start of the policy's message, one row for each field. Where
# src/settings.rs asserts the text (or its template), the row gives the field it names alone;
# where no Rust test does (serde's words for a wrong type, a missing field), the whole text.
@test "settings: invalid settings are refused when the host loads the policy, in kwctl's words, naming the field" {
    while IFS='|' read -r settings message; do
        run --separate-stderr "$KWCTL" run --settings-json "$settings" --request-path test_data/crd-delete.json "$POLICY"
        settings_rejected "$message"
    done <<'ROWS'
{"ownerLabel": []}|ownerLabel:
{"ownerLabels": [{"key": "appID"}]}|ownerLabels was renamed
{"transferAnnotation": "x/offer"}|transferAnnotation was renamed
{"ownerMarks": []}|ownerMarks:
{"ownerMarks": [{"label": "app ID"}]}|ownerMarks[0].label:
{"ownerMarks": [{"annotation": "a"}, {"annotation": "a"}]}|ownerMarks[1].annotation:
{"ownerMarks": [{"label": "appID"}, {"label": "appID"}]}|ownerMarks[1].label:
{"ownerMarks": [{"label": "a", "clusterKinds": ["X"], "namespacedKinds": ["X"]}]}|ownerMarks[0]:
{"ownerMarks": [{"label": "a", "clusterKinds": ["Cluster.Extension"]}]}|ownerMarks[0].clusterKinds[0]:
{"ownerMarks": [{"label": "a", "kindKey": "b"}]}|ownerMarks[0].kindKey:
{"ownerMarks": [{"label": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}]}|ownerMarks[0].format:
{"ownerMarks": [{"annotation": "h/name", "namespaceKey": "h/namespace", "sameOwnerAs": ["f/name"]}]}|ownerMarks[0].sameOwnerAs[0]:
{"ownerMarks": "appID"}|ownerMarks: invalid type: string "appID", expected a sequence
{"ownerMarks": [{"label": 1}]}|ownerMarks[0].label: invalid type: integer `1`, expected a string
{"ownerMarks": [{"label": "a", "clusterKinds": "X"}]}|ownerMarks[0].clusterKinds: invalid type: string "X", expected a sequence
{"adoption": "allow"}|adoption:
{"exemptions": []}|exemptions:
{"stamp": "yes"}|stamp:
{"writes": "Owner"}|writes:
{"offerAnnotation": "offer to"}|offerAnnotation:
{"trustedWriters": [{"users": ["system:serviceaccount:kube-system:*"], "resources": ["*"], "operations": ["DELETE"]}]}|trustedWriters[0].users[0]:
{"identities": [{"owners": ["ClusterExtension.a"], "users": ["a"], "access": "Read"}]}|identities[0].access:
{"identities": [{"owners": ["ClusterExtension.a"]}]}|identities[0]:
{"identities": [{"owners": ["Extension.${ns}.*"], "users": ["a"]}]}|identities[0].owners[0]:
{"parentKinds": [{"apiVersion": "camel.apache.org/v1", "kind": "Integration"}, {"apiVersion": "camel.apache.org/v2", "kind": "Integration"}]}|parentKinds[1]:
{"parentKinds": [{"apiVersion": "camel.apache.org/v1"}]}|parentKinds[0]: missing field `kind`
ROWS
}

# --- mutations: stamping and consumed offers, as JSON patches ---------------------------------

CAMEL_IDENTITIES='{"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}], "identities": [
    {"owners": ["operator-1"], "users": ["system:serviceaccount:camel-k:camel-k-operator"]},
    {"owners": ["operator-2"], "users": ["system:serviceaccount:camel-k-next:camel-k-operator"]}]}'

@test "stamp: a CREATE by a release's service account gets its owner label" {
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/allowed-crd-create-stamped.json
    allowed
    [ "$(jq -r .patchType <<<"$output")" = JSONPatch ]
    [ "$(patch)" = '[{"op":"add","path":"/metadata/labels","value":{"appID":"ClusterExtension.cert-manager"}}]' ]
}

# The two policies `make manifest` writes for examples/helm-accounts (stamp: true): the stamping
# twin's settings (stampOnly: true) and the judging twin's (stamp: false).
twins() {
    STAMPING="$BATS_TEST_TMPDIR/stamping.yaml"
    JUDGING="$BATS_TEST_TMPDIR/judging.yaml"
    { cat examples/helm-accounts/settings.yaml; echo "stampOnly: true"; } >"$STAMPING"
    sed 's/^stamp: true$/stamp: false/' examples/helm-accounts/settings.yaml >"$JUDGING"
    grep -qx 'stamp: false' "$JUDGING"
}

# patched FILE: the request FILE with the patch of the last response applied to its object.
patched() {
    local out="$BATS_TEST_TMPDIR/patched-$RANDOM.json"
    jq --argjson ops "$(patch)" '
        def pointer: ltrimstr("/") | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~"));
        .object |= reduce $ops[] as $op (.;
            if $op.op == "remove" then delpaths([$op.path | pointer])
            else setpath($op.path | pointer; $op.value) end)' "$1" >"$out"
    echo "$out"
}

@test "stamp: the stamping twin stamps and denies nothing; the judging twin judges the final object, once" {
    twins
    # A release's CREATE: stamped by one, accepted as stamped by the other.
    evaluate "$STAMPING" examples/helm-accounts/allowed-crd-create-stamped.json
    allowed
    [ "$(patch)" = '[{"op":"add","path":"/metadata/labels","value":{"appID":"ClusterExtension.cert-manager"}}]' ]
    local stamped
    stamped=$(patched examples/helm-accounts/allowed-crd-create-stamped.json)
    evaluate "$JUDGING" "$stamped"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    # A takeover: the stamping twin lets it through untouched, the judging twin denies it.
    evaluate "$STAMPING" examples/helm-accounts/denied-crd-labelled-for-other-release.json
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    [ "$(jq -r .warnings <<<"$output")" = null ]
    evaluate "$JUDGING" examples/helm-accounts/denied-crd-labelled-for-other-release.json
    denied_by "label appID" identity
    # An exempt requester is warned about once, by the judging twin.
    jq '.userInfo.username = "break-glass-admin"' examples/helm-accounts/denied-crd-labelled-for-other-release.json >"$BATS_TEST_TMPDIR/exempt.json"
    evaluate "$STAMPING" "$BATS_TEST_TMPDIR/exempt.json"
    [ "$(jq -r .warnings <<<"$output")" = null ]
    evaluate "$JUDGING" "$BATS_TEST_TMPDIR/exempt.json"
    [ "$(jq -r '.warnings | length' <<<"$output")" = 1 ]
    # A mutating webhook called after the stamping one that moves the label is caught.
    jq '.object.metadata.labels.appID = "ClusterExtension.kube-prometheus-stack"' "$stamped" >"$BATS_TEST_TMPDIR/rewritten.json"
    evaluate "$JUDGING" "$BATS_TEST_TMPDIR/rewritten.json"
    denied_by "label appID" identity
}

@test "stamp: both labels of a kind/name pair are stamped, beside existing labels" {
    settings='{"ownerMarks": [{"label": "olm.operatorframework.io/owner-name", "kindKey": "olm.operatorframework.io/owner-kind",
        "clusterKinds": ["ClusterExtension"]}], "identities": [{"owners": ["ClusterExtension.cert-manager"],
        "users": ["system:serviceaccount:operators:cert-manager"]}], "stamp": true}'
    evaluate "$settings" "$(request "" ConfigMap cert-manager CREATE null '{"app": "webhook"}' system:serviceaccount:operators:cert-manager)"
    allowed
    [ "$(patch | jq -c 'sort_by(.path)')" = '[{"op":"add","path":"/metadata/labels/olm.operatorframework.io~1owner-kind","value":"ClusterExtension"},{"op":"add","path":"/metadata/labels/olm.operatorframework.io~1owner-name","value":"cert-manager"}]' ]
}

@test "stamp: no stamping on UPDATE, for wildcard-only requesters, or when already labelled" {
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" UPDATE '{}' '{}' system:serviceaccount:helm-releases:cert-manager)"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" CREATE null '{"appID": "ClusterExtension.cert-manager"}' system:serviceaccount:helm-releases:cert-manager)"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    settings='{"identities": [{"owners": ["ClusterExtension.*"], "users": ["olm"]}], "stamp": true}'
    evaluate "$settings" "$(request apiextensions.k8s.io CustomResourceDefinition "" CREATE null '{}' olm)"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
}

# --- handoff ---------------------------------------------------------------------------

# An Integration update: handoff USER OLD_OWNER OLD_OFFER NEW_OWNER NEW_OFFER ("" for none);
# an offer X is operator-1's offer to X.
handoff() {
    local file="$BATS_TEST_TMPDIR/handoff-$RANDOM.json"
    jq -n --arg user "$1" --arg old "$2" --arg old_offer "$3" --arg new "$4" --arg new_offer "$5" "$GROUPS_JQ"'
        def side($owner; $offer): {apiVersion: "camel.apache.org/v1", kind: "Integration",
            metadata: {name: "orders-route", namespace: "shop",
            annotations: ((if $owner == "" then {} else {"camel.apache.org/operator.id": $owner} end)
                + (if $offer == "" then {} else
                   {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> \($offer)"} end))}};
        {uid: "h", kind: {group: "camel.apache.org", version: "v1", kind: "Integration"},
         resource: {group: "camel.apache.org", version: "v1", resource: "integrations"},
         operation: "UPDATE", namespace: "shop", name: "orders-route",
         userInfo: {username: $user, groups: groups_of($user)},
         object: side($new; $new_offer), oldObject: side($old; $old_offer)}' >"$file"
    echo "$file"
}

OPERATOR_1=system:serviceaccount:camel-k:camel-k-operator
OPERATOR_2=system:serviceaccount:camel-k-next:camel-k-operator

# The samples of a handoff are one history: what the offer stored is what the accepting update
# starts from, and no step stores the Integration without an owner.
@test "handoff: the samples of operator-1's offer and operator-2's accept are one history, never unowned" {
    offered=examples/camel-k/allowed-integration-handoff-1-offered-to-operator-2.json
    accepted=examples/camel-k/allowed-integration-handoff-2-accepted-by-operator-2.json
    [ "$(jq -c .object.metadata "$offered")" = "$(jq -c .oldObject.metadata "$accepted")" ]
    [ "$(jq -r '.object.metadata.annotations["camel.apache.org/operator.id"]' "$offered")" = operator-1 ]
    [ "$(jq -r '.object.metadata.annotations["camel.apache.org/operator.id"]' "$accepted")" = operator-2 ]
}

@test "handoff: deployed mutating, the policy removes the consumed offer itself" {
    settings=$(jq '. + {stamp: true}' <<<"$CAMEL_IDENTITIES")
    evaluate "$settings" "$(handoff "$OPERATOR_2" operator-1 operator-2 operator-2 operator-2)"
    allowed
    [ "$(patch)" = '[{"op":"remove","path":"/metadata/annotations/single-owner-policy.io~1offer"}]' ]
}

@test "handoff with two marks: moving one mark never withdraws the other's offer (withdrawal needs its owner)" {
    local settings='{"ownerMarks": [{"annotation": "camel.apache.org/operator.id", "sameOwnerAs": ["appID"]},
                                    {"label": "appID", "clusterKinds": ["ClusterExtension"]}],
        "identities": [{"owners": ["operator-1"], "users": ["operator-1"]}, {"owners": ["ClusterExtension.x"], "users": ["x"]}]}'
    local offered='{"camel.apache.org/operator.id": "operator-1", "single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}'
    local moved='{"camel.apache.org/operator.id": "operator-1", "appID": "ClusterExtension.x"}'
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$offered" "$moved" x)"
    denied_by "annotation single-owner-policy.io/offer" offer
    # deployed mutating, the policy does not remove it for them either
    evaluate "$(jq -c '. + {stamp: true}' <<<"$settings")" "$(request camel.apache.org Integration shop UPDATE "$offered" "$(jq -c '. + {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}' <<<"$moved")" x)"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    # the owner withdraws it
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$offered" '{"camel.apache.org/operator.id": "operator-1"}' operator-1)"
    allowed
}

# --- hostile input: odd requests through the module (see docs/failure-behaviour.md) ----

setup_file() {
    HOSTILE="$BATS_FILE_TMPDIR/hostile"
    test_data/hostile/generate "$HOSTILE"
    export HOSTILE
}

# A CREATE of a ConfigMap edited by a jq filter: odd_request FILTER
odd_request() {
    local file="$BATS_TEST_TMPDIR/odd-$RANDOM.json"
    jq "$1" test_data/configmap-create-own-namespace.json >"$file"
    echo "$file"
}

unreadable() {
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = 400 ]
    [[ $(jq -r .status.message <<<"$output") == "cannot read the admission request: $1"* ]]
}

@test "malformed: a label value that is not a string, or labels given as an array, are rejected with code 400" {
    evaluate '{}' "$(request "" ConfigMap team-a CREATE null '{"appID": 5}')"
    unreadable 'request.object.metadata.labels.appID: invalid type: integer `5`, expected a string at line '
    evaluate '{}' "$(request "" ConfigMap team-a CREATE null '["appID"]')"
    unreadable 'request.object.metadata.labels: invalid type: sequence, expected a map at line '
}

@test "malformed: an UPDATE without oldObject is rejected with code 400 (its text is tests/rules.rs's)" {
    evaluate '{}' "$(request "" ConfigMap team-a UPDATE null '{}')"
    unreadable ''
}

@test "hostile: wrong types where the policy reads are rejected with code 400, naming the field" {
    evaluate '{}' "$(odd_request '.object = "x"')"
    unreadable 'request.object: invalid type: string "x", expected struct Object'
    evaluate '{}' "$(odd_request '.object.metadata.labels.appID = null')"
    unreadable 'request.object.metadata.labels.appID: invalid type: null, expected a string'
    evaluate '{}' "$(odd_request '.object.metadata.labels = "appID"')"
    unreadable 'request.object.metadata.labels: invalid type: string "appID", expected a map'
}

@test "hostile: a request kwctl cannot type is refused before the policy runs, in kwctl's words" {
    run --separate-stderr "$KWCTL" run --settings-json '{}' --request-path "$(odd_request 'del(.resource)')" "$POLICY"
    echo "stderr: $stderr"
    [ "$status" -eq 1 ]
    [ "$output" = "" ]
    [[ $stderr == *"cannot build AdmissionRequest object from given input: missing field \`resource\`"* ]]
    run --separate-stderr "$KWCTL" run --settings-json '{}' --request-path "$(odd_request '.userInfo.groups = "system:masters"')" "$POLICY"
    [ "$status" -eq 1 ]
    [[ $stderr == *'cannot build AdmissionRequest object from given input: invalid type: string "system:masters", expected a sequence'* ]]
}

@test "hostile: a request nested deeper than a JSON parser goes is refused by the host" {
    run --separate-stderr "$KWCTL" run --settings-json '{}' --request-path "$HOSTILE/deeply-nested-object.json" "$POLICY"
    echo "stderr: $stderr"
    [ "$status" -eq 1 ]
    [[ $stderr == *"recursion limit exceeded"* ]]
}

@test "hostile: the policy's own answer to mistyped fields that hosts refuse (runner call)" {
    # kwctl and policy-server refuse these requests before any policy runs (see the test
    # above); the policy must still answer them with a 400 naming the field, never trap.
    jq -c '{request: (.userInfo.groups = "system:masters"), settings: {}}' \
        test_data/configmap-create-own-namespace.json >"$BATS_TEST_TMPDIR/groups"
    raw validate "$BATS_TEST_TMPDIR/groups"
    [ "$(jq -r .code <<<"$output")" = 400 ]
    [[ $(jq -r .message <<<"$output") == 'cannot read the admission request: request.userInfo.groups: invalid type: string "system:masters", expected a sequence at line 1 column '* ]]
    jq -c '{request: (.kind = "ConfigMap"), settings: {}}' \
        test_data/configmap-create-own-namespace.json >"$BATS_TEST_TMPDIR/kind"
    raw validate "$BATS_TEST_TMPDIR/kind"
    [ "$(jq -r .code <<<"$output")" = 400 ]
    [[ $(jq -r .message <<<"$output") == 'cannot read the admission request: request.kind: invalid type: string "ConfigMap", expected struct GroupVersionKind at line 1 column '* ]]
}

@test "hostile: an empty or unknown operation is rejected with code 400" {
    evaluate '{}' "$(odd_request '.operation = ""')"
    unreadable 'request.operation: unknown variant ``, expected one of `CREATE`, `UPDATE`, `DELETE`, `CONNECT`'
    evaluate '{}' "$(odd_request '.operation = "PATCH"')"
    unreadable 'request.operation: unknown variant `PATCH`, expected one of `CREATE`, `UPDATE`, `DELETE`, `CONNECT`'
}

@test "hostile: null metadata reads as no owner (documented accept)" {
    evaluate '{}' "$(odd_request '.object.metadata = null')"
    allowed
}

@test "hostile: an object with 10,000 labels is judged on its owner label" {
    evaluate '{}' "$HOSTILE/ten-thousand-labels.json"
    allowed
    evaluate '{}' "$(jq '.object.metadata.labels.appID = "Extension.team-b.x"' "$HOSTILE/ten-thousand-labels.json" >"$BATS_TEST_TMPDIR/l.json"; echo "$BATS_TEST_TMPDIR/l.json")"
    denied_by "label appID" "namespace scope"
}

@test "hostile: a 10 MiB object is judged like a small one" {
    evaluate '{}' "$HOSTILE/ten-mib-object.json"
    allowed
    evaluate '{}' "$(jq '.object.metadata.labels.appID = "Operator.x"' "$HOSTILE/ten-mib-object.json" >"$BATS_TEST_TMPDIR/m.json"; echo "$BATS_TEST_TMPDIR/m.json")"
    denied_by "label appID" "owner value"
}


# Payloads kwctl cannot send: the runner's `call` hands the guest exactly these bytes.
# raw FUNCTION FILE
raw() {
    [[ $(basename "$KWCTL") == runner ]] || skip "needs the repo's runner (runner call)"
    run --separate-stderr "$KWCTL" call "$1" "$2" "$POLICY"
    echo "stdout: $output"
    echo "stderr: $stderr"
    [ "$status" -eq 0 ]
}

raw_unreadable() {
    [ "$(jq -r .accepted <<<"$output")" = false ]
    [ "$(jq -r .code <<<"$output")" = 400 ]
    [ "$(jq -r .message <<<"$output")" = "cannot read the admission request: $1" ]
}

@test "hostile: payloads that are no admission request are rejected with code 400" {
    printf 'not json' >"$BATS_TEST_TMPDIR/not-json"
    raw validate "$BATS_TEST_TMPDIR/not-json"
    raw_unreadable 'expected ident at line 1 column 2'
    printf '[]' >"$BATS_TEST_TMPDIR/array"
    raw validate "$BATS_TEST_TMPDIR/array"
    raw_unreadable 'the payload must be a JSON object with `request` and `settings`, not an array'
    printf '{"settings": {}}' >"$BATS_TEST_TMPDIR/no-request"
    raw validate "$BATS_TEST_TMPDIR/no-request"
    raw_unreadable 'missing field `request` at line 1 column 16'
}

@test "hostile: invalid UTF-8 where the policy reads is rejected with code 400" {
    jq -c '{request: ., settings: {}}' test_data/configmap-create-own-namespace.json |
        sed 's/"name":"argocd-cm"/"name":"argocd-\xff\xfe"/' >"$BATS_TEST_TMPDIR/utf8"
    raw validate "$BATS_TEST_TMPDIR/utf8"
    [ "$(jq -r .code <<<"$output")" = 400 ]
    [[ $(jq -r .message <<<"$output") == 'cannot read the admission request: request.name: invalid unicode code point at line 1 column '* ]]
}

@test "hostile: 10,000 levels of nesting in a skipped field are skipped (documented accept)" {
    { printf '{"request": '; cat "$HOSTILE/deeply-nested-object.json"; printf ', "settings": {}}'; } >"$BATS_TEST_TMPDIR/deep"
    raw validate "$BATS_TEST_TMPDIR/deep"
    [ "$(jq -r .accepted <<<"$output")" = true ]
}

@test "hostile: settings that are not JSON are refused, naming the problem" {
    printf 'ownerLabels: [appID]' >"$BATS_TEST_TMPDIR/yaml-settings"
    raw validate_settings "$BATS_TEST_TMPDIR/yaml-settings"
    [ "$(jq -r .valid <<<"$output")" = false ]
    [ "$(jq -r .message <<<"$output")" = 'expected value at line 1 column 1' ]
}

# --- audit: Kubewarden's audit scanner replays stored objects (see docs/deploying.md, "Visibility") ----

# The request the audit scanner sends for the object of a sample (or any request file's
# `.object`, edited by an optional jq filter): CREATE, an empty userInfo, kind and resource
# from the object (newAdmissionRequest in kubewarden-controller's internal/audit-scanner).
#   replay FILE [FILTER]
replay() {
    local file="$BATS_TEST_TMPDIR/replay-$RANDOM.json"
    jq "(.object | ${2:-.}) as \$o | (\$o.apiVersion | split(\"/\")) as \$gv
        | (if (\$gv | length) == 2 then \$gv else [\"\", \$gv[0]] end) as [\$group, \$version]
        | {group: \$group, version: \$version, kind: \$o.kind} as \$gvk
        | {uid: (\$o.metadata.uid // \"\"), kind: \$gvk, requestKind: \$gvk,
           resource: {group: \$group, version: \$version, resource: \$o.kind},
           name: \$o.metadata.name, operation: \"CREATE\", userInfo: {}, object: \$o}
        + if \$o.metadata.namespace then {namespace: \$o.metadata.namespace} else {} end" \
        "$1" >"$file"
    echo "$file"
}

@test "audit: every owned object of the samples passes its setup's replay, identities and writes: Owner included" {
    for setup in app-id olm-v1 camel-k helm; do
        for sample in examples/$setup/allowed-*.json; do
            [ "$(jq -r '.object != null and (.subResource // "") == ""' "$sample")" = true ] || continue
            evaluate "examples/$setup/settings.yaml" "$(replay "$sample")"
            allowed
            [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
        done
    done
}

@test "audit: a replay never stamps, even where every requester acts for an owner" {
    settings='{"identities": [{"owners": ["ClusterExtension.cert-manager"], "users": ["*"]}], "stamp": true}'
    evaluate "$settings" "$(replay test_data/crd-create-cluster-owner.json '.metadata.labels = {}')"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
}

@test "audit: a stored object that breaks a rule is reported in the replay's form, by mark and rule" {
    local offer='.metadata.annotations["single-owner-policy.io/offer"]'
    evaluate examples/helm-accounts/settings.yaml "$(replay test_data/crd-create-namespaced-owner.json)"
    reported_by "label appID" "cluster scope"
    evaluate examples/app-id/settings.yaml "$(replay test_data/configmap-create-other-namespace.json)"
    reported_by "label appID" "namespace scope"
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-unknown-kind.json)"
    reported_by "label appID" "owner value"
    evaluate examples/olm-v1/settings.yaml "$(replay examples/olm-v1/denied-deployment-half-pair.json)"
    reported_by "label olm.operatorframework.io/owner-name" "owner value"
    evaluate examples/argo-cd/settings.yaml "$(replay examples/argo-cd/denied-configmap-of-helm-release-synced-by-app.json)"
    reported_by "annotation meta.helm.sh/release-name" "one owner"
    # a dangling, a misdirected and a stale offer; one made by the owner passes
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json ".metadata.labels = {} | $offer = \"appID: ClusterExtension.a -> ClusterExtension.b\"")"
    reported_by "annotation single-owner-policy.io/offer" offer
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.cert-manager -> Extension.team-a.b\"")"
    reported_by "annotation single-owner-policy.io/offer" offer
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.a -> ClusterExtension.b\"")"
    reported_by "annotation single-owner-policy.io/offer" offer
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.cert-manager -> ClusterExtension.b\"")"
    allowed
}

@test "audit: a derived object out of step with its controller is reported, through the host's lookup; in step it passes" {
    local sample=examples/camel-k/allowed-deployment-follows-integration-to-operator-2.json
    local session=examples/camel-k/sessions/allowed-deployment-follows-integration-to-operator-2.yml
    # The stored Deployment still carries operator-1; its Integration has moved to operator-2.
    jq '.object = .oldObject' "$sample" >"$BATS_TEST_TMPDIR/stored.json"
    evaluate examples/camel-k/settings.yaml "$(replay "$BATS_TEST_TMPDIR/stored.json")" "$session"
    reported_by "annotation camel.apache.org/operator.id" controller
    evaluate examples/camel-k/settings.yaml "$(replay "$sample")" "$session"
    allowed
}

@test "audit: an object whose owner is gone is reported as a leftover, through the host's lookup; with its owner there it passes" {
    local sample=examples/olm-v1/denied-crd-taken-over-by-second-install.json
    local session=$BATS_TEST_TMPDIR/audit.yml
    # The stored CRD still names ClusterExtension cert-manager, which was deleted; the audit
    # reads it through policy-server's cache.
    jq '.object = .oldObject' "$sample" >"$BATS_TEST_TMPDIR/stored.json"
    sed 's/disable_cache: true/disable_cache: false/' \
        examples/olm-v1/sessions/allowed-crd-left-by-a-deleted-extension-adopted-by-its-successor.yml >"$session"
    evaluate examples/olm-v1/settings.yaml "$(replay "$BATS_TEST_TMPDIR/stored.json")" "$session"
    reported_by "label olm.operatorframework.io/owner-name" leftover
    sed 's/disable_cache: true/disable_cache: false/' \
        examples/olm-v1/sessions/denied-crd-taken-over-by-second-install.yml >"$session"
    evaluate examples/olm-v1/settings.yaml "$(replay "$BATS_TEST_TMPDIR/stored.json")" "$session"
    allowed
}

@test "audit: only the scanner's request is a replay; a CREATE without a user name but with groups is judged in full" {
    local owned='{"camel.apache.org/operator.id": "operator-1"}'
    local file
    file=$(request camel.apache.org Integration shop CREATE null "$owned" "")
    # as the API server sends it: groups, requestResource
    jq '.userInfo = {username: "", groups: ["system:authenticated"]} | .requestResource = .resource' "$file" >"$BATS_TEST_TMPDIR/anonymous.json"
    evaluate "$CAMEL_IDENTITIES" "$BATS_TEST_TMPDIR/anonymous.json"
    denied_by "annotation camel.apache.org/operator.id" identity
    # and the same without groups, but with requestResource, which the scanner never sends
    jq '.userInfo = {} | .requestResource = .resource' "$file" >"$BATS_TEST_TMPDIR/no-groups.json"
    evaluate "$CAMEL_IDENTITIES" "$BATS_TEST_TMPDIR/no-groups.json"
    denied_by "annotation camel.apache.org/operator.id" identity
    # the scanner's own request of the same object passes
    evaluate "$CAMEL_IDENTITIES" "$(replay "$file")"
    allowed
}

@test "audit: the runner's --audit sends the scanner's request" {
    [[ $(basename "$KWCTL") == runner ]] || skip "needs the repo's runner (run --audit)"
    jq .object test_data/crd-create-namespaced-owner.json >"$BATS_TEST_TMPDIR/crd.json"
    run --separate-stderr "$KWCTL" run --audit --settings-path examples/helm-accounts/settings.yaml \
        --request-path "$BATS_TEST_TMPDIR/crd.json" "$POLICY"
    [ "$status" -eq 0 ]
    via_flag=$output
    evaluate examples/helm-accounts/settings.yaml "$(replay test_data/crd-create-namespaced-owner.json)"
    [ "$via_flag" = "$output" ]
    [ "$(jq -r .allowed <<<"$output")" = false ]
}
