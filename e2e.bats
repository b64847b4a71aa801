#!/usr/bin/env bats
# End-to-end tests: the compiled module, run the way Kubewarden runs it.
#
#   KWCTL=target/runner/runner POLICY=annotated-policy.wasm bats e2e.bats (make e2e-tests)
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e.bats               (make e2e-tests KWCTL=kwctl)
#
# Both print kwctl's AdmissionResponse; the assertions read it with jq.

bats_require_minimum_version 1.5.0

setup() {
    KWCTL=${KWCTL:-target/runner/runner}
    POLICY=${POLICY:-annotated-policy.wasm}
    CLUSTER_ONLY='a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner'
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

# The end of an owner-change denial: one_owner MARK OWNER RECEIVER
one_owner() {
    echo "an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=\"$1: $2 -> $3\", then the new owner moves the mark and removes the annotation"
}

allowed() {
    [ "$(jq -r .allowed <<<"$output")" = true ]
    [ "$(jq -r '.status.message // empty' <<<"$output")" = "" ]
}

denied() {
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = "${2:-403}" ]
    [ "$(jq -r .status.message <<<"$output")" = "$1" ]
}

settings_rejected() {
    echo "stdout: $output"
    echo "stderr: $stderr"
    [ "$status" -ne 0 ]
    [[ $stderr == *"Provided settings are not valid: "*"$1"* ]]
}

# --- transitions, the default appID shape (CRDs are cluster-scoped) ---------

@test "appID: an unchanged owner is allowed" {
    evaluate '{}' examples/app-id/allowed-crd-upgrade-keeps-owner.json
    allowed
}

@test "appID: a Helm hook overwriting a foreign CRD's owner is denied" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-crd-overwritten-by-helm-hook.json
    denied "label appID: owner change denied for CustomResourceDefinition prometheuses.monitoring.coreos.com from \"ClusterExtension.prometheus-operator\" to \"ClusterExtension.kube-prometheus-stack\": $(one_owner appID ClusterExtension.prometheus-operator ClusterExtension.kube-prometheus-stack)"
}

@test "appID: adoption is allowed by default and denied under adoption: Deny" {
    evaluate '{}' test_data/crd-update-adoption.json
    allowed
    evaluate '{"adoption": "Deny"}' test_data/crd-update-adoption.json
    denied 'label appID: adoption denied for CustomResourceDefinition foos.example.com from none to "ClusterExtension.first": adoption is set to Deny; create objects with their owner mark instead of marking existing ones'
}

@test "appID: orphaning is allowed by default and denied under orphaning: Deny" {
    evaluate '{}' test_data/crd-update-orphaning.json
    allowed
    evaluate '{"orphaning": "Deny"}' test_data/crd-update-orphaning.json
    denied 'label appID: orphaning denied for CustomResourceDefinition foos.example.com from "ClusterExtension.first" to none: orphaning is set to Deny; the owner mark stays until the object is deleted, or its owner hands it over with an offer'
}

@test "appID: an unchanged invalid owner that predates the policy is not re-judged" {
    evaluate '{}' test_data/job-update-legacy-owner.json
    allowed
}

@test "writes: Owner: a value from before the policy that names no owner freezes nothing" {
    local legacy='{"appID": "payments"}'
    evaluate examples/helm-accounts/settings.yaml "$(request "" ConfigMap team-a UPDATE "$legacy" "$legacy")"
    allowed
    evaluate examples/helm-accounts/settings.yaml "$(request "" ConfigMap team-a DELETE "$legacy" null)"
    allowed
    evaluate examples/helm-accounts/settings.yaml "$(request "" ConfigMap team-a UPDATE "$legacy" '{}')"
    allowed
    # a readable owner stays one
    local owned='{"appID": "ClusterExtension.cert-manager"}'
    evaluate examples/helm-accounts/settings.yaml "$(request "" ConfigMap team-a DELETE "$owned" null)"
    denied 'label appID: owner writes denied for DELETE of ConfigMap team-a/x, owned by "ClusterExtension.cert-manager": user kubernetes-admin acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)'
}

@test "appID: adoption by an owner out of scope is denied" {
    evaluate '{}' "$(request "" ConfigMap team-b UPDATE '{}' '{"appID": "Extension.team-a.argocd"}')"
    denied 'label appID: namespace scope denied for ConfigMap team-b/x from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner'
}

# --- scope ------------------------------------------------------------------

@test "scope: a ClusterExtension may own a CRD" {
    evaluate examples/app-id/settings.yaml examples/app-id/allowed-crd-create-by-cluster-extension.json
    allowed
}

@test "scope: an Extension may not own a CRD" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-crd-claimed-by-extension.json
    denied "label appID: cluster scope denied for CustomResourceDefinition applications.argoproj.io from none to \"Extension.team-a.argocd\": $CLUSTER_ONLY"
}

@test "scope: an Extension owns objects in its own namespace only" {
    evaluate examples/app-id/settings.yaml examples/app-id/allowed-configmap-in-own-namespace.json
    allowed
    evaluate examples/app-id/settings.yaml examples/app-id/denied-configmap-in-other-namespace.json
    denied 'label appID: namespace scope denied for ConfigMap team-b/argocd-cm from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner'
}

@test "scope: a Namespace is cluster-scoped whatever namespace the request carries" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-namespace-claimed-by-extension.json
    denied "label appID: cluster scope denied for Namespace team-a-tools from none to \"Extension.team-a.argocd\": $CLUSTER_ONLY"
    evaluate '{}' test_data/namespace-create-cluster-owner.json
    allowed
}

@test "scope: a value that names no configured kind is denied" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-job-unknown-owner-kind.json
    denied 'label appID: owner value denied for Job team-a/upgrade-crds from none to "HelmRelease.team-a.upgrade": "HelmRelease" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>'
}

# --- OLM v1's kind/name pair --------------------------------------------------

@test "olm-v1: a ClusterExtension adopts an unlabelled CRD" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-crd-adoption.json
    allowed
}

@test "olm-v1: a second install taking over a CRD is denied" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/denied-crd-taken-over-by-second-install.json
    denied "label olm.operatorframework.io/owner-name: owner change denied for CustomResourceDefinition certificates.cert-manager.io from \"ClusterExtension.cert-manager\" to \"ClusterExtension.cert-manager-v2\": $(one_owner olm.operatorframework.io/owner-name ClusterExtension.cert-manager ClusterExtension.cert-manager-v2)"
}

@test "olm-v1: half a kind/name pair is denied" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/denied-deployment-half-pair.json
    denied 'label olm.operatorframework.io/owner-name: owner value denied for Deployment cert-manager/cert-manager-webhook from none to name "cert-manager" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together'
}

@test "olm-v1: removing both labels orphans the object" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-deployment-orphaned.json
    allowed
}

# --- Camel K operator ids -------------------------------------------------------

@test "camel-k: an Integration moved between operators is denied" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-moved-between-operators.json
    denied "annotation camel.apache.org/operator.id: owner change denied for Integration shop/orders-route from \"operator-1\" to \"operator-2\": $(one_owner camel.apache.org/operator.id operator-1 operator-2)"
}

@test "camel-k: removing the operator id, which hands an Integration to the global operator, is denied; adoption is allowed" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-released-to-global-operator.json
    denied 'annotation camel.apache.org/operator.id: orphaning denied for Integration shop/orders-route from "operator-1" to none: orphaning is set to Deny; the owner mark stays until the object is deleted, or its owner hands it over with an offer'
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-adopted.json
    allowed
}

@test "camel-k: opaque ids are not scoped, but may not be empty" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-create.json
    allowed
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-empty-operator-id.json
    denied 'annotation camel.apache.org/operator.id: owner value denied for Integration shop/orders-route from none to "": the owner is empty; name an owner or remove it'
}

# The one check that each sample gets the verdict its name announces: allowed-… (no message, no
# warning but an exempt requester's),
# or denied-… by a rule (403, with its message, not refused as unreadable); …-stamped when the
# policy adds the owner mark (a patch), and only then. A sample whose object follows its
# controller runs with the session of its lookups (sessions/<sample>.yml): every exchange used,
# none other made; every other sample with a session of none, so that a lookup fails the run
# (under the repo's runner, which refuses a call its session does not hold).
@test "every sample request gets the verdict its name announces (examples/*/)" {
    local setups=0 samples session
    for setup in examples/*/; do
        setups=$((setups + 1))
        samples=0
        for sample in "$setup"*.json; do
            samples=$((samples + 1))
            session="${setup}sessions/$(basename "$sample" .json).yml"
            [ -f "$session" ] || session=test_data/sessions/no-lookups.yml
            evaluate "${setup}settings.yaml" "$sample" "$session"
            name=$(basename "$sample")
            verdict=$(jq -r 'if .allowed then "allowed" elif .status.code == 403 and (.status.message // "") != "" then "denied" else "refused" end' <<<"$output")
            [[ $name == "$verdict"-* ]]
            [[ $verdict == denied ]] || [ "$(jq -r '.status.message // empty' <<<"$output")" = "" ]
            # allowed with no warning, but for an exempt requester, whose bypass warns
            [[ $verdict == denied || $name == *-exempt-* ]] || [ "$(jq -r .warnings <<<"$output")" = null ]
            patched=$(jq -r 'if .patch then "-stamped" else "" end' <<<"$output")
            [[ $name == *"$patched".json && ($patched != "" || $name != *-stamped.json) ]]
        done
        [ "$samples" -ge 4 ]
    done
    [ "$setups" -ge 6 ]
}

# Host calls, counted per evaluation by the bench harness on the runner's host (wasm-bench): a
# sample the rules allow without its controller makes none; a derived one makes one lookup, of
# its controller.
@test "derived: a lookup only where the rules deny without it, one per derived sample (wasm-bench)" {
    local bench=${BENCH:-target/runner/wasm-bench}
    [ -x "$bench" ] || skip "needs wasm-bench (make wasm-bench), whose --json counts host calls"
    local counted=0 session calls
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
            [ "$calls" = '{"kubernetes/get_resource":1}' ] || { echo "$sample: $calls"; false; }
            counted=$((counted + 1))
        elif [[ $(basename "$sample") == allowed-* ]]; then
            [ "$calls" = '{}' ] || { echo "$sample: $calls"; false; }
        fi
    done
    [ "$counted" -ge 19 ]
}

# --- the cluster's own writes ------------------------------------------------------

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
        [[ $(jq -r .status.message <<<"$output") == *": owner change denied for Deployment team-a/web from "* ]]
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
            [[ $(jq -r .status.message <<<"$output") == *": one owner denied for Deployment team-a/web from none to "* ]]
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

# --- exemptions, subresources, DELETE ---------------------------------------------

@test "exemptions: an exempt user bypasses a denial with a warning and an audit annotation" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-clusterrole-takeover-by-exempt-admin.json
    allowed
    bypassed="exempt user break-glass-admin bypassed: label olm.operatorframework.io/owner-name: owner change denied for ClusterRole cert-manager-edit from \"ClusterExtension.cert-manager\" to \"ClusterExtension.cert-manager-v2\": $(one_owner olm.operatorframework.io/owner-name ClusterExtension.cert-manager ClusterExtension.cert-manager-v2)"
    [ "$(jq -r '.warnings[0]' <<<"$output")" = "$bypassed" ]
    [ "$(jq -r '.auditAnnotations["single-owner-policy-exemption"]' <<<"$output")" = "$bypassed" ]
}

@test "exemptions: an exempt group bypasses a denial" {
    evaluate '{"exemptions": {"groups": ["system:serviceaccounts"]}}' test_data/crd-update-owner-change.json
    allowed
    [[ $(jq -r '.warnings[0]' <<<"$output") == "user system:serviceaccount:kube-system:helm-hooks of exempt group system:serviceaccounts bypassed: label appID: owner change denied for"* ]]
}

@test "a status write that keeps the owner labels, and a DELETE without writes: Owner, are not judged" {
    evaluate '{"orphaning": "Deny"}' test_data/crd-update-status.json
    allowed
    evaluate '{"orphaning": "Deny"}' test_data/crd-delete.json
    allowed
}

# --- subresources: a status write can relabel Pods, Namespaces and other built-in kinds ------

# The status UPDATE test_data/FIXTURE, edited by a jq filter and sent by USER:
#   status_write FIXTURE FILTER [USER]
status_write() {
    local file="$BATS_TEST_TMPDIR/status-$RANDOM.json"
    jq --arg user "${3:-kubernetes-admin}" \
        "$GROUPS_JQ $2 | .userInfo = {username: \$user, groups: groups_of(\$user)}" \
        "test_data/$1" >"$file"
    echo "$file"
}

MOVE_TO_KPS='.object.metadata.labels.appID = "ClusterExtension.kube-prometheus-stack"'
ORPHAN='.object.metadata.labels |= del(.appID)'
ADOPT_BY_TEAM_A='.oldObject.metadata.labels |= del(.appID) | .object.metadata.labels.appID = "Extension.team-a.argocd"'

@test "subresource: an owner change through pods/status or namespaces/status is denied, naming it" {
    evaluate '{}' "$(status_write pod-status-update-by-kubelet.json "$MOVE_TO_KPS")"
    denied "label appID: owner change denied for Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status) from \"ClusterExtension.cert-manager\" to \"ClusterExtension.kube-prometheus-stack\": $(one_owner appID ClusterExtension.cert-manager ClusterExtension.kube-prometheus-stack)"
    evaluate '{}' "$(status_write namespace-status-update.json "$MOVE_TO_KPS")"
    denied "label appID: owner change denied for Namespace cert-manager (subresource status) from \"ClusterExtension.cert-manager\" to \"ClusterExtension.kube-prometheus-stack\": $(one_owner appID ClusterExtension.cert-manager ClusterExtension.kube-prometheus-stack)"
}

@test "subresource: orphaning through pods/status or namespaces/status is judged like on the object" {
    evaluate '{"orphaning": "Deny"}' "$(status_write pod-status-update-by-kubelet.json "$ORPHAN")"
    denied 'label appID: orphaning denied for Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status) from "ClusterExtension.cert-manager" to none: orphaning is set to Deny; the owner mark stays until the object is deleted, or its owner hands it over with an offer'
    evaluate examples/helm-accounts/settings.yaml "$(status_write namespace-status-update.json "$ORPHAN")"
    denied 'label appID: identity denied for Namespace cert-manager (subresource status) from "ClusterExtension.cert-manager" to none: user kubernetes-admin acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may remove it'
    evaluate examples/helm-accounts/settings.yaml "$(status_write namespace-status-update.json "$ORPHAN" system:serviceaccount:helm-releases:cert-manager)"
    allowed
}

@test "subresource: an out-of-scope adoption through pods/status or namespaces/status is denied" {
    evaluate '{}' "$(status_write pod-status-update-by-kubelet.json "$ADOPT_BY_TEAM_A")"
    denied 'label appID: namespace scope denied for Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status) from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in cert-manager; use an owner from cert-manager or a cluster-level owner'
    evaluate '{}' "$(status_write namespace-status-update.json "$ADOPT_BY_TEAM_A")"
    denied "label appID: cluster scope denied for Namespace cert-manager (subresource status) from none to \"Extension.team-a.argocd\": $CLUSTER_ONLY"
}

@test "subresource: status writes that keep the labels pass under every example's settings, writes: Owner included" {
    for setup in app-id olm-v1 camel-k helm; do
        for status in pod-status-update-by-kubelet namespace-status-update; do
            evaluate "examples/$setup/settings.yaml" "test_data/$status.json"
            allowed
        done
    done
    # The same write on the Pod itself is the owner's to make.
    jq 'del(.subResource, .requestSubResource)' test_data/pod-status-update-by-kubelet.json >"$BATS_TEST_TMPDIR/main.json"
    evaluate examples/helm-accounts/settings.yaml "$BATS_TEST_TMPDIR/main.json"
    denied 'label appID: owner writes denied for UPDATE of Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p, owned by "ClusterExtension.cert-manager": user system:node:node-1 acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)'
}

@test "subresource: a scale is judged from its target under writes: Owner, never from its Scale body" {
    # writes: Any judges no write; a Scale's labels are not the object's
    evaluate examples/app-id/settings.yaml test_data/deployment-scale-update.json
    allowed
    jq '.object.metadata.labels = {"appID": "ClusterExtension.other"}' test_data/deployment-scale-update.json >"$BATS_TEST_TMPDIR/scale.json"
    evaluate examples/app-id/settings.yaml "$BATS_TEST_TMPDIR/scale.json"
    allowed
    # writes: Owner reads the target (the samples' sessions answer it); a target the host will
    # not read is denied, saying what to grant
    evaluate examples/helm-accounts/settings.yaml test_data/deployment-scale-update.json
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [[ $(jq -r .status.message <<<"$output") == 'cannot judge the scale of Deployment cert-manager/cert-manager-webhook under writes: Owner: reading it failed ('*"); grant policy-server's service account get on deployments (see docs/deploying.md, \"Derived objects\")" ]]
}

@test "subresource: an offer made through a status write is judged like one on the object" {
    jq '.object.metadata.annotations["single-owner-policy.io/offer"] = "appID: ClusterExtension.cert-manager -> ClusterExtension.kube-prometheus-stack"' \
        test_data/pod-status-update-by-kubelet.json >"$BATS_TEST_TMPDIR/offer.json"
    evaluate examples/helm-accounts/settings.yaml "$BATS_TEST_TMPDIR/offer.json"
    denied 'label appID: owner writes denied for UPDATE of Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status), owned by "ClusterExtension.cert-manager": user system:node:node-1 acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)
annotation single-owner-policy.io/offer: offer denied for UPDATE of Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status), owned by "ClusterExtension.cert-manager": user system:node:node-1 acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may offer it or withdraw an offer of it'
}

@test "subresource: under writes: Owner, a status write that adds an owner mark needs the current owner's requester, and is a second owner" {
    settings='{"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}, {"annotation": "camel.apache.org/operator.id"}],
               "identities": [{"owners": ["operator-2"], "users": ["alice"]}], "writes": "Owner"}'
    evaluate "$settings" "$(status_write pod-status-update-by-kubelet.json '.object.metadata.annotations["camel.apache.org/operator.id"] = "operator-2"' alice)"
    denied 'label appID: owner writes denied for UPDATE of Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status), owned by "ClusterExtension.cert-manager": user alice acts for "operator-2", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)
annotation camel.apache.org/operator.id: one owner denied for Pod cert-manager/cert-manager-webhook-6d5f8b7c9-x2k4p (subresource status) from none to "operator-2": the object is owned by "ClusterExtension.cert-manager" under label appID, and an object has one owner across tools; its owner hands it over with an offer (single-owner-policy.io/offer="appID: ClusterExtension.cert-manager -> camel.apache.org/operator.id: operator-2")'
}

# --- settings errors ------------------------------------------------------------

@test "settings: an unknown field is named" {
    run --separate-stderr "$KWCTL" run --settings-json '{"ownerLabel": []}' --request-path test_data/crd-delete.json "$POLICY"
    settings_rejected 'unknown field `ownerLabel`, expected one of `ownerMarks`, `adoption`, `orphaning`, `exemptions`'
}

@test "settings: the settings renamed in 0.2.0 say what to write instead" {
    run --separate-stderr "$KWCTL" run --settings-json '{"ownerLabels": [{"key": "appID"}]}' --request-path test_data/crd-delete.json "$POLICY"
    settings_rejected 'ownerLabels was renamed to ownerMarks in 0.2.0; write each entry'"'"'s `key: K` as `label: K` (kindKey and the kinds stay), or `annotation: K` for an annotation'
    run --separate-stderr "$KWCTL" run --settings-json '{"transferAnnotation": "x/offer"}' --request-path test_data/crd-delete.json "$POLICY"
    settings_rejected 'transferAnnotation was renamed to offerAnnotation in 0.2.0; offers now read `<mark>: <from> -> <to>`'
}

@test "settings: each invalid value names its field" {
    while IFS='|' read -r settings message; do
        run --separate-stderr "$KWCTL" run --settings-json "$settings" --request-path test_data/crd-delete.json "$POLICY"
        settings_rejected "$message"
    done <<'EOF'
{"ownerMarks": []}|ownerMarks: list at least one owner mark
{"ownerMarks": [{"label": "app ID"}]}|ownerMarks[0].label: "app ID" is not a valid label key
{"ownerMarks": [{"annotation": "a"}, {"annotation": "a"}]}|ownerMarks[1].annotation: annotation "a" is already guarded by another mark
{"ownerMarks": [{"label": "appID"}, {"label": "appID"}]}|ownerMarks[1].label: label "appID" is already guarded by another mark; each key may appear once, as a label or an annotation
{"ownerMarks": [{"label": "a", "clusterKinds": ["X"], "namespacedKinds": ["X"]}]}|ownerMarks[0]: kind "X" is listed in both clusterKinds and namespacedKinds
{"ownerMarks": [{"label": "a", "clusterKinds": ["Cluster.Extension"]}]}|ownerMarks[0].clusterKinds[0]: "Cluster.Extension" is not a valid kind name
{"ownerMarks": [{"label": "a", "kindKey": "b"}]}|ownerMarks[0].kindKey: set without clusterKinds or namespacedKinds
{"ownerMarks": [{"label": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}]}|ownerMarks[0].format: ArgoCDTrackingID is read from an annotation
{"ownerMarks": [{"annotation": "h/name", "namespaceKey": "h/namespace", "sameOwnerAs": ["f/name"]}]}|ownerMarks[0].sameOwnerAs[0]: "f/name" is not the key of another owner mark
{"adoption": "allow"}|adoption: unknown variant `allow`, expected `Allow` or `Deny`
{"trustedWriters": [{"users": ["system:serviceaccount:kube-system:*"], "resources": ["*"], "operations": ["DELETE"]}]}|trustedWriters[0].users[0]: "system:serviceaccount:kube-system:*" reaches any service account of kube-system
{"identities": [{"owners": ["ClusterExtension.a"], "users": ["a"], "access": "Read"}]}|identities[0].access: unknown variant `Read`, expected one of `Own`, `Write`, `Derive`, `InjectCA`
{"parentKinds": [{"apiVersion": "camel.apache.org/v1", "kind": "Integration"}, {"apiVersion": "camel.apache.org/v2", "kind": "Integration"}]}|parentKinds[1]: Integration of group "camel.apache.org" is listed already; list each kind once
{"parentKinds": [{"apiVersion": "camel.apache.org/v1"}]}|parentKinds[0]: missing field `kind`
EOF
}

@test "trustedWriters: an added writer is trusted with its resources and operations only" {
    local settings='{"identities": [{"owners": ["ClusterExtension.*"], "users": ["installer"]}], "writes": "Owner",
        "trustedWriters": [{"users": ["system:k3s-controller"], "resources": ["configmaps"], "operations": ["DELETE"]}]}'
    local owned='{"appID": "ClusterExtension.a"}'
    evaluate "$settings" "$(request "" ConfigMap team-a DELETE "$owned" null system:k3s-controller)"
    allowed
    [ "$(jq -r '.warnings' <<<"$output")" = null ]
    evaluate "$settings" "$(request "" ConfigMap team-a UPDATE "$owned" '{"appID": "ClusterExtension.b"}' system:k3s-controller)"
    denied 'label appID: owner change denied for ConfigMap team-a/x from "ClusterExtension.a" to "ClusterExtension.b": '"$(one_owner appID ClusterExtension.a ClusterExtension.b)"
    evaluate "$settings" "$(request "" Secret team-a DELETE "$owned" null system:k3s-controller)"
    denied 'label appID: owner writes denied for DELETE of Secret team-a/x, owned by "ClusterExtension.a": user system:k3s-controller acts for none, not for "ClusterExtension.a"; only a requester acting for an owner may update or delete it (writes: Owner)'
}

@test "settings: a YAML settings file is read like JSON" {
    evaluate examples/olm-v1/settings.yaml test_data/deployment-create-olm-owner.json
    allowed
}

# --- malformed requests -------------------------------------------------------------

@test "malformed: a label value that is not a string is rejected with code 400" {
    evaluate '{}' "$(request "" ConfigMap team-a CREATE null '{"appID": 5}')"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = 400 ]
    [[ $(jq -r .status.message <<<"$output") == 'cannot read the admission request: request.object.metadata.labels.appID: invalid type: integer `5`, expected a string at line '* ]]
}

@test "malformed: labels given as an array are rejected with code 400" {
    evaluate '{}' "$(request "" ConfigMap team-a CREATE null '["appID"]')"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [ "$(jq -r .status.code <<<"$output")" = 400 ]
    [[ $(jq -r .status.message <<<"$output") == 'cannot read the admission request: request.object.metadata.labels: invalid type: sequence, expected a map at line '* ]]
}

@test "malformed: an UPDATE without oldObject is rejected with code 400" {
    evaluate '{}' "$(request "" ConfigMap team-a UPDATE null '{}')"
    denied 'cannot read the admission request: an UPDATE request needs `object` and `oldObject`' 400
}

# --- identities (examples/helm and examples/olm-v1, and inline settings) -------------

CAMEL_IDENTITIES='{"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}], "identities": [
    {"owners": ["operator-1"], "users": ["system:serviceaccount:camel-k:camel-k-operator"]},
    {"owners": ["operator-2"], "users": ["system:serviceaccount:camel-k-next:camel-k-operator"]}]}'

@test "identity: the two-step takeover (orphan, then adopt) is denied at both steps" {
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/denied-crd-orphaned-by-admin.json
    denied 'label appID: identity denied for CustomResourceDefinition certificates.cert-manager.io from "ClusterExtension.cert-manager" to none: user kubernetes-admin only writes for "ClusterExtension.cert-manager" (access: Write); only a requester acting for an owner may remove it'
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" UPDATE '{}' '{"appID": "ClusterExtension.cert-manager"}' system:serviceaccount:helm-releases:kube-prometheus-stack)"
    denied 'label appID: identity denied for CustomResourceDefinition x from none to "ClusterExtension.cert-manager": user system:serviceaccount:helm-releases:kube-prometheus-stack acts for "ClusterExtension.kube-prometheus-stack", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may set it'
}

@test "identity: a release may not label something as another release's" {
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/denied-crd-labelled-for-other-release.json
    denied 'label appID: identity denied for CustomResourceDefinition prometheuses.monitoring.coreos.com from none to "ClusterExtension.kube-prometheus-stack": user system:serviceaccount:helm-releases:cert-manager acts for "ClusterExtension.cert-manager", not for "ClusterExtension.kube-prometheus-stack"; only a requester acting for an owner may set it'
}

@test "writes: Owner: a hook of release B may not patch or delete release A's CRD or Job" {
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/denied-crd-patched-by-other-release-hook.json
    denied 'label appID: owner writes denied for UPDATE of CustomResourceDefinition certificates.cert-manager.io, owned by "ClusterExtension.cert-manager": user system:serviceaccount:helm-releases:kube-prometheus-stack acts for "ClusterExtension.kube-prometheus-stack", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may write CA bundles into it (writes: Owner, or access: InjectCA)'
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/denied-job-deleted-by-other-release-hook.json
    denied 'label appID: owner writes denied for DELETE of Job cert-manager/upgrade-crds, owned by "ClusterExtension.cert-manager": user system:serviceaccount:helm-releases:kube-prometheus-stack acts for "ClusterExtension.kube-prometheus-stack", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)'
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/allowed-job-deleted-by-own-release-hook.json
    allowed
    evaluate examples/helm-accounts/settings.yaml examples/helm-accounts/allowed-crd-upgrade-by-own-release.json
    allowed
}

@test "writes: Any keeps label-only guarding: foreign updates and deletes are allowed" {
    evaluate "$CAMEL_IDENTITIES" "$(request camel.apache.org Integration shop DELETE '{"camel.apache.org/operator.id": "operator-1"}' null system:serviceaccount:camel-k-next:camel-k-operator)"
    allowed
    evaluate "$CAMEL_IDENTITIES" "$(request camel.apache.org Integration shop UPDATE '{"camel.apache.org/operator.id": "operator-1"}' '{"camel.apache.org/operator.id": "operator-1"}' kubernetes-admin)"
    allowed
}

@test "identity: OLM v1's one controller acts for every ClusterExtension; others may not patch" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-crd-adoption.json
    allowed
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/denied-crd-labelled-by-a-person.json
    denied 'label olm.operatorframework.io/owner-name: owner writes denied for UPDATE of CustomResourceDefinition certificates.cert-manager.io, owned by "ClusterExtension.cert-manager": user alice acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)'
}

@test "identity: Camel K operators act for their own operator id only" {
    evaluate "$CAMEL_IDENTITIES" "$(request camel.apache.org Integration shop CREATE null '{"camel.apache.org/operator.id": "operator-1"}' system:serviceaccount:camel-k:camel-k-operator)"
    allowed
    evaluate "$CAMEL_IDENTITIES" "$(request camel.apache.org Integration shop CREATE null '{"camel.apache.org/operator.id": "operator-2"}' system:serviceaccount:camel-k:camel-k-operator)"
    denied 'annotation camel.apache.org/operator.id: identity denied for Integration shop/x from none to "operator-2": user system:serviceaccount:camel-k:camel-k-operator acts for "operator-1", not for "operator-2"; only a requester acting for an owner may set it'
}

@test "identity: templated bindings act for the owners of their own service account" {
    settings='{"identities": [{"owners": ["Extension.${namespace}.*"], "users": ["system:serviceaccount:*:installer"]}]}'
    evaluate "$settings" "$(request "" ConfigMap team-a CREATE null '{"appID": "Extension.team-a.argocd"}' system:serviceaccount:team-a:installer)"
    allowed
    evaluate "$settings" "$(request "" ConfigMap team-a CREATE null '{"appID": "Extension.team-a.argocd"}' system:serviceaccount:team-b:installer)"
    denied 'label appID: identity denied for ConfigMap team-a/x from none to "Extension.team-a.argocd": user system:serviceaccount:team-b:installer acts for "Extension.team-b.*", not for "Extension.team-a.argocd"; only a requester acting for an owner may set it'
}

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
    [ "$(jq -r .allowed <<<"$output")" = false ]
    # An exempt requester is warned about once, by the judging twin.
    jq '.userInfo.username = "break-glass-admin"' examples/helm-accounts/denied-crd-labelled-for-other-release.json >"$BATS_TEST_TMPDIR/exempt.json"
    evaluate "$STAMPING" "$BATS_TEST_TMPDIR/exempt.json"
    [ "$(jq -r .warnings <<<"$output")" = null ]
    evaluate "$JUDGING" "$BATS_TEST_TMPDIR/exempt.json"
    [ "$(jq -r '.warnings | length' <<<"$output")" = 1 ]
    # A mutating webhook called after the stamping one that moves the label is caught.
    jq '.object.metadata.labels.appID = "ClusterExtension.kube-prometheus-stack"' "$stamped" >"$BATS_TEST_TMPDIR/rewritten.json"
    evaluate "$JUDGING" "$BATS_TEST_TMPDIR/rewritten.json"
    [ "$(jq -r .allowed <<<"$output")" = false ]
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

@test "identity: a user named like a wildcard service account acts for no templated owner" {
    # A client certificate's CN or a proxy's user name can read system:serviceaccount:…:*; no
    # service account is named so, and a filled-in template value is never a wildcard.
    impostor='system:serviceaccount:helm-releases:*'
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" UPDATE '{"appID": "ClusterExtension.cert-manager"}' '{}' "$impostor")"
    denied 'label appID: identity denied for CustomResourceDefinition x from "ClusterExtension.cert-manager" to none: user system:serviceaccount:helm-releases:* acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may remove it'
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" UPDATE '{}' '{"appID": "ClusterExtension.cert-manager"}' "$impostor")"
    denied 'label appID: identity denied for CustomResourceDefinition x from none to "ClusterExtension.cert-manager": user system:serviceaccount:helm-releases:* acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may set it'
    evaluate examples/helm-accounts/settings.yaml "$(request apiextensions.k8s.io CustomResourceDefinition "" UPDATE '{"appID": "ClusterExtension.cert-manager"}' '{"appID": "ClusterExtension.cert-manager"}' "$impostor")"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [[ $(jq -r .status.message <<<"$output") == 'label appID: owner writes denied for UPDATE of CustomResourceDefinition x'* ]]
}

@test "exemptions override identity rules, with a warning; the garbage collector needs none" {
    local break_glass="$BATS_TEST_TMPDIR/break-glass.json"
    jq '.userInfo = {username: "break-glass-admin", groups: ["system:authenticated"]}' \
        examples/olm-v1/denied-crd-labelled-by-a-person.json >"$break_glass"
    evaluate examples/olm-v1/settings.yaml "$break_glass"
    allowed
    [[ $(jq -r '.warnings[0]' <<<"$output") == 'exempt user break-glass-admin bypassed: label olm.operatorframework.io/owner-name: owner writes denied for UPDATE of CustomResourceDefinition'* ]]
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-deployment-deleted-by-garbage-collector.json
    allowed
    [ "$(jq -r '.warnings' <<<"$output")" = null ]
}

@test "settings: identity settings errors name their field" {
    while IFS='|' read -r settings message; do
        run --separate-stderr "$KWCTL" run --settings-json "$settings" --request-path test_data/crd-delete.json "$POLICY"
        settings_rejected "$message"
    done <<'EOF'
{"writes": "Owner"}|writes: Owner needs identities
{"stamp": true}|stamp: true needs identities
{"identities": [{"owners": ["ClusterExtension.a"]}]}|identities[0]: binds no users or groups
{"identities": [{"owners": ["Extension.${ns}.*"], "users": ["a"]}]}|identities[0].owners[0]: "Extension.${ns}.*" uses the unknown template ${ns}
{"identities": [{"owners": ["Operator.a"], "users": ["a"]}]}|identities[0].owners[0]: "Operator.a" is no valid owner for any of the ownerMarks
{"identities": [{"owners": ["Extension.${namespace}*"], "users": ["system:serviceaccount:*:installer"]}]}|identities[0].owners[0]: "Extension.${namespace}*" lets ${namespace} stand for a longer or another namespace: the * beside it, with only namespace characters between, matches them too; separate the two with a character a namespace cannot hold, or drop the *, as in "Extension.${namespace}.*"
{"identities": [{"owners": ["Extension.*${namespace}.*"], "users": ["system:serviceaccount:*:installer"]}]}|identities[0].owners[0]: "Extension.*${namespace}.*" lets ${namespace} stand for a longer or another namespace
EOF
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

@test "handoff: operator-1 offers, operator-2 accepts: the Integration is never unowned" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-handoff-1-offered-to-operator-2.json
    allowed
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-handoff-2-accepted-by-operator-2.json
    allowed
    # The samples are one history: what the offer stored is what the accepting update starts
    # from, and no step stores the Integration without an owner.
    offered=examples/camel-k/allowed-integration-handoff-1-offered-to-operator-2.json
    accepted=examples/camel-k/allowed-integration-handoff-2-accepted-by-operator-2.json
    [ "$(jq -c .object.metadata "$offered")" = "$(jq -c .oldObject.metadata "$accepted")" ]
    [ "$(jq -r '.object.metadata.annotations["camel.apache.org/operator.id"]' "$offered")" = operator-1 ]
    [ "$(jq -r '.object.metadata.annotations["camel.apache.org/operator.id"]' "$accepted")" = operator-2 ]
}

@test "handoff: only the offered owner may take the object, and only by consuming the offer" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-handoff-taken-by-another-operator.json
    denied 'annotation camel.apache.org/operator.id: owner change denied for Integration shop/orders-route from "operator-1" to "operator-3": an object has one owner; the pending offer (single-owner-policy.io/offer) is "camel.apache.org/operator.id: operator-1 -> operator-2", which does not hand it to "operator-3"'
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-handoff-offer-not-consumed.json
    denied 'annotation single-owner-policy.io/offer: offer denied for Integration shop/orders-route from "operator-1" to "operator-2": an update that changes or removes the owner consumes the offer; remove the annotation single-owner-policy.io/offer in the same update'
}

@test "handoff: without an offer, an owner change names the offer annotation" {
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_2" operator-1 "" operator-2 "")"
    denied "annotation camel.apache.org/operator.id: owner change denied for Integration shop/orders-route from \"operator-1\" to \"operator-2\": $(one_owner camel.apache.org/operator.id operator-1 operator-2)"
}

@test "handoff: with identities, only the owner offers or withdraws, only the receiver accepts" {
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_1" operator-1 "" operator-1 operator-2)"
    allowed
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_2" operator-1 "" operator-1 operator-2)"
    denied 'annotation single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/orders-route, owned by "operator-1": user system:serviceaccount:camel-k-next:camel-k-operator acts for "operator-2", not for "operator-1"; only a requester acting for an owner may offer it or withdraw an offer of it'
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_2" operator-1 operator-2 operator-1 "")"
    denied 'annotation single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/orders-route, owned by "operator-1": user system:serviceaccount:camel-k-next:camel-k-operator acts for "operator-2", not for "operator-1"; only a requester acting for an owner may withdraw or change an offer of it'
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_1" operator-1 operator-2 operator-1 "")"
    allowed
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_2" operator-1 operator-2 operator-2 "")"
    allowed
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_1" operator-1 operator-2 operator-2 "")"
    denied 'annotation camel.apache.org/operator.id: identity denied for Integration shop/orders-route from "operator-1" to "operator-2": user system:serviceaccount:camel-k:camel-k-operator acts for "operator-1", not for "operator-2"; only a requester acting for an owner may set it'
}

@test "handoff: a replayed offer cannot move the object back" {
    evaluate "$CAMEL_IDENTITIES" "$(handoff "$OPERATOR_1" operator-2 "" operator-1 operator-2)"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    [[ $(jq -r .status.message <<<"$output") == 'annotation camel.apache.org/operator.id: owner change denied for Integration shop/orders-route from "operator-2" to "operator-1": an object has one owner; '* ]]
}

@test "handoff: a CRD cannot be offered to a namespaced kind" {
    file="$BATS_TEST_TMPDIR/crd-offer.json"
    jq '.oldObject.metadata.labels = {"appID": "ClusterExtension.first"} | .object.metadata.labels = {"appID": "ClusterExtension.first"}
        | .object.metadata.annotations["single-owner-policy.io/offer"] = "appID: ClusterExtension.first -> Extension.team-a.first"' \
        test_data/crd-update-adoption.json >"$file"
    evaluate '{}' "$file"
    denied 'annotation single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition foos.example.com, owned by "ClusterExtension.first": the offer names "Extension.team-a.first", which cannot own the object: a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner'
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
    local withdrawn='annotation single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by "operator-1": user x acts for "ClusterExtension.x", not for "operator-1"; only a requester acting for an owner may withdraw or change an offer of it'
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$offered" "$moved" x)"
    denied "$withdrawn"
    # deployed mutating, the policy does not remove it for them either
    evaluate "$(jq -c '. + {stamp: true}' <<<"$settings")" "$(request camel.apache.org Integration shop UPDATE "$offered" "$(jq -c '. + {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}' <<<"$moved")" x)"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
    # the owner withdraws it
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$offered" '{"camel.apache.org/operator.id": "operator-1"}' operator-1)"
    allowed
}

@test "handoff with two marks: one mark's owner offers its object while another mark is owned" {
    local settings='{"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}, {"label": "appID", "clusterKinds": ["ClusterExtension"]}],
        "identities": [{"owners": ["operator-1"], "users": ["operator-1"]}, {"owners": ["ClusterExtension.x"], "users": ["x"]}]}'
    local owned='{"camel.apache.org/operator.id": "operator-1", "appID": "ClusterExtension.x"}'
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$owned" "$(jq -c '. + {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}' <<<"$owned")" operator-1)"
    allowed
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$owned" "$(jq -c '. + {"single-owner-policy.io/offer": "appID: ClusterExtension.x -> ClusterExtension.y"}' <<<"$owned")" operator-1)"
    denied 'annotation single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by "ClusterExtension.x": user operator-1 acts for "operator-1", not for "ClusterExtension.x"; only a requester acting for an owner may offer it or withdraw an offer of it'
}

@test "handoff: an offer does not outlive its owner, whoever moved the object (an exempt user, a trusted writer)" {
    local settings
    settings=$(jq -c '. + {exemptions: {users: ["break-glass-admin"]},
        trustedWriters: [{users: ["system:k3s-controller"], resources: ["integrations.camel.apache.org"], operations: ["UPDATE"]}]}' <<<"$CAMEL_IDENTITIES")
    # operator-1 offered the Integration to operator-2; someone else moved it to operator-3, offer left
    local offered='{"camel.apache.org/operator.id": "operator-1", "single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}'
    local moved='{"camel.apache.org/operator.id": "operator-3", "single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}'
    local taken='{"camel.apache.org/operator.id": "operator-2"}'
    for mover in break-glass-admin system:k3s-controller; do
        evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$offered" "$moved" "$mover")"
        [ "$(jq -r .allowed <<<"$output")" = true ]
    done
    # operator-2 may not take it from operator-3, who never offered it
    evaluate "$settings" "$(request camel.apache.org Integration shop UPDATE "$moved" "$taken" "$OPERATOR_2")"
    denied 'annotation camel.apache.org/operator.id: owner change denied for Integration shop/x from "operator-3" to "operator-2": an object has one owner; the pending offer (single-owner-policy.io/offer) is "camel.apache.org/operator.id: operator-1 -> operator-2", which does not hand it to "operator-2"'
    # the audit reports the stale offer
    evaluate "$settings" "$(replay "$(request camel.apache.org Integration shop CREATE null "$moved")")"
    denied 'annotation single-owner-policy.io/offer: offer: Integration shop/x is owned by "operator-3": the offer is made by "operator-1", but the object is owned by "operator-3"; only the owner offers it'
}

@test "audit: only the scanner's request is a replay; a CREATE without a user name but with groups is judged in full" {
    local owned='{"camel.apache.org/operator.id": "operator-1"}'
    local file
    file=$(request camel.apache.org Integration shop CREATE null "$owned" "")
    # as the API server sends it: groups, requestResource
    jq '.userInfo = {username: "", groups: ["system:authenticated"]} | .requestResource = .resource' "$file" >"$BATS_TEST_TMPDIR/anonymous.json"
    evaluate "$CAMEL_IDENTITIES" "$BATS_TEST_TMPDIR/anonymous.json"
    denied 'annotation camel.apache.org/operator.id: identity denied for Integration shop/x from none to "operator-1": user "" acts for none, not for "operator-1"; only a requester acting for an owner may set it'
    # and the same without groups, but with requestResource, which the scanner never sends
    jq '.userInfo = {} | .requestResource = .resource' "$file" >"$BATS_TEST_TMPDIR/no-groups.json"
    evaluate "$CAMEL_IDENTITIES" "$BATS_TEST_TMPDIR/no-groups.json"
    [ "$(jq -r .allowed <<<"$output")" = false ]
    # the scanner's own request of the same object passes
    evaluate "$CAMEL_IDENTITIES" "$(replay "$file")"
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
    denied 'label appID: namespace scope denied for ConfigMap team-a/argocd-cm from none to "Extension.team-b.x": Extension owners only own objects in their own namespace (team-b), not in team-a; use an owner from team-a or a cluster-level owner'
}

@test "hostile: a 10 MiB object is judged like a small one" {
    evaluate '{}' "$HOSTILE/ten-mib-object.json"
    allowed
    evaluate '{}' "$(jq '.object.metadata.labels.appID = "Operator.x"' "$HOSTILE/ten-mib-object.json" >"$BATS_TEST_TMPDIR/m.json"; echo "$BATS_TEST_TMPDIR/m.json")"
    denied 'label appID: owner value denied for ConfigMap team-a/argocd-cm from none to "Operator.x": "Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>'
}

@test "settings: wrong types and contradictions name the field and the fix" {
    while IFS='|' read -r settings message; do
        run --separate-stderr "$KWCTL" run --settings-json "$settings" --request-path test_data/crd-delete.json "$POLICY"
        settings_rejected "$message"
    done <<'EOF'
{"ownerMarks": "appID"}|ownerMarks: invalid type: string "appID", expected a sequence
{"ownerMarks": [{"label": 1}]}|ownerMarks[0].label: invalid type: integer `1`, expected a string
{"ownerMarks": [{"label": "a", "clusterKinds": "X"}]}|ownerMarks[0].clusterKinds: invalid type: string "X", expected a sequence
{"exemptions": []}|exemptions: must be an object with users and groups, not an array
{"stamp": "yes"}|stamp: invalid type: string "yes", expected a boolean
{"writes": "owner"}|writes: unknown variant `owner`, expected `Any` or `Owner`
{"offerAnnotation": "offer to"}|offerAnnotation: "offer to" is not a valid annotation key
{"identities": [{"owners": ["Extension.${namespace}.*"], "users": ["alice"]}]}|identities[0]: every owner uses ${namespace} or ${name}, which only service accounts have, but no user can be one
{"identities": [{"owners": ["Cluster Extension/a"], "users": ["a"]}]}|identities[0].owners[0]: "Cluster Extension/a" is not an owner pattern
EOF
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

@test "audit: a derived object out of step with its controller is reported, in step it passes" {
    local sample=examples/camel-k/allowed-deployment-follows-integration-to-operator-2.json
    local session=examples/camel-k/sessions/allowed-deployment-follows-integration-to-operator-2.yml
    # The stored Deployment still carries operator-1; its Integration has moved to operator-2.
    jq '.object = .oldObject' "$sample" >"$BATS_TEST_TMPDIR/stored.json"
    evaluate examples/camel-k/settings.yaml "$(replay "$BATS_TEST_TMPDIR/stored.json")" "$session"
    denied 'annotation camel.apache.org/operator.id: controller: Deployment shop/orders-route is owned by "operator-1": out of step with its controller: its controller Integration shop/orders-route carries "operator-2"'
    evaluate examples/camel-k/settings.yaml "$(replay "$sample")" "$session"
    allowed
}

@test "audit: a replay never stamps, even where every requester acts for an owner" {
    settings='{"identities": [{"owners": ["ClusterExtension.cert-manager"], "users": ["*"]}], "stamp": true}'
    evaluate "$settings" "$(replay test_data/crd-create-cluster-owner.json '.metadata.labels = {}')"
    allowed
    [ "$(jq -r '.patch // empty' <<<"$output")" = "" ]
}

@test "audit: an owner out of scope, an invalid owner and half a pair fail, naming the owner and the rule" {
    evaluate examples/helm-accounts/settings.yaml "$(replay test_data/crd-create-namespaced-owner.json)"
    denied "label appID: cluster scope: CustomResourceDefinition applications.argoproj.io is owned by \"Extension.team-a.argocd\": $CLUSTER_ONLY"
    evaluate examples/app-id/settings.yaml "$(replay test_data/configmap-create-other-namespace.json)"
    denied 'label appID: namespace scope: ConfigMap team-b/argocd-cm is owned by "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner'
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-unknown-kind.json)"
    denied 'label appID: owner value: CustomResourceDefinition applications.argoproj.io is owned by "Operator.argocd": "Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>'
    evaluate examples/olm-v1/settings.yaml "$(replay examples/olm-v1/denied-deployment-half-pair.json)"
    denied 'label olm.operatorframework.io/owner-name: owner value: Deployment cert-manager/cert-manager-webhook is owned by name "cert-manager" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together'
}

@test "audit: a dangling, invalid or stale offer fails" {
    local offer='.metadata.annotations["single-owner-policy.io/offer"]'
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json ".metadata.labels = {} | $offer = \"appID: ClusterExtension.a -> ClusterExtension.b\"")"
    denied 'annotation single-owner-policy.io/offer: offer: CustomResourceDefinition certificates.cert-manager.io is owned by none: the object has no owner under label appID to hand over'
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.cert-manager -> Extension.team-a.b\"")"
    denied "annotation single-owner-policy.io/offer: offer: CustomResourceDefinition certificates.cert-manager.io is owned by \"ClusterExtension.cert-manager\": the offer names \"Extension.team-a.b\", which cannot own the object: $CLUSTER_ONLY"
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.a -> ClusterExtension.b\"")"
    denied 'annotation single-owner-policy.io/offer: offer: CustomResourceDefinition certificates.cert-manager.io is owned by "ClusterExtension.cert-manager": the offer is made by "ClusterExtension.a", but the object is owned by "ClusterExtension.cert-manager"; only the owner offers it'
    evaluate examples/app-id/settings.yaml "$(replay test_data/crd-create-cluster-owner.json "$offer = \"appID: ClusterExtension.cert-manager -> ClusterExtension.b\"")"
    allowed
}

@test "audit: an object owned under two marks of different tools fails" {
    evaluate examples/argo-cd/settings.yaml "$(replay examples/argo-cd/denied-configmap-of-helm-release-synced-by-app.json)"
    denied 'annotation meta.helm.sh/release-name: one owner: ConfigMap shop/web-config is owned by "shop/web": the object is owned by "guestbook" under annotation argocd.argoproj.io/tracking-id, and an object has one owner across tools; its owner hands it over with an offer (single-owner-policy.io/offer="argocd.argoproj.io/tracking-id: guestbook -> meta.helm.sh/release-name: shop/web")'
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
