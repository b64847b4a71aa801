#!/usr/bin/env bats
# End-to-end tests: the compiled module, run the way Kubewarden runs it.
#
#   KWCTL=target/runner/runner POLICY=policy.wasm bats e2e.bats          (make e2e-tests)
#   KWCTL=kwctl POLICY=annotated-policy.wasm bats e2e.bats               (make e2e-tests KWCTL=kwctl)
#
# Both print kwctl's AdmissionResponse; the assertions read it with jq.

bats_require_minimum_version 1.5.0

setup() {
    KWCTL=${KWCTL:-target/runner/runner}
    POLICY=${POLICY:-policy.wasm}
    ONE_OWNER='an object has one owner; remove the owner label first, then let the new owner adopt the object'
    ONE_OWNER_PAIR='an object has one owner; remove both owner labels first, then let the new owner adopt the object'
    CLUSTER_ONLY='a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner'
}

# evaluate SETTINGS REQUEST: SETTINGS is a file, or inline JSON when it starts with "{".
evaluate() {
    local settings=(--settings-path "$1")
    [[ $1 != "{"* ]] || settings=(--settings-json "$1")
    run --separate-stderr "$KWCTL" run "${settings[@]}" --request-path "$2" "$POLICY"
    echo "stdout: $output"
    echo "stderr: $stderr"
    [ "$status" -eq 0 ]
}

# A request whose labels are given as JSON: kind_request GROUP KIND NAMESPACE OPERATION OLD NEW
request() {
    local file="$BATS_TEST_TMPDIR/request.json"
    jq -n --arg group "$1" --arg kind "$2" --arg ns "$3" --arg op "$4" \
        --argjson old "$5" --argjson new "$6" '{
        uid: "e2e", kind: {group: $group, version: "v1", kind: $kind},
        resource: {group: $group, version: "v1", resource: ($kind | ascii_downcase + "s")},
        name: "x", namespace: $ns, operation: $op,
        userInfo: {username: "kubernetes-admin", groups: ["system:authenticated"]},
        object: {metadata: {name: "x", labels: $new}},
        oldObject: (if $old == null then null else {metadata: {name: "x", labels: $old}} end)
    }' >"$file"
    echo "$file"
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

# --- transitions, seed's appID shape (CRDs are cluster-scoped) ---------------

@test "appID: an unchanged owner is allowed" {
    evaluate '{}' examples/app-id/allowed-crd-upgrade-keeps-owner.json
    allowed
}

@test "appID: a Helm hook overwriting a foreign CRD's owner is denied" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-crd-overwritten-by-helm-hook.json
    denied "appID: owner change denied for CustomResourceDefinition prometheuses.monitoring.coreos.com from \"ClusterExtension.prometheus-operator\" to \"ClusterExtension.kube-prometheus-stack\": $ONE_OWNER"
}

@test "appID: adoption is allowed by default and denied under adoption: Deny" {
    evaluate '{}' test_data/crd-update-adoption.json
    allowed
    evaluate '{"adoption": "Deny"}' test_data/crd-update-adoption.json
    denied 'appID: adoption denied for CustomResourceDefinition foos.example.com from none to "ClusterExtension.first": adoption is set to Deny; create objects with their owner label instead of labelling existing ones'
}

@test "appID: orphaning is allowed by default and denied under orphaning: Deny" {
    evaluate '{}' test_data/crd-update-orphaning.json
    allowed
    evaluate '{"orphaning": "Deny"}' test_data/crd-update-orphaning.json
    denied 'appID: orphaning denied for CustomResourceDefinition foos.example.com from "ClusterExtension.first" to none: orphaning is set to Deny; the owner label stays until the object is deleted'
}

@test "appID: an unchanged invalid owner that predates the policy is not re-judged" {
    evaluate '{}' test_data/job-update-legacy-owner.json
    allowed
}

@test "appID: adoption by an owner out of scope is denied" {
    evaluate '{}' "$(request "" ConfigMap team-b UPDATE '{}' '{"appID": "Extension.team-a.argocd"}')"
    denied 'appID: namespace scope denied for ConfigMap team-b/x from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner'
}

# --- scope ------------------------------------------------------------------

@test "scope: a ClusterExtension may own a CRD" {
    evaluate examples/app-id/settings.yaml examples/app-id/allowed-crd-create-by-cluster-extension.json
    allowed
}

@test "scope: an Extension may not own a CRD" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-crd-claimed-by-extension.json
    denied "appID: cluster scope denied for CustomResourceDefinition applications.argoproj.io from none to \"Extension.team-a.argocd\": $CLUSTER_ONLY"
}

@test "scope: an Extension owns objects in its own namespace only" {
    evaluate examples/app-id/settings.yaml examples/app-id/allowed-configmap-in-own-namespace.json
    allowed
    evaluate examples/app-id/settings.yaml examples/app-id/denied-configmap-in-other-namespace.json
    denied 'appID: namespace scope denied for ConfigMap team-b/argocd-cm from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner'
}

@test "scope: a Namespace is cluster-scoped whatever namespace the request carries" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-namespace-claimed-by-extension.json
    denied "appID: cluster scope denied for Namespace team-a-tools from none to \"Extension.team-a.argocd\": $CLUSTER_ONLY"
    evaluate '{}' test_data/namespace-create-cluster-owner.json
    allowed
}

@test "scope: a value that names no configured kind is denied" {
    evaluate examples/app-id/settings.yaml examples/app-id/denied-job-unknown-owner-kind.json
    denied 'appID: owner value denied for Job team-a/upgrade-crds from none to "HelmRelease.team-a.upgrade": "HelmRelease" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>'
}

# --- OLM v1's kind/name pair --------------------------------------------------

@test "olm-v1: a ClusterExtension adopts an unlabelled CRD" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-crd-adoption.json
    allowed
}

@test "olm-v1: a second install taking over a CRD is denied" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/denied-crd-taken-over-by-second-install.json
    denied "olm.operatorframework.io/owner-name: owner change denied for CustomResourceDefinition certificates.cert-manager.io from \"ClusterExtension.cert-manager\" to \"ClusterExtension.cert-manager-v2\": $ONE_OWNER_PAIR"
}

@test "olm-v1: half a kind/name pair is denied" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/denied-deployment-half-pair.json
    denied 'olm.operatorframework.io/owner-name: owner value denied for Deployment cert-manager/cert-manager-webhook from none to name "cert-manager" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together'
}

@test "olm-v1: removing both labels orphans the object" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-deployment-orphaned.json
    allowed
}

# --- Camel K operator ids -------------------------------------------------------

@test "camel-k: an Integration moved between operators is denied" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-moved-between-operators.json
    denied "camel.apache.org/operator.id: owner change denied for Integration shop/orders-route from \"operator-1\" to \"operator-2\": $ONE_OWNER"
}

@test "camel-k: release then adoption moves an Integration in two steps" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-released.json
    allowed
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-adopted.json
    allowed
}

@test "camel-k: opaque ids are not scoped, but may not be empty" {
    evaluate examples/camel-k/settings.yaml examples/camel-k/allowed-integration-create.json
    allowed
    evaluate examples/camel-k/settings.yaml examples/camel-k/denied-integration-empty-operator-id.json
    denied 'camel.apache.org/operator.id: owner value denied for Integration shop/orders-route from none to "": the owner label is empty; name an owner or remove it'
}

@test "every sample request gets the verdict its name announces" {
    for setup in app-id olm-v1 camel-k; do
        for sample in examples/$setup/*.json; do
            evaluate "examples/$setup/settings.yaml" "$sample"
            verdict=$(jq -r 'if .allowed then "allowed" else "denied" end' <<<"$output")
            [[ $(basename "$sample") == "$verdict"-* ]]
        done
    done
}

# --- exemptions, subresources, DELETE ---------------------------------------------

@test "exemptions: an exempt user bypasses a denial with a warning and an audit annotation" {
    evaluate examples/olm-v1/settings.yaml examples/olm-v1/allowed-clusterrole-takeover-by-exempt-admin.json
    allowed
    bypassed="exempt user break-glass-admin bypassed: olm.operatorframework.io/owner-name: owner change denied for ClusterRole cert-manager-edit from \"ClusterExtension.cert-manager\" to \"ClusterExtension.cert-manager-v2\": $ONE_OWNER_PAIR"
    [ "$(jq -r '.warnings[0]' <<<"$output")" = "$bypassed" ]
    [ "$(jq -r '.auditAnnotations["single-owner-policy-exemption"]' <<<"$output")" = "$bypassed" ]
}

@test "exemptions: an exempt group bypasses a denial" {
    evaluate '{"exemptions": {"groups": ["system:serviceaccounts"]}}' test_data/crd-update-owner-change.json
    allowed
    [[ $(jq -r '.warnings[0]' <<<"$output") == "user system:serviceaccount:kube-system:helm-hooks of exempt group system:serviceaccounts bypassed: appID: owner change denied for"* ]]
}

@test "subresource and DELETE requests are not judged" {
    evaluate '{}' test_data/crd-update-status.json
    allowed
    evaluate '{"orphaning": "Deny"}' test_data/crd-delete.json
    allowed
}

# --- settings errors ------------------------------------------------------------

@test "settings: an unknown field is named" {
    run --separate-stderr "$KWCTL" run --settings-json '{"ownerLabel": []}' --request-path test_data/crd-delete.json "$POLICY"
    settings_rejected 'unknown field `ownerLabel`, expected one of `ownerLabels`, `adoption`, `orphaning`, `exemptions`'
}

@test "settings: each invalid value names its field" {
    while IFS='|' read -r settings message; do
        run --separate-stderr "$KWCTL" run --settings-json "$settings" --request-path test_data/crd-delete.json "$POLICY"
        settings_rejected "$message"
    done <<'EOF'
{"ownerLabels": []}|ownerLabels: list at least one owner label
{"ownerLabels": [{"key": "app ID"}]}|ownerLabels[0].key: \"app ID\" is not a valid label key
{"ownerLabels": [{"key": "a"}, {"key": "a"}]}|ownerLabels[1].key: label \"a\" is already guarded by another entry
{"ownerLabels": [{"key": "a", "clusterKinds": ["X"], "namespacedKinds": ["X"]}]}|ownerLabels[0]: kind \"X\" is listed in both clusterKinds and namespacedKinds
{"ownerLabels": [{"key": "a", "clusterKinds": ["Cluster.Extension"]}]}|ownerLabels[0].clusterKinds[0]: \"Cluster.Extension\" is not a valid kind name
{"ownerLabels": [{"key": "a", "kindKey": "b"}]}|ownerLabels[0].kindKey: set without clusterKinds or namespacedKinds
{"adoption": "allow"}|adoption: unknown variant `allow`, expected `Allow` or `Deny`
EOF
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
