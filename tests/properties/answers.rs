//! Answers: every answer is an accept, a 403 or a 400 naming the field (6), and order and
//! repetition change no verdict (7).

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::check;
use crate::generators::{
    ALL_ACTING, ALL_MOVES, ALL_NEW_OFFERS, ALL_OLD_OFFERS, BINDINGS, Exempt, Mix, QUIET,
    WRITE_ACCESS, permuted, scenario, weighted,
};
use crate::model::{Case, Op, PLACES, Patch, Response, Spot, respond};
use crate::oracle;

/// 6. Every answer is an accept (no code, no message), a denial with code 403 whose every line is
///    a violation, or, for a request the policy cannot read, a denial with code 400 whose message
///    is "cannot read the admission request: " and names the broken field. A request that is not
///    broken is never a 400.
#[test]
fn answers_are_accepts_403s_or_400s_naming_the_field() {
    let floors = [
        ("an accept", 15.0),
        ("a 403", 10.0),
        ("a 400", 20.0),
        ("a broken field the request does not read", 0.3),
    ];
    check(
        requests_with_a_broken_field(),
        &floors,
        |(case, broken), tally| {
            let mut request = case.request_json();
            let field = broken.apply(&mut request, &case);
            let response = respond(&request, &case.settings.json())?;
            match (response.accepted, response.code) {
                (true, None) => {
                    tally.count(true, "an accept");
                    tally.count(field.is_some(), "a broken field the request does not read");
                    prop_assert_eq!(response.message, None);
                }
                (false, Some(403)) => {
                    tally.count(true, "a 403");
                    let message = response.message.unwrap_or_default();
                    prop_assert!(!message.is_empty(), "a 403 without a message");
                    // One line a violation, each one the typed verdict gives (see `respond`).
                    prop_assert!(!response.denied.is_empty(), "a 403 without a violation");
                }
                (false, Some(400)) => {
                    tally.count(true, "a 400");
                    let message = response.message.unwrap_or_default();
                    let why = message.strip_prefix("cannot read the admission request: ");
                    prop_assert!(why.is_some(), "a 400 without the prefix: {message}");
                    let Some(field) = field else {
                        return Err(TestCaseError::fail(format!(
                            "a 400 for a request that is not broken: {message}"
                        )));
                    };
                    prop_assert!(
                        why.unwrap_or_default().contains(&field),
                        "a 400 that does not name {field}: {message}"
                    );
                }
                (accepted, code) => {
                    prop_assert!(false, "accepted {accepted} with code {code:?}");
                }
            }
            Ok(())
        },
    );
}

/// 7. Order and repetition change no verdict: reordering or repeating the exempt users, the
///    exempt groups and the identities changes nothing in the response; reordering the owner
///    marks changes neither the verdict nor which rule denies for which mark — but where two
///    marks the settings do not link are set in one request, the one listed later is the second
///    owner (`one owner`), so there only the verdict stays; labels and annotations no mark
///    guards (a mark's key in the other place among them), and annotations other than the offer
///    annotation, change nothing. A bypass names the exempt user, or else the first of the
///    requester's groups that is exempt, whatever the order of `exemptions.groups`.
#[test]
fn order_and_repetition_change_no_verdict() {
    let floors = [
        (
            "a bypass naming a group, two of the requester's groups exempt",
            15.0,
        ),
        (
            "a bypass by an exempt user who is in an exempt group too",
            5.0,
        ),
        ("two or more violations, denied or bypassed", 15.0),
        ("a requester bound by two or more identities", 8.0),
        ("a patch", 0.0),
        ("two unlinked marks set in one request", 2.0),
    ];
    check(
        exempt_and_reordered_requests(),
        &floors,
        |(case, order), tally| {
            let base = case.respond()?;
            let exempt_groups_of_requester = case
                .admission
                .groups
                .iter()
                .filter(|group| case.settings.exempt_groups.contains(group))
                .count();
            let user_exempt = case.settings.exempt_users.contains(&case.admission.user);
            let bypass = !base.warnings.is_empty();
            tally.count(
                bypass && !user_exempt && exempt_groups_of_requester >= 2,
                "a bypass naming a group, two of the requester's groups exempt",
            );
            tally.count(
                bypass && user_exempt && exempt_groups_of_requester >= 1,
                "a bypass by an exempt user who is in an exempt group too",
            );
            let violations = base.denied.len() + base.warnings.len();
            tally.count(
                violations >= 2,
                "two or more violations, denied or bypassed",
            );
            let binding = case
                .settings
                .identities
                .iter()
                .filter(|identity| {
                    oracle::binds(identity, &case.admission.user, &case.admission.groups)
                })
                .count();
            tally.count(binding >= 2, "a requester bound by two or more identities");
            tally.count(base.patched.is_some(), "a patch");

            let mut lists = case.clone();
            let settings = &mut lists.settings;
            settings.exempt_users = order.apply(&settings.exempt_users, 1);
            settings.exempt_groups = order.apply(&settings.exempt_groups, 2);
            settings.identities = order.apply(&settings.identities, 3);
            prop_assert_eq!(
                &lists.respond()?,
                &base,
                "exemptions or identities reordered: {:?}",
                lists
            );

            let mut entries = case.clone();
            entries.settings.shapes = order.permute(&entries.settings.shapes, 4);
            let reordered = entries.respond()?;
            let race = case.race();
            tally.count(race, "two unlinked marks set in one request");
            if race {
                prop_assert_eq!(
                    (reordered.accepted, reordered.code),
                    (base.accepted, base.code),
                    "owner marks reordered: {:?}",
                    entries
                );
            } else {
                prop_assert_eq!(
                    reordered.rules(),
                    base.rules(),
                    "owner marks reordered: {:?}",
                    entries
                );
            }

            let decorated = case.decorated();
            let other = decorated.respond()?;
            let patch = |case: &Case, response: &Response| {
                let object = &case.request_json()["object"];
                (response.patched.as_ref()).map(|patched| Patch::between(object, patched))
            };
            prop_assert_eq!(
                (&other.accepted, &other.code, &other.message),
                (&base.accepted, &base.code, &base.message),
                "unrelated labels and annotations added: {:?}",
                decorated
            );
            prop_assert_eq!(
                (&other.warnings, &other.audit),
                (&base.warnings, &base.audit)
            );
            prop_assert_eq!(patch(&decorated, &other), patch(&case, &base));

            if bypass {
                let Some(exempt) = case.exemption() else {
                    return Err(TestCaseError::fail(
                        "a bypass for a requester nobody exempted",
                    ));
                };
                let prefix = format!("{exempt} bypassed: ");
                for warning in &base.warnings {
                    prop_assert!(warning.starts_with(&prefix), "{warning:?} lacks {prefix:?}");
                }
                let audit = base.audit.as_deref().unwrap_or_default();
                prop_assert!(audit.starts_with(&prefix), "{audit:?} lacks {prefix:?}");
            }
            Ok(())
        },
    );
}

/// Requests of every kind, each maybe with one field broken.
fn requests_with_a_broken_field() -> impl Strategy<Value = (Case, Broken)> {
    let any_request = scenario(Mix {
        operations: &[
            (3, Op::Create),
            (4, Op::Update),
            (2, Op::Delete),
            (2, Op::Status),
            (1, Op::Scale),
        ],
        moves: ALL_MOVES,
        others: QUIET,
        old_offers: ALL_OLD_OFFERS,
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[(7, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 0.75,
        writes_owner: 0.4,
        stamp: 0.4,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    let broken = weighted(&[
        (10, Broken::Nothing),
        (1, Broken::LabelNotAString),
        (1, Broken::LabelsNotAMap),
        (1, Broken::OfferNotAString),
        (1, Broken::UnknownOperation),
        (1, Broken::NoObject),
        (1, Broken::NoOldObject),
        (1, Broken::UserNotAString),
        (1, Broken::GroupsNotAList),
        (1, Broken::NamespaceNotAString),
        (1, Broken::KindNotAnObject),
    ]);
    (any_request, broken)
}

/// Requests by exempt requesters in several exempt groups, with identities, and an order to
/// apply to the settings' lists.
fn exempt_and_reordered_requests() -> impl Strategy<Value = (Case, Order)> {
    let case = scenario(Mix {
        operations: &[
            (5, Op::Create),
            (4, Op::Update),
            (1, Op::Delete),
            (2, Op::Status),
        ],
        moves: ALL_MOVES,
        others: QUIET,
        old_offers: ALL_OLD_OFFERS,
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[
            (1, Exempt::No),
            (1, Exempt::User),
            (2, Exempt::Group),
            (4, Exempt::TwoGroups),
            (2, Exempt::UserAndGroup),
        ],
        ratchet: 0.1,
        identities: 0.85,
        writes_owner: 0.4,
        stamp: 0.7,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    let order =
        (any::<[u32; 8]>(), any::<Index>()).prop_map(|(keys, repeat)| Order { keys, repeat });
    (case, order)
}

/// An order to apply to a list, and an item to repeat in it.
#[derive(Debug, Clone)]
struct Order {
    keys: [u32; 8],
    repeat: Index,
}

impl Order {
    fn permute<T: Clone>(&self, items: &[T], salt: usize) -> Vec<T> {
        permuted(items, &self.keys, salt)
    }

    /// `items` reordered, one of them repeated.
    fn apply<T: Clone>(&self, items: &[T], salt: usize) -> Vec<T> {
        let mut items = self.permute(items, salt);
        if !items.is_empty() {
            items.push(items[self.repeat.index(items.len())].clone());
        }
        items
    }
}

/// A field of the request broken so that the policy cannot read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Broken {
    Nothing,
    LabelNotAString,
    LabelsNotAMap,
    OfferNotAString,
    UnknownOperation,
    NoObject,
    NoOldObject,
    UserNotAString,
    GroupsNotAList,
    NamespaceNotAString,
    KindNotAnObject,
}

impl Broken {
    /// Breaks `request`; the name of the field a 400 must mention.
    fn apply(self, request: &mut Value, case: &Case) -> Option<String> {
        let side = if request["object"].is_object() {
            "object"
        } else {
            "oldObject"
        };
        fn metadata<'v>(request: &'v mut Value, side: &str) -> &'v mut Value {
            &mut request[side]["metadata"]
        }
        let field = |name: &str| Some(name.to_owned());
        match self {
            Broken::Nothing => None,
            Broken::LabelNotAString => {
                let shape = case.settings.shapes[0];
                let place = match shape.spot() {
                    Spot::Label => "labels",
                    Spot::Annotation => "annotations",
                };
                metadata(request, side)[place][shape.key()] = json!(5);
                field(&format!("metadata.{place}.{}", shape.key()))
            }
            Broken::LabelsNotAMap => {
                metadata(request, side)["labels"] = json!(["app"]);
                field("labels")
            }
            Broken::OfferNotAString => {
                let key = case.settings.offer_key;
                metadata(request, side)["annotations"][key] = json!({"to": "operator-1"});
                field(key)
            }
            Broken::UnknownOperation => {
                request["operation"] = json!("PATCH");
                field("operation")
            }
            Broken::NoObject => {
                request.as_object_mut()?.remove("object");
                field("object")
            }
            Broken::NoOldObject => {
                request.as_object_mut()?.remove("oldObject");
                field("oldObject")
            }
            Broken::UserNotAString => {
                request["userInfo"]["username"] = json!(7);
                field("username")
            }
            Broken::GroupsNotAList => {
                request["userInfo"]["groups"] = json!("system:authenticated");
                field("groups")
            }
            Broken::NamespaceNotAString => {
                request["namespace"] = json!(3);
                field("namespace")
            }
            Broken::KindNotAnObject => {
                request["kind"] = json!("ConfigMap");
                field("kind")
            }
        }
    }
}
