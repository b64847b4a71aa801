//! The match conditions: CEL the API server evaluates before it calls the webhook, derived from
//! the settings so that a request reaches policy-server whenever the policy could deny it,
//! mutate it or warn on it (a warning is an exempt requester's bypassed denial), and as seldom
//! otherwise as portable CEL allows.
//!
//! **Guarded marks.** The policy reads owner marks (`ownerMarks`): each mark is a label
//! (`label: K`, read in `metadata.labels`) or an annotation (`annotation: K`, read in
//! `metadata.annotations`), and its companion key (`kindKey` or `namespaceKey`) lives in the
//! same place. A *guarded mark* below is one such `(place, key)`: a mark's key or its companion,
//! in the mark's place ([`guarded_marks`]). The offer is the annotation `offerAnnotation`.
//! What the policy reads of a mark, and what the conditions test of it:
//!
//! | mark | the policy reads (`src/owner.rs`, `Claim::read`) | the conditions test |
//! |---|---|---|
//! | one key: the kind in the value, or an opaque id | the value | the key: present, or set on one side only or to another value |
//! | a pair: `kindKey` or `namespaceKey` beside the key | both keys, in the mark's place; one without the other is a half pair, which is denied | each key on its own, as above: a half pair is judged too |
//! | an Argo CD tracking id (`format: ArgoCDTrackingID`) | `<app>:<group>/<kind>:<namespace>/<name>`: the app, when the object part names the object the mark is on (its group, kind and name, and its namespace unless it is cluster-scoped); no owner when it names another object; a value that does not split so is a malformed claim, denied — in a template too, where a well-formed id names no owner | the key, as above: present, or its value differs |
//!
//! Portable CEL cannot take a tracking id apart (`split`, `indexOf` and `substring` are
//! Kubernetes' string extensions, not the standard definitions), so the conditions do not ask
//! whether an id names the object it is on, nor which app it names: a CREATE that carries the
//! id of another object, or an UPDATE that changes only the object part of an id that names
//! another object either way, is sent and allowed — more than the policy judges, never less.
//! On both sides of an UPDATE the object is the same (the API server refuses a body whose name
//! is not the one it updates), so a value that does not change is a claim that does not change.
//!
//! What the policy judges, by operation (`Sides::of` in `src/facts/sides.rs`, then the rules
//! that `src/decision.rs` composes):
//!
//! | request | the policy can act when | the condition sends it when |
//! |---|---|---|
//! | any, by a trusted writer on what it is trusted with (`src/control_plane.rs`) | never: allowed before any rule | never |
//! | CREATE of an object | the object claims an owner under a guarded mark, carries a half pair or a malformed tracking id, or carries the offer, or one of its templates carries a guarded mark; with `stamp: true`, whenever the requester acts for one owner | the object carries a guarded mark or the offer, or the kind is a workload kind (below) whose template carries a guarded mark; with `stamp: true`, also when an identity binds the requester |
//! | CREATE of `pods/binding` | the Binding carries a guarded mark or the offer, which the API server copies onto the Pod | the Binding carries a guarded mark or the offer |
//! | CREATE of another subresource (`pods/eviction`, …) | never | never |
//! | UPDATE, object or subresource | a mark's claim or the offer differs between the sides | a guarded mark or the offer differs: set on one side only, or to another value |
//! | UPDATE of the object, workload kinds | also when a mark's claim in a template differs between the sides | also when a guarded mark of `spec.template`, `spec.jobTemplate` or `spec.jobTemplate.spec.template` differs (labels and annotations alike), or when either side's `spec.volumeClaimTemplates` or ephemeral volume claim templates carry one |
//! | UPDATE of the object, or of `pods/ephemeralcontainers` and `pods/resize`, `writes: Owner` | also when it keeps an owner, on the object or in a template of the object | also when the stored object carries a guarded mark, or (the object itself) one of its templates does |
//! | UPDATE of the object, of `pods/ephemeralcontainers` and `pods/resize`, or of a subresource that stores metadata, `writes: Owner` | also when the stored object carries no mark and the first marked controller up its chain names an owner (`src/children.rs`) | also when the stored object has a controller of a workload kind or of `parentKinds` (by kind), through a subresource that stores metadata when that differs |
//! | DELETE of the object, `writes: Owner` | the stored object names an owner under a guarded mark, or a template of it does, or the first marked controller up its chain does | the stored object carries a guarded mark, or it is of a workload kind, or it has a controller of a workload kind or of `parentKinds` |
//! | DELETE otherwise, CONNECT | never | never |
//!
//! The workload kinds and their templates, as `src/template.rs` reads them — on writes of the
//! object itself, never of a subresource ([`TEMPLATES`](single_owner_policy::template::TEMPLATES)); a template's marks are read in its
//! `metadata.labels` and `metadata.annotations`, as the object's are:
//!
//! | kind | templates |
//! |---|---|
//! | `apps` Deployment, ReplicaSet, DaemonSet, StatefulSet; core ReplicationController; `batch` Job | `spec.template` |
//! | `apps` StatefulSet | also each of `spec.volumeClaimTemplates` |
//! | `batch` CronJob | `spec.jobTemplate` and `spec.jobTemplate.spec.template` |
//! | core Pod | each `spec.volumes[*].ephemeral.volumeClaimTemplate` |
//!
//! The kind is tested first (`request.kind.group`, `request.kind.kind`), so that a custom
//! resource whose `spec.template` is a string is never read as a template.
//!
//! An UPDATE that keeps every guarded mark and the offer is allowed whoever sends it (each
//! mark's transition is `none → none` or `A → A`, the offer rule is "unchanged" and consumes
//! nothing, the one-owner rule judges only a mark being set, and only `writes: Owner` looks at
//! who keeps an owner), so under `writes: Any` the condition sends an UPDATE only when it changes
//! what the policy guards.
//!
//! **The trusted control plane.** The policy allows a trusted writer's request on a resource and
//! with an operation it is trusted with before any rule (`control_plane::trusts`), so those are
//! skipped by conditions derived from [`control_plane::rules`](single_owner_policy::control_plane::rules), one per class of writer, each
//! false exactly for the requests `Trust::covers` accepts:
//!
//! | condition | skips |
//! |---|---|
//! | `not-a-trusted-controller-write` | `system:serviceaccount:kube-system:<controller>` in the group `system:serviceaccounts:kube-system`, on what its role grants; `system:kube-controller-manager` on what any controller's role grants |
//! | `not-a-trusted-user-write` | the users named exactly (`system:kube-controller-manager` for its own role, `system:kube-scheduler`, the settings' `trustedWriters`) on what they are trusted with; a `trustedWriters` pattern with one `*` (prefix, suffix and the length of both); a pattern with two `*` or more is not skipped (without regular expressions CEL cannot match it exactly) |
//! | `not-a-trusted-kubelet-write` (`writes: Owner` only) | `system:node:<name>` in the group `system:nodes`, deleting a Pod whose stored object has `metadata.deletionTimestamp` |
//!
//! Each condition tests the user name first (a prefix or a list), so that most requests never
//! read the grants. The grants of the writers named exactly are one map literal, user name →
//! operation → resources, named once by a one-element list (`[{…}].exists(controllers, …)`, the
//! portable stand-in for `cel.bind`); a user trusted with every controller's grants is looked
//! up in the controllers' map (`controllers.exists(writer, …)`) rather than given a copy. The
//! request's resource is written as the table writes it, `resource[.group][/subresource]`, and
//! looked up in the grants beside `*` (every resource) and `*/<subresource>`. A resource or group
//! that could make that text ambiguous (a `.` or `/` in the resource, a `/` in the group — none
//! of which Kubernetes allows) is never skipped. Grants that could never reach the webhook are
//! dropped: DELETE without `writes: Owner`, CREATE of a subresource, and subresources the
//! webhook's rules do not name ([`crate::rules::SUBRESOURCES`]: `*/finalizers`, `*/scale`, …). Never
//! wider than the policy's trust: a skipped write that the policy would judge is a bypass.
//! With Kubernetes' `OptOptimize`, cel-go folds the constant map literals when it compiles
//! them; evaluating a condition costs a few map lookups, and at most one comprehension over the
//! controllers (about 45) for `system:kube-controller-manager`.
//!
//! Audit replays (a CREATE with an empty `userInfo`) come from Kubewarden's audit scanner straight
//! to policy-server; no condition is evaluated for them.
//!
//! **Null-safety.** `object` is null on DELETE and `oldObject` on CREATE; an object may have no
//! `metadata`, and metadata no `labels` or `annotations` (the API server omits empty maps), and
//! so may a template's. Every access is guarded by `!= null` or `has()`, so the expression never
//! errors on what the API server sends — under `failurePolicy: Fail` an error would refuse the
//! request. `request` is the typed AdmissionRequest, whose `subResource`, `userInfo.username`
//! and `userInfo.groups` are omitted when empty: they are read through `has()` too; its `kind`
//! and `resource`, and their `group`, are always there. A workload's fields are objects or
//! absent, never null: the API server decodes the built-in kinds into their types before
//! admission. Label and annotation values are strings, compared with `!=` only.
//!
//! **Portable CEL**: `has()`, `in` on maps and lists, map indexing with quoted keys, `==`, `!=`,
//! `>=`, `!`, `&&`, `||`, `_ ? _ : _`, string `+`, `size()`, `startsWith`, `endsWith`,
//! `contains`, `exists`, and list and map literals of one type each (Kubernetes checks literals
//! to be homogeneous) — the standard definitions, which cel-go (Kubernetes) and cel-rust (the
//! tests) share. No optional types, no `cel.bind`, no regular expressions, no string extensions.
//!
//! **Why not an `objectSelector`.** An objectSelector sees labels only: an annotation mark, or
//! an offer annotation on an object without an owner label — which the policy denies — would
//! never reach it; its expressions are ANDed, so a lone companion key (half of a pair) would
//! escape a selector on the key; and under `writes: Any` it would send every update of an owned
//! object, changed or not. So the generator always writes matchConditions.

mod create;
mod expr;
mod marks;
mod requester;
mod trusted;
mod update;

use single_owner_policy::{MarkPlace, Settings};

use expr::{Expr, and, atom, or, render, strings};
use marks::{ANNOTATIONS, LABELS, OLD, carries, controlled, kind_is, not_subresource};
use single_owner_policy::template::TEMPLATES;

pub use expr::quote;

/// Kubernetes' limit on the number of match conditions of a webhook.
pub const MAX_CONDITIONS: usize = 64;

/// The names of the conditions that skip the trusted control plane's writes, one per class of
/// writer; a setup has those its writers need.
pub const TRUSTED_WRITERS: [&str; 3] = [
    "not-a-trusted-controller-write",
    "not-a-trusted-user-write",
    "not-a-trusted-kubelet-write",
];

/// A `matchConditions` entry: all of a webhook's conditions must be true for the API server to
/// call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchCondition {
    /// The condition's name, a Kubernetes qualified name.
    pub name: String,
    /// The CEL expression, laid out over several lines.
    pub expression: String,
}

/// The match conditions for these settings. The API server calls the webhook when all of them
/// are true, so each operation's case is an implication (`request.operation != 'CREATE' || …`)
/// beside one condition that names the operations judged at all, and each class of trusted
/// writers has a condition false for its writes: together they are true for every request the
/// policy could deny, mutate or warn on, and for few others — those where portable CEL cannot
/// read a tracking id as the policy does (see the module documentation).
pub fn match_conditions(settings: &Settings) -> Vec<MatchCondition> {
    operations(settings)
        .into_iter()
        .map(|(name, expr)| MatchCondition {
            name: name.to_owned(),
            expression: render(&expr, 0),
        })
        .collect()
}

/// CEL, on one line: a list literal of strings.
pub(crate) fn string_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    strings(items).flat()
}

/// CEL, on one line: the request's kind is one of `kinds`, as `(group, kinds)`.
/// CEL: a condition true for every `text` the `*` pattern matches, and possibly more (its
/// first literal a prefix, the others substrings, its last a suffix).
pub(crate) fn widened_glob(text: &str, pattern: &str) -> String {
    requester::glob(text, pattern).flat()
}

pub(crate) fn kind_test(kinds: &[(&str, &[&str])]) -> String {
    kind_is(kinds).flat()
}

/// The guarded marks, as `(place, key)`: each mark's key and its companion (`kindKey` or
/// `namespaceKey`), in the mark's place, in the order of `ownerMarks`, once.
pub fn guarded_marks(settings: &Settings) -> Vec<(MarkPlace, &str)> {
    let mut marks: Vec<(MarkPlace, &str)> = Vec::new();
    for mark in settings.guarded_keys() {
        if !marks.contains(&mark) {
            marks.push(mark);
        }
    }
    marks
}

/// The guarded keys by the map they are read in.
#[derive(Debug, Clone, Default)]
struct Keys<'a> {
    /// Guarded label keys.
    labels: Vec<&'a str>,
    /// Guarded annotation keys.
    annotations: Vec<&'a str>,
}

impl<'a> Keys<'a> {
    fn of(settings: &'a Settings) -> Keys<'a> {
        let mut keys = Keys::default();
        for (place, key) in guarded_marks(settings) {
            match place {
                MarkPlace::Label => keys.labels.push(key),
                MarkPlace::Annotation => keys.annotations.push(key),
            }
        }
        keys
    }

    /// Each map of metadata with the guarded keys read in it (and `extra`, for annotations),
    /// leaving out a map without any.
    fn maps(&self, extra: Option<&'a str>) -> Vec<(&'static str, Vec<&'a str>)> {
        let annotations = self.annotations.iter().copied().chain(extra).collect();
        [(LABELS, self.labels.clone()), (ANNOTATIONS, annotations)]
            .into_iter()
            .filter(|(_, keys)| !keys.is_empty())
            .collect()
    }
}

/// The conditions, named, as expression trees: the operations judged at all, then one
/// condition per operation, then one per class of trusted writers.
fn operations(settings: &Settings) -> Vec<(&'static str, Expr)> {
    let keys = Keys::of(settings);
    let judged = settings.judged_operations();
    let mut conditions = vec![
        (
            "operation-is-judged",
            atom(format!("request.operation in {}", strings(judged).flat())),
        ),
        create::condition(settings, &keys),
        update::condition(settings, &keys),
    ];
    if settings.judges_writes() {
        // The stored object's marks; a workload's DELETE whatever its templates carry (it
        // claims through them), which a kind test says in fewer characters than reading them;
        // an unmarked child of a workload, judged by its chain.
        let workloads = or(TEMPLATES.iter().map(|(kinds, _)| kind_is(kinds)));
        let owned = or([
            carries(OLD, &keys, None),
            workloads,
            controlled(OLD, settings),
        ]);
        let delete = and([not_subresource(), owned]);
        conditions.push((
            "delete-of-owned-object",
            or([atom("request.operation != 'DELETE'"), delete]),
        ));
    }
    conditions.extend(trusted::trusted_writers(settings, judged));
    conditions
}

#[cfg(test)]
mod tests {
    use super::expr::WIDTH;
    use super::marks::METADATA;
    use super::update::{map_differs, templates_differ};
    use super::*;

    #[test]
    fn long_expressions_are_laid_out_within_the_width() {
        let settings = Settings::from_json(
            br#"{"ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
                 "kindKey": "olm.operatorframework.io/owner-kind", "clusterKinds": ["A"]},
                 {"annotation": "meta.helm.sh/release-name",
                  "namespaceKey": "meta.helm.sh/release-namespace"}],
                 "identities": [{"owners": ["A.*"], "users": ["u"]}], "writes": "Owner",
                 "trustedWriters": [{"users": ["k3s", "k3s-*-agent"], "resources": ["*", "pods/status"],
                                     "operations": ["UPDATE"]}]}"#,
        )
        .unwrap();
        let conditions = match_conditions(&settings);
        for ((_, expr), condition) in operations(&settings).iter().zip(&conditions) {
            // Laid out or not, the expression is the same.
            let squeezed: String = condition.expression.split_whitespace().collect();
            let flat: String = expr.flat().split_whitespace().collect();
            assert_eq!(squeezed, flat);
            // A line overflows only with one atom too long to break, after its operator.
            for line in condition.expression.lines() {
                let atom = line
                    .trim_start()
                    .trim_start_matches(['&', '|', '?', ':', '+', ' ']);
                assert!(
                    line.len() <= WIDTH || !(atom.contains(" && ") || atom.contains(" || ")),
                    "{}: {line}",
                    condition.name
                );
            }
        }
    }

    #[test]
    fn marks_are_read_in_their_place_with_their_companions() {
        let settings = Settings::from_json(
            br#"{"ownerMarks": [
                 {"label": "app", "kindKey": "app-kind", "clusterKinds": ["A"]},
                 {"annotation": "meta.helm.sh/release-name",
                  "namespaceKey": "meta.helm.sh/release-namespace"},
                 {"annotation": "app.example.com/owner"},
                 {"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}],
                 "offerAnnotation": "example.com/offer"}"#,
        )
        .unwrap();
        settings.validate().unwrap();
        assert_eq!(
            guarded_marks(&settings),
            [
                (MarkPlace::Label, "app"),
                (MarkPlace::Label, "app-kind"),
                (MarkPlace::Annotation, "meta.helm.sh/release-name"),
                (MarkPlace::Annotation, "meta.helm.sh/release-namespace"),
                (MarkPlace::Annotation, "app.example.com/owner"),
                (MarkPlace::Annotation, "argocd.argoproj.io/tracking-id"),
            ]
        );
        let keys = Keys::of(&settings);
        let differs = |map, keys: &[&str]| map_differs(&[METADATA, map], keys).flat();
        let labels = differs(LABELS, &["app", "app-kind"]);
        let annotations = differs(
            ANNOTATIONS,
            &[
                "meta.helm.sh/release-name",
                "meta.helm.sh/release-namespace",
                "app.example.com/owner",
                "argocd.argoproj.io/tracking-id",
                "example.com/offer",
            ],
        );
        assert!(labels.contains("oldObject.metadata.labels"));
        assert!(annotations.contains("oldObject.metadata.annotations"));
        let (_, update) = &operations(&settings)[2];
        assert_eq!(
            update.flat(),
            or([
                atom("request.operation != 'UPDATE'"),
                atom(labels),
                atom(annotations),
                and([not_subresource(), templates_differ(&keys)]),
            ])
            .flat()
        );
        // A template's annotations are read beside its labels.
        assert!(
            update
                .flat()
                .contains("object.spec.template.metadata.annotations")
        );
    }
}
