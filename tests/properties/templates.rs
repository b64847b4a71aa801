//! Templates are claims: a workload's template sets only an owner its writer acts for (13).

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

use crate::check;
use crate::common::DEPLOYMENT;
use crate::generators::{
    ALL_ACTING, ALL_NEW_OFFERS, BINDINGS, Exempt, Mix, Move, OfferTo, QUIET, scenario, weighted,
};
use crate::model::{
    CRON_JOB, Case, Labels, Object, Op, STATEFUL_SET, Shape, TEMPLATE_PLACES, groups_of, pick,
};
use crate::trust;

/// 13. Templates are claims: with identities, a CREATE or UPDATE of a workload whose template
///     (a Deployment's `spec.template`, a StatefulSet's `spec.volumeClaimTemplates[data]`, a
///     CronJob's `spec.jobTemplate.spec.template`) sets an owner X the requester does not act
///     for is denied, one line naming `{key} in {template}`, whatever the object's own labels —
///     unless the requester is exempt (the line is bypassed) or a trusted writer on what it is
///     trusted with (accepted as it is). A template that keeps its owner is judged only under
///     `writes: Owner`, once, when the requester does not write for that owner and the object
///     does not keep it too; a requester acting for X is never denied as X's identity there.
#[test]
fn a_template_sets_only_an_owner_its_writer_acts_for() {
    let floors = [
        (
            "a template owner set by a requester not acting for it, denied",
            25.0,
        ),
        (
            "a template owner set by a requester not acting for it, its object's own labels \
             claiming nothing denied",
            6.0,
        ),
        (
            "a template owner set by an exempt requester not acting for it, bypassed",
            5.0,
        ),
        ("a template owner set by a trusted controller", 1.5),
        (
            "a template owner set by a controller outside its grants, denied",
            1.5,
        ),
        (
            "a template keeping an owner the requester does not act for",
            4.0,
        ),
        ("a template owner set by a requester acting for it", 3.0),
        (
            "a template keeping an owner the requester does not write for, under writes: Owner, \
             denied",
            1.0,
        ),
    ];
    check(template_writes(), &floors, |(case, write), tally| {
        let response = case.respond()?;
        let template = template_place(case.admission.place.kind);
        let at = format!("{} in {template}: ", write.shape.name());
        let identity = format!("{at}identity ");
        let lines = |text: &str, start: &str| {
            text.lines()
                .filter(|line| {
                    line.starts_with(start) || line.contains(&format!(" bypassed: {start}"))
                })
                .count()
        };
        let message = response.message.clone().unwrap_or_default();
        let warnings = response.warnings.join("\n");
        let acts = case.acts_for(&write.owner);
        let exempt = case.exemption().is_some();
        let trusted = case.trusted();
        let sets = write.before != TemplateBefore::Same || case.admission.op == Op::Create;
        let controller = case.admission.user.starts_with(trust::KUBE_SYSTEM_ACCOUNT);
        let foreign = sets && !acts && !exempt && !trusted;
        tally.count(
            foreign,
            "a template owner set by a requester not acting for it, denied",
        );
        let new = case.admission.new.as_ref().expect("a CREATE or UPDATE");
        let own_unowned =
            (case.settings.shapes.iter()).all(|&shape| case.claim(shape, new).is_none());
        tally.count(
            foreign && own_unowned,
            "a template owner set by a requester not acting for it, its object's own labels \
             claiming nothing denied",
        );
        tally.count(
            sets && !acts && exempt && !trusted,
            "a template owner set by an exempt requester not acting for it, bypassed",
        );
        tally.count(
            sets && trusted,
            "a template owner set by a trusted controller",
        );
        tally.count(
            sets && !acts && controller && !trusted && !exempt,
            "a template owner set by a controller outside its grants, denied",
        );
        tally.count(
            !sets && !acts && !trusted,
            "a template keeping an owner the requester does not act for",
        );
        tally.count(
            sets && acts && !trusted,
            "a template owner set by a requester acting for it",
        );
        if trusted {
            prop_assert!(response.plainly_accepted(), "trusted, yet: {:?}", response);
        } else if sets && !acts && !exempt {
            prop_assert!(
                !response.accepted && lines(&message, &at) == 1,
                "{} sets {} in {template}, yet: {:?}",
                &case.admission.user,
                &write.owner,
                response
            );
        } else if sets && !acts {
            prop_assert!(
                response.accepted && lines(&warnings, &at) == 1,
                "an exempt requester's template claim not bypassed: {:?}",
                response
            );
        }
        // A template that keeps its owner is written with the object: under `writes: Owner`
        // it needs a requester that writes for that owner, judged on the object when the
        // object keeps the same owner.
        let old = case.admission.old.as_ref();
        let object_keeps = old.is_some_and(|old| {
            (case.settings.shapes.iter()).any(|&shape| {
                let (before, after) = (case.claim(shape, old), case.claim(shape, new));
                before == after && !before.is_none() && before.id() == write.owner
            })
        });
        // An UPDATE that changes nothing is anyone's (23).
        let unchanged = case.unchanged();
        let guarded = case.settings.writes == "Owner"
            && !case.writes_for(&write.owner)
            && !object_keeps
            && !trusted
            && !unchanged;
        if !sets && !guarded {
            prop_assert_eq!(
                lines(&message, &at) + lines(&warnings, &at),
                0,
                "a template keeping its owner judged: {:?}",
                response
            );
        }
        tally.count(
            !sets && guarded && !exempt,
            "a template keeping an owner the requester does not write for, under writes: Owner, \
             denied",
        );
        if !sets && guarded {
            prop_assert_eq!(
                lines(&message, &at) + lines(&warnings, &at),
                1,
                "a template keeping an owner the requester does not write for, not judged: {:?}",
                response
            );
        }
        if acts {
            prop_assert_eq!(
                lines(&message, &identity) + lines(&warnings, &identity),
                0,
                "a requester acting for {} denied as its identity: {:?}",
                &write.owner,
                response
            );
        }
        Ok(())
    });
}

/// Where a workload's template is, as messages name it.
fn template_place(kind: &str) -> &'static str {
    match kind {
        STATEFUL_SET => "spec.volumeClaimTemplates[data]",
        CRON_JOB => "spec.jobTemplate.spec.template",
        _ => "spec.template",
    }
}

/// A workload's `spec`, its template carrying `labels` and `annotations`.
fn template_spec(kind: &str, (labels, annotations): &(Labels, Labels)) -> Value {
    let meta = json!({"metadata": {"labels": labels, "annotations": annotations}});
    match kind {
        STATEFUL_SET => json!({"serviceName": NAME_OF_SERVICE,
            "template": {"metadata": {"labels": {"app": "db"}}},
            "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": labels,
                                                   "annotations": annotations}}]}),
        CRON_JOB => json!({"schedule": "@daily", "jobTemplate": {"spec": {"template": meta}}}),
        _ => json!({"replicas": 1, "template": meta}),
    }
}

const NAME_OF_SERVICE: &str = "db";

/// What a stored workload's template claims, on an UPDATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TemplateBefore {
    /// The stored object has no template.
    Absent,
    /// A template without owner marks.
    Unowned,
    /// The owner the new template claims.
    Same,
    /// Another owner.
    Other,
}

/// The template claim of a workload's write: the entry and owner the new template claims.
#[derive(Debug, Clone)]
struct TemplateWrite {
    shape: Shape,
    owner: String,
    before: TemplateBefore,
}

/// CREATEs and UPDATEs of workloads whose template claims an owner the requester acts for or
/// not, the stored template claiming nothing, the same owner or another; some by the
/// controller of the workload's kind.
fn template_writes() -> impl Strategy<Value = (Case, TemplateWrite)> {
    let case = scenario(Mix {
        operations: &[(2, Op::Create), (3, Op::Update)],
        moves: &[
            (3, Move::Unowned),
            (3, Move::Keep),
            (1, Move::Adopt),
            (1, Move::Orphan),
            (1, Move::Change),
            (1, Move::AdoptInvalid),
        ],
        others: QUIET,
        old_offers: &[(4, OfferTo::Nobody), (1, OfferTo::NewOwner)],
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 1.0,
        writes_owner: 0.3,
        stamp: 0.3,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &TEMPLATE_PLACES,
        bindings: BINDINGS,
        write_access: 0.15,
    });
    let before = weighted(&[
        (1, TemplateBefore::Absent),
        (1, TemplateBefore::Unowned),
        (1, TemplateBefore::Same),
        (1, TemplateBefore::Other),
    ]);
    (
        case,
        chance(0.75),
        before,
        prop::array::uniform3(any::<Index>()),
        chance(0.2),
    )
        .prop_map(
            |(mut case, foreign, before, [entry, owner, other], controller)| {
                let place = case.admission.place;
                // A tracking id in a template is no claim: the template's owner is another mark's.
                let mut claiming: Vec<Shape> = (case.settings.shapes.iter().copied())
                    .filter(|&shape| shape != Shape::Argo)
                    .collect();
                if claiming.is_empty() {
                    case.settings.shapes.push(Shape::Camel);
                    claiming.push(Shape::Camel);
                }
                let shape = pick(&claiming, &entry);
                let owners = shape.owners_in(place);
                let (acted, not): (Vec<&str>, Vec<&str>) =
                    owners.iter().partition(|owner| case.acts_for(owner));
                let candidates = match (foreign, acted.is_empty(), not.is_empty()) {
                    (true, _, false) | (false, true, _) => not,
                    _ => acted,
                };
                let claimed = pick(&candidates, &owner);
                let others: Vec<&str> =
                    owners.iter().copied().filter(|id| *id != claimed).collect();
                let labels_of = |id: Option<&str>| {
                    let mut template = Object {
                        labels: Labels::from([("app".to_owned(), "web".to_owned())]),
                        ..Object::default()
                    };
                    if let Some(id) = id {
                        template.put(shape, &shape.write(id, None));
                    }
                    (template.labels, template.annotations)
                };
                let kind = place.kind;
                let before = match case.admission.op {
                    Op::Create => TemplateBefore::Absent,
                    _ => before,
                };
                if let Some(new) = &mut case.admission.new {
                    let spec = template_spec(kind, &labels_of(Some(claimed)));
                    new.fields.insert("spec".to_owned(), spec);
                }
                if let Some(old) = &mut case.admission.old {
                    let stored = match before {
                        TemplateBefore::Absent => None,
                        TemplateBefore::Unowned => Some(labels_of(None)),
                        TemplateBefore::Same => Some(labels_of(Some(claimed))),
                        TemplateBefore::Other => Some(labels_of(Some(pick(&others, &other)))),
                    };
                    if let Some(labels) = stored {
                        old.fields
                            .insert("spec".to_owned(), template_spec(kind, &labels));
                    }
                }
                if controller {
                    let name = match kind {
                        DEPLOYMENT => "deployment-controller",
                        STATEFUL_SET => "statefulset-controller",
                        _ => "cronjob-controller",
                    };
                    let user = format!("{}{name}", trust::KUBE_SYSTEM_ACCOUNT);
                    case = case.with_requester(&user, &groups_of(&user));
                }
                let write = TemplateWrite {
                    shape,
                    owner: claimed.to_owned(),
                    before,
                };
                (case, write)
            },
        )
}
