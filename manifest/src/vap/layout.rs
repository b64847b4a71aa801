//! Lays a generated CEL expression out over lines for people who read the policy: a line
//! breaks before `?`, `:`, `&&` or `||` once it is [`WIDTH`] long, indented by how deep the
//! brackets nest there. Only whitespace outside string literals changes, which CEL ignores: the
//! tests evaluate the laid-out text.

/// How long a line grows before it breaks.
const WIDTH: usize = 96;

/// The operators a line may break before.
const BREAKS: [&str; 4] = [" ? ", " : ", " && ", " || "];

pub(super) fn lay_out(expression: &str) -> String {
    let mut out = String::with_capacity(expression.len() + expression.len() / 8);
    let (mut depth, mut line, mut quoted, mut escaped) = (0usize, 0usize, false, false);
    let mut rest = expression;
    while let Some(c) = rest.chars().next() {
        if !quoted && line >= WIDTH && BREAKS.iter().any(|op| rest.starts_with(op)) {
            out.push('\n');
            let indent = "  ".repeat(depth.min(16) + 1);
            out.push_str(&indent);
            line = indent.len();
            rest = &rest[1..];
            continue;
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '\'' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(c);
        line += 1;
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_before_operators_outside_strings() {
        let long = format!("{} && 'a && b' == x || y", "z".repeat(WIDTH));
        let laid = lay_out(&long);
        assert_eq!(
            laid,
            format!("{}\n  && 'a && b' == x || y", "z".repeat(WIDTH))
        );
        let quoted = format!("'{}' == x", "q && ".repeat(WIDTH));
        assert_eq!(lay_out(&quoted), quoted);
        assert_eq!(lay_out("a ? b : c"), "a ? b : c");
    }
}
