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
//! What the policy judges, by operation (`src/decision.rs`, `Sides::of` and the rules after it):
//!
//! | request | the policy can act when | the condition sends it when |
//! |---|---|---|
//! | any, by a trusted writer on what it is trusted with (`src/control_plane.rs`) | never: allowed before any rule | never |
//! | CREATE of an object | the object claims an owner under a guarded mark, carries a half pair or a malformed tracking id, or carries the offer, or one of its templates carries a guarded mark; with `stamp: true`, whenever the requester acts for one owner | the object carries a guarded mark or the offer, or the kind is a workload kind (below) whose template carries a guarded mark; with `stamp: true`, also when an identity binds the requester |
//! | CREATE of a subresource (`pods/binding`, …) | never | never |
//! | UPDATE, object or subresource | a mark's claim or the offer differs between the sides | a guarded mark or the offer differs: set on one side only, or to another value |
//! | UPDATE of the object, workload kinds | also when a mark's claim in a template differs between the sides | also when a guarded mark of `spec.template`, `spec.jobTemplate` or `spec.jobTemplate.spec.template` differs (labels and annotations alike), or when either side's `spec.volumeClaimTemplates` or ephemeral volume claim templates carry one |
//! | UPDATE of the object, `writes: Owner` | also when it keeps an owner | also when the stored object carries a guarded mark |
//! | DELETE of the object, `writes: Owner` | the stored object names an owner under a guarded mark | the stored object carries a guarded mark |
//! | DELETE otherwise, CONNECT | never | never |
//!
//! The workload kinds and their templates, as `src/template.rs` reads them — on writes of the
//! object itself, never of a subresource ([`TEMPLATES`]); a template's marks are read in its
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
//! skipped by conditions derived from [`control_plane::rules`], one per class of writer, each
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
//! webhook's rules do not name ([`crate::SUBRESOURCES`]: `*/finalizers`, `*/scale`, …). Never
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

use std::collections::{BTreeMap, BTreeSet};

use single_owner_policy::control_plane::{
    self, KUBE_SYSTEM_GROUP, KUBE_SYSTEM_PREFIX, NODE_PREFIX, NODES_GROUP, Trust, Writer,
};
use single_owner_policy::template::{Place, TEMPLATES};
use single_owner_policy::{MarkPlace, Settings};

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

/// The conditions, named, as expression trees.
fn operations(settings: &Settings) -> Vec<(&'static str, Expr)> {
    let keys = Keys::of(settings);
    let offer = settings.offer_annotation.as_str();
    let writes = settings.judges_writes();
    let stamps = settings.stamp && !settings.identities.is_empty();

    let judged: &[&str] = match writes {
        true => &["CREATE", "UPDATE", "DELETE"],
        false => &["CREATE", "UPDATE"],
    };
    let mut conditions = vec![(
        "operation-is-judged",
        atom(format!("request.operation in {}", strings(judged).flat())),
    )];

    let mut create = vec![
        carries(NEW, &keys, Some(offer)),
        templates_carry(NEW, &keys),
    ];
    if stamps {
        create.push(bound_requester(settings));
    }
    let name = match stamps {
        true => "create-carries-owner-mark-or-offer-or-may-be-stamped",
        false => "create-carries-owner-mark-or-offer",
    };
    let create = and([not_subresource(), or(create)]);
    conditions.push((name, or([atom("request.operation != 'CREATE'"), create])));

    let mut update: Vec<Expr> = keys
        .maps(Some(offer))
        .into_iter()
        .map(|(map, keys)| map_differs(&[METADATA, map], &keys))
        .collect();
    update.push(and([not_subresource(), templates_differ(&keys)]));
    if writes {
        update.push(and([not_subresource(), carries(OLD, &keys, None)]));
    }
    let name = match writes {
        true => "update-changes-owner-mark-or-offer-or-keeps-owner",
        false => "update-changes-owner-mark-or-offer",
    };
    conditions.push((
        name,
        or([atom("request.operation != 'UPDATE'"), or(update)]),
    ));

    if writes {
        let delete = and([not_subresource(), carries(OLD, &keys, None)]);
        conditions.push((
            "delete-of-owned-object",
            or([atom("request.operation != 'DELETE'"), delete]),
        ));
    }
    conditions.extend(trusted_writers(settings, judged));
    conditions
}

/// The new object (`null` on DELETE) and the stored one (`null` on CREATE).
const NEW: &str = "object";
const OLD: &str = "oldObject";

/// The fields of an object's metadata the policy reads.
const METADATA: &str = "metadata";
const LABELS: &str = "labels";
const ANNOTATIONS: &str = "annotations";

/// `side` followed by the fields of `path`: `object.metadata.labels`.
fn select(side: &str, path: &[&str]) -> String {
    std::iter::once(side)
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `side` has every field of `path`, each tested with `has()`.
fn present(side: &str, path: &[&str]) -> Expr {
    and((1..=path.len()).map(|end| atom(format!("has({})", select(side, &path[..end])))))
}

/// Whether the request targets no subresource: `subResource` is omitted when empty.
fn not_subresource() -> Expr {
    atom("(!has(request.subResource) || request.subResource == '')")
}

/// Whether one of `keys` is in the map `map` (an expression): `'key' in map`, or for several
/// keys `[…].exists(key, key in map)`, which names the map once.
fn holds_any(map: &str, keys: &[&str]) -> Expr {
    match keys {
        [key] => atom(format!("{} in {map}", quote(key))),
        keys => Expr::Exists(
            Box::new(strings(keys.iter())),
            "key".to_owned(),
            Box::new(atom(format!("key in {map}"))),
        ),
    }
}

/// Whether the metadata at `path` of `base` (an object, or a template item) holds a guarded
/// key in one of its maps, or the annotation `extra`. `base` itself is not tested for null.
fn metadata_holds(base: &str, path: &[&str], keys: &Keys, extra: Option<&str>) -> Expr {
    let metadata: Vec<&str> = path.iter().copied().chain([METADATA]).collect();
    let maps = keys.maps(extra).into_iter().map(|(map, keys)| {
        let at: Vec<&str> = metadata.iter().copied().chain([map]).collect();
        and([
            atom(format!("has({})", select(base, &at))),
            holds_any(&select(base, &at), &keys),
        ])
    });
    and([present(base, &metadata), or(maps)])
}

/// Whether `side` carries a guarded mark, or the annotation `extra` (the offer).
fn carries(side: &str, keys: &Keys, extra: Option<&str>) -> Expr {
    and([
        atom(format!("{side} != null")),
        metadata_holds(side, &[], keys, extra),
    ])
}

/// Whether the request's object is one of `kinds`, by its group and kind.
fn kind_is(kinds: &[(&str, &[&str])]) -> Expr {
    or(kinds.iter().map(|(group, kinds)| {
        let kind = match kinds {
            [kind] => atom(format!("request.kind.kind == {}", quote(kind))),
            kinds => atom(format!(
                "request.kind.kind in {}",
                strings(kinds.iter()).flat()
            )),
        };
        and([
            atom(format!("request.kind.group == {}", quote(group))),
            kind,
        ])
    }))
}

/// Whether `side` carries a guarded mark in a template at `place`.
fn place_carries(side: &str, place: &Place, keys: &Keys) -> Expr {
    match *place {
        Place::One(path) => and([
            atom(format!("{side} != null")),
            metadata_holds(side, path, keys, None),
        ]),
        Place::Each {
            list,
            item,
            template,
            ..
        } => and([
            atom(format!("{side} != null")),
            present(side, list),
            Expr::Exists(
                Box::new(atom(select(side, list))),
                item.to_owned(),
                Box::new(metadata_holds(item, template, keys, None)),
            ),
        ]),
    }
}

/// Whether `side`, an object of a workload kind, carries a guarded mark in a template.
fn templates_carry(side: &str, keys: &Keys) -> Expr {
    or(TEMPLATES.iter().map(|(kinds, places)| {
        and([
            kind_is(kinds),
            or(places.iter().map(|place| place_carries(side, place, keys))),
        ])
    }))
}

/// Whether a guarded mark of a template differs between the sides of an UPDATE of a workload:
/// for a list of templates, whether either side's list carries one.
fn templates_differ(keys: &Keys) -> Expr {
    or(TEMPLATES.iter().map(|(kinds, places)| {
        let places = places.iter().map(|place| match *place {
            Place::One(path) => or(keys.maps(None).into_iter().map(|(map, keys)| {
                let at: Vec<&str> = path.iter().copied().chain([METADATA, map]).collect();
                map_differs(&at, &keys)
            })),
            Place::Each { .. } => or([
                place_carries(OLD, place, keys),
                place_carries(NEW, place, keys),
            ]),
        });
        and([kind_is(kinds), or(places)])
    }))
}

/// The map at `path` of `side`, or `{}` where `side` has none.
fn map_or_empty(side: &str, path: &[&str]) -> Expr {
    Expr::Cond(
        Box::new(and([atom(format!("{side} != null")), present(side, path)])),
        Box::new(atom(select(side, path))),
        Box::new(atom("{}")),
    )
}

/// Whether one of `keys` of the map at `path` (of the objects, or of a template in them) differs
/// between the sides: set on one side only, or to another value. Each side's map is read once,
/// bound by a one-element list, and is `{}` where a side has none (`null` on CREATE and DELETE).
fn map_differs(path: &[&str], keys: &[&str]) -> Expr {
    let key = match keys {
        [key] => quote(key),
        _ => "key".to_owned(),
    };
    let differs = or([
        atom(format!("({key} in before) != ({key} in after)")),
        and([
            atom(format!("{key} in before")),
            atom(format!("before[{key}] != after[{key}]")),
        ]),
    ]);
    let differs = match keys {
        [_] => differs,
        keys => Expr::Exists(Box::new(strings(keys.iter())), key, Box::new(differs)),
    };
    Expr::Exists(
        Box::new(Expr::List(vec![map_or_empty(OLD, path)])),
        "before".to_owned(),
        Box::new(Expr::Exists(
            Box::new(Expr::List(vec![map_or_empty(NEW, path)])),
            "after".to_owned(),
            Box::new(differs),
        )),
    )
}

/// Whether an identity may bind the requester, by its user name or one of its groups: what
/// stamping needs (a requester acting for exactly one owner is bound by some identity). Each
/// `*` pattern is widened to its first literal as a prefix, its last as a suffix and the others
/// as substrings — never narrower than the policy's matching, so never a bypass.
fn bound_requester(settings: &Settings) -> Expr {
    let mut users: Vec<&str> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    for identity in &settings.identities {
        for (patterns, list) in [
            (&identity.users, &mut users),
            (&identity.groups, &mut groups),
        ] {
            for pattern in patterns {
                if !list.contains(&pattern.as_str()) {
                    list.push(pattern);
                }
            }
        }
    }
    let mut bound = Vec::new();
    if !users.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.username)"),
            or(users.iter().map(|pattern| glob(USERNAME, pattern))),
        ]));
    }
    if !groups.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.groups)"),
            Expr::Exists(
                Box::new(atom(GROUPS)),
                "group".to_owned(),
                Box::new(or(groups.iter().map(|pattern| glob("group", pattern)))),
            ),
        ]));
    }
    and([atom("has(request.userInfo)"), or(bound)])
}

/// A condition true for every `text` that the `*` pattern matches (and possibly more).
fn glob(text: &str, pattern: &str) -> Expr {
    let literals: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = literals.as_slice() else {
        return atom(format!("{text} == {}", quote(pattern)));
    };
    let mut parts = Vec::new();
    if !first.is_empty() {
        parts.push(atom(format!("{text}.startsWith({})", quote(first))));
    }
    for literal in middle.iter().filter(|literal| !literal.is_empty()) {
        parts.push(atom(format!("{text}.contains({})", quote(literal))));
    }
    if !last.is_empty() {
        parts.push(atom(format!("{text}.endsWith({})", quote(last))));
    }
    match parts.len() {
        0 => atom("true"),
        _ => and(parts),
    }
}

/// A condition true exactly for the `text` that the `*` pattern matches, as the policy's
/// `identity::matches` does: `None` for a pattern with two `*` or more, which CEL without
/// regular expressions cannot match exactly (their literals must appear in order, apart).
fn glob_exactly(text: &str, pattern: &str) -> Option<Expr> {
    let literals: Vec<&str> = pattern.split('*').collect();
    match literals.as_slice() {
        [literal] => Some(atom(format!("{text} == {}", quote(literal)))),
        [prefix, suffix] => {
            let mut parts = Vec::new();
            if !prefix.is_empty() {
                parts.push(atom(format!("{text}.startsWith({})", quote(prefix))));
            }
            if !suffix.is_empty() {
                parts.push(atom(format!("{text}.endsWith({})", quote(suffix))));
            }
            if !prefix.is_empty() && !suffix.is_empty() {
                // The prefix and the suffix must not overlap; `size` counts code points.
                let least = prefix.chars().count() + suffix.chars().count();
                parts.push(atom(format!("size({text}) >= {least}")));
            }
            Some(match parts.len() {
                0 => atom("true"),
                _ => and(parts),
            })
        }
        _ => None,
    }
}

/// The requester's user name and groups, in `request`.
const USERNAME: &str = "request.userInfo.username";
const GROUPS: &str = "request.userInfo.groups";

/// An operation and a resource, as a trust rule grants them.
type Grant = (String, String);

/// What writers named exactly may write: user name → operation → resources.
type Grants = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// A class of trusted writers, as one condition.
#[derive(Default)]
struct Class {
    /// The writers named exactly, with nothing more to test than their grants.
    grants: Grants,
    /// Whether those writers must be in the group of kube-system's service accounts.
    kube_system: bool,
    /// Users trusted with whatever any writer of `grants` is (kube-controller-manager, which
    /// runs every controller without `--use-service-account-credentials`); their other grants
    /// are in another class.
    any_of_them: Vec<String>,
    /// The other rules, each its own expression, with the resources it names.
    rules: Vec<(Expr, BTreeSet<String>)>,
}

impl Class {
    fn is_empty(&self) -> bool {
        self.grants.is_empty() && self.rules.is_empty()
    }

    fn add(&mut self, user: &str, grants: impl IntoIterator<Item = Grant>) {
        let operations = self.grants.entry(user.to_owned()).or_default();
        for (operation, resource) in grants {
            operations.entry(operation).or_default().insert(resource);
        }
    }

    /// Every grant of the writers named exactly.
    fn granted(&self) -> BTreeSet<Grant> {
        let mut granted = BTreeSet::new();
        for operations in self.grants.values() {
            for (operation, resources) in operations {
                for resource in resources {
                    granted.insert((operation.clone(), resource.clone()));
                }
            }
        }
        granted
    }

    /// The condition: false exactly for the requests a writer of the class is trusted with.
    /// Each writer's user name is tested first, then its grants: those of the writers named
    /// exactly are a map literal bound to `variable`.
    fn condition(&self, variable: &str) -> Expr {
        let mut trusted = Vec::new();
        if !self.grants.is_empty() {
            let resources = self.grants.values().flat_map(BTreeMap::values).flatten();
            let resources = resources.map(String::as_str).collect();
            let map = Expr::Map(
                self.grants
                    .iter()
                    .map(|(user, operations)| {
                        let operations = operations
                            .iter()
                            .map(|(operation, resources)| (operation.clone(), strings(resources)))
                            .collect();
                        (user.clone(), Expr::Map(operations))
                    })
                    .collect(),
            );
            // The grants of `writer` (an expression) cover the request.
            let covers = |writer: &str| {
                and([
                    atom(format!("request.operation in {writer}")),
                    names(&resources, &format!("{writer}[request.operation]")),
                ])
            };
            let mut named = vec![
                atom(format!("{USERNAME} in {variable}")),
                covers(&format!("{variable}[{USERNAME}]")),
            ];
            // Who may be one of the writers, tested before the map is read.
            let mut who = vec![match self.kube_system {
                true => atom(format!(
                    "{USERNAME}.startsWith({})",
                    quote(KUBE_SYSTEM_PREFIX)
                )),
                false => atom(format!(
                    "{USERNAME} in {}",
                    strings(self.grants.keys()).flat()
                )),
            }];
            if self.kube_system {
                named.insert(0, in_group(KUBE_SYSTEM_GROUP));
            }
            let mut writers = vec![and(named)];
            if !self.any_of_them.is_empty() {
                let any_of_them = atom(format!(
                    "{USERNAME} in {}",
                    strings(&self.any_of_them).flat()
                ));
                who.push(any_of_them.clone());
                writers.push(and([
                    any_of_them,
                    Expr::Exists(
                        Box::new(atom(variable)),
                        "writer".to_owned(),
                        Box::new(covers(&format!("{variable}[writer]"))),
                    ),
                ]));
            }
            let lookup = Expr::Exists(
                Box::new(Expr::List(vec![map])),
                variable.to_owned(),
                Box::new(or(writers)),
            );
            trusted.push(and([or(who), with_resource(&resources, lookup)]));
        }
        for (writer, named) in &self.rules {
            let named: BTreeSet<&str> = named.iter().map(String::as_str).collect();
            let names = names(&named, &strings(&named).flat());
            trusted.push(and([writer.clone(), with_resource(&named, names)]));
        }
        Expr::Not(Box::new(and([
            atom("has(request.userInfo)"),
            atom("has(request.userInfo.username)"),
            or(trusted),
        ])))
    }
}

/// `expr`, with the request's resource as the rules write it bound to [`RESOURCE`] when one of
/// `resources` names a resource.
fn with_resource(resources: &BTreeSet<&str>, expr: Expr) -> Expr {
    match resources.iter().any(|resource| is_named(resource)) {
        true => Expr::Exists(
            Box::new(Expr::List(vec![request_resource()])),
            RESOURCE.to_owned(),
            Box::new(expr),
        ),
        false => expr,
    }
}

/// The trusted control plane ([`control_plane::rules`]) as conditions, one per class of writer,
/// each false for the requests its writers are trusted with: the policy allows them before any
/// rule. `judged` are the operations the conditions send at all.
fn trusted_writers(settings: &Settings, judged: &[&str]) -> Vec<(&'static str, Expr)> {
    let mut controllers = Class {
        kube_system: true,
        ..Class::default()
    };
    let (mut users, mut kubelets) = (Class::default(), Class::default());
    for trust in control_plane::rules(&settings.trusted_writers) {
        let grants = grants(&trust, judged);
        if grants.is_empty() {
            continue;
        }
        let username = |user: &str| atom(format!("{USERNAME} == {}", quote(user)));
        match trust.writer {
            Writer::KubeSystemServiceAccount(account) if trust.terminating_only => {
                let user = format!("{KUBE_SYSTEM_PREFIX}{account}");
                let writer = and([username(&user), in_group(KUBE_SYSTEM_GROUP)]);
                controllers.rules.push(rule(writer, &trust, grants));
            }
            Writer::KubeSystemServiceAccount(account) => {
                controllers.add(&format!("{KUBE_SYSTEM_PREFIX}{account}"), grants);
            }
            Writer::User(user) if trust.terminating_only => {
                users.rules.push(rule(username(user), &trust, grants));
            }
            Writer::User(user) => users.add(user, grants),
            Writer::Users(pattern) => {
                // Not skipped when CEL cannot match the pattern exactly.
                if let Some(writer) = glob_exactly(USERNAME, pattern) {
                    users.rules.push(rule(writer, &trust, grants));
                }
            }
            Writer::Node => {
                let writer = and([
                    atom(format!("{USERNAME}.startsWith({})", quote(NODE_PREFIX))),
                    atom(format!(
                        "size({USERNAME}) > {}",
                        NODE_PREFIX.chars().count()
                    )),
                    in_group(NODES_GROUP),
                ]);
                kubelets.rules.push(rule(writer, &trust, grants));
            }
        }
    }
    // A user trusted with every controller's grants is tested against the controllers' map,
    // not given a copy of it.
    let controlled = controllers.granted();
    if !controlled.is_empty() {
        let users_grants = std::mem::take(&mut users.grants);
        for (user, operations) in users_grants {
            let mut own = Class::default();
            own.add(
                &user,
                operations.into_iter().flat_map(|(operation, resources)| {
                    resources
                        .into_iter()
                        .map(move |resource| (operation.clone(), resource))
                }),
            );
            let granted = own.granted();
            if granted.is_superset(&controlled) {
                controllers.any_of_them.push(user.clone());
                users.add(&user, granted.difference(&controlled).cloned());
                users.grants.retain(|_, operations| !operations.is_empty());
            } else {
                users.add(&user, granted);
            }
        }
    }
    TRUSTED_WRITERS
        .into_iter()
        .zip([
            (controllers, "controllers"),
            (users, "users"),
            (kubelets, "kubelets"),
        ])
        .filter(|(_, (class, _))| !class.is_empty())
        .map(|(name, (class, variable))| (name, class.condition(variable)))
        .collect()
}

/// The operations and resources a rule trusts that the other conditions and the policy's rules
/// could send: `(operation, resource)`, without the operations not judged, CREATEs of a
/// subresource, and subresources the webhook's rules do not name
/// ([`crate::SUBRESOURCES`]).
fn grants(trust: &Trust<'_>, judged: &[&str]) -> Vec<Grant> {
    let mut grants = Vec::new();
    for operation in trust.operations {
        let operation = operation.to_string();
        if !judged.contains(&operation.as_str()) {
            continue;
        }
        for resource in trust.resources.iter() {
            let sent = match control_plane::parts(resource) {
                None | Some((_, _, "")) => true,
                Some((_, name, subresource)) => {
                    operation == "UPDATE"
                        && crate::SUBRESOURCES.iter().any(|(resources, named)| {
                            *named == subresource && (*resources == "*" || *resources == name)
                        })
                }
            };
            if sent {
                grants.push((operation.clone(), resource.to_owned()));
            }
        }
    }
    grants
}

/// A rule as its own expression: the writer, the operations, the stored object terminating
/// when the rule asks for it; and the resources it names.
fn rule(writer: Expr, trust: &Trust<'_>, grants: Vec<Grant>) -> (Expr, BTreeSet<String>) {
    let operations: BTreeSet<&str> = grants
        .iter()
        .map(|(operation, _)| operation.as_str())
        .collect();
    let operations: Vec<&str> = operations.into_iter().collect();
    let mut parts = vec![
        writer,
        match operations.as_slice() {
            [operation] => atom(format!("request.operation == {}", quote(operation))),
            operations => atom(format!(
                "request.operation in {}",
                strings(operations.iter()).flat()
            )),
        },
    ];
    if trust.terminating_only {
        parts.extend([
            atom(format!("{OLD} != null")),
            present(OLD, &[METADATA, "deletionTimestamp"]),
            atom(format!("{OLD}.metadata.deletionTimestamp != null")),
        ]);
    }
    let resources = grants.into_iter().map(|(_, resource)| resource).collect();
    (and(parts), resources)
}

/// Whether the requester is in `group`.
fn in_group(group: &str) -> Expr {
    and([
        atom(format!("has({GROUPS})")),
        atom(format!("{} in {GROUPS}", quote(group))),
    ])
}

/// The variable that holds the request's resource as the rules write it.
const RESOURCE: &str = "resource";

/// Whether a rule's resource names a resource (`resource[.group][/subresource]`), rather than
/// every resource (`*`) or a subresource of every resource (`*/subresource`).
fn is_named(resource: &str) -> bool {
    control_plane::parts(resource).is_some_and(|(_, name, _)| name != "*")
}

/// Whether `list` (an expression), a list of resources as the rules write them, names the
/// request's resource; `resources` are those it may hold, for the forms to test.
fn names(resources: &BTreeSet<&str>, list: &str) -> Expr {
    let mut forms = Vec::new();
    if resources
        .iter()
        .any(|resource| control_plane::parts(resource).is_none())
    {
        forms.push(atom(format!("'*' in {list}")));
    }
    if resources
        .iter()
        .any(|resource| !is_named(resource) && *resource != "*")
    {
        forms.push(atom(format!(
            "('*/' + (has(request.subResource) ? request.subResource : '')) in {list}"
        )));
    }
    if resources.iter().any(|resource| is_named(resource)) {
        forms.push(atom(format!("{RESOURCE} in {list}")));
    }
    or(forms)
}

/// The request's resource as the rules write it, `resource[.group][/subresource]`; `''`, which
/// names nothing, for a resource or group that would make it ambiguous: a `.` or `/` in the
/// resource, a `/` in the group (Kubernetes' resource and group names have neither).
fn request_resource() -> Expr {
    let resource = plus(vec![
        atom("request.resource.resource"),
        Expr::Cond(
            Box::new(atom("request.resource.group == ''")),
            Box::new(atom("''")),
            Box::new(plus(vec![atom("'.'"), atom("request.resource.group")])),
        ),
        Expr::Cond(
            Box::new(atom(
                "has(request.subResource) && request.subResource != ''",
            )),
            Box::new(plus(vec![atom("'/'"), atom("request.subResource")])),
            Box::new(atom("''")),
        ),
    ]);
    let ambiguous = or([
        atom("request.resource.resource.contains('.')"),
        atom("(request.resource.resource + request.resource.group).contains('/')"),
    ]);
    Expr::Cond(
        Box::new(ambiguous),
        Box::new(atom("''")),
        Box::new(resource),
    )
}

/// A list literal of strings.
fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Expr {
    Expr::List(
        items
            .into_iter()
            .map(|item| atom(quote(item.as_ref())))
            .collect(),
    )
}

/// A CEL string literal holding `text`: single-quoted, with `\`, `'` and every character that
/// is not printable ASCII or a printable non-ASCII character escaped.
pub fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '\'' => quoted.push_str("\\'"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            ' '..='~' => quoted.push(c),
            c if (c as u32) < 0x10000 => quoted.push_str(&format!("\\u{:04x}", c as u32)),
            c => quoted.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    quoted.push('\'');
    quoted
}

/// A CEL expression, kept as a tree so that it can be laid out over lines.
#[derive(Debug, Clone)]
enum Expr {
    Atom(String),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `condition ? then : otherwise`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `range.exists(variable, predicate)`
    Exists(Box<Expr>, String, Box<Expr>),
    /// `[item, …]`
    List(Vec<Expr>),
    /// `{'key': value, …}`
    Map(Vec<(String, Expr)>),
    /// `a + b + …`, `a in b`: the operator and its operands
    Infix(&'static str, Vec<Expr>),
}

fn atom(text: impl Into<String>) -> Expr {
    Expr::Atom(text.into())
}

/// `a + b + …`
fn plus(operands: Vec<Expr>) -> Expr {
    Expr::Infix("+", operands)
}

/// A conjunction, nested conjunctions flattened into it; one operand stands alone, and none
/// is `true`.
fn and(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::And(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        0 => atom("true"),
        1 => flat.pop().expect("one operand"),
        _ => Expr::And(flat),
    }
}

/// A disjunction, nested disjunctions flattened into it; one operand stands alone, and none
/// is `false`.
fn or(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::Or(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        0 => atom("false"),
        1 => flat.pop().expect("one operand"),
        _ => Expr::Or(flat),
    }
}

/// How wide a line of the expression may be, indentation included.
const WIDTH: usize = 92;

impl Expr {
    /// The expression on one line; composite operands in parentheses.
    fn flat(&self) -> String {
        match self {
            Expr::Atom(text) => text.clone(),
            Expr::And(operands) => join_flat(operands, " && "),
            Expr::Or(operands) => join_flat(operands, " || "),
            Expr::Infix(operator, operands) => join_flat(operands, &format!(" {operator} ")),
            Expr::Not(operand) => format!("!{}", operand.operand_flat()),
            Expr::Cond(condition, then, otherwise) => format!(
                "{} ? {} : {}",
                condition.operand_flat(),
                then.operand_flat(),
                otherwise.operand_flat()
            ),
            Expr::Exists(range, variable, predicate) => format!(
                "{}.exists({variable}, {})",
                range.operand_flat(),
                predicate.flat()
            ),
            Expr::List(items) => {
                let items: Vec<String> = items.iter().map(Expr::flat).collect();
                format!("[{}]", items.join(", "))
            }
            Expr::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(key, value)| format!("{}: {}", quote(key), value.flat()))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }

    /// Whether the expression stands as an operand without parentheses: an atom, a call, a
    /// literal.
    fn is_primary(&self) -> bool {
        matches!(
            self,
            Expr::Atom(_) | Expr::Exists(..) | Expr::Not(_) | Expr::List(_) | Expr::Map(_)
        )
    }

    /// As an operand of another expression: parenthesised unless primary.
    fn operand_flat(&self) -> String {
        match self.is_primary() {
            true => self.flat(),
            false => format!("({})", self.flat()),
        }
    }
}

fn join_flat(operands: &[Expr], separator: &str) -> String {
    operands
        .iter()
        .map(Expr::operand_flat)
        .collect::<Vec<_>>()
        .join(separator)
}

/// The column after `text` written from `column`.
fn end_column(text: &str, column: usize) -> usize {
    match text.rsplit_once('\n') {
        Some((_, last)) => last.len(),
        None => column + text.len(),
    }
}

/// Lays the expression out from column `indent`: on one line where it fits, otherwise one
/// operand per line, each composite operand opening a parenthesis on its line and closing it
/// on a line of its own.
fn render(expr: &Expr, indent: usize) -> String {
    render_at(expr, indent, indent)
}

/// Lays the expression out from `column` of a line indented by `indent`.
fn render_at(expr: &Expr, indent: usize, column: usize) -> String {
    let flat = expr.flat();
    if column + flat.len() <= WIDTH {
        return flat;
    }
    let pad = " ".repeat(indent);
    match expr {
        Expr::And(operands) => render_chain(operands, "&&", indent),
        Expr::Or(operands) => render_chain(operands, "||", indent),
        Expr::Infix(operator, operands) => render_chain(operands, operator, indent),
        Expr::Not(operand) => format!("!{}", render_operand(operand, indent, column + 1)),
        Expr::Cond(condition, then, otherwise) => format!(
            "{}\n{pad}? {}\n{pad}: {}",
            render_operand(condition, indent, column),
            render_operand(then, indent, indent + 2),
            render_operand(otherwise, indent, indent + 2)
        ),
        Expr::Exists(range, variable, predicate) => {
            let range = render_operand(range, indent, column);
            let opening = format!("{range}.exists({variable},");
            format!(
                "{opening}\n{pad}  {}\n{pad})",
                render(predicate, indent + 2)
            )
        }
        Expr::List(items) => render_list(items, indent, column),
        Expr::Map(entries) => {
            let inner = " ".repeat(indent + 2);
            let entries: Vec<String> = entries
                .iter()
                .map(|(key, value)| {
                    let key = format!("{}: ", quote(key));
                    let value = render_at(value, indent + 2, indent + 2 + key.len());
                    format!("{inner}{key}{value}")
                })
                .collect();
            format!("{{\n{}\n{pad}}}", entries.join(",\n"))
        }
        Expr::Atom(text) => text.clone(),
    }
}

/// Lays out the operands of `operator` from column `indent`: they fill a line while they fit;
/// one that does not starts a line of its own with the operator, and one broken over lines ends
/// its line.
fn render_chain(operands: &[Expr], operator: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut text = String::new();
    let mut column = indent;
    let mut line_open = false;
    for (index, operand) in operands.iter().enumerate() {
        let flat = operand.operand_flat();
        let joined = operator.len() + 2 + flat.len();
        if index > 0 && line_open && column + joined <= WIDTH {
            text.push_str(&format!(" {operator} {flat}"));
            column += joined;
            continue;
        }
        let start = match index {
            0 => indent,
            _ => {
                text.push_str(&format!("\n{pad}{operator} "));
                indent + operator.len() + 1
            }
        };
        let rendered = render_operand(operand, indent, start);
        line_open = !rendered.contains('\n');
        column = end_column(&rendered, start);
        text.push_str(&rendered);
    }
    text
}

/// Lays out a list from `column`: its items fill lines, continued two columns in from `indent`;
/// a lone item that does not fit is laid out on lines of its own, a map within the brackets.
fn render_list(items: &[Expr], indent: usize, column: usize) -> String {
    match items {
        // A map opens and closes with the brackets.
        [only @ Expr::Map(_)] => return format!("[{}]", render_at(only, indent, column + 1)),
        [only] => {
            let pad = " ".repeat(indent);
            return format!("[\n{pad}  {}\n{pad}]", render(only, indent + 2));
        }
        _ => {}
    }
    let inner = indent + 2;
    let mut text = String::from("[");
    let mut column = column + 1;
    for (index, item) in items.iter().enumerate() {
        let flat = item.flat();
        // The item and what follows it on the line: `,` or `]`.
        let width = flat.len() + 1;
        if index > 0 {
            text.push(',');
            column += 1;
        }
        let space = usize::from(index > 0);
        if column + space + width <= WIDTH {
            if index > 0 {
                text.push(' ');
            }
            text.push_str(&flat);
            column += space + flat.len();
        } else {
            text.push_str(&format!("\n{}", " ".repeat(inner)));
            let rendered = render_at(item, inner, inner);
            column = end_column(&rendered, inner);
            text.push_str(&rendered);
        }
    }
    text.push(']');
    text
}

/// Renders an operand that starts at `column` of a line indented by `indent`: composites in
/// parentheses, broken over lines indented two more when they do not fit.
fn render_operand(operand: &Expr, indent: usize, column: usize) -> String {
    let flat = operand.operand_flat();
    if column + flat.len() <= WIDTH {
        return flat;
    }
    if operand.is_primary() {
        return render_at(operand, indent, column);
    }
    let pad = " ".repeat(indent);
    let inner = render(operand, indent + 2);
    format!("(\n{pad}  {inner}\n{pad})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_what_cel_string_literals_cannot_hold() {
        assert_eq!(quote("appID"), "'appID'");
        assert_eq!(quote("it's"), r"'it\'s'");
        assert_eq!(quote(r"a\b"), r"'a\\b'");
        assert_eq!(quote("a\nb\u{7}é😀"), r"'a\nb\u0007\u00e9\U0001f600'");
    }

    #[test]
    fn patterns_widen_to_prefix_substrings_and_suffix() {
        let flat = |pattern| glob("u", pattern).flat();
        assert_eq!(flat("alice"), "u == 'alice'");
        assert_eq!(flat("*"), "true");
        assert_eq!(flat("a:*"), "u.startsWith('a:')");
        assert_eq!(flat("*:a"), "u.endsWith(':a')");
        assert_eq!(
            flat("a*b*c"),
            "u.startsWith('a') && u.contains('b') && u.endsWith('c')"
        );
    }

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

    #[test]
    fn patterns_with_one_star_match_exactly() {
        let flat = |pattern| glob_exactly("u", pattern).map(|expr| expr.flat());
        assert_eq!(flat("k3s"), Some("u == 'k3s'".to_owned()));
        assert_eq!(flat("k3s:*"), Some("u.startsWith('k3s:')".to_owned()));
        assert_eq!(flat("*:agent"), Some("u.endsWith(':agent')".to_owned()));
        assert_eq!(
            flat("ab*ba"),
            Some("u.startsWith('ab') && u.endsWith('ba') && size(u) >= 4".to_owned())
        );
        assert_eq!(flat("a*b*c"), None);
    }

    #[test]
    fn every_writer_of_the_control_plane_is_in_its_condition() {
        let settings = Settings::from_json(
            br#"{"identities": [{"owners": ["*"], "users": ["u"]}], "writes": "Owner"}"#,
        )
        .unwrap();
        let conditions = match_conditions(&settings);
        let expression = |name: &str| {
            let condition = conditions.iter().find(|condition| condition.name == name);
            condition.expect(name).expression.clone()
        };
        let controllers = expression(TRUSTED_WRITERS[0]);
        for trust in control_plane::rules(&[]) {
            if let Writer::KubeSystemServiceAccount(account) = trust.writer {
                let user = quote(&format!("{KUBE_SYSTEM_PREFIX}{account}"));
                assert!(controllers.contains(&user), "{user}");
            }
        }
        assert!(controllers.contains(&quote(control_plane::CONTROLLER_MANAGER)));
        assert!(expression(TRUSTED_WRITERS[1]).contains(&quote(control_plane::SCHEDULER)));
        assert!(expression(TRUSTED_WRITERS[2]).contains(&quote(NODE_PREFIX)));
        // Without `writes: Owner` no DELETE is judged, and kubelets are trusted with nothing else.
        let any = match_conditions(&Settings::default());
        assert!(
            any.iter()
                .all(|condition| condition.name != TRUSTED_WRITERS[2])
        );
        assert!(
            any.iter()
                .all(|condition| !condition.expression.contains("'DELETE': ["))
        );
    }
}
