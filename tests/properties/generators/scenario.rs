//! A scenario: settings and a request, built from choices weighted by a [`Mix`].

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};

use super::{ActsFor, Binding, Exempt, Mix, Move, NewOffer, OfferTo, permuted, weighted};
use crate::common::OFFER;
use crate::model::{
    Access, Admission, Case, Claim, Identity, Object, Op, Place, Settings, Shape, UNKNOWN_KIND,
    Written, groups_of, identity, offer_text, pick,
};
use crate::oracle;

/// The choices of one entry: its move, whether its stored owner predates the policy, and which
/// owners it picks (A, B, a third one, an invalid claim, and what it carries without an owner
/// on each side).
#[derive(Debug, Clone)]
struct EntryChoice {
    change: Move,
    ratchet: Ratchet,
    picks: [Index; 6],
}

/// Whether the stored owner predates the policy, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ratchet {
    No,
    /// A valid owner out of the object's scope (no valid owner where the entry has no kinds).
    OutOfScope,
    /// A value that names no owner: empty, of an unknown kind, half a pair.
    Invalid,
}

fn entry_choice(moves: &'static [(u32, Move)], ratchet: f64) -> impl Strategy<Value = EntryChoice> {
    (
        weighted(moves),
        chance(ratchet),
        any::<bool>(),
        prop::array::uniform(any::<Index>()),
    )
        .prop_map(|(change, ratchet, invalid, picks)| EntryChoice {
            change,
            ratchet: match (ratchet, invalid) {
                (false, _) => Ratchet::No,
                (true, false) => Ratchet::OutOfScope,
                (true, true) => Ratchet::Invalid,
            },
            picks,
        })
}

/// Every choice a scenario is made of.
#[derive(Debug, Clone)]
struct Choices {
    place: Place,
    shapes: Vec<Shape>,
    focus: Index,
    scoped_focus: bool,
    op: Op,
    focus_entry: EntryChoice,
    other_entries: [EntryChoice; 2],
    old_offer: OfferTo,
    new_offer: NewOffer,
    acting: ActsFor,
    bindings: [Binding; 2],
    /// Whether each identity built for the requester has `access: Write`.
    write_access: [bool; 2],
    service_account: bool,
    exempt: Exempt,
    extra_groups: Vec<&'static str>,
    background: Vec<usize>,
    noise_users: Vec<&'static str>,
    noise_groups: Vec<&'static str>,
    identities: bool,
    adoption_deny: bool,
    orphaning_deny: bool,
    writes_owner: bool,
    stamp: bool,
    offer_key: &'static str,
    order: [u32; 8],
}

/// Groups a requester may be in besides those the API server gives it.
const EXTRA_GROUPS: [&str; 3] = ["oncall", "auditors", "team-a-devs"];
/// Exempt users and groups that are not the requester's.
const NOISE_USERS: [&str; 2] = [
    "break-glass",
    "system:serviceaccount:kube-system:generic-garbage-collector",
];
const NOISE_GROUPS: [&str; 2] = ["system:masters", "platform-admins"];
const OFFER_KEYS: [&str; 2] = [OFFER, "example.com/handoff"];

/// Identities that bind other requesters than the ones a scenario builds for.
fn background_identities() -> [Identity; 7] {
    [
        identity(
            &["ClusterExtension.*"],
            &["system:serviceaccount:olmv1-system:operator-controller"],
            &[],
        ),
        identity(
            &["Extension.${namespace}.*"],
            &["system:serviceaccount:*:installer"],
            &[],
        ),
        identity(
            &["ClusterExtension.${name}"],
            &["system:serviceaccount:helm-releases:*"],
            &[],
        ),
        identity(&["operator-*"], &[], &["camel-k-operators"]),
        identity(
            &["ClusterExtension.argocd", "Extension.team-b.*"],
            &["bob"],
            &["argocd-admins"],
        ),
        identity(
            &["${namespace}/*"],
            &["system:serviceaccount:*:flux-reconciler"],
            &[],
        ),
        identity(
            &["guestbook-*", "billing-prod"],
            &["system:serviceaccount:argocd:argocd-application-controller"],
            &[],
        ),
    ]
}

/// `identities` with the exact owners no mark of `shapes` reads left out (the settings reject
/// them), and those left without owners dropped.
pub(crate) fn for_marks(identities: Vec<Identity>, shapes: &[Shape]) -> Vec<Identity> {
    (identities.into_iter())
        .filter_map(|mut identity| {
            identity.owners.retain(|owner| {
                owner.contains(['*', '$']) || shapes.iter().any(|shape| shape.reads(owner))
            });
            (!identity.owners.is_empty()).then_some(identity)
        })
        .collect()
}

/// Settings and a request, built from choices weighted by `mix`.
pub(crate) fn scenario(mix: Mix) -> impl Strategy<Value = Case> {
    let what = (
        select(mix.places.to_vec()),
        subsequence(Shape::ALL.to_vec(), mix.entries..=3).prop_shuffle(),
        any::<Index>(),
        weighted(mix.operations),
        entry_choice(mix.moves, mix.ratchet),
        prop::array::uniform(entry_choice(mix.others, 0.0)),
        weighted(mix.old_offers),
        weighted(mix.new_offers),
    );
    let who = (
        weighted(mix.acting),
        prop::array::uniform(weighted(mix.bindings)),
        any::<bool>(),
        weighted(mix.exempt),
        subsequence(EXTRA_GROUPS.to_vec(), 0..=3),
        subsequence(
            (0..background_identities().len()).collect::<Vec<_>>(),
            0..=2,
        ),
        subsequence(NOISE_USERS.to_vec(), 0..=2),
        subsequence(NOISE_GROUPS.to_vec(), 0..=2),
        prop::array::uniform(chance(mix.write_access)),
    );
    let knobs = (
        (
            chance(mix.identities),
            chance(mix.deny),
            chance(mix.deny),
            chance(mix.writes_owner),
            chance(mix.stamp),
            select(OFFER_KEYS.to_vec()),
            any::<[u32; 8]>(),
        ),
        chance(mix.camel),
        chance(mix.linked),
    );
    (what, who, knobs).prop_map(move |(what, who, knobs)| {
        let (place, mut shapes, focus, op, focus_entry, other_entries, old_offer, new_offer) = what;
        let (identities, adoption_deny, orphaning_deny, writes_owner, stamp, offer_key, order) =
            knobs.0;
        if !knobs.1 && shapes.len() > mix.entries {
            shapes.retain(|&shape| shape != Shape::Camel);
        }
        if knobs.2 {
            let pair = [Shape::Flux, Shape::Helm];
            shapes.retain(|shape| !pair.contains(shape));
            shapes.truncate(1);
            shapes.extend(pair);
            shapes = permuted(&shapes, &order, 5);
        }
        let (acting, bindings, service_account, exempt, extra_groups, background) =
            (who.0, who.1, who.2, who.3, who.4, who.5);
        let (noise_users, noise_groups, write_access) = (who.6, who.7, who.8);
        build(Choices {
            place,
            shapes,
            focus,
            scoped_focus: mix.scoped_focus,
            op,
            focus_entry,
            other_entries,
            old_offer,
            new_offer,
            acting,
            bindings,
            write_access,
            service_account,
            exempt,
            extra_groups,
            background,
            noise_users,
            noise_groups,
            identities,
            adoption_deny,
            orphaning_deny,
            writes_owner,
            stamp,
            offer_key,
            order,
        })
    })
}

/// The owners one entry's choice picked, what it writes on each side, and its claims there.
#[derive(Debug, Clone)]
struct Plan {
    shape: Shape,
    old: Written,
    new: Written,
    /// The claims of `old` and `new`, as read.
    old_claim: Claim,
    new_claim: Claim,
    /// The stored owner chosen (whether or not the stored object claims it).
    a: String,
    /// The other owner chosen.
    b: String,
    /// A third valid owner.
    another: String,
    /// An owner out of the object's scope, if the shape has scopes.
    outside: Option<String>,
}

impl Plan {
    fn of(shape: Shape, place: Place, choice: &EntryChoice) -> Plan {
        let [first, second, third, fourth, fifth, sixth] = &choice.picks;
        let valid = shape.owners_in(place);
        let a = pick(&valid, first);
        let rest: Vec<_> = valid.iter().copied().filter(|owner| *owner != a).collect();
        let b = pick(&rest, second);
        let third_owners: Vec<_> = rest.iter().copied().filter(|owner| *owner != b).collect();
        let another = pick(&third_owners, third);
        let outside_owners = shape.owners_outside(place);
        let outside = (!outside_owners.is_empty()).then(|| pick(&outside_owners, third));
        let invalid = pick(&shape.invalid_writes(), fourth);
        let write = |id: &str| shape.write(id, Some(place));
        let beyond = outside.map_or_else(|| invalid.clone(), write);
        let stored = match choice.ratchet {
            Ratchet::No => write(a),
            Ratchet::OutOfScope => beyond.clone(),
            Ratchet::Invalid => invalid.clone(),
        };
        let (none_before, none_after) = (shape.nothing(place, fifth), shape.nothing(place, sixth));
        let (old, new) = match choice.change {
            Move::Unowned => (none_before, none_after),
            Move::Keep => (stored.clone(), stored),
            Move::Adopt => (none_before, write(b)),
            Move::AdoptOutOfScope => (none_before, beyond),
            Move::AdoptInvalid => (none_before, invalid),
            Move::Orphan => (stored, none_after),
            Move::Change => (stored, write(b)),
            Move::ChangeOutOfScope => (stored, beyond),
            Move::ChangeInvalid => (stored, invalid),
        };
        Plan {
            shape,
            old_claim: shape.read_written(&old, place),
            new_claim: shape.read_written(&new, place),
            old,
            new,
            a: a.to_owned(),
            b: b.to_owned(),
            another: another.to_owned(),
            outside: outside.map(str::to_owned),
        }
    }

    fn old_id(&self) -> String {
        if self.old_claim.is_none() {
            self.a.clone()
        } else {
            self.old_claim.id()
        }
    }

    fn new_id(&self) -> String {
        if self.new_claim.is_none() {
            self.b.clone()
        } else {
            self.new_claim.id()
        }
    }

    /// An owner out of the object's scope, or one of no configured kind.
    fn outside_id(&self) -> String {
        self.outside.clone().unwrap_or(UNKNOWN_KIND.to_owned())
    }

    /// The offer `to` says, made under this plan's mark; `others`, the plans of the other
    /// marks, for offers across marks.
    fn offer(&self, to: OfferTo, others: &[Plan]) -> Option<String> {
        let shape = self.shape;
        let from = self.old_id();
        let same = |to: &str| Some(offer_text(shape, &from, shape, to));
        match (to, others.first()) {
            (OfferTo::Nobody, _) => None,
            (OfferTo::NewOwner, _) | (OfferTo::Across | OfferTo::OtherMark, None) => {
                same(&self.new_id())
            }
            (OfferTo::Another, _) => same(&self.another),
            (OfferTo::CurrentOwner, _) => same(&from),
            (OfferTo::OutOfScope, _) => same(&self.outside_id()),
            (OfferTo::Invalid, _) => same(UNKNOWN_KIND),
            (OfferTo::Stale, _) => Some(offer_text(shape, &self.another, shape, &self.new_id())),
            (OfferTo::Bare, _) => Some(self.new_id()),
            (OfferTo::Across, Some(other)) => {
                Some(offer_text(shape, &from, other.shape, &other.new_id()))
            }
            (OfferTo::OtherMark, Some(other)) => Some(offer_text(
                other.shape,
                &other.old_id(),
                other.shape,
                &other.another,
            )),
        }
    }
}

/// The service account a templated identity binds to owner `id`, and that identity.
fn template_for(id: &str) -> Option<(String, String, Identity)> {
    let sa = |namespace: &str, name: &str, owner: &str, users: &str| {
        Some((
            namespace.to_owned(),
            name.to_owned(),
            identity(&[owner], &[users], &[]),
        ))
    };
    if let Some(name) = id.strip_prefix("ClusterExtension.") {
        let users = "system:serviceaccount:helm-releases:*";
        return sa("helm-releases", name, "ClusterExtension.${name}", users).filter(|_| {
            oracle::service_account(&format!("system:serviceaccount:x:{name}")).is_some()
        });
    }
    if let Some((namespace, name)) = id
        .strip_prefix("Extension.")
        .and_then(|rest| rest.split_once('.'))
    {
        let user = format!("system:serviceaccount:{namespace}:{name}");
        oracle::service_account(&user)?;
        return sa(
            namespace,
            name,
            "Extension.${namespace}.${name}",
            "system:serviceaccount:*",
        );
    }
    if id.starts_with("operator-") {
        return sa("camel-k", id, "${name}", "system:serviceaccount:camel-k:*");
    }
    if let Some((namespace, name)) = id.split_once('/') {
        let user = format!("system:serviceaccount:{namespace}:{name}");
        oracle::service_account(&user)?;
        return sa(
            namespace,
            name,
            "${namespace}/${name}",
            "system:serviceaccount:*",
        );
    }
    None
}

/// Whether owner patterns may hold `c` literally.
fn in_patterns(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

/// An owner pattern that covers `id` with a `*` (an id owner patterns cannot write, a broken
/// tracking id, is cut where the pattern's characters end).
fn wildcard_of(id: &str) -> String {
    if let Some(end) = id.find(|c: char| !in_patterns(c)) {
        return format!("{}*", &id[..end]);
    }
    match id.rfind(['.', '-', '/']) {
        Some(at) => format!("{}*", &id[..=at]),
        None => "*".to_owned(),
    }
}

fn build(c: Choices) -> Case {
    let place = c.place;
    let shapes = c.shapes;
    let all: Vec<usize> = (0..shapes.len()).collect();
    let scoped: Vec<usize> = (all.iter().copied())
        .filter(|&index| matches!(shapes[index], Shape::AppId | Shape::Olm))
        .collect();
    let candidates = if c.scoped_focus && !scoped.is_empty() {
        scoped
    } else {
        all
    };
    let focus = pick(&candidates, &c.focus);

    let (mut old, mut new) = (Object::default(), Object::default());
    let mut others = c.other_entries.iter();
    let mut plans = Vec::new();
    for (index, &shape) in shapes.iter().enumerate() {
        let choice = if index == focus {
            &c.focus_entry
        } else {
            others.next().expect("at most three entries")
        };
        let plan = Plan::of(shape, place, choice);
        old.put(shape, &plan.old);
        new.put(shape, &plan.new);
        plans.push(plan);
    }
    let plan = plans.remove(focus);
    let other_owners: Vec<String> = plans.iter().map(Plan::new_id).collect();
    old.offer = plan.offer(c.old_offer, &plans);
    new.offer = match (c.op, c.new_offer) {
        (_, NewOffer::Made(to)) => plan.offer(to, &plans),
        (Op::Create, _) | (_, NewOffer::Dropped) => None,
        (_, NewOffer::Kept) => old.offer.clone(),
    };
    let (old, new) = match c.op {
        Op::Create => (None, Some(new)),
        Op::Delete => (Some(old), None),
        _ => (Some(old), Some(new)),
    };

    // The requester, and the identities that make it act for whom it should.
    let targets = match c.acting {
        ActsFor::Old => vec![plan.old_id()],
        ActsFor::New => vec![plan.new_id()],
        ActsFor::Both => vec![plan.old_id(), plan.new_id()],
        ActsFor::Another => vec![plan.another.clone()],
        ActsFor::OtherEntries => other_owners,
        ActsFor::OtherEntriesBoth => (plans.iter())
            .flat_map(|plan| [plan.old_id(), plan.new_id()])
            .collect(),
        ActsFor::Outside => vec![plan.outside_id()],
        ActsFor::Nobody => Vec::new(),
    };
    let templated = (targets.first())
        .filter(|_| c.bindings[0] == Binding::Template)
        .and_then(|target| template_for(target));
    let user = match (&templated, c.service_account) {
        (Some((namespace, name, _)), _) => format!("system:serviceaccount:{namespace}:{name}"),
        (None, true) => "system:serviceaccount:ops:deployer".to_owned(),
        (None, false) => "alice".to_owned(),
    };
    let mut groups = groups_of(&user);
    let account = oracle::service_account(&user);
    let mut identities = Vec::new();
    for (slot, ((target, binding), write)) in
        (targets.iter().zip(c.bindings).zip(c.write_access)).enumerate()
    {
        let valid_exactly = !target.is_empty()
            && target.chars().all(in_patterns)
            && (shapes.iter()).any(|shape| shape.reads(target));
        let exact = if valid_exactly {
            target.clone()
        } else {
            wildcard_of(target)
        };
        let group = format!("installers-{slot}");
        identities.push(match binding {
            Binding::Template => match template_for(target) {
                Some((namespace, name, identity))
                    if account == Some((namespace.as_str(), name.as_str())) =>
                {
                    identity
                }
                _ => identity(&[&exact], &[&user], &[]),
            },
            Binding::User => identity(&[&exact], &[&user], &[]),
            Binding::Group => {
                groups.push(group.clone());
                identity(&[&exact], &[], &[&group])
            }
            Binding::GroupPattern => {
                groups.push(group);
                identity(&[&exact], &[], &["installers-*"])
            }
            Binding::Wildcard => identity(&[&wildcard_of(target)], &[&user], &[]),
        });
        if write {
            identities.last_mut().expect("just pushed").access = Access::Write;
        }
    }
    let background = background_identities();
    identities.extend(c.background.iter().map(|&index| background[index].clone()));
    let mut identities = for_marks(identities, &shapes);
    if identities.is_empty() {
        // `writes: Owner` and `stamp` need identities; this one binds someone else.
        identities.push(identity(&["ClusterExtension.*", "*/argocd"], &["bob"], &[]));
    }

    // Exemptions, the requester's among others.
    let mut extra: Vec<String> = c
        .extra_groups
        .iter()
        .map(|&group| group.to_owned())
        .collect();
    let exempt_groups_wanted = match c.exempt {
        Exempt::Group | Exempt::UserAndGroup => 1,
        Exempt::TwoGroups => 2,
        Exempt::No | Exempt::User => 0,
    };
    for group in EXTRA_GROUPS {
        if extra.len() < exempt_groups_wanted && !extra.iter().any(|have| have == group) {
            extra.push(group.to_owned());
        }
    }
    let mut exempt_users: Vec<String> = c.noise_users.iter().map(|&u| u.to_owned()).collect();
    let mut exempt_groups: Vec<String> = c.noise_groups.iter().map(|&g| g.to_owned()).collect();
    if matches!(c.exempt, Exempt::User | Exempt::UserAndGroup) {
        exempt_users.push(user.clone());
    }
    exempt_groups.extend(extra.iter().take(exempt_groups_wanted).cloned());
    groups.extend(extra);

    let identities_on = c.identities;
    Case {
        settings: Settings {
            shapes,
            adoption: if c.adoption_deny { "Deny" } else { "Allow" },
            orphaning: if c.orphaning_deny { "Deny" } else { "Allow" },
            exempt_users: permuted(&exempt_users, &c.order, 1),
            exempt_groups: permuted(&exempt_groups, &c.order, 2),
            identities: if identities_on {
                permuted(&identities, &c.order, 3)
            } else {
                Vec::new()
            },
            writes: if identities_on && c.writes_owner {
                "Owner"
            } else {
                "Any"
            },
            stamp: identities_on && c.stamp,
            offer_key: c.offer_key,
            trusted: Vec::new(),
        },
        admission: Admission {
            op: c.op,
            place,
            user,
            groups: permuted(&groups, &c.order, 4),
            old,
            new,
            options: None,
        },
    }
}
