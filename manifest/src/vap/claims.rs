//! What one owner mark claims, in CEL: its value and its companion's, each a list of at most
//! one string (`[]` where the key is absent, so that an absent key and an empty value differ,
//! as `Claim` keeps them apart), and what the policy reads out of them — the owner id, whether
//! it names a valid owner (`Claim::owner`), and whether that owner fits the object's scope
//! (`scope::fit`).

use single_owner_policy::{Format, OwnerMark};

use super::read::path_or_null;
use crate::conditions::{quote, string_list};

/// One side's claim under one mark: CEL expressions of lists of at most one string.
#[derive(Debug, Clone)]
pub(super) struct Claim {
    /// The mark's value.
    pub value: String,
    /// The companion key's value, for a mark with `kindKey` or `namespaceKey`.
    pub part: Option<String>,
    /// For an Argo CD tracking id: whether the value is one that does not parse, which is then
    /// all of it (a CEL bool).
    pub malformed: Option<String>,
    /// What is read out of it, where it is read once into variables.
    pub read: Option<Read>,
}

/// What the policy reads out of a claim, as CEL: the names of the variables that hold it.
#[derive(Debug, Clone)]
pub(super) struct Read {
    pub none: String,
    pub valid: String,
    pub id: String,
}

impl Claim {
    /// The claim read from the map of metadata `map` (a CEL map of strings), `mark`'s keys, on
    /// the object `on` (CEL), or in a template (`None`).
    pub fn read(mark: &OwnerMark, map: &str, on: Option<&str>) -> Claim {
        let raw = Claim::raw(mark, map);
        match mark.format {
            Format::ArgoCdTrackingId => tracking(&raw.value, on),
            Format::Plain => raw,
        }
    }

    /// `mark`'s keys in the map of metadata `map`, as written: the claim itself but for a
    /// tracking id, whose value it holds whole. Two claims differ only where these do.
    pub fn raw(mark: &OwnerMark, map: &str) -> Claim {
        let key = |key: &str| {
            let key = quote(key);
            format!("({key} in {map} ? [{map}[{key}]] : [])")
        };
        Claim {
            value: key(&mark.key),
            part: companion(mark).map(key),
            malformed: None,
            read: None,
        }
    }

    /// `true` where the claim names nobody: no key set.
    pub fn none(&self) -> String {
        if let Some(read) = &self.read {
            return read.none.clone();
        }
        match &self.part {
            None => format!("size({}) == 0", self.value),
            Some(part) => format!("size({}) == 0 && size({part}) == 0", self.value),
        }
    }

    /// Whether two claims say the same (`Claim`'s equality).
    pub fn same(&self, other: &Claim) -> String {
        match (&self.part, &other.part, &self.malformed, &other.malformed) {
            (Some(a), Some(b), _, _) | (_, _, Some(a), Some(b)) => {
                format!("{} == {} && {a} == {b}", self.value, other.value)
            }
            _ => format!("{} == {}", self.value, other.value),
        }
    }

    /// The owner id offers name owners by (`Claim::id`): the value, or `<kind>.<value>`,
    /// `<namespace>/<value>` for a pair whose companion is set.
    pub fn id(&self, mark: &OwnerMark) -> String {
        if let Some(read) = &self.read {
            return read.id.clone();
        }
        let value = format!("(size({0}) > 0 ? {0}[0] : '')", self.value);
        match (&self.part, mark.namespace_key.is_some()) {
            (None, _) => value,
            (Some(part), pair) => {
                let joint = if pair { "/" } else { "." };
                format!("(size({part}) > 0 ? {part}[0] + '{joint}' + {value} : {value})")
            }
        }
    }

    /// Whether the claim names a valid owner for `mark` (`Claim::owner` is `Ok`).
    pub fn valid(&self, mark: &OwnerMark) -> String {
        if let Some(read) = &self.read {
            return read.valid.clone();
        }
        let v = &self.value;
        let set = format!("size({v}) > 0 && {v}[0] != ''");
        if let Some(malformed) = &self.malformed {
            return format!("{set} && !({malformed})");
        }
        let Some(part) = &self.part else {
            if !mark.has_kinds() {
                return set;
            }
            let kinds = (mark
                .cluster_kinds
                .iter()
                .map(|kind| in_value_cluster(kind, v)))
            .chain(mark.namespaced_kinds.iter().map(|kind| in_value(kind, v)))
            .collect::<Vec<_>>()
            .join(" || ");
            return format!("{set} && ({kinds})");
        };
        let both = format!("{set} && size({part}) > 0 && {part}[0] != ''");
        if mark.namespace_key.is_some() {
            return format!("{both} && !{part}[0].contains('/')");
        }
        let cluster = format!("{part}[0] in {}", string_list(&mark.cluster_kinds));
        let namespaced = format!(
            "{part}[0] in {} && {v}[0].matches({})",
            string_list(&mark.namespaced_kinds),
            quote(NAMESPACED_NAME)
        );
        format!("{both} && ({cluster} || {namespaced})")
    }

    /// The rule a claim breaks as a new owner, or `''`: `owner value` where it names no valid
    /// owner, `cluster scope` or `namespace scope` where a namespaced owner claims what is out
    /// of its namespace (`scope::fit`); `namespace` and `cluster` are CEL for the object's.
    pub fn fit(&self, mark: &OwnerMark, namespace: &str, cluster: &str) -> String {
        let valid = self.valid(mark);
        let v = &self.value;
        // A namespaced owner, and whether its namespace is the object's.
        let (namespaced, home) = match &self.part {
            _ if mark.namespaced_kinds.is_empty() => return ternary(&valid, "''", "'owner value'"),
            None => (
                or(mark
                    .namespaced_kinds
                    .iter()
                    .map(|kind| format!("{v}[0].startsWith({})", quote(&format!("{kind}."))))),
                or(mark.namespaced_kinds.iter().map(|kind| {
                    format!(
                        "{v}[0].startsWith({} + {namespace} + '.')",
                        quote(&format!("{kind}."))
                    )
                })),
            ),
            Some(part) => (
                format!("{part}[0] in {}", string_list(&mark.namespaced_kinds)),
                format!("{v}[0].startsWith({namespace} + '.')"),
            ),
        };
        let scope = format!(
            "!({namespaced}) ? '' : {cluster} ? 'cluster scope' : {home} ? '' : 'namespace scope'"
        );
        ternary(&valid, &format!("({scope})"), "'owner value'")
    }
}

/// The claim of an Argo CD tracking id whose value is `raw` (a list of at most one string), on
/// the object `on` (CEL) or in a template (`None`), as `Claim::read` reads it: in a template,
/// none; on the object, the app of an id that names the object, none for one that names another
/// object, or all of the value of one that does not parse (`parse_tracking_id`, Argo CD's
/// `ParseAppInstanceValue`: three `:`-separated parts, the last two with one `/` each). The id
/// names the object as `Tracked::is` compares them (`isSelfReferencedObj`): group, kind, name,
/// and the namespace unless the object is cluster-scoped. Neither a group, a kind nor a name
/// holds `:` or `/`, so the parts are compared whole.
fn tracking(raw: &str, on: Option<&str>) -> Claim {
    let Some(object) = on else {
        return Claim {
            value: "[]".to_owned(),
            part: None,
            malformed: Some("false".to_owned()),
            read: None,
        };
    };
    let well_formed = |id: &str| format!("{id}.matches({})", quote(TRACKING_ID));
    let name = format!(
        "({0} == null ? '' : {0})",
        path_or_null(object, &["metadata", "name"])
    );
    let names_it = format!(
        "p[1] == request.kind.group + '/' + request.kind.kind && (variables.clusterScoped ? \
         p[2].endsWith('/' + {name}) : p[2] == variables.namespace + '/' + {name})"
    );
    Claim {
        value: format!(
            "[{raw}].map(r, size(r) == 0 || !{} ? r : [r[0].split(':')].map(p, {names_it} ? \
             [p[0]] : [])[0])[0]",
            well_formed("r[0]")
        ),
        part: None,
        malformed: Some(format!(
            "[{raw}].map(r, size(r) > 0 && !{})[0]",
            well_formed("r[0]")
        )),
        read: None,
    }
}

/// A tracking id that parses: `<app>:<group>/<kind>:<namespace>/<name>`, each part free of
/// `:`, the last two with one `/`. A negated class matches a line break too, so that a value
/// holding one parses as `split` parses it.
const TRACKING_ID: &str = "^[^:]*:[^:/]*/[^:/]*:[^:/]*/[^:/]*$";

/// A kind's name and the rest of a namespaced owner's value: `<namespace>.<name>`, each part
/// non-empty, split at the first `.` (`split_once`); `(?s)`: a name may hold a line break.
pub(super) const NAMESPACED_NAME: &str = r"^[^.]+\.(?s:.+)$";

/// `kind.<name>` in the value, a cluster-level kind: anything after the first `.`.
fn in_value_cluster(kind: &str, value: &str) -> String {
    let prefix = quote(&format!("{kind}."));
    match kind.contains('.') {
        // The value's kind ends at its first `.`: a kind with one is never read.
        true => "false".to_owned(),
        false => format!("({value}[0].startsWith({prefix}) && {value}[0] != {prefix})"),
    }
}

/// `kind.<namespace>.<name>` in the value, a namespaced kind.
fn in_value(kind: &str, value: &str) -> String {
    match kind.contains('.') {
        true => "false".to_owned(),
        false => {
            let pattern = format!("^{}\\.{}", escape(kind), &NAMESPACED_NAME[1..]);
            format!("{value}[0].matches({})", quote(&pattern))
        }
    }
}

/// The companion key of a mark, if it has one.
pub(super) fn companion(mark: &OwnerMark) -> Option<&str> {
    mark.kind_key.as_deref().or(mark.namespace_key.as_deref())
}

/// `a || b || …`, `false` for none.
pub(super) fn or(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.is_empty() {
        true => "false".to_owned(),
        false => items.join(" || "),
    }
}

/// `condition ? then : otherwise`.
pub(super) fn ternary(condition: &str, then: &str, otherwise: &str) -> String {
    format!("(({condition}) ? {then} : {otherwise})")
}

/// `text` with RE2's metacharacters escaped, to match itself.
pub(super) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}
