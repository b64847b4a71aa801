//! The match conditions: CEL the API server evaluates before it calls the webhook, derived from
//! the settings so that a request reaches policy-server exactly when the policy could deny it,
//! mutate it or warn on it (a warning is an exempt requester's bypassed denial).
//!
//! What the policy judges, by operation (`src/decision.rs`, `Sides::of` and the rules after it):
//!
//! | request | the policy can act when | the condition sends it when |
//! |---|---|---|
//! | CREATE of an object | the object carries a guarded label (`key` or `kindKey`) or the offer; with `stamp: true`, whenever the requester acts for one owner | the object carries a guarded label or the offer; with `stamp: true`, also when an identity binds the requester |
//! | CREATE of a subresource (`pods/binding`, …) | never | never |
//! | UPDATE, object or subresource | a guarded label or the offer differs between the sides | the same |
//! | UPDATE of the object, `writes: Owner` | also when it keeps an owner | also when the stored object carries a guarded label |
//! | DELETE of the object, `writes: Owner` | the stored object carries a guarded label | the same |
//! | DELETE otherwise, CONNECT | never | never |
//!
//! An UPDATE that keeps every guarded label and the offer is allowed whoever sends it (the
//! transition is `none → none` or `A → A`, the offer rule is "unchanged", and only
//! `writes: Owner` looks at who keeps an owner), so under `writes: Any` the condition sends an
//! UPDATE only when it changes what the policy guards.
//!
//! Audit replays (a CREATE with an empty `userInfo`) come from Kubewarden's audit scanner straight
//! to policy-server; no condition is evaluated for them.
//!
//! **Null-safety.** `object` is null on DELETE and `oldObject` on CREATE; an object may have no
//! `metadata`, and metadata no `labels` or `annotations` (the API server omits empty maps). Every
//! access is guarded by `!= null` or `has()`, so the expression never errors on what the API
//! server sends — under `failurePolicy: Fail` an error would refuse the request. `request` is
//! the typed AdmissionRequest, whose `subResource`, `userInfo.username` and `userInfo.groups`
//! are omitted when empty: they are read through `has()` too.
//!
//! **Portable CEL**: `has()`, `in` on maps, map indexing with quoted keys, `==`, `!=`, `!`,
//! `&&`, `||`, `_ ? _ : _`, `startsWith`, `endsWith`, `contains` and `exists` — the standard
//! definitions, which cel-go (Kubernetes) and cel-rust (the tests) share. No optional types,
//! no `cel.bind`, no regular expressions.
//!
//! **Why not an `objectSelector`.** An objectSelector sees labels only: an offer annotation on
//! an object without an owner label — which the policy denies — would never reach it, and
//! under `writes: Any` it would send every update of an owned object, changed or not. So the
//! generator always writes matchConditions.

use single_owner_policy::Settings;

/// Kubernetes' limit on the number of match conditions of a webhook.
pub const MAX_CONDITIONS: usize = 64;

/// A `matchConditions` entry: all of a webhook's conditions must be true for the API server to
/// call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchCondition {
    /// The condition's name, a Kubernetes qualified name.
    pub name: String,
    /// The CEL expression, laid out over several lines.
    pub expression: String,
}

/// The match conditions for these settings. The API server calls the webhook when all of them
/// are true, so each operation's case is an implication (`request.operation != 'CREATE' || …`)
/// beside one condition that names the operations judged at all: together they are true exactly
/// for the requests the policy could deny, mutate or warn on (see the module documentation).
pub fn match_conditions(settings: &Settings) -> Vec<MatchCondition> {
    operations(settings)
        .into_iter()
        .map(|(name, expr)| MatchCondition {
            name: name.to_owned(),
            expression: render(&expr, 0),
        })
        .collect()
}

/// Whether settings have the policy judge DELETE and owner-keeping UPDATEs: `writes: Owner`
/// with identities, as `Sides::of` and `check_writes` in `src/decision.rs` read them.
pub fn guards_writes(settings: &Settings) -> bool {
    let owner = Settings::from_json(br#"{"writes": "Owner"}"#)
        .expect("the settings document {writes: Owner} parses")
        .writes;
    settings.writes == owner && !settings.identities.is_empty()
}

/// The label keys the policy reads: each entry's `key` and `kindKey`, in order, once.
pub fn guarded_labels(settings: &Settings) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for entry in &settings.owner_labels {
        for key in std::iter::once(entry.key.as_str()).chain(entry.kind_key.as_deref()) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// The conditions, named, as expression trees.
fn operations(settings: &Settings) -> Vec<(&'static str, Expr)> {
    let labels = guarded_labels(settings);
    let annotation = settings.transfer_annotation.as_str();
    let writes = guards_writes(settings);
    let stamps = settings.stamp && !settings.identities.is_empty();

    let judged = match writes {
        true => "request.operation in ['CREATE', 'UPDATE', 'DELETE']",
        false => "request.operation in ['CREATE', 'UPDATE']",
    };
    let mut conditions = vec![("operation-is-judged", atom(judged))];

    let mut create = vec![carries(NEW, &labels, annotation)];
    if stamps {
        create.push(bound_requester(settings));
    }
    let name = match stamps {
        true => "create-carries-owner-label-or-offer-or-may-be-stamped",
        false => "create-carries-owner-label-or-offer",
    };
    let create = and([not_subresource(), or(create)]);
    conditions.push((name, or([atom("request.operation != 'CREATE'"), create])));

    let mut update: Vec<Expr> = labels
        .iter()
        .map(|key| differs(Map::Labels, key))
        .chain([differs(Map::Annotations, annotation)])
        .collect();
    if writes {
        update.push(and([not_subresource(), carries(OLD, &labels, None)]));
    }
    let name = match writes {
        true => "update-changes-owner-label-or-offer-or-keeps-owner",
        false => "update-changes-owner-label-or-offer",
    };
    conditions.push((
        name,
        or([atom("request.operation != 'UPDATE'"), or(update)]),
    ));

    if writes {
        let delete = and([not_subresource(), carries(OLD, &labels, None)]);
        conditions.push((
            "delete-of-owned-object",
            or([atom("request.operation != 'DELETE'"), delete]),
        ));
    }
    conditions
}

/// The new object (`null` on DELETE) and the stored one (`null` on CREATE).
const NEW: &str = "object";
const OLD: &str = "oldObject";

/// The maps of `metadata` the policy reads.
#[derive(Debug, Clone, Copy)]
enum Map {
    Labels,
    Annotations,
}

impl Map {
    fn field(self) -> &'static str {
        match self {
            Map::Labels => "labels",
            Map::Annotations => "annotations",
        }
    }
}

/// Whether the request targets no subresource: `subResource` is omitted when empty.
fn not_subresource() -> Expr {
    atom("(!has(request.subResource) || request.subResource == '')")
}

/// Whether `side` carries any of the labels `keys`, or the annotation.
fn carries<'a>(side: &str, keys: &[&str], annotation: impl Into<Option<&'a str>>) -> Expr {
    let mut maps = vec![and([
        atom(format!("has({side}.metadata.labels)")),
        or(keys
            .iter()
            .map(|key| atom(format!("{} in {side}.metadata.labels", quote(key))))),
    ])];
    if let Some(annotation) = annotation.into() {
        maps.push(and([
            atom(format!("has({side}.metadata.annotations)")),
            atom(format!(
                "{} in {side}.metadata.annotations",
                quote(annotation)
            )),
        ]));
    }
    and([
        atom(format!("{side} != null")),
        atom(format!("has({side}.metadata)")),
        or(maps),
    ])
}

/// Whether `side` has `key` in the map.
fn has_key(side: &str, map: Map, key: &str) -> Expr {
    let field = map.field();
    and([
        atom(format!("{side} != null")),
        atom(format!("has({side}.metadata)")),
        atom(format!("has({side}.metadata.{field})")),
        atom(format!("{} in {side}.metadata.{field}", quote(key))),
    ])
}

/// Whether `key` of the map differs between the sides: set on one side only, or to another value.
fn differs(map: Map, key: &str) -> Expr {
    let field = map.field();
    let quoted = quote(key);
    Expr::Cond(
        Box::new(has_key(OLD, map, key)),
        Box::new(or([
            Expr::Not(Box::new(has_key(NEW, map, key))),
            atom(format!(
                "{OLD}.metadata.{field}[{quoted}] != {NEW}.metadata.{field}[{quoted}]"
            )),
        ])),
        Box::new(has_key(NEW, map, key)),
    )
}

/// Whether an identity may bind the requester, by its user name or one of its groups: what
/// stamping needs (a requester acting for exactly one owner is bound by some identity). Each
/// `*` pattern is widened to its first literal as a prefix, its last as a suffix and the others
/// as substrings — never narrower than the policy's matching, so never a bypass.
fn bound_requester(settings: &Settings) -> Expr {
    let mut users: Vec<&str> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    for identity in &settings.identities {
        for (patterns, list) in [
            (&identity.users, &mut users),
            (&identity.groups, &mut groups),
        ] {
            for pattern in patterns {
                if !list.contains(&pattern.as_str()) {
                    list.push(pattern);
                }
            }
        }
    }
    let mut bound = Vec::new();
    if !users.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.username)"),
            or(users
                .iter()
                .map(|pattern| glob("request.userInfo.username", pattern))),
        ]));
    }
    if !groups.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.groups)"),
            Expr::Exists(
                "request.userInfo.groups".to_owned(),
                "group".to_owned(),
                Box::new(or(groups.iter().map(|pattern| glob("group", pattern)))),
            ),
        ]));
    }
    and([atom("has(request.userInfo)"), or(bound)])
}

/// A condition true for every `text` that the `*` pattern matches (and possibly more).
fn glob(text: &str, pattern: &str) -> Expr {
    let literals: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = literals.as_slice() else {
        return atom(format!("{text} == {}", quote(pattern)));
    };
    let mut parts = Vec::new();
    if !first.is_empty() {
        parts.push(atom(format!("{text}.startsWith({})", quote(first))));
    }
    for literal in middle.iter().filter(|literal| !literal.is_empty()) {
        parts.push(atom(format!("{text}.contains({})", quote(literal))));
    }
    if !last.is_empty() {
        parts.push(atom(format!("{text}.endsWith({})", quote(last))));
    }
    match parts.len() {
        0 => atom("true"),
        _ => and(parts),
    }
}

/// A CEL string literal holding `text`: single-quoted, with `\`, `'` and every character that
/// is not printable ASCII or a printable non-ASCII character escaped.
pub fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '\'' => quoted.push_str("\\'"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            ' '..='~' => quoted.push(c),
            c if (c as u32) < 0x10000 => quoted.push_str(&format!("\\u{:04x}", c as u32)),
            c => quoted.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    quoted.push('\'');
    quoted
}

/// A boolean CEL expression, kept as a tree so that it can be laid out over lines.
#[derive(Debug, Clone)]
enum Expr {
    Atom(String),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `condition ? then : otherwise`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `list.exists(variable, predicate)`
    Exists(String, String, Box<Expr>),
}

fn atom(text: impl Into<String>) -> Expr {
    Expr::Atom(text.into())
}

/// A conjunction, nested conjunctions flattened into it; one operand stands alone.
fn and(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::And(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        1 => flat.pop().expect("one operand"),
        _ => Expr::And(flat),
    }
}

/// A disjunction, nested disjunctions flattened into it; one operand stands alone.
fn or(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::Or(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        1 => flat.pop().expect("one operand"),
        _ => Expr::Or(flat),
    }
}

/// How wide a line of the expression may be, indentation included.
const WIDTH: usize = 92;

impl Expr {
    /// The expression on one line; composite operands in parentheses.
    fn flat(&self) -> String {
        match self {
            Expr::Atom(text) => text.clone(),
            Expr::And(operands) => join_flat(operands, " && "),
            Expr::Or(operands) => join_flat(operands, " || "),
            Expr::Not(operand) => format!("!{}", operand.operand_flat()),
            Expr::Cond(condition, then, otherwise) => format!(
                "{} ? {} : {}",
                condition.operand_flat(),
                then.operand_flat(),
                otherwise.operand_flat()
            ),
            Expr::Exists(list, variable, predicate) => {
                format!("{list}.exists({variable}, {})", predicate.flat())
            }
        }
    }

    /// As an operand of another expression: parenthesised unless an atom or a call.
    fn operand_flat(&self) -> String {
        match self {
            Expr::Atom(_) | Expr::Exists(..) | Expr::Not(_) => self.flat(),
            _ => format!("({})", self.flat()),
        }
    }
}

fn join_flat(operands: &[Expr], separator: &str) -> String {
    operands
        .iter()
        .map(Expr::operand_flat)
        .collect::<Vec<_>>()
        .join(separator)
}

/// Lays the expression out from column `indent`: on one line where it fits, otherwise one
/// operand per line, each composite operand opening a parenthesis on its line and closing it
/// on a line of its own.
fn render(expr: &Expr, indent: usize) -> String {
    let flat = expr.flat();
    if indent + flat.len() <= WIDTH {
        return flat;
    }
    let pad = " ".repeat(indent);
    match expr {
        Expr::And(operands) | Expr::Or(operands) => {
            let operator = if matches!(expr, Expr::And(_)) {
                "&&"
            } else {
                "||"
            };
            // Operands fill a line while they fit; one that does not starts a line of its own
            // with the operator, and one broken over lines ends its line.
            let mut text = String::new();
            let mut column = indent;
            let mut line_open = false;
            for (index, operand) in operands.iter().enumerate() {
                let flat = operand.operand_flat();
                if index > 0 && line_open && column + 4 + flat.len() <= WIDTH {
                    text.push_str(&format!(" {operator} {flat}"));
                    column += 4 + flat.len();
                    continue;
                }
                let start = match index {
                    0 => indent,
                    _ => {
                        text.push_str(&format!("\n{pad}{operator} "));
                        indent + 3
                    }
                };
                let rendered = render_operand(operand, indent, start);
                line_open = !rendered.contains('\n');
                column = start + rendered.len();
                text.push_str(&rendered);
            }
            text
        }
        Expr::Not(operand) => format!("!{}", render_operand(operand, indent, indent + 1)),
        Expr::Cond(condition, then, otherwise) => format!(
            "{}\n{pad}? {}\n{pad}: {}",
            render_operand(condition, indent, indent),
            render_operand(then, indent, indent + 2),
            render_operand(otherwise, indent, indent + 2)
        ),
        Expr::Exists(list, variable, predicate) => format!(
            "{list}.exists({variable},\n{pad}  {}\n{pad})",
            render(predicate, indent + 2)
        ),
        Expr::Atom(text) => text.clone(),
    }
}

/// Renders an operand that starts at `column` of a line indented by `indent`: composites in
/// parentheses, broken over lines indented two more when they do not fit.
fn render_operand(operand: &Expr, indent: usize, column: usize) -> String {
    let flat = operand.operand_flat();
    if column + flat.len() <= WIDTH {
        return flat;
    }
    match operand {
        Expr::Atom(_) | Expr::Exists(..) | Expr::Not(_) => render(operand, indent),
        _ => {
            let pad = " ".repeat(indent);
            let inner = render(operand, indent + 2);
            format!("(\n{pad}  {inner}\n{pad})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_what_cel_string_literals_cannot_hold() {
        assert_eq!(quote("appID"), "'appID'");
        assert_eq!(quote("it's"), r"'it\'s'");
        assert_eq!(quote(r"a\b"), r"'a\\b'");
        assert_eq!(quote("a\nb\u{7}é😀"), r"'a\nb\u0007\u00e9\U0001f600'");
    }

    #[test]
    fn patterns_widen_to_prefix_substrings_and_suffix() {
        let flat = |pattern| glob("u", pattern).flat();
        assert_eq!(flat("alice"), "u == 'alice'");
        assert_eq!(flat("*"), "true");
        assert_eq!(flat("a:*"), "u.startsWith('a:')");
        assert_eq!(flat("*:a"), "u.endsWith(':a')");
        assert_eq!(
            flat("a*b*c"),
            "u.startsWith('a') && u.contains('b') && u.endsWith('c')"
        );
    }

    #[test]
    fn long_expressions_are_laid_out_within_the_width() {
        let settings = Settings::from_json(
            br#"{"ownerLabels": [{"key": "olm.operatorframework.io/owner-name",
                 "kindKey": "olm.operatorframework.io/owner-kind", "clusterKinds": ["A"]}],
                 "identities": [{"owners": ["A.*"], "users": ["u"]}], "writes": "Owner"}"#,
        )
        .unwrap();
        let conditions = match_conditions(&settings);
        for ((_, expr), condition) in operations(&settings).iter().zip(&conditions) {
            // Laid out or not, the expression is the same.
            let squeezed: String = condition.expression.split_whitespace().collect();
            let flat: String = expr.flat().split_whitespace().collect();
            assert_eq!(squeezed, flat);
        }
    }
}
