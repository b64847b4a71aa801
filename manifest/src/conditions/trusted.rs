//! The trusted control plane's conditions, one per class of writer ([`TRUSTED_WRITERS`]), each
//! false exactly for the requests its writers are trusted with (`Trust::covers`).

use std::collections::{BTreeMap, BTreeSet};

use single_owner_policy::Settings;
use single_owner_policy::control_plane::{
    self, KUBE_SYSTEM_GROUP, KUBE_SYSTEM_PREFIX, NODE_PREFIX, NODES_GROUP, Trust, Writer,
};

use super::TRUSTED_WRITERS;
use super::expr::{Expr, and, atom, or, plus, quote, strings};
use super::marks::{METADATA, OLD, present};
use super::requester::{USERNAME, glob_exactly, in_group};

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
pub(super) fn trusted_writers(settings: &Settings, judged: &[&str]) -> Vec<(&'static str, Expr)> {
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
            // A name shaped like a service account's or a node's is taken only with its groups.
            Writer::User(user) => match control_plane::vouching_groups(user) {
                Some(groups) if groups.is_empty() && !trust.terminating_only => {
                    users.add(user, grants)
                }
                Some(groups) => {
                    let writer = and([username(user)]
                        .into_iter()
                        .chain(groups.iter().map(|g| in_group(g))));
                    users.rules.push(rule(writer, &trust, grants));
                }
                None => {}
            },
            Writer::Users(pattern) => {
                // Not skipped when CEL cannot match the pattern exactly, nor when the groups its
                // names need depend on what a `*` stands for.
                let groups = control_plane::vouching_groups(pattern);
                if let (Some(writer), Some(groups)) = (glob_exactly(USERNAME, pattern), groups) {
                    let writer = and([writer]
                        .into_iter()
                        .chain(groups.iter().map(|g| in_group(g))));
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
/// could send: `(operation, resource)`, without the operations not judged, and writes of
/// subresources the webhook's rules do not name ([`crate::rules::sends_subresource`]).
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
                    crate::rules::sends_subresource(&operation, name, subresource)
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

#[cfg(test)]
mod tests {
    use super::super::match_conditions;
    use super::*;

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
