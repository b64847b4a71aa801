//! Derived objects follow their controller. An object's controller is its `ownerReferences`
//! entry with `controller: true`; operators that derive objects (cert-manager's
//! CertificateRequests, Knative's Routes, prometheus-operator's StatefulSets, Camel K's
//! Deployments) copy their parent's labels or annotations onto them. A mark whose value equals
//! the one the controller carries now is **inherited**, not claimed: the controller's marks
//! were judged when they were set.
//!
//! The controller is read — Kubewarden's `kubernetes/get_resource`, through [`Parents`] — only
//! after the rules deny without it, so no request they allow makes a host call. When may a
//! mark be inherited:
//!
//! | operation | the object's controller                                            | inherited                   |
//! |-----------|--------------------------------------------------------------------|-----------------------------|
//! | any       | none, or of a kind `parentKinds` does not name                     | no: judged as a claim       |
//! | CREATE    | read, the uid its reference names                                  | each mark equal to its own  |
//! | UPDATE    | the same: the stored object had that controller (uid) and the update leaves `ownerReferences` as they are | each mark equal to its own |
//! | UPDATE    | the reference is new, changed, or another uid                      | no (repointed): a new controller is read only when every mark stays, to judge the repoint |
//! | DELETE    | the stored object's, read                                          | each mark equal to its own  |
//! | any       | not found, unreadable, or another object (uid) than it names       | no                          |
//!
//! What an inherited mark passes (the other rules' columns):
//!
//! | rule                   | an inherited mark                                                  |
//! |------------------------|--------------------------------------------------------------------|
//! | transition             | none → A and A → B are accepted: the controller moved (`adoption: Deny` too); A → none where the controller carries none, or carries A and, under `writes: Owner`, the namespaced object is left without a mark, owned through its chain ([`crate::children`]; Flagger's promotion strips the Helm annotations it copied) (`orphaning: Deny` too) |
//! | owner value, scope     | passed, as the controller's                                        |
//! | one owner              | judged as any owner                                                |
//! | identity               | set by a requester acting for the owner or deriving for it (`access: Derive`) |
//! | `writes: Owner`        | written by a requester acting, writing or deriving for the owner   |
//!
//! Removing a mark, offering, and any owner the controller does not carry stay the owner's:
//! pointing an object at another owner's parent gains nothing. Nor may anyone point what an
//! owner owns at such a parent first and move the mark as inherited later ([`repoint_rule`]):
//!
//! | an UPDATE gives an owned object, marks kept, a new controller of a followed kind (an Argo CD tracking id, never inherited, aside) | rule | allowed |
//! |-------------------------------------------------------------------------------|--------------|---------|
//! | the new controller, read, carries the object's owner                          | —            | yes     |
//! | it does not, with identities                                                  | `identity`   | by a requester acting for the owner, or `access: Write` |
//! | it does not, without identities                                               | `controller` | no: the owner hands the object over with an offer first | An Argo CD tracking id names one
//! object, so no copy of it is inherited. An audit replay reads every followed controller and
//! reports a mark out of step with it ([`out_of_step`]).

use crate::facts::{Entry, Facts, Sides, annotation_keys, carries_a_mark};
use crate::lookup;
use crate::owner::{Claim, Marks, OwnerMark, Shape};
use crate::request::{Object, ObjectScope, OwnerReference};
use crate::requester;
use crate::settings::ParentKind;
use crate::violation::{Act, Change, Finding, Found, Reason, Violation};

/// Where the rules read a controller: Kubewarden's host in the module, a table in tests.
pub trait Parents {
    /// The JSON of the object `lookup` names, as the host returns it, or the host's error.
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String>;

    /// The JSON of the list `lookup` names, as the host returns it (a `List` of its kind), or
    /// the host's error; a host that lists nothing says so.
    fn list(&self, _lookup: &ListLookup<'_>) -> Result<String, String> {
        Err("no Kubewarden host to list it from".to_owned())
    }

    /// Whether there is a host to read from at all: outside a module (natively, in tests and
    /// benchmarks) there is none, and what only a lookup could judge — a `scale` write's target
    /// ([`crate::scale`]) — is not judged.
    fn reads(&self) -> bool {
        true
    }
}

/// A host that reads nothing: every lookup fails, saying so.
pub struct NoHost;

impl Parents for NoHost {
    fn get(&self, _: &Lookup<'_>) -> Result<String, String> {
        Err("no Kubewarden host to read it from".to_owned())
    }

    fn reads(&self) -> bool {
        false
    }
}

/// A lookup of one object, as Kubewarden's `kubernetes/get_resource` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup<'a> {
    /// The `apiVersion` to read it at: the one the settings, and the policy's
    /// `contextAwareResources`, name.
    pub api_version: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its namespace; `None` for a cluster-scoped kind.
    pub namespace: Option<&'a str>,
    /// Whether the host reads past its cache: policy-server caches lookups, as for
    /// context-aware policies, and a read is made past it only when what it gave is in doubt.
    pub disable_cache: bool,
}

impl Lookup<'_> {
    /// The object as messages name it: `Integration shop/app`, `ReplicaSet shop/web-7d9c`.
    pub fn named(&self) -> String {
        match self.namespace {
            Some(namespace) => format!("{} {namespace}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    /// The host call's payload: the JSON of kubewarden-policy-sdk's `GetResourceRequest`
    /// (`api_version`, `kind`, `name`, `namespace`, `disable_cache`, `field_masks`), which its
    /// `get_resource` serialises through serde; written out here, it costs the module 9 KB
    /// less.
    pub fn payload(&self) -> String {
        let quoted = |text: &str| serde_json::to_string(text).unwrap_or_default();
        let namespace = self.namespace.map_or_else(|| "null".to_owned(), quoted);
        format!(
            r#"{{"api_version":{},"kind":{},"name":{},"namespace":{namespace},"disable_cache":{},"field_masks":null}}"#,
            quoted(self.api_version),
            quoted(self.kind),
            quoted(self.name),
            self.disable_cache,
        )
    }
}

/// A lookup of the objects of a kind in a namespace that carry these labels, as Kubewarden's
/// `kubernetes/list_resources_by_namespace` takes it. policy-server serves it from a watch it
/// keeps (a kube-rs reflector), fresh to within the watch's delay, which no call reads past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLookup<'a> {
    /// The `apiVersion` to list at.
    pub api_version: &'a str,
    /// The kind.
    pub kind: &'a str,
    /// The namespace.
    pub namespace: &'a str,
    /// The label selector: `owner=helm,name=web`.
    pub label_selector: &'a str,
    /// The only fields the host keeps of each object, in its watch and its answer
    /// (`metadata.labels`); none: all of them.
    pub field_masks: &'a [&'a str],
}

impl ListLookup<'_> {
    /// The host call's payload: the JSON of kubewarden-policy-sdk's
    /// `ListResourcesByNamespaceRequest` (`api_version`, `kind`, `namespace`, `label_selector`,
    /// `field_selector`, `field_masks`).
    pub fn payload(&self) -> String {
        let quoted = |text: &str| serde_json::to_string(text).unwrap_or_default();
        let masks = match self.field_masks {
            [] => "null".to_owned(),
            masks => serde_json::to_string(masks).unwrap_or_default(),
        };
        format!(
            r#"{{"api_version":{},"kind":{},"namespace":{},"label_selector":{},"field_selector":null,"field_masks":{masks}}}"#,
            quoted(self.api_version),
            quoted(self.kind),
            quoted(self.namespace),
            quoted(self.label_selector),
        )
    }
}

/// The controller of the judged object (the new one; the stored one on DELETE), of a kind the
/// settings follow.
#[derive(Debug)]
pub struct Controller<'a> {
    reference: OwnerReference<'a>,
    kind: &'a ParentKind,
    namespace: Option<&'a str>,
    /// Whether an UPDATE gives the object this controller: read only to tell whether the
    /// repoint keeps the object's owner ([`repoint_rule`]), never followed.
    repointed: bool,
}

impl Controller<'_> {
    /// The controller as messages name it: `Integration shop/app`.
    fn name(&self) -> String {
        self.lookup().named()
    }

    /// The lookup, at the `apiVersion` the settings (and the policy's `contextAwareResources`)
    /// name.
    pub fn lookup(&self) -> Lookup<'_> {
        Lookup {
            api_version: &self.kind.api_version,
            kind: &self.kind.kind,
            name: &self.reference.name,
            namespace: self.namespace,
            disable_cache: false,
        }
    }
}

/// What a lookup of the object of a uid gives ([`read_checked`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Checked {
    /// The object's JSON, as the host returned it.
    The(String),
    /// Another object of its name, read past the cache: the uid it has.
    Another {
        /// Its uid.
        uid: String,
    },
}

/// Reads the object `lookup` names, checked to be the object of `uid` (an owner reference's,
/// a Scale's): a read that gives another uid — a cached object since deleted and created again
/// under its name — is made once more past the cache. An empty `uid`, or a read without one,
/// checks nothing. The host's error, if it fails.
pub fn read_checked(
    parents: &dyn Parents,
    lookup: &Lookup<'_>,
    uid: &str,
) -> Result<Checked, String> {
    let mut lookup = *lookup;
    loop {
        let read = parents.get(&lookup)?;
        let other = uid_of(&read).filter(|read| !uid.is_empty() && !read.is_empty() && read != uid);
        match (other, lookup.disable_cache) {
            (None, _) => return Ok(Checked::The(read)),
            (Some(uid), true) => return Ok(Checked::Another { uid }),
            (Some(_), false) => lookup.disable_cache = true,
        }
    }
}

/// The `metadata.uid` of an object the host read, when its text has one; read without
/// reading the rest of the object.
fn uid_of(object: &str) -> Option<String> {
    let metadata = lookup::field(object, "metadata")??;
    let uid = lookup::field(metadata, "uid")??;
    serde_json::Deserializer::from_str(uid)
        .into_iter::<String>()
        .next()?
        .ok()
}

/// The controller to follow for a request's object: `Ok(None)` when it has none of a followed
/// kind, `Err` when it has one the request may not follow (see the table).
pub fn controller<'a>(facts: &Facts<'a>) -> Result<Option<Controller<'a>>, Found> {
    let object = facts.sides.object();
    let unreadable = |error| Found {
        controller: "named in metadata.ownerReferences".to_owned(),
        finding: Finding::Unreadable(error),
    };
    let Some(reference) = object.metadata.controller().map_err(unreadable)? else {
        return Ok(None);
    };
    let followed = facts
        .settings
        .parent_kinds
        .iter()
        .find(|kind| kind.names(&reference.api_version, &reference.kind));
    let Some(kind) = followed else {
        return Ok(None);
    };
    // Owner references are resolved in the object's namespace; a cluster-scoped object's
    // namespaced owner is never resolved (the garbage collector's `ownerRefs` rules).
    let namespace = match (kind.cluster_scoped, facts.request.object_scope()) {
        (true, _) => None,
        (false, ObjectScope::Namespace(namespace)) => Some(namespace),
        (false, ObjectScope::Cluster) => return Ok(None),
    };
    let mut controller = Controller {
        reference,
        kind,
        namespace,
        repointed: false,
    };
    if let Sides::Update(old, new) = facts.sides {
        let had = old.metadata.controller().ok().flatten().as_ref() == Some(&controller.reference);
        let kept = old.metadata.owner_references_text() == new.metadata.owner_references_text();
        // A new controller is read when every mark stays: whether it carries the object's
        // owner decides the repoint. A mark moved in the same update is never inherited.
        let moves = facts.entries.iter().any(Entry::moves);
        match (had, kept) {
            (true, true) => {}
            (false, _) if !moves => controller.repointed = true,
            _ => return Err(controller.found(Finding::Repointed)),
        }
    }
    Ok(Some(controller))
}

/// What reading the controller gives the rules.
#[derive(Debug)]
pub enum Derivation<'p> {
    /// Nothing read: no mark is inherited.
    Unread,
    /// The controller, read: its marks, which copies equal to them inherit.
    Read {
        /// The controller, as messages name it.
        controller: String,
        /// Its marks.
        marks: Marks<'p>,
    },
    /// The new controller of a repointed object, read: its marks inherit nothing, but say
    /// whether the repoint keeps the object's owner ([`repoint_rule`]).
    Repointed {
        /// The controller, as messages name it.
        controller: String,
        /// Its marks.
        marks: Marks<'p>,
    },
    /// The controller is not followed; why, as denials say it.
    Refused(Found),
}

impl<'p> Derivation<'p> {
    /// What `controller`'s lookup gives: its marks when `parent` is the object its reference
    /// names, read.
    pub fn of(
        facts: &Facts<'_>,
        controller: &Controller<'_>,
        parent: Result<&'p Object<'p>, String>,
    ) -> Derivation<'p> {
        let refused = |finding| Derivation::Refused(controller.found(finding));
        let parent = match parent {
            Ok(parent) => parent,
            Err(error) if is_not_found(&error) => return refused(Finding::Missing(error)),
            Err(error) => return refused(Finding::Unreadable(error)),
        };
        match parent.metadata.uid() {
            Ok(uid) if uid == controller.reference.uid => {}
            Ok(_) => return refused(Finding::Replaced),
            Err(error) => return refused(Finding::Unreadable(error)),
        }
        let annotations = match parent.mark_annotations(annotation_keys(facts.settings)) {
            Ok(annotations) => annotations,
            Err(error) => return refused(Finding::Unreadable(error)),
        };
        // No object: a tracking id names one object, never its children.
        let marks = Marks {
            labels: &parent.metadata.labels,
            annotations,
            object: None,
        };
        let name = controller.name();
        match controller.repointed {
            true => Derivation::Repointed {
                controller: name,
                marks,
            },
            false => Derivation::Read {
                controller: name,
                marks,
            },
        }
    }

    /// Whether `entry`'s claim (its stored one on DELETE) is inherited from the controller: it
    /// carries that owner; or the entry drops its mark, and the controller carries none (a mark
    /// it dropped) or the owner dropped, which keeps the object through its chain
    /// ([`kept_through_the_chain`]).
    pub fn inherits(&self, facts: &Facts<'_>, entry: &Entry<'_>) -> bool {
        let (Derivation::Read { marks, .. }, Some(claim)) = (self, entry.new.or(entry.old)) else {
            return false;
        };
        let carried = Claim::read(entry.mark, marks);
        match claim.is_none() {
            true => carried.is_none() || kept_through_the_chain(facts, entry, carried),
            false => carried == claim,
        }
    }

    /// Whether the object, repointed at the controller read, keeps `owner` under `mark`: the
    /// new controller carries it.
    pub fn keeps(&self, mark: &OwnerMark, owner: Claim<'_>) -> bool {
        matches!(self, Derivation::Repointed { marks, .. } if Claim::read(mark, marks) == owner)
    }

    /// The offer the controller carries (`None` in it when it carries none); `None` when it
    /// was not read.
    pub fn offer(&self, annotation: &str) -> Option<Option<&'p str>> {
        match self {
            Derivation::Read { marks, .. } => Some(marks.annotations.get(annotation).map(|v| &**v)),
            _ => None,
        }
    }

    /// What a denial of `entry` says the lookup found; `inherited` when the entry's mark was
    /// inherited and still denied (by its identity).
    pub fn found(&self, entry: &Entry<'_>, inherited: bool) -> Option<Found> {
        match self {
            Derivation::Unread => None,
            Derivation::Refused(found) => Some(found.clone()),
            Derivation::Repointed { controller, marks } => Some(Found {
                controller: controller.clone(),
                finding: Finding::Carries(Claim::read(entry.mark, marks).to_string()),
            }),
            Derivation::Read { controller, marks } => Some(Found {
                controller: controller.clone(),
                finding: match inherited {
                    true => Finding::NotDerived,
                    false => Finding::Carries(Claim::read(entry.mark, marks).to_string()),
                },
            }),
        }
    }
}

/// Whether dropping `entry`'s mark, whose stored owner is `carried`, the one its controller
/// carries, keeps the object that owner's: under `writes: Owner` a namespaced object left
/// without a mark is owned through its controllers ([`crate::children`]) — Flagger's promotion
/// strips the Helm annotations it copied onto a primary whose Canary carries them.
fn kept_through_the_chain(facts: &Facts<'_>, entry: &Entry<'_>, carried: Claim<'_>) -> bool {
    let unmarked = |new| !carries_a_mark(new, facts.settings);
    entry.template.is_none()
        && entry.old == Some(carried)
        && facts.settings.judges_writes()
        && matches!(facts.request.object_scope(), ObjectScope::Namespace(_))
        && facts.sides.incoming().is_some_and(unmarked)
}

/// The repoint rule: why the requester may not give `entry`'s object, whose stored mark names
/// `owner` and which keeps it, a new controller of a followed kind, if it may not. Its marks
/// would follow that controller's from then on: only the owner's requesters (and `access:
/// Write`) choose what an object it owns follows — with identities; without, nobody acts for
/// an owner. Either way a new controller that carries the owner, read, keeps the object its
/// owner's, and the repoint gives nobody anything. Under `writes: Owner` the change is an
/// owner write before it is this.
pub fn repoint_rule<'a>(
    facts: &Facts<'a>,
    entry: &Entry<'a>,
    owner: Claim<'a>,
    derivation: &Derivation<'_>,
) -> Option<Reason<'a>> {
    let Sides::Update(old, new) = facts.sides else {
        return None;
    };
    let (old, new) = (&old.metadata, &new.metadata);
    if entry.template.is_some() || old.owner_references_text() == new.owner_references_text() {
        return None;
    }
    let controller = new.controller().ok().flatten()?;
    let followed = (facts.settings.parent_kinds.iter())
        .any(|kind| kind.names(&controller.api_version, &controller.kind));
    let repointed = old.controller().ok().flatten().as_ref() != Some(&controller);
    // A tracking id names its object: no copy of it is inherited, whatever the controller.
    let follows = entry.mark.shape() != Shape::Tracking;
    if !followed || !repointed || !follows || owner.owner(entry.mark).is_err() {
        return None;
    }
    if derivation.keeps(entry.mark, owner) {
        return None;
    }
    match facts.acting {
        Some(_) => requester::rule(facts, Act::Repoint, owner, false),
        None => Some(Reason::Repointed { owner }),
    }
}

/// Whether the host's error says the object does not exist: policy-server's own words for a
/// `get_opt` that found nothing (`Cannot find <apiVersion>/<kind> named '<name>' inside of
/// namespace '<namespace>'`, policy-evaluator `callback_handler/kubernetes/client.rs`), or the
/// API server's not-found status (`reason: NotFound`, its message `<resource> "<name>" not
/// found`, apimachinery `errors.NewNotFound`) as kube-rs writes it.
pub fn is_not_found(error: &str) -> bool {
    (error.contains("Cannot find ") && error.contains(" named '"))
        || error.contains("NotFound")
        || error.ends_with(" not found")
        || error.contains(" not found:")
}

/// The audit rule of derived objects: each mark of the object's own that names an owner and
/// differs from what its controller carries is out of step with it.
pub fn out_of_step<'a>(facts: &Facts<'a>, derivation: &Derivation<'_>) -> Vec<Violation<'a>> {
    let Derivation::Read { controller, marks } = derivation else {
        return Vec::new();
    };
    facts
        .object_entries()
        .filter_map(|entry| {
            let claim = entry.new.filter(|claim| !claim.is_none())?;
            let carried = Claim::read(entry.mark, marks);
            (carried != claim).then(|| {
                let found = Found {
                    controller: controller.clone(),
                    finding: Finding::Carries(carried.to_string()),
                };
                facts.entry_violation(entry, Change::kept(claim), Reason::OutOfStep(found))
            })
        })
        .collect()
}

impl Controller<'_> {
    fn found(&self, finding: Finding) -> Found {
        Found {
            controller: self.name(),
            finding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// policy-server's words for an object it did not find, and the API server's, are a
    /// not-found; a refusal is not.
    #[test]
    fn a_not_found_is_told_from_other_errors() {
        #[rustfmt::skip]
        let rows = [
            (r#"Callback evaluation failure: Cannot find olm.operatorframework.io/v1/ClusterExtension named 'cert-manager' inside of namespace 'None'"#, true),
            (r#"integrations.camel.apache.org "app" not found"#, true),
            (r#"ApiError: secrets "x" is forbidden: User "system:serviceaccount:kubewarden:policy-server-default" cannot get resource "secrets": Forbidden"#, false),
            ("Policy has not been granted access to Kubernetes v1/Secret resources. The violation has been reported.", false),
        ];
        for (error, expected) in rows {
            assert_eq!(is_not_found(error), expected, "{error}");
        }
    }

    /// The payload is the JSON kubewarden-policy-sdk's `ListResourcesByNamespaceRequest`
    /// serialises to.
    #[test]
    fn a_list_is_the_sdks_list_request() {
        use kubewarden_policy_sdk::host_capabilities::kubernetes::ListResourcesByNamespaceRequest;
        let lookup = ListLookup {
            api_version: "v1",
            kind: "Secret",
            namespace: "shop",
            label_selector: "owner=helm,name=we\"b",
            field_masks: &[],
        };
        let sdk = ListResourcesByNamespaceRequest {
            api_version: "v1".to_owned(),
            kind: "Secret".to_owned(),
            namespace: "shop".to_owned(),
            label_selector: Some("owner=helm,name=we\"b".to_owned()),
            field_selector: None,
            field_masks: None,
        };
        assert_eq!(lookup.payload(), serde_json::to_string(&sdk).unwrap());
        let masked = ListLookup {
            field_masks: &["metadata.labels"],
            ..lookup
        };
        let sdk = ListResourcesByNamespaceRequest {
            field_masks: Some(["metadata.labels".to_owned()].into()),
            ..sdk
        };
        assert_eq!(masked.payload(), serde_json::to_string(&sdk).unwrap());
    }

    /// The payload is the JSON kubewarden-policy-sdk's `GetResourceRequest` serialises to.
    #[test]
    fn a_lookup_is_the_sdks_get_resource_request() {
        use kubewarden_policy_sdk::host_capabilities::kubernetes::GetResourceRequest;
        let rows = [
            (
                Some("shop"),
                "camel.apache.org/v1",
                "Integration",
                "app",
                false,
            ),
            (None, "v1", "Namespace", "we\"ird\\name", true),
        ];
        for (namespace, api_version, kind, name, disable_cache) in rows {
            let lookup = Lookup {
                api_version,
                kind,
                name,
                namespace,
                disable_cache,
            };
            let sdk = GetResourceRequest {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                name: name.to_owned(),
                namespace: namespace.map(str::to_owned),
                disable_cache,
                field_masks: None,
            };
            assert_eq!(lookup.payload(), serde_json::to_string(&sdk).unwrap());
        }
    }
}
