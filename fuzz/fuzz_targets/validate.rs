//! Any bytes as the `validate` payload: the policy answers, never panics, and its answer keeps
//! the invariants that can be decided from the payload alone (an oracle of its own, reading the
//! payload as a JSON tree, independent of the policy's typed view):
//! - codes are 400 or 403 only; a 400 says the request is unreadable, a 403 says, one a line,
//!   exactly the violations of the policy's typed verdict (`policy::Payload`), at least one;
//! - an accepted UPDATE never changes the owner under a mark M into another, unless the
//!   requester is exempt or the stored object offered it under M from that owner to the new one
//!   (`M: A -> B`, M the mark's key) and the new object drops the offer; the owner is read as
//!   the mark says: a label or an annotation, with its kind or namespace companion, or the app
//!   of an Argo CD tracking id that names the object itself (another object's names none);
//! - an accepted CREATE or change never leaves an owner of a namespaced kind on a cluster-scoped
//!   object, unless the requester is exempt;
//! - in both, a requester that may be the trusted control plane counts as exempt: this oracle
//!   does not know which resources each writer is trusted with (`tests/properties.rs` does), so
//!   it leaves every request of a control-plane name, or of a `trustedWriters` user, alone;
//! - a mutation comes only with `stamp: true`, on a CREATE or an UPDATE that consumes an offer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use single_owner_policy::policy::{self, Payload, Verdict};
use single_owner_policy::NoHost;

fuzz_target!(|payload: &[u8]| {
    let response = policy::validate(payload);
    // What the guest hands back to the host must always serialize.
    let answer = serde_json::to_vec(&response).expect("a response serializes");
    let answer = String::from_utf8_lossy(&answer);
    match (
        response.accepted,
        response.code,
        response.message.as_deref(),
    ) {
        (true, None, None) => {}
        (false, Some(400), Some(message)) => {
            assert!(
                message.starts_with("cannot read the admission request: "),
                "{answer}"
            );
            return;
        }
        (false, Some(403), Some(message)) => {
            let parsed = Payload::parse(payload).expect("a 403 answers a readable payload");
            let Verdict::Deny(violations) = parsed.verdict(&NoHost) else {
                panic!("a 403 the typed verdict does not give: {answer}");
            };
            assert!(!violations.is_empty(), "{answer}");
            let lines: Vec<_> = violations.iter().map(ToString::to_string).collect();
            assert_eq!(message, lines.join("\n"), "{answer}");
            return;
        }
        _ => panic!("not an answer the policy gives: {answer}"),
    }
    // Accepted: the policy read what it reads. It skips the rest unchecked — odd bytes, deep
    // nesting — so the tree is built from the payload with invalid UTF-8 replaced (where the
    // policy reads, invalid UTF-8 is a 400), and what serde_json cannot build, nested past its
    // recursion limit, cannot be decided here.
    let Ok(document) = serde_json::from_str::<Value>(&String::from_utf8_lossy(payload)) else {
        return;
    };
    Oracle::new(&document).check_accepted(response.mutated_object.is_some(), &answer);
});

/// What the payload says, read as a JSON tree.
struct Oracle<'a> {
    request: &'a Value,
    settings: Value,
}

impl<'a> Oracle<'a> {
    fn new(document: &'a Value) -> Self {
        let mut settings = match &document["settings"] {
            Value::Null => json!({}),
            settings => settings.clone(),
        };
        if settings["ownerMarks"].is_null() {
            settings["ownerMarks"] = json!([{"label": "appID", "clusterKinds": ["ClusterExtension"],
                                              "namespacedKinds": ["Extension"]}]);
        }
        if settings["offerAnnotation"].is_null() {
            settings["offerAnnotation"] = json!("single-owner-policy.io/offer");
        }
        Oracle {
            request: &document["request"],
            settings,
        }
    }

    fn check_accepted(&self, mutated: bool, answer: &str) {
        let operation = self.request["operation"].as_str().unwrap_or_default();
        let subresource = self.request["subResource"].as_str().unwrap_or_default();
        let scale = self.request["kind"]["group"] == "autoscaling"
            && self.request["kind"]["kind"] == "Scale";
        let old = self.object("oldObject");
        let new = self.object("object");
        if mutated {
            assert!(
                self.settings["stamp"] == true,
                "mutated without stamp: {answer}"
            );
            assert!(
                matches!(operation, "CREATE" | "UPDATE"),
                "mutated a {operation}: {answer}"
            );
        }
        if self.exempt()
            || self.control_plane()
            || scale
            || !matches!(operation, "CREATE" | "UPDATE")
        {
            return;
        }
        let (Some(new), true) = (new, operation == "CREATE" || old.is_some()) else {
            return;
        };
        let cluster_scoped = self.namespace().is_none();
        let marks = self.settings["ownerMarks"].as_array().into_iter().flatten();
        for entry in marks.filter_map(Mark::of) {
            let before = old.and_then(|old| self.owner(&entry, old));
            let after = self.owner(&entry, new);
            if let (Some(before), Some(after)) = (&before, &after)
                && before != after
                && operation == "UPDATE"
            {
                let stored = self.offer(old.unwrap());
                let offered = stored.as_deref().and_then(Offer::parse);
                let handed = offered.is_some_and(|offer| {
                    offer.mark == entry.key
                        && offer.to_mark == entry.key
                        && offer.from == before.id()
                        && offer.to == after.id()
                });
                // Deployed mutating (`stamp: true`), the policy removes the consumed offer.
                let consumed = self.offer(new).is_none() || mutated;
                assert!(
                    handed && consumed,
                    "{subresource} {} {before:?} -> {after:?} accepted without its offer: {answer}",
                    entry.key
                );
            }
            let gained = after.is_some() && after != before;
            if gained && cluster_scoped {
                let after = after.unwrap();
                let namespaced = entry.namespaced_kinds.iter();
                assert!(
                    !namespaced
                        .into_iter()
                        .any(|known| Some(*known) == after.kind()),
                    "namespaced owner {after:?} on a cluster-scoped object: {answer}"
                );
            }
        }
    }

    /// The request's `object` or `oldObject`, when it is one.
    fn object(&self, side: &str) -> Option<&'a Value> {
        Some(&self.request[side]).filter(|object| object.is_object())
    }

    /// The namespace of the request's object; `None` when it is cluster-scoped (a Namespace
    /// is, whatever namespace the request names).
    fn namespace(&self) -> Option<&'a str> {
        let namespace = self.request["namespace"].as_str().unwrap_or_default();
        let kind = &self.request["kind"];
        let a_namespace =
            kind["group"].as_str().unwrap_or_default().is_empty() && kind["kind"] == "Namespace";
        (!namespace.is_empty() && !a_namespace).then_some(namespace)
    }

    fn exempt(&self) -> bool {
        let exemptions = &self.settings["exemptions"];
        let listed =
            |list: &Value, name: &Value| list.as_array().is_some_and(|list| list.contains(name));
        listed(&exemptions["users"], &self.request["userInfo"]["username"])
            || self.request["userInfo"]["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|group| listed(&exemptions["groups"], group))
    }

    /// Whether the requester may be a trusted writer: a name of Kubernetes' control plane or
    /// a user pattern's prefix in the settings' `trustedWriters`.
    fn control_plane(&self) -> bool {
        let user = self.request["userInfo"]["username"]
            .as_str()
            .unwrap_or_default();
        let added = self.settings["trustedWriters"]
            .as_array()
            .into_iter()
            .flatten();
        [
            "system:serviceaccount:kube-system:",
            "system:kube-",
            "system:node:",
        ]
        .iter()
        .any(|prefix| user.starts_with(prefix))
            || added
                .flat_map(|writer| writer["users"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .any(|pattern| user.starts_with(pattern.split('*').next().unwrap_or_default()))
    }

    fn offer(&self, object: &Value) -> Option<String> {
        let annotation = self.settings["offerAnnotation"].as_str()?;
        object["metadata"]["annotations"][annotation]
            .as_str()
            .map(str::to_owned)
    }

    /// What `entry` reads from an object's labels or annotations, when it reads anything.
    fn owner(&self, entry: &Mark<'_>, object: &Value) -> Option<Claim> {
        let marks = &object["metadata"][entry.place];
        let value = marks[entry.key].as_str();
        if entry.tracking {
            let id = value?;
            return match tracking_id(id) {
                // Another object's id (a Pod's copy of its Deployment's) names no owner.
                Some((app, object_part)) => self
                    .is_self(object, object_part)
                    .then(|| Claim::Id(app.to_owned())),
                None => Some(Claim::Malformed(id.to_owned())),
            };
        }
        let part = entry.companion.and_then(|(key, _)| marks[key].as_str());
        match (entry.companion, part, value) {
            (_, None, None) => None,
            (Some((_, joint)), Some(part), value) => Some(Claim::Pair {
                joint,
                part: part.to_owned(),
                name: value.map(str::to_owned),
            }),
            (_, None, Some(value)) => Some(Claim::Id(value.to_owned())),
            (None, Some(_), _) => unreachable!("a part needs a companion"),
        }
    }

    /// Whether a tracking id's object part (`group`, `kind`, `namespace`, `name`) names the
    /// object: group, kind and name, and the namespace unless the object is cluster-scoped.
    fn is_self(&self, object: &Value, [group, kind, namespace, name]: [&str; 4]) -> bool {
        let own_kind = &self.request["kind"];
        let own_name = object["metadata"]["name"].as_str().unwrap_or_default();
        own_kind["group"].as_str().unwrap_or_default() == group
            && own_kind["kind"].as_str().unwrap_or_default() == kind
            && own_name == name
            && self.namespace().is_none_or(|own| own == namespace)
    }
}

/// One owner mark of the settings, as the oracle reads its entry.
struct Mark<'s> {
    /// `labels` or `annotations`.
    place: &'static str,
    key: &'s str,
    /// The companion key, and what joins its value to the name in the owner id.
    companion: Option<(&'s str, char)>,
    tracking: bool,
    namespaced_kinds: Vec<&'s str>,
}

impl<'s> Mark<'s> {
    fn of(entry: &'s Value) -> Option<Mark<'s>> {
        let (place, key) = match (entry["label"].as_str(), entry["annotation"].as_str()) {
            (Some(key), None) => ("labels", key),
            (None, Some(key)) => ("annotations", key),
            _ => return None,
        };
        let companion = match (entry["kindKey"].as_str(), entry["namespaceKey"].as_str()) {
            (Some(kind), _) => Some((kind, '.')),
            (None, Some(namespace)) => Some((namespace, '/')),
            (None, None) => None,
        };
        let namespaced_kinds = entry["namespacedKinds"].as_array().into_iter().flatten();
        Some(Mark {
            place,
            key,
            companion,
            tracking: entry["format"] == "ArgoCDTrackingID",
            namespaced_kinds: namespaced_kinds.filter_map(Value::as_str).collect(),
        })
    }
}

/// What a mark says on an object.
#[derive(Debug, PartialEq, Eq)]
enum Claim {
    /// A value: an owner id, the app of a tracking id.
    Id(String),
    /// A companion's value (a kind or a namespace) and the name, if any.
    Pair {
        joint: char,
        part: String,
        name: Option<String>,
    },
    /// A tracking id that does not split as one.
    Malformed(String),
}

impl Claim {
    /// The owner id offers name: the value, `<kind>.<name>` or `<namespace>/<name>`.
    fn id(&self) -> String {
        match self {
            Claim::Id(id) | Claim::Malformed(id) => id.clone(),
            Claim::Pair { joint, part, name } => {
                format!("{part}{joint}{}", name.as_deref().unwrap_or(""))
            }
        }
    }

    /// The kind an owner id names: the companion's value of a kind pair, or the value up to
    /// its first `.`.
    fn kind(&self) -> Option<&str> {
        match self {
            Claim::Pair {
                joint: '.', part, ..
            } => Some(part),
            Claim::Id(id) => id.split('.').next(),
            _ => None,
        }
    }
}

/// An offer, `<mark>: <from> -> <to>` or `<mark>: <from> -> <other mark>: <to>`, each part
/// non-empty and without whitespace.
struct Offer<'t> {
    mark: &'t str,
    from: &'t str,
    to_mark: &'t str,
    to: &'t str,
}

impl<'t> Offer<'t> {
    fn parse(text: &'t str) -> Option<Offer<'t>> {
        let (mark, rest) = text.split_once(": ")?;
        let (from, to) = rest.split_once(" -> ")?;
        let (to_mark, to) = to.split_once(": ").unwrap_or((mark, to));
        let blank = |word: &str| word.is_empty() || word.chars().any(char::is_whitespace);
        if [mark, from, to_mark, to].into_iter().any(blank) {
            return None;
        }
        Some(Offer {
            mark,
            from,
            to_mark,
            to,
        })
    }
}

/// Splits an Argo CD tracking id, `<app>:<group>/<kind>:<namespace>/<name>`: three `:` parts,
/// the last two of exactly two `/` parts each.
fn tracking_id(id: &str) -> Option<(&str, [&str; 4])> {
    let parts: Vec<&str> = id.split(':').collect();
    let [app, group_kind, namespace_name] = parts.as_slice() else {
        return None;
    };
    let (group, kind) = group_kind
        .split_once('/')
        .filter(|(_, kind)| !kind.contains('/'))?;
    let (namespace, name) = namespace_name
        .split_once('/')
        .filter(|(_, name)| !name.contains('/'))?;
    Some((app, [group, kind, namespace, name]))
}
