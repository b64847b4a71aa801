//! The reason a rule of a mark denies, in CEL: the sentence the module's message ends with
//! (`Reason`'s `Display`, `src/violation/reason.rs`), saying why and what to do instead. The
//! texts are the module's own: each is the module's sentence for a reason built of
//! placeholders (`@@0@@`, …), which [`sentence`] turns into CEL that puts the request's values
//! in their place. What is generated here is which reason a denial has, read from the claims
//! as the module reads them (`Claim::owner`, `scope::fit`, `one_owner::rule`,
//! `transition::reason`).

use std::collections::BTreeMap;

use single_owner_policy::{
    Access, Act, Claim as ModuleClaim, NotActing, OwnerMark, Reason, SERVICE_ACCOUNT_PREFIX,
    ScopeViolation, Settings, Standing, WRITERS,
};

use super::Variable;
use super::claims::{Claim, NAMESPACED_NAME, or};
use super::entries::{Around, Group};
use super::requester;
use crate::conditions::quote;

/// CEL: the reason sentence of mark `i`'s rule, the CEL string `rule`, or `''` for a rule whose
/// reason is not generated.
pub(super) fn of_entry(group: &Group, i: usize, around: &Around, rule: &str) -> String {
    let (mark, old, new) = (&group.marks[i], &group.old[i], &group.new[i]);
    let fixed = |reason: Reason| quote(&reason.to_string());
    let settings = around.settings;
    let not_acting = |act: Act, owner: &Claim| {
        not_acting(settings, act, mark, owner).unwrap_or_else(|| "''".to_owned())
    };
    format!(
        "{rule} == 'owner change' ? ({}) : {rule} == 'adoption' ? {} : {rule} == 'orphaning' ? \
         {} : {rule} == 'binding' ? {} : {rule} == 'owner value' ? ({}) : {rule} == 'cluster \
         scope' || {rule} == 'namespace scope' ? ({}) : {rule} == 'one owner' ? ({}) : {rule} \
         == 'identity' ? (({}) ? ({}) : ({})) : {rule} == 'owner writes' ? (request.operation \
         == 'DELETE' ? ({}) : ({})) : ''",
        owner_change(group, i, around),
        fixed(Reason::Adoption),
        fixed(Reason::Orphaning),
        fixed(Reason::ThroughBinding),
        invalid(mark, new),
        scope(mark, new, around),
        second_owner(group, i, around),
        new.none(),
        not_acting(Act::Remove, old),
        not_acting(Act::Set, new),
        not_acting(Act::Write, old),
        not_acting(Act::Write, new),
    )
}

/// CEL: the reason of a requester that does not act for the owner `owner` of `mark` as `act`
/// needs (`requester::rule`): that it only writes for it, or whom it acts for; what the act
/// needs; and the catalogue's writer it is, where the settings do not enable it. `None`
/// without identities.
pub(super) fn not_acting(
    settings: &Settings,
    act: Act,
    mark: &OwnerMark,
    owner: &Claim,
) -> Option<String> {
    let owner_tag = tag(mark, 1);
    let module = |writer| {
        let reason = Reason::NotActing(NotActing {
            act,
            user: "@@0@@",
            owner: ModuleClaim::of_owner(mark, &owner_tag),
            standing: Standing::WritesOnly,
            writer,
        });
        // The owner as the module shows it, quotes and all, is the placeholder.
        untag(&reason.to_string(), mark).replace("\"@@1@@\"", "@@1@@")
    };
    let plain = module(None);
    let hinted = module(Some("@@0@@"));
    let hint = hinted.strip_prefix(&plain)?;
    // The standing ends at the first `; `, which neither a standing's words nor the
    // placeholders hold.
    let (writes_only, needs) = plain.split_once("; ")?;
    let user = "(variables.requester == '' ? '\"\"' : variables.requester)";
    let shown = shown(mark, owner);
    let writes = requester::holds(settings, Access::Write, &owner.id(mark))?;
    let acts_for =
        format!("'user ' + {user} + ' acts for ' + variables.acting + ', not for ' + {shown}");
    let hint = sentence(hint, &["variables.unenabledWriter"]);
    Some(format!(
        "(({writes}) ? {} : {acts_for}) + {} + (variables.unenabledWriter == '' ? '' : {hint})",
        sentence(writes_only, &[user, &shown]),
        quote(&format!("; {needs}")),
    ))
}

/// The variables the requester's reasons read, none without identities: whom it acts for
/// (`acting`), and the catalogue's writer it is where the settings do not enable it
/// (`unenabledWriter`, `writers::not_enabled`), `''` for none. Only a message reads them.
pub(super) fn variables(settings: &Settings) -> Vec<Variable> {
    if settings.identities.is_empty() {
        return Vec::new();
    }
    // The first writer of the catalogue that names the requester decides.
    let writers = (WRITERS.iter())
        .rev()
        .fold("''".to_owned(), |otherwise, writer| {
            let prefix = format!("{SERVICE_ACCOUNT_PREFIX}{}:", writer.namespace);
            let user = "variables.requester";
            let named = or((writer.bindings.iter()).map(|binding| {
                match binding.account.strip_suffix('*') {
                    Some(start) => {
                        format!("{user}.startsWith({})", quote(&format!("{prefix}{start}")))
                    }
                    None => format!(
                        "{user} == {}",
                        quote(&format!("{prefix}{}", binding.account))
                    ),
                }
            }));
            let enabled =
                (settings.cluster_writers.iter()).any(|enabled| enabled.name == writer.name);
            let then = match enabled {
                true => "''".to_owned(),
                false => quote(writer.name),
            };
            match named.as_str() {
                "false" => otherwise,
                named => format!("({named}) ? {then} : ({otherwise})"),
            }
        });
    vec![
        Variable {
            name: "acting".to_owned(),
            expression: acting(settings),
        },
        Variable {
            name: "unenabledWriter".to_owned(),
            expression: format!("variables.vouched ? ({writers}) : ''"),
        },
    ]
}

/// CEL: whom the requester acts for (`Acting`'s `Display`): the owner patterns of the
/// identities that bind it, templates filled in from its service account, each once, sorted by
/// their literal runs (`OwnerPattern`'s order), by access — `none` where it owns none. CEL
/// cannot sort a list: a pattern's place is the count of those that come before it, and each
/// place is written in turn (equal patterns share one). A run is held as `'x' + run`, and a
/// pattern padded with `''` to the most runs, so that comparing them run by run orders them as
/// the module's lists of runs are ordered.
fn acting(settings: &Settings) -> String {
    const LEVELS: [(Access, &str); 5] = [
        (Access::Own, ""),
        (Access::Write, " and writes for "),
        (Access::Derive, " and derives for "),
        (Access::Restore, " and restores for "),
        (Access::Changes, " and changes some of what is owned by "),
    ];
    let mut bound: BTreeMap<(usize, &str), Vec<usize>> = BTreeMap::new();
    for (k, identity) in settings.identities.iter().enumerate() {
        let level = LEVELS
            .iter()
            .position(|(access, _)| *access == identity.level());
        for pattern in &identity.owners {
            let key = (level.unwrap_or(0), pattern.as_str());
            bound.entry(key).or_default().push(k);
        }
    }
    let width = (bound.keys().map(|(_, pattern)| pattern.split('*').count()))
        .max()
        .unwrap_or(1);
    // `x` comes before `e`, run by run.
    let less = (0..width).rev().fold("false".to_owned(), |later, i| {
        format!("x[{i}] < e[{i}] || (x[{i}] == e[{i}] && ({later}))")
    });
    let joined = (1..width).fold("e[0].substring(1)".to_owned(), |text, i| {
        format!("{text} + (e[{i}] == '' ? '' : '*' + e[{i}].substring(1))")
    });
    let mut text = Vec::new();
    for (rank, (_, words)) in LEVELS.iter().enumerate() {
        let none = match rank {
            0 => "'none'",
            _ => "''",
        };
        let entries: Vec<String> = (bound.iter())
            .filter(|((level, _), _)| *level == rank)
            .map(|((_, pattern), identities)| {
                let runs = pattern
                    .split('*')
                    .map(|run| format!("'x' + {}", requester::fill(run, false)));
                let padding =
                    std::iter::repeat_n("''".to_owned(), width - pattern.split('*').count());
                let runs: Vec<String> = runs.chain(padding).collect();
                let binds: Vec<String> = (identities.iter())
                    .map(|k| format!("variables.binds{k}"))
                    .collect();
                let binds = match pattern.contains("${") {
                    true => format!("size(variables.account) == 4 && ({})", binds.join(" || ")),
                    false => binds.join(" || "),
                };
                format!("(({binds}) ? [[{}]] : [])", runs.join(", "))
            })
            .collect();
        if entries.is_empty() {
            text.push(none.to_owned());
            continue;
        }
        let places: Vec<String> = (0..entries.len())
            .map(|place| {
                format!(
                    "[l.filter(e, size(l.filter(x, {less})) == {place})].map(m, size(m) == 0 ? '' \
                     : [m[0]].map(e, ', \"' + {joined} + '\"')[0])[0]"
                )
            })
            .collect();
        text.push(format!(
            "[{}].map(l, [{}].map(s, s == '' ? {none} : {} + s.substring(2))[0])[0]",
            entries.join(" + "),
            places.join(" + "),
            quote(words)
        ));
    }
    text.join(" + ")
}

/// CEL: how the module shows a claim (`Claim`'s `Display`): `none`, the owner id quoted, or
/// what a half pair holds.
pub(super) fn shown(mark: &OwnerMark, claim: &Claim) -> String {
    let quoted = format!("'\"' + {} + '\"'", claim.id(mark));
    let Some(part) = &claim.part else {
        return format!("(({}) ? 'none' : {quoted})", claim.none());
    };
    let v = &claim.value;
    let whole = ModuleClaim::of_owner(mark, "@@0@@.@@1@@");
    let name = sentence(
        &ModuleClaim {
            part: None,
            value: Some("@@0@@"),
            ..whole
        }
        .to_string(),
        &[&format!("{v}[0]")],
    );
    let companion = sentence(
        &ModuleClaim {
            part: Some("@@0@@"),
            value: None,
            ..whole
        }
        .to_string(),
        &[&format!("{part}[0]")],
    );
    format!(
        "(({}) ? 'none' : size({part}) == 0 ? {name} : size({v}) == 0 ? {companion} : {quoted})",
        claim.none()
    )
}

/// The transition rule's reason (`transition::reason`): how to hand the object over, or the
/// pending offer that does not hand it to the new owner.
fn owner_change(group: &Group, i: usize, around: &Around) -> String {
    let mark = &group.marks[i];
    let (from, to) = (group.old[i].id(mark), group.new[i].id(mark));
    let annotation = &around.settings.offer_annotation;
    let (from_tag, to_tag) = (tag(mark, 0), tag(mark, 1));
    let change = |pending| Reason::OwnerChange {
        annotation,
        mark: &mark.key,
        from: ModuleClaim::of_owner(mark, &from_tag),
        to: ModuleClaim::of_owner(mark, &to_tag),
        pending,
    };
    let text = |pending| untag(&change(pending).to_string(), mark);
    let offer = format!("{}[0]", around.offer);
    format!(
        "size({}) > 0 ? {} : {}",
        around.offer,
        sentence(&text(Some("@@2@@")), &[&from, &to, &offer]),
        sentence(&text(None), &[&from, &to])
    )
}

/// CEL: why `claim` names no valid owner of `mark` (`Claim::owner`), as the `owner value` rule's
/// reason; `''` for a valid one.
pub(super) fn invalid(mark: &OwnerMark, claim: &Claim) -> String {
    let v = &claim.value;
    let empty = module_reason(mark, ModuleClaim::of_owner(mark, ""));
    let mut chain = format!("({}) || (size({v}) > 0 && {v}[0] == '')", claim.none());
    if let Some(part) = &claim.part {
        chain.push_str(&format!(" || (size({part}) > 0 && {part}[0] == '')"));
    }
    chain = format!("{chain} ? {empty} : ");
    if let Some(malformed) = &claim.malformed {
        let text = module_reason(mark, ModuleClaim::of_owner(mark, ":"));
        chain.push_str(&format!("{malformed} ? {text} : "));
    }
    let Some(part) = &claim.part else {
        if !mark.has_kinds() {
            return format!("{chain}''");
        }
        let kinds = kinds(mark, "s[0]", "(size(s) == 2 ? s[1] : '')");
        return format!("{chain}[{v}[0].split('.', 2)].map(s, {kinds})[0]");
    };
    // A pair: a half of it, or a namespace that holds `/`; a kind pair's kind and name.
    let half = |value: Option<&str>, part: Option<&str>| {
        module_reason(
            mark,
            ModuleClaim {
                value,
                part,
                ..ModuleClaim::of_owner(mark, "a.b/c")
            },
        )
    };
    let halves = format!(
        "size({v}) == 0 ? {} : size({part}) == 0 ? {} : ",
        half(None, Some("a")),
        half(Some("a"), None)
    );
    let whole = match mark.namespace_key.is_some() {
        true => format!(
            "{part}[0].contains('/') ? {} : ''",
            half(Some("a"), Some("a/b"))
        ),
        false => kinds(mark, &format!("{part}[0]"), &format!("{v}[0]")),
    };
    format!("{chain}{halves}{whole}")
}

/// CEL: why an owner of the kind `kind` with the rest of its value `rest` (CEL strings) is no
/// valid owner of `mark`: a known kind's incomplete value, or a kind the mark does not know.
fn kinds(mark: &OwnerMark, kind: &str, rest: &str) -> String {
    let pair = mark.kind_key.is_some();
    let mut chain = String::new();
    for known in &mark.cluster_kinds {
        // A pair's empty name is read as empty first.
        let incomplete = match pair {
            true => "''".to_owned(),
            false => module_reason(mark, ModuleClaim::of_owner(mark, known)),
        };
        chain.push_str(&format!(
            "{kind} == {} ? ({rest} == '' ? {incomplete} : '') : ",
            quote(known)
        ));
    }
    for known in &mark.namespaced_kinds {
        let incomplete = module_reason(mark, ModuleClaim::of_owner(mark, &format!("{known}.x")));
        chain.push_str(&format!(
            "{kind} == {} ? ({rest}.matches({}) ? '' : {incomplete}) : ",
            quote(known),
            quote(NAMESPACED_NAME)
        ));
    }
    let unknown = ModuleClaim::of_owner(mark, "@@0@@.x");
    let unknown = match unknown.owner(mark) {
        Err(invalid) => sentence(&Reason::OwnerValue(invalid).to_string(), &[kind]),
        Ok(_) => "''".to_owned(),
    };
    format!("{chain}{unknown}")
}

/// CEL: why the valid owner `claim` of `mark` may not own the object where it lives
/// (`scope::fit`), as the scope rules' reason.
pub(super) fn scope(mark: &OwnerMark, claim: &Claim, around: &Around) -> String {
    if mark.namespaced_kinds.is_empty() {
        return "''".to_owned();
    }
    let v = format!("{}[0]", claim.value);
    // The owner's kind, and its value's namespace.
    let (kind, namespace) = match &claim.part {
        Some(part) => (format!("{part}[0]"), format!("{v}.split('.', 2)[0]")),
        None => (
            format!("{v}.split('.', 3)[0]"),
            format!("{v}.split('.', 3)[1]"),
        ),
    };
    let cluster = Reason::Scope(ScopeViolation::ClusterScopedObject {
        owner_kind: "@@0@@",
    });
    let other = Reason::Scope(ScopeViolation::OtherNamespace {
        owner_kind: "@@0@@",
        owner_namespace: "@@1@@",
        object_namespace: "@@2@@",
    });
    format!(
        "{} ? {} : {}",
        around.cluster,
        sentence(&cluster.to_string(), &[&kind]),
        sentence(&other.to_string(), &[&kind, &namespace, around.namespace])
    )
}

/// CEL: the one owner rule's reason (`one_owner::rule`): the first other mark whose owner makes
/// mark `i`'s a second one, and the offer that would hand the object over.
fn second_owner(group: &Group, i: usize, around: &Around) -> String {
    let mark = &group.marks[i];
    let annotation = &around.settings.offer_annotation;
    let mut chain = String::new();
    for (j, condition) in group.seconds(i) {
        let under = &group.marks[j];
        let (owner_tag, second_tag) = (tag(under, 0), tag(mark, 1));
        let reason = Reason::SecondOwner {
            annotation,
            under,
            owner: ModuleClaim::of_owner(under, &owner_tag),
            mark,
            second: ModuleClaim::of_owner(mark, &second_tag),
        };
        let text = untag(&untag(&reason.to_string(), under), mark);
        let ids = [group.new[j].id(under), group.new[i].id(mark)];
        chain.push_str(&format!(
            "({condition}) ? {} : ",
            sentence(&text, &[&ids[0], &ids[1]])
        ));
    }
    format!("{chain}''")
}

/// CEL: the module's reason for a claim that names no valid owner, `''` for a valid one.
fn module_reason(mark: &OwnerMark, claim: ModuleClaim) -> String {
    match claim.owner(mark) {
        Err(invalid) => quote(&Reason::OwnerValue(invalid).to_string()),
        Ok(_) => "''".to_owned(),
    }
}

/// An owner id of `mark` that stands for the placeholder `n`: `@@n@@`, with the separator
/// every id of the mark holds and an empty-named part after it, so that the module reads it
/// as one whole owner ([`untag`] turns it back).
pub(super) fn tag(mark: &OwnerMark, n: usize) -> String {
    match mark.id_separator() {
        Some(separator) => format!("@@{n}@@{separator}@@"),
        None => format!("@@{n}@@"),
    }
}

/// `text` with each of `mark`'s [`tag`]s back to its placeholder.
pub(super) fn untag(text: &str, mark: &OwnerMark) -> String {
    match mark.id_separator() {
        Some(separator) => text.replace(&format!("@@{separator}@@"), "@@"),
        None => text.to_owned(),
    }
}

/// CEL: the module's `text` with each placeholder `@@n@@` replaced by the CEL string
/// `values[n]`. The module quotes a value as Rust's `Debug` does; the policy writes it between
/// the same quotes, as it is.
pub(super) fn sentence(text: &str, values: &[&str]) -> String {
    let mut parts = Vec::new();
    for (index, piece) in text.split("@@").enumerate() {
        match (index % 2, piece.parse::<usize>()) {
            (1, Ok(n)) if n < values.len() => parts.push(format!("({})", values[n])),
            _ => parts.push(quote(piece)),
        }
    }
    parts.retain(|part| part != "''");
    match parts.is_empty() {
        true => "''".to_owned(),
        false => parts.join(" + "),
    }
}
