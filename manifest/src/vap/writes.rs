//! `writes: Owner` in CEL (`writes::rule`): an UPDATE or DELETE of what a valid owner owns
//! needs a requester that writes for it — `Own` or `Write`, `Restore` for an UPDATE — unless it
//! finishes a deletion under way (`deletion::finishes`), changes nothing, or only adds
//! finalizers (`edit::of`). Only for the requests the policy judges alone: a write through a
//! subresource, of an unmarked child, of an HPA, or by a requester with grants is the
//! webhook's ([`super::split`]).
//!
//! Fields are compared as values, the module compares the text the API server sent; one
//! encoder writes both sides, so they agree (the proof checks it on every request it builds).

use single_owner_policy::Settings;

use super::Variable;
use super::read::{meta_map, path_or_null};
use super::requester;

/// The metadata fields compared on their own, or not at all: the API server maintains
/// `resourceVersion`, `managedFields` and `generation` (`edit::MAINTAINED`).
const APART: [&str; 9] = [
    "name",
    "labels",
    "annotations",
    "finalizers",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
    "managedFields",
    "generation",
];

/// The variables the rule reads, none unless the settings judge writes: whether the request
/// finishes a deletion under way (`finishing`), and what an UPDATE changes (`edit`:
/// `unchanged`, `adds finalizers` or `other`).
pub(super) fn variables(settings: &Settings) -> Vec<Variable> {
    if !settings.judges_writes() {
        return Vec::new();
    }
    let finalizers = |root: &str| {
        let list = path_or_null(root, &["metadata", "finalizers"]);
        format!("({list} == null ? [] : {list})")
    };
    let (old_f, new_f) = ("variables.oldFinalizers", "variables.newFinalizers");
    let has = |option: &str| {
        format!("has(variables.options.{option}) && variables.options.{option} != null")
    };
    let grace = path_or_null("oldObject", &["metadata", "deletionGracePeriodSeconds"]);
    let shortens = format!(
        "{grace} != null && {} && {grace} > 0 && variables.options.gracePeriodSeconds < {grace}",
        has("gracePeriodSeconds")
    );
    // The propagation asked differs from the one the finalizers hold (orphan, foreground).
    let (orphan, foreground) = (
        format!("'orphan' in {old_f}"),
        format!("'foregroundDeletion' in {old_f}"),
    );
    let policy = "variables.options.propagationPolicy";
    let changes_propagation = format!(
        "{} ? (variables.options.orphanDependents != ({orphan}) || {foreground}) : {} ? \
         ({policy} == 'Orphan' ? (!({orphan}) || {foreground}) : {policy} == 'Background' ? \
         ({orphan} || {foreground}) : {policy} == 'Foreground' ? ({orphan} || !({foreground})) : \
         true) : false",
        has("orphanDependents"),
        has("propagationPolicy")
    );
    let propagation_kept = format!(
        "(!({orphan}) || 'orphan' in {new_f}) && (!({foreground}) || 'foregroundDeletion' in \
         {new_f})"
    );
    let only_status = format!(
        "{propagation_kept} && {new_f}.all(f, f in {old_f}) && variables.sameMetadata && {}",
        same_fields(&["status"])
    );
    let deleting = path_or_null("oldObject", &["metadata", "deletionTimestamp"]);
    let adds = format!(
        "{old_f}.all(f, f in {new_f}) && {new_f}.exists(f, !(f in {old_f})) && \
         {new_f}.all(f, f in {old_f} || (f != 'orphan' && f != 'foregroundDeletion'))"
    );
    let vars = [
        (
            "options",
            "has(request.options) && request.options != null ? request.options : {}".to_owned(),
        ),
        ("oldFinalizers", finalizers("oldObject")),
        ("newFinalizers", finalizers("object")),
        (
            "sameMetadata",
            format!("oldObject != null && object != null && {}", same_metadata()),
        ),
        (
            "finishing",
            format!(
                "oldObject != null && {deleting} != null && (request.operation == 'DELETE' ? \
                 !({shortens}) && !({changes_propagation}) : object != null && ({only_status}))"
            ),
        ),
        (
            "edit",
            format!(
                "request.operation != 'UPDATE' || !(variables.sameMetadata && {}) ? 'other' : \
                 {old_f} == {new_f} ? 'unchanged' : ({adds}) ? 'adds finalizers' : 'other'",
                same_fields(&[])
            ),
        ),
    ];
    vars.into_iter()
        .map(|(name, expression)| Variable {
            name: name.to_owned(),
            expression,
        })
        .collect()
}

/// CEL: what a write of the owner whose id is `id` breaks, `''` for nothing, where `valid`
/// says whether the claim names a valid owner; `None` unless the settings judge writes.
pub(super) fn rule(settings: &Settings, valid: &str, id: &str) -> Option<String> {
    if !settings.judges_writes() {
        return None;
    }
    let may = requester::may_write(settings, id)?;
    Some(format!(
        "({valid}) && !variables.finishing && variables.edit == 'other' && !({may}) ? \
         'owner writes' : ''"
    ))
}

/// CEL: the stored and new metadata are equal but for the finalizers and the fields the API
/// server maintains.
fn same_metadata() -> String {
    let meta = |root: &str| {
        let metadata = path_or_null(root, &["metadata"]);
        format!("({metadata} == null ? {{}} : {metadata})")
    };
    let (old, new) = (meta("oldObject"), meta("object"));
    let field = |root: &str, name: &str| path_or_null(root, &["metadata", name]);
    let apart = crate::conditions::string_list(APART);
    let equal = |name: &str| format!("{} == {}", field("oldObject", name), field("object", name));
    format!(
        "({} == {}) && {} == {} && {} == {} && {} && {} && {old}.all(k, k in {apart} || (k in \
         {new} && {new}[k] == {old}[k])) && {new}.all(k, k in {apart} || k in {old})",
        or_empty(&field("oldObject", "name")),
        or_empty(&field("object", "name")),
        meta_map("oldObject", "labels"),
        meta_map("object", "labels"),
        meta_map("oldObject", "annotations"),
        meta_map("object", "annotations"),
        equal("deletionTimestamp"),
        equal("deletionGracePeriodSeconds"),
    )
}

/// CEL: `value`, or `''` where it is `null`.
fn or_empty(value: &str) -> String {
    format!("({value} == null ? '' : {value})")
}

/// CEL: the stored and new objects' top-level fields but `metadata` are equal, but for
/// `except`.
fn same_fields(except: &[&str]) -> String {
    let skip = |k: &str| match except {
        [] => format!("{k} == 'metadata'"),
        except => format!(
            "{k} == 'metadata' || {k} in {}",
            crate::conditions::string_list(except)
        ),
    };
    format!(
        "oldObject.all(k, {} || (k in object && object[k] == oldObject[k])) && object.all(k, {} \
         || k in oldObject)",
        skip("k"),
        skip("k")
    )
}
