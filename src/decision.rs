//! The decision: what the rules say about one request — allow, mutate, deny with every
//! violation, or unreadable. It reads once and composes the rules, each a function of what was
//! read ([`Facts`]) beside its table, returning its typed [`Reason`]:
//!
//! 1. **trust**: a request of the trusted control plane, on what it is trusted with, is allowed
//!    before any rule ([`control_plane`]);
//! 2. **read**: the facts, once ([`crate::facts`]); which requests are judged at all, and on
//!    which objects, is [`Sides`]'s;
//! 3. **judge**: each mark, on the object and in each template — its transition
//!    ([`transition`], with the offer's part in it), the new owner's value and scope
//!    ([`scope`]), one owner across marks ([`one_owner`]), the requester's identity
//!    ([`requester`]), `writes: Owner` ([`writes`]) — then the offer ([`handoff`]); an audit
//!    replay by the object's state alone ([`audit`]);
//! 4. **decide**: deny with every violation; otherwise stamp the owner mark or remove a consumed
//!    offer where the settings ask for it ([`Mutation::of`]); otherwise allow. Under
//!    `stampOnly` nothing is denied: the validating twin judges the final object.
//!
//! Exemptions and the Kubewarden response are applied at the edge, in [`crate::policy`].

use crate::audit;
use crate::control_plane;
use crate::facts::{Entry, Facts, Sides};
use crate::handoff::{self, OfferVerdict};
use crate::mutation::Mutation;
use crate::one_owner;
use crate::request::AdmissionRequest;
use crate::requester;
use crate::scope;
use crate::settings::Settings;
use crate::transition::{self, Denial, Judgement};
use crate::violation::{Act, Change, Reason, Violation};
use crate::writes;

/// What the rules decide about a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Admit the request as it is.
    Allow,
    /// Admit the object, changed so.
    Mutate(Mutation),
    /// Deny the request: every rule that failed.
    Deny(Vec<Violation<'a>>),
    /// The request lacks what the rules read; why.
    Unreadable(String),
}

/// Applies every rule to a request: trust, read, judge, decide.
pub fn evaluate<'a>(request: &'a AdmissionRequest<'a>, settings: &'a Settings) -> Decision<'a> {
    let sides = match Sides::of(request, settings) {
        Ok(Some(sides)) => sides,
        Ok(None) => return Decision::Allow,
        Err(why) => return Decision::Unreadable(why),
    };
    if control_plane::trusts(request, sides.stored(), &settings.trusted_writers) {
        return Decision::Allow;
    }
    let facts = match Facts::read(request, settings, sides) {
        Ok(facts) => facts,
        Err(why) => return Decision::Unreadable(why),
    };
    if request.is_audit_replay() {
        return decide(&facts, audit::rule(&facts), false);
    }
    let mut violations: Vec<_> = facts
        .entries
        .iter()
        .filter_map(|entry| judge_mark(&facts, entry))
        .collect();
    let mut consume_offer = false;
    if sides.incoming().is_some() {
        match handoff::rule(&facts) {
            OfferVerdict::Fine => {}
            OfferVerdict::Consume => consume_offer = true,
            OfferVerdict::Deny(offer) => violations.extend(offer),
        }
    }
    decide(&facts, violations, consume_offer)
}

/// The rules of one owner mark, on the object or in a template.
fn judge_mark<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Option<Violation<'a>> {
    let violation = |change, reason| Some(facts.entry_violation(entry, change, reason));
    let Some(new) = entry.new else {
        // A DELETE, under `writes: Owner`.
        let owner = entry.old.unwrap_or_default();
        return violation(Change::kept(owner), writes::rule(facts, entry, owner)?);
    };
    let change = entry.change();
    let scope = facts.request.object_scope();
    let fit = |claim| scope::fit(entry.mark, claim, scope).err().map(Reason::from);
    let judgement = match transition::rule(facts, entry) {
        Ok(judgement) => judgement,
        // A receiver that could not own the object is the first thing to fix.
        Err(Denial::OwnerChange) if let Some(unfit) = fit(new) => return violation(change, unfit),
        Err(denial) => return violation(change, transition::reason(facts, entry, denial)),
    };
    let reason = match judgement {
        Judgement::Allow => return None,
        // A template's kept mark is written with its object, judged there.
        Judgement::Keep if entry.template.is_some() => return None,
        Judgement::Keep => {
            return violation(Change::kept(new), writes::rule(facts, entry, new)?);
        }
        // A value that names no owner is nobody's to keep.
        Judgement::Remove if change.old.owner(entry.mark).is_err() => return None,
        Judgement::Remove => requester::rule(facts, Act::Remove, change.old)?,
        Judgement::Set | Judgement::Accept => fit(new)
            .or_else(|| one_owner::rule(facts, entry))
            .or_else(|| requester::rule(facts, Act::Set, new))?,
    };
    violation(change, reason)
}

/// Denies with every violation; otherwise mutates where the settings ask for it. Under
/// `stampOnly` nothing is denied.
fn decide<'a>(facts: &Facts<'a>, violations: Vec<Violation<'a>>, consume: bool) -> Decision<'a> {
    if !violations.is_empty() && !facts.settings.stamp_only {
        return Decision::Deny(violations);
    }
    match Mutation::of(facts, consume) {
        mutation if mutation == Mutation::default() => Decision::Allow,
        mutation => Decision::Mutate(mutation),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// A decision, its violations as their messages.
    #[derive(Debug, PartialEq, Eq)]
    enum Outcome {
        Allow,
        Mutate(Mutation),
        Deny(Vec<String>),
        Unreadable(String),
    }

    fn decide(request: &Value, settings: &Value) -> Outcome {
        let json = request.to_string();
        let request: AdmissionRequest<'_> = serde_json::from_str(&json).unwrap();
        let settings = Settings::from_json(settings.to_string().as_bytes()).unwrap();
        match evaluate(&request, &settings) {
            Decision::Allow => Outcome::Allow,
            Decision::Mutate(mutation) => Outcome::Mutate(mutation),
            Decision::Deny(violations) => {
                Outcome::Deny(violations.iter().map(ToString::to_string).collect())
            }
            Decision::Unreadable(why) => Outcome::Unreadable(why),
        }
    }

    /// A `camel.apache.org/Integration` request in `shop` by `user`; each side's labels and
    /// annotations as JSON (`null`: no such side).
    fn integration(operation: &str, user: &str, old: Value, new: Value) -> Value {
        let side = |side: Value| match side {
            Value::Null => Value::Null,
            metadata => json!({"kind": "Integration", "metadata": metadata}),
        };
        json!({
            "kind": {"group": "camel.apache.org", "version": "v1", "kind": "Integration"},
            "operation": operation, "namespace": "shop", "name": "orders",
            "userInfo": {"username": user},
            "oldObject": side(old), "object": side(new),
        })
    }

    fn owned_by(operator: &str) -> Value {
        json!({"labels": {"camel.apache.org/operator.id": operator}})
    }

    fn offered(operator: &str, to: &str) -> Value {
        json!({"labels": {"camel.apache.org/operator.id": operator},
               "annotations": {"single-owner-policy.io/offer": format!("camel.apache.org/operator.id: {operator} -> {to}")}})
    }

    const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";

    fn camel_k(extra: Value) -> Value {
        let mut settings = json!({
            "ownerMarks": [{"label": "camel.apache.org/operator.id"}],
            "identities": [{"owners": ["operator-1"], "users": [OPERATOR_1]}],
        });
        for (key, value) in extra.as_object().unwrap() {
            settings[key] = value.clone();
        }
        settings
    }

    #[test]
    fn requests_the_rules_do_not_judge_are_allowed_and_incomplete_ones_unreadable() {
        let writes = camel_k(json!({"writes": "Owner"}));
        let owned = owned_by("operator-1");
        #[rustfmt::skip]
        let rows = [
            (integration("CONNECT", "alice", Value::Null, Value::Null), camel_k(json!({})), Outcome::Allow),
            (integration("DELETE", "alice", owned.clone(), Value::Null), camel_k(json!({})), Outcome::Allow),
            (integration("DELETE", "alice", Value::Null, Value::Null), writes.clone(),
             Outcome::Unreadable("a DELETE request needs `oldObject`".to_owned())),
            (integration("CREATE", "alice", Value::Null, Value::Null), writes.clone(),
             Outcome::Unreadable("a CREATE request needs `object`".to_owned())),
            (integration("UPDATE", "alice", Value::Null, owned.clone()), writes,
             Outcome::Unreadable("an UPDATE request needs `object` and `oldObject`".to_owned())),
        ];
        for (request, settings, expected) in rows {
            assert_eq!(decide(&request, &settings), expected, "{request}");
        }
    }

    /// A request on a core or `apps` object in `shop` by `user` with `groups`; `resource` is
    /// `resource[.group][/subresource]`; each side a whole object (`null`: no such side).
    fn write(
        operation: &str,
        (user, groups): (&str, &[&str]),
        resource: &str,
        old: Value,
        new: Value,
    ) -> Value {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let (resource, group) = resource.split_once('.').unwrap_or((resource, ""));
        let kind = match resource {
            "pods" => "Pod",
            "deployments" => "Deployment",
            "replicasets" => "ReplicaSet",
            "endpointslices" => "EndpointSlice",
            "configmaps" => "ConfigMap",
            other => panic!("no kind for {other}"),
        };
        json!({
            "uid": "1", "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": group, "version": "v1", "resource": resource},
            "subResource": subresource, "operation": operation, "namespace": "shop", "name": "x",
            "userInfo": {"username": user, "groups": groups},
            "oldObject": old, "object": new,
        })
    }

    fn labelled(operator: &str) -> Value {
        json!({"metadata": {"name": "x", "labels": {"camel.apache.org/operator.id": operator}}})
    }

    const ALICE: (&str, &[&str]) = ("alice", &["system:authenticated"]);
    const GC: (&str, &[&str]) = (
        "system:serviceaccount:kube-system:generic-garbage-collector",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    );
    const SLICES: (&str, &[&str]) = (
        "system:serviceaccount:kube-system:endpointslice-controller",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    );
    const KCM: (&str, &[&str]) = ("system:kube-controller-manager", &["system:authenticated"]);
    const KUBELET: (&str, &[&str]) = ("system:node:n1", &["system:nodes", "system:authenticated"]);

    #[test]
    fn the_control_plane_is_trusted_with_what_it_writes_and_nothing_else() {
        let writes = camel_k(json!({"writes": "Owner"}));
        let terminating = json!({"metadata": {"name": "x", "deletionTimestamp": "2026-12-01T10:00:00Z",
            "deletionGracePeriodSeconds": 30, "labels": {"camel.apache.org/operator.id": "operator-1"}}});
        let (a, b) = (labelled("operator-1"), labelled("operator-2"));
        let impostor = (
            "system:serviceaccount:kube-public:generic-garbage-collector",
            GC.1,
        );
        let node_without_group = ("system:node:n1", &["system:authenticated"][..]);
        let allow = || Outcome::Allow;
        // The kubelet's final DELETE: grace period 0 (`syncPod` in pkg/kubelet/status).
        let force = |mut request: Value| {
            request["options"] = json!({"kind": "DeleteOptions", "gracePeriodSeconds": 0});
            request
        };
        fn denied(rule: &str) -> impl Fn(&Outcome) -> bool + '_ {
            move |outcome| matches!(outcome, Outcome::Deny(m) if m[0].contains(rule))
        }
        #[rustfmt::skip]
        let rows: Vec<(Value, bool)> = vec![
            // trusted: label sync after a handoff, copies, deletes, finishing a Pod's deletion
            (write("UPDATE", SLICES, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), true),
            (write("CREATE", SLICES, "endpointslices.discovery.k8s.io", Value::Null, b.clone()), true),
            (write("UPDATE", KCM, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), true),
            (write("DELETE", GC, "deployments.apps", a.clone(), Value::Null), true),
            (force(write("DELETE", KUBELET, "pods", terminating.clone(), Value::Null)), true),
            // judged like anyone: another resource, another namespace, no group, a live Pod
            (write("UPDATE", SLICES, "deployments.apps", a.clone(), b.clone()), false),
            (write("UPDATE", impostor, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), false),
            (write("DELETE", impostor, "deployments.apps", a.clone(), Value::Null), false),
            (force(write("DELETE", node_without_group, "pods", terminating.clone(), Value::Null)), false),
            (force(write("DELETE", KUBELET, "pods", a.clone(), Value::Null)), false),
            (write("UPDATE", KUBELET, "pods/status", a.clone(), b.clone()), false),
        ];
        for (request, trusted) in rows {
            let outcome = decide(&request, &writes);
            if trusted {
                assert_eq!(outcome, allow(), "{request}");
            } else {
                assert!(denied("denied for")(&outcome), "{request}\n{outcome:?}");
            }
        }
        // The settings' additions: their users, resources and operations only.
        let k3s = camel_k(json!({"writes": "Owner", "trustedWriters": [
            {"users": ["system:k3s-controller"], "resources": ["configmaps"], "operations": ["DELETE"]}]}));
        let k3s_user = ("system:k3s-controller", &["system:authenticated"][..]);
        let owned_map = write("DELETE", k3s_user, "configmaps", a.clone(), Value::Null);
        assert_eq!(decide(&owned_map, &k3s), Outcome::Allow);
        let relabel = write("UPDATE", k3s_user, "configmaps", a.clone(), b.clone());
        assert!(denied("owner change denied")(&decide(&relabel, &k3s)));
        let pod = write("DELETE", k3s_user, "pods", a, Value::Null);
        assert!(denied("owner writes denied")(&decide(&pod, &k3s)));
    }

    #[test]
    fn a_mark_in_a_template_is_a_claim_by_whoever_writes_the_template() {
        let deployment = |labels: Value, template: Value| {
            json!({"metadata": {"name": "x", "labels": labels},
                   "spec": {"replicas": 1, "template": {"metadata": {"labels": template}}}})
        };
        let op = |id: &str| json!({"app": "web", "camel.apache.org/operator.id": id});
        let settings = camel_k(json!({}));
        let operator_1 = (OPERATOR_1, &["system:serviceaccounts"][..]);
        #[rustfmt::skip]
        let rows = [
            (write("CREATE", operator_1, "deployments.apps", Value::Null, deployment(op("operator-1"), op("operator-1"))), Outcome::Allow),
            (write("CREATE", ALICE, "deployments.apps", Value::Null, deployment(json!({}), op("operator-2"))), Outcome::Deny(vec![
                "label camel.apache.org/operator.id in spec.template: identity denied for Deployment shop/x from none to \"operator-2\": user alice acts for none, not for \"operator-2\"; only a requester acting for an owner may set it".to_owned()])),
            (write("UPDATE", operator_1, "deployments.apps", deployment(op("operator-1"), op("operator-1")), deployment(op("operator-1"), op("operator-2"))), Outcome::Deny(vec![
                "label camel.apache.org/operator.id in spec.template: owner change denied for Deployment shop/x from \"operator-1\" to \"operator-2\": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=\"camel.apache.org/operator.id: operator-1 -> operator-2\", then the new owner moves the mark and removes the annotation".to_owned()])),
            // a kept template mark is written with its object
            (write("UPDATE", ALICE, "deployments.apps", deployment(json!({}), op("operator-2")), deployment(json!({"x": "y"}), op("operator-2"))), Outcome::Allow),
            // a status write persists no spec
            (write("UPDATE", ALICE, "deployments.apps/status", deployment(json!({}), json!({})), deployment(json!({}), op("operator-2"))), Outcome::Allow),
        ];
        for (request, expected) in rows {
            assert_eq!(decide(&request, &settings), expected, "{request}");
        }
        let broken = write(
            "CREATE",
            ALICE,
            "deployments.apps",
            Value::Null,
            json!({"spec": {"template": {"metadata": {"labels": ["x"]}}}}),
        );
        assert_eq!(
            decide(&broken, &settings),
            Outcome::Unreadable(
                "object.spec.template.metadata.labels: invalid type: sequence, expected a map"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_template_new_in_an_update_moves_no_owner() {
        let olm = json!({
            "ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
                             "kindKey": "olm.operatorframework.io/owner-kind",
                             "clusterKinds": ["ClusterExtension"]}],
        });
        let owned = |claims: Value| {
            json!({"metadata": {"name": "x",
                "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                           "olm.operatorframework.io/owner-name": "a"},
                "annotations": {"single-owner-policy.io/offer": "olm.operatorframework.io/owner-name: ClusterExtension.a -> ClusterExtension.b"}},
                "spec": {"volumeClaimTemplates": claims}})
        };
        let mut request = write(
            "UPDATE",
            ALICE,
            "deployments.apps",
            owned(json!([])),
            owned(json!([{"metadata": {"name": "data"}}])),
        );
        request["kind"]["kind"] = json!("StatefulSet");
        assert_eq!(decide(&request, &olm), Outcome::Allow);
    }

    #[test]
    fn finishing_a_deletion_under_way_needs_no_owner() {
        let writes = camel_k(json!({"writes": "Owner"}));
        let map = |finalizers: Value, data: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "x", "labels": {"camel.apache.org/operator.id": "operator-1"},
                                "finalizers": finalizers, "deletionTimestamp": "2026-12-01T10:00:00Z",
                                "deletionGracePeriodSeconds": 0},
                   "data": {"k": data}})
        };
        let held = map(json!(["example.com/cleanup"]), "v");
        #[rustfmt::skip]
        let rows = [
            (write("UPDATE", ALICE, "configmaps", held.clone(), map(json!([]), "v")), true),
            (write("DELETE", ALICE, "configmaps", held.clone(), Value::Null), true),
            (write("UPDATE", ALICE, "configmaps", held.clone(), map(json!([]), "w")), false),
            (write("UPDATE", ALICE, "configmaps", labelled("operator-1"), labelled("operator-1")), false),
        ];
        for (request, allowed) in rows {
            let outcome = decide(&request, &writes);
            assert_eq!(outcome == Outcome::Allow, allowed, "{request}\n{outcome:?}");
        }
    }

    #[test]
    fn a_value_that_names_no_owner_freezes_nothing() {
        let olm = json!({
            "ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}],
            "identities": [{"owners": ["ClusterExtension.a"], "users": ["olm"]}],
            "writes": "Owner",
        });
        let payments = json!({"metadata": {"name": "x", "labels": {"appID": "payments"}, "annotations": {"a": "1"}}});
        let changed = json!({"metadata": {"name": "x", "labels": {"appID": "payments"}, "annotations": {"a": "2"}}});
        let removed = json!({"metadata": {"name": "x", "labels": {}}});
        #[rustfmt::skip]
        let rows = [
            (write("UPDATE", ALICE, "configmaps", payments.clone(), changed), Outcome::Allow),
            (write("DELETE", ALICE, "configmaps", payments.clone(), Value::Null), Outcome::Allow),
            (write("UPDATE", ALICE, "configmaps", payments.clone(), removed), Outcome::Allow),
            // a new claim must still name an owner
            (write("CREATE", ("olm", &[][..]), "configmaps", Value::Null, payments), Outcome::Deny(vec![
                "label appID: owner value denied for ConfigMap shop/x from none to \"payments\": \"payments\" is not a configured owner kind; use ClusterExtension.<name>".to_owned()])),
        ];
        for (request, expected) in rows {
            assert_eq!(decide(&request, &olm), expected, "{request}");
        }
    }

    #[test]
    fn an_owner_change_names_the_offer_that_would_allow_it() {
        let request = integration(
            "UPDATE",
            OPERATOR_1,
            owned_by("operator-1"),
            owned_by("operator-2"),
        );
        assert_eq!(
            decide(&request, &camel_k(json!({"identities": []}))),
            Outcome::Deny(vec![
                "label camel.apache.org/operator.id: owner change denied for Integration shop/orders \
                 from \"operator-1\" to \"operator-2\": an object has one owner; to hand it over, \
                 its owner offers it by setting the annotation single-owner-policy.io/offer=\
                 \"camel.apache.org/operator.id: operator-1 -> operator-2\", then the new owner \
                 moves the mark and removes the annotation"
                    .to_owned()
            ])
        );
    }

    #[test]
    fn identity_reasons_name_the_requester_and_what_it_acts_for() {
        #[rustfmt::skip]
        let rows = [
            (integration("CREATE", "alice", Value::Null, owned_by("operator-1")), camel_k(json!({})),
             "label camel.apache.org/operator.id: identity denied for Integration shop/orders from none to \"operator-1\": user alice acts for none, not for \"operator-1\"; only a requester acting for an owner may set it"),
            (integration("UPDATE", OPERATOR_1, owned_by("operator-2"), json!({})), camel_k(json!({})),
             "label camel.apache.org/operator.id: identity denied for Integration shop/orders from \"operator-2\" to none: user system:serviceaccount:camel-k:camel-k-operator acts for \"operator-1\", not for \"operator-2\"; only a requester acting for an owner may remove it"),
            (integration("DELETE", "alice", owned_by("operator-1"), Value::Null), camel_k(json!({"writes": "Owner"})),
             "label camel.apache.org/operator.id: owner writes denied for DELETE of Integration shop/orders, owned by \"operator-1\": user alice acts for none, not for \"operator-1\"; only a requester acting for an owner may update or delete it (writes: Owner)"),
        ];
        for (request, settings, message) in rows {
            assert_eq!(
                decide(&request, &settings),
                Outcome::Deny(vec![message.to_owned()])
            );
        }
    }

    #[test]
    fn offer_reasons_say_what_is_wrong_with_the_offer() {
        let app_id = json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"],
                                              "namespacedKinds": ["Extension"]}]});
        let crd = |old: Value, new: Value| {
            json!({
                "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
                "operation": "UPDATE", "name": "foos.example.com", "userInfo": {"username": "alice"},
                "oldObject": {"metadata": old}, "object": {"metadata": new},
            })
        };
        let offer = |labels: Value, to: &str| json!({"labels": labels, "annotations": {"single-owner-policy.io/offer": format!("appID: ClusterExtension.a -> {to}")}});
        let owned = json!({"appID": "ClusterExtension.a"});
        #[rustfmt::skip]
        let rows = [
            (crd(json!({}), offer(json!({}), "ClusterExtension.b")),
             "annotation single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition foos.example.com, owned by none: the object has no owner under label appID to hand over"),
            (crd(json!({"labels": owned}), offer(owned.clone(), "ClusterExtension.a")),
             "annotation single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition foos.example.com, owned by \"ClusterExtension.a\": the offer names the current owner \"ClusterExtension.a\"; name the receiving owner"),
            (crd(json!({"labels": owned}), offer(owned.clone(), "Extension.team-a.b")),
             "annotation single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition foos.example.com, owned by \"ClusterExtension.a\": the offer names \"Extension.team-a.b\", which cannot own the object: a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"),
        ];
        for (request, message) in rows {
            assert_eq!(
                decide(&request, &app_id),
                Outcome::Deny(vec![message.to_owned()])
            );
        }
    }

    #[test]
    fn stamping_and_consumed_offers_mutate() {
        let stamp = camel_k(json!({"stamp": true}));
        let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
        assert_eq!(
            decide(&create, &stamp),
            Outcome::Mutate(Mutation {
                annotations: Vec::new(),
                labels: vec![(
                    "camel.apache.org/operator.id".to_owned(),
                    "operator-1".to_owned()
                )],
                remove_annotation: None,
            })
        );
        let accepted = integration(
            "UPDATE",
            OPERATOR_1,
            offered("operator-2", "operator-1"),
            json!({"labels": {"camel.apache.org/operator.id": "operator-1"},
                   "annotations": {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-2 -> operator-1"}}),
        );
        assert_eq!(
            decide(&accepted, &stamp),
            Outcome::Mutate(Mutation {
                annotations: Vec::new(),
                labels: Vec::new(),
                remove_annotation: Some("single-owner-policy.io/offer".to_owned()),
            })
        );
        // Deployed validating, the accepting update must consume the offer itself.
        assert_eq!(
            decide(&accepted, &camel_k(json!({}))),
            Outcome::Deny(vec![
                "annotation single-owner-policy.io/offer: offer denied for Integration shop/orders from \
                 \"operator-2\" to \"operator-1\": an update that changes or removes the owner \
                 consumes the offer; remove the annotation single-owner-policy.io/offer in the \
                 same update"
                    .to_owned()
            ])
        );
    }

    #[test]
    fn every_violation_is_reported_once() {
        let settings = json!({"ownerMarks": [
            {"label": "appID", "clusterKinds": ["ClusterExtension"]},
            {"label": "camel.apache.org/operator.id"}]});
        let side = |app_id: &str, operator: &str| json!({"labels": {"appID": app_id, "camel.apache.org/operator.id": operator}});
        let request = integration(
            "UPDATE",
            "alice",
            side("ClusterExtension.a", "operator-1"),
            side("ClusterExtension.b", "operator-2"),
        );
        let Outcome::Deny(messages) = decide(&request, &settings) else {
            panic!("not denied");
        };
        let keys: Vec<_> = messages
            .iter()
            .map(|message| message.split_once(':').unwrap().0)
            .collect();
        assert_eq!(keys, ["label appID", "label camel.apache.org/operator.id"]);
    }

    /// The audit scanner's replay of a stored object: CREATE, an empty `userInfo`.
    fn replay(kind: Value, namespace: &str, metadata: Value) -> Value {
        json!({
            "uid": "5c8e3f0a-1b2d-4e6f-8a9b-0c1d2e3f4a5b", "kind": kind,
            "operation": "CREATE", "namespace": namespace, "name": "x", "userInfo": {},
            "object": {"metadata": metadata},
        })
    }

    #[test]
    fn an_audit_replay_judges_the_stored_state_not_an_act() {
        let crd = json!({"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"});
        let config_map = json!({"group": "", "version": "v1", "kind": "ConfigMap"});
        let olm = json!({
            "ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
                             "kindKey": "olm.operatorframework.io/owner-kind",
                             "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}],
            "identities": [{"owners": ["ClusterExtension.*"], "users": ["olm"]}],
            "writes": "Owner", "stamp": true, "adoption": "Deny",
        });
        let pair = |kind: &str, name: &str| {
            json!({"labels": {"olm.operatorframework.io/owner-kind": kind,
                              "olm.operatorframework.io/owner-name": name}})
        };
        let offered = |owner: Value, to: &str| {
            let mut metadata = owner;
            metadata["annotations"] = json!({"single-owner-policy.io/offer": format!("olm.operatorframework.io/owner-name: ClusterExtension.a -> {to}")});
            metadata
        };
        #[rustfmt::skip]
        let rows = [
            // owned correctly, under identities, `writes: Owner`, `stamp` and `adoption: Deny`
            (replay(crd.clone(), "", pair("ClusterExtension", "cert-manager")), Outcome::Allow),
            (replay(config_map.clone(), "team-a", pair("Extension", "team-a.argocd")), Outcome::Allow),
            // unowned: nothing to report, and nothing stamped
            (replay(crd.clone(), "", json!({})), Outcome::Allow),
            (replay(crd.clone(), "", offered(pair("ClusterExtension", "a"), "ClusterExtension.b")), Outcome::Allow),
            (replay(crd.clone(), "", pair("Extension", "team-a.argocd")), Outcome::Deny(vec![
                r#"label olm.operatorframework.io/owner-name: cluster scope: CustomResourceDefinition x is owned by "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#.to_owned()])),
            (replay(config_map.clone(), "team-b", pair("Extension", "team-a.argocd")), Outcome::Deny(vec![
                r#"label olm.operatorframework.io/owner-name: namespace scope: ConfigMap team-b/x is owned by "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"#.to_owned()])),
            (replay(crd.clone(), "", json!({"labels": {"olm.operatorframework.io/owner-name": "cert-manager"}})), Outcome::Deny(vec![
                r#"label olm.operatorframework.io/owner-name: owner value: CustomResourceDefinition x is owned by name "cert-manager" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together"#.to_owned()])),
            (replay(crd.clone(), "", offered(json!({}), "ClusterExtension.b")), Outcome::Deny(vec![
                "annotation single-owner-policy.io/offer: offer: CustomResourceDefinition x is owned by none: the object has no owner under label olm.operatorframework.io/owner-name to hand over".to_owned()])),
            (replay(crd, "", offered(pair("ClusterExtension", "a"), "Extension.team-a.b")), Outcome::Deny(vec![
                r#"annotation single-owner-policy.io/offer: offer: CustomResourceDefinition x is owned by "ClusterExtension.a": the offer names "Extension.team-a.b", which cannot own the object: a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#.to_owned()])),
        ];
        for (request, expected) in rows {
            assert_eq!(decide(&request, &olm), expected, "{request}");
        }
    }

    #[test]
    fn only_what_the_audit_scanner_sends_is_an_audit_replay() {
        let settings = camel_k(json!({"stamp": true}));
        // What the API server sends: a user name, or groups, and always `requestResource`.
        let integrations =
            json!({"group": "camel.apache.org", "version": "v1", "resource": "integrations"});
        #[rustfmt::skip]
        let requesters = [
            (json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]}), false),
            (json!({"username": "alice"}), false),
            (json!({"username": OPERATOR_1}), true),
            (json!({"username": "", "groups": ["system:authenticated"]}), false),
            (json!({}), false),
        ];
        for (user_info, acts) in requesters {
            let mut request = replay(
                json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"}),
                "shop",
                json!({}),
            );
            request["userInfo"] = user_info.clone();
            request["requestResource"] = integrations.clone();
            let user = user_info.to_string();
            let stamped = decide(&request, &settings);
            assert_eq!(stamped == Outcome::Allow, !acts, "{user}");
            request["object"]["metadata"] = owned_by("operator-2");
            let Outcome::Deny(messages) = decide(&request, &settings) else {
                panic!("{user} set an owner it does not act for");
            };
            assert!(
                messages[0].contains(" identity denied for "),
                "{messages:?}"
            );
        }
        // The scanner's own request (no user, no groups, no requestResource) is a replay: the
        // state alone is judged, and a correctly owned object passes.
        let mut replayed = replay(
            json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"}),
            "shop",
            owned_by("operator-2"),
        );
        replayed["userInfo"] = json!({});
        assert_eq!(decide(&replayed, &settings), Outcome::Allow);
        let mut update = integration("UPDATE", "", owned_by("operator-1"), owned_by("operator-2"));
        update["userInfo"] = json!({});
        let Outcome::Deny(messages) = decide(&update, &camel_k(json!({}))) else {
            panic!("an UPDATE without a user name is no replay");
        };
        assert!(
            messages[0].contains(" owner change denied for "),
            "{messages:?}"
        );
    }

    #[test]
    fn a_subresource_write_is_judged_only_when_it_changes_what_the_rules_guard() {
        let status = |old: Value, new: Value, kind: Value| {
            let mut request = integration("UPDATE", "system:node:node-1", old, new);
            request["subResource"] = json!("status");
            request["kind"] = kind;
            request
        };
        let integration_kind =
            json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"});
        let scale = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
        let writes = camel_k(json!({"writes": "Owner"}));
        #[rustfmt::skip]
        let rows = [
            (status(owned_by("operator-1"), owned_by("operator-1"), integration_kind.clone()), Outcome::Allow),
            (status(json!({}), owned_by("operator-1"), scale), Outcome::Allow),
            // judged like a write of the object itself: `writes: Owner` included
            (status(owned_by("operator-1"), offered("operator-1", "operator-2"), integration_kind.clone()),
             Outcome::Deny(vec![
                "label camel.apache.org/operator.id: owner writes denied for UPDATE of Integration shop/orders (subresource status), owned by \"operator-1\": user system:node:node-1 acts for none, not for \"operator-1\"; only a requester acting for an owner may update or delete it (writes: Owner)".to_owned(),
                "annotation single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/orders (subresource status), owned by \"operator-1\": user system:node:node-1 acts for none, not for \"operator-1\"; only a requester acting for an owner may offer it or withdraw an offer of it".to_owned()])),
            (status(owned_by("operator-1"), json!({}), integration_kind),
             Outcome::Deny(vec!["label camel.apache.org/operator.id: identity denied for Integration shop/orders (subresource status) from \"operator-1\" to none: user system:node:node-1 acts for none, not for \"operator-1\"; only a requester acting for an owner may remove it".to_owned()])),
        ];
        for (request, expected) in rows {
            assert_eq!(decide(&request, &writes), expected, "{request}");
        }
    }

    /// Settings guarding Argo CD's tracking id and Helm's release annotations (no identities),
    /// and the metadata of a ConfigMap `shop/web-config` under them.
    fn tools() -> Value {
        json!({"ownerMarks": [
            {"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"},
            {"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"}]})
    }

    fn config_map(operation: &str, old: Value, new: Value) -> Value {
        let side = |annotations: Value| match annotations {
            Value::Null => Value::Null,
            annotations => json!({"metadata": {"name": "web-config", "annotations": annotations}}),
        };
        json!({
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": operation, "namespace": "shop", "name": "web-config",
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "oldObject": side(old), "object": side(new),
        })
    }

    const TRACKED: &str = "guestbook:/ConfigMap:shop/web-config";

    #[test]
    fn an_object_has_one_owner_across_tools() {
        let release =
            json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"});
        let tracked = json!({"argocd.argoproj.io/tracking-id": TRACKED});
        let both = json!({"argocd.argoproj.io/tracking-id": TRACKED,
                          "meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"});
        let second = |mark: &str, owner: &str, by: &str, by_mark: &str| {
            Outcome::Deny(vec![format!(
                "annotation {mark}: one owner denied for ConfigMap shop/web-config from none to \
                 \"{owner}\": the object is owned by \"{by}\" under annotation {by_mark}, and an \
                 object has one owner across tools; its owner hands it over with an offer \
                 (single-owner-policy.io/offer=\"{by_mark}: {by} -> {mark}: {owner}\")"
            )])
        };
        #[rustfmt::skip]
        let rows = [
            // an Application syncing a release's object
            (config_map("UPDATE", release.clone(), both.clone()),
             second("argocd.argoproj.io/tracking-id", "guestbook", "shop/web", "meta.helm.sh/release-name")),
            // a release installing an Application's object
            (config_map("UPDATE", tracked.clone(), both.clone()),
             second("meta.helm.sh/release-name", "shop/web", "guestbook", "argocd.argoproj.io/tracking-id")),
            // both at once: the first mark in the settings is the owner
            (config_map("CREATE", Value::Null, both.clone()),
             second("meta.helm.sh/release-name", "shop/web", "guestbook", "argocd.argoproj.io/tracking-id")),
            // two owners from before the policy are not re-judged
            (config_map("UPDATE", both.clone(), both.clone()), Outcome::Allow),
            // a copied tracking id names no owner
            (config_map("UPDATE", release.clone(), json!({"argocd.argoproj.io/tracking-id": "guestbook:/ConfigMap:shop/other",
                "meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"})), Outcome::Allow),
            // swapping tools in one update is a removal and an adoption, allowed without identities
            (config_map("UPDATE", release.clone(), tracked.clone()), Outcome::Allow),
        ];
        for (request, expected) in rows {
            assert_eq!(decide(&request, &tools()), expected, "{request}");
        }
        // Marks that name the same owner may both be set.
        let mut linked = tools();
        linked["ownerMarks"][1]["sameOwnerAs"] = json!(["argocd.argoproj.io/tracking-id"]);
        assert_eq!(
            decide(&config_map("UPDATE", release, both), &linked),
            Outcome::Allow
        );
    }

    #[test]
    fn an_offer_hands_over_across_tools_and_lives_no_longer_than_its_owner() {
        let offer = "single-owner-policy.io/offer";
        let across = json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop",
                            offer: "meta.helm.sh/release-name: shop/web -> argocd.argoproj.io/tracking-id: guestbook"});
        let settings = json!({"ownerMarks": tools()["ownerMarks"], "orphaning": "Deny",
            "adoption": "Deny", "identities": [{"owners": ["guestbook"], "users": ["alice"]}]});
        // The Application takes it: the release's mark goes without its owner's requester.
        let taken = config_map(
            "UPDATE",
            across.clone(),
            json!({"argocd.argoproj.io/tracking-id": TRACKED}),
        );
        assert_eq!(decide(&taken, &settings), Outcome::Allow);
        // Another Application does not.
        let other = config_map(
            "UPDATE",
            across,
            json!({"argocd.argoproj.io/tracking-id": "other:/ConfigMap:shop/web-config"}),
        );
        let Outcome::Deny(messages) = decide(&other, &settings) else {
            panic!("not denied");
        };
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("annotation meta.helm.sh/release-name: orphaning denied")),
            "{messages:?}"
        );
        // A stale offer: made by shop/web, the release is shop/canary now.
        let stale = json!({"meta.helm.sh/release-name": "canary", "meta.helm.sh/release-namespace": "shop",
                           offer: "meta.helm.sh/release-name: shop/web -> shop/web-v2"});
        let moved = json!({"meta.helm.sh/release-name": "web-v2", "meta.helm.sh/release-namespace": "shop"});
        assert_eq!(
            decide(&config_map("UPDATE", stale, moved), &tools()),
            Outcome::Deny(vec![
                "annotation meta.helm.sh/release-name: owner change denied for ConfigMap \
                 shop/web-config from \"shop/canary\" to \"shop/web-v2\": an object has one \
                 owner; the pending offer (single-owner-policy.io/offer) is \
                 \"meta.helm.sh/release-name: shop/web -> shop/web-v2\", which does not hand it \
                 to \"shop/web-v2\""
                    .to_owned()
            ])
        );
    }

    #[test]
    fn stamping_writes_the_mark_where_it_lives_and_never_a_second_owner() {
        let settings = json!({"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}],
            "identities": [{"owners": ["operator-1"], "users": [OPERATOR_1]}], "stamp": true});
        let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
        assert_eq!(
            decide(&create, &settings),
            Outcome::Mutate(Mutation {
                annotations: vec![(
                    "camel.apache.org/operator.id".to_owned(),
                    "operator-1".to_owned()
                )],
                labels: Vec::new(),
                remove_annotation: None,
            })
        );
        let mut two = settings.clone();
        two["ownerMarks"] =
            json!([{"label": "appID"}, {"annotation": "camel.apache.org/operator.id"}]);
        let owned = integration(
            "CREATE",
            OPERATOR_1,
            Value::Null,
            json!({"labels": {"appID": "operator-1"}}),
        );
        assert_eq!(decide(&owned, &two), Outcome::Allow);
    }

    #[test]
    fn a_stamp_only_twin_stamps_and_consumes_but_denies_nothing() {
        let twin = camel_k(json!({"stamp": true, "stampOnly": true}));
        let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
        let stamp = Mutation {
            labels: vec![(
                "camel.apache.org/operator.id".to_owned(),
                "operator-1".to_owned(),
            )],
            ..Mutation::default()
        };
        assert_eq!(decide(&create, &twin), Outcome::Mutate(stamp));
        // A takeover the validating twin denies passes the stamping twin untouched.
        let taken = integration(
            "UPDATE",
            "alice",
            owned_by("operator-1"),
            owned_by("operator-2"),
        );
        assert_eq!(decide(&taken, &twin), Outcome::Allow);
        assert!(matches!(
            decide(&taken, &camel_k(json!({}))),
            Outcome::Deny(_)
        ));
        // The offer its mark's move consumed is removed, as the validating twin expects.
        let accepted = integration(
            "UPDATE",
            "alice",
            offered("operator-1", "operator-2"),
            json!({"labels": {"camel.apache.org/operator.id": "operator-2"},
                   "annotations": {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}}),
        );
        assert_eq!(
            decide(&accepted, &twin),
            Outcome::Mutate(Mutation {
                remove_annotation: Some("single-owner-policy.io/offer".to_owned()),
                ..Mutation::default()
            })
        );
    }
}
