//! Who sends a request, as CEL: the requester's user name and groups, and the `*` patterns that
//! name them.

use super::expr::{Expr, and, atom, quote};

/// A condition true for every `text` that the `*` pattern matches (and possibly more).
pub(super) fn glob(text: &str, pattern: &str) -> Expr {
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

/// A condition true exactly for the `text` that the `*` pattern matches, as the policy's
/// `identity::matches` does: `None` for a pattern with two `*` or more, which CEL without
/// regular expressions cannot match exactly (their literals must appear in order, apart).
pub(super) fn glob_exactly(text: &str, pattern: &str) -> Option<Expr> {
    let literals: Vec<&str> = pattern.split('*').collect();
    match literals.as_slice() {
        [literal] => Some(atom(format!("{text} == {}", quote(literal)))),
        [prefix, suffix] => {
            let mut parts = Vec::new();
            if !prefix.is_empty() {
                parts.push(atom(format!("{text}.startsWith({})", quote(prefix))));
            }
            if !suffix.is_empty() {
                parts.push(atom(format!("{text}.endsWith({})", quote(suffix))));
            }
            if !prefix.is_empty() && !suffix.is_empty() {
                // The prefix and the suffix must not overlap; `size` counts code points.
                let least = prefix.chars().count() + suffix.chars().count();
                parts.push(atom(format!("size({text}) >= {least}")));
            }
            Some(match parts.len() {
                0 => atom("true"),
                _ => and(parts),
            })
        }
        _ => None,
    }
}

/// The requester's user name and groups, in `request`.
pub(super) const USERNAME: &str = "request.userInfo.username";
pub(super) const GROUPS: &str = "request.userInfo.groups";

/// Whether the requester is in `group`.
pub(super) fn in_group(group: &str) -> Expr {
    and([
        atom(format!("has({GROUPS})")),
        atom(format!("{} in {GROUPS}", quote(group))),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn patterns_with_one_star_match_exactly() {
        let flat = |pattern| glob_exactly("u", pattern).map(|expr| expr.flat());
        assert_eq!(flat("k3s"), Some("u == 'k3s'".to_owned()));
        assert_eq!(flat("k3s:*"), Some("u.startsWith('k3s:')".to_owned()));
        assert_eq!(flat("*:agent"), Some("u.endsWith(':agent')".to_owned()));
        assert_eq!(
            flat("ab*ba"),
            Some("u.startsWith('ab') && u.endsWith('ba') && size(u) >= 4".to_owned())
        );
        assert_eq!(flat("a*b*c"), None);
    }
}
