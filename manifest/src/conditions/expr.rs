//! CEL expressions as trees: built with [`and`], [`or`] and [`atom`], written on one line
//! ([`Expr::flat`]) or laid out over lines within [`WIDTH`] ([`render`]).

/// A list literal of strings.
pub(super) fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Expr {
    Expr::List(
        items
            .into_iter()
            .map(|item| atom(quote(item.as_ref())))
            .collect(),
    )
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

/// A CEL expression, kept as a tree so that it can be laid out over lines.
#[derive(Debug, Clone)]
pub(super) enum Expr {
    Atom(String),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `condition ? then : otherwise`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `range.exists(variable, predicate)`
    Exists(Box<Expr>, String, Box<Expr>),
    /// `[item, …]`
    List(Vec<Expr>),
    /// `{'key': value, …}`
    Map(Vec<(String, Expr)>),
    /// `a + b + …`, `a in b`: the operator and its operands
    Infix(&'static str, Vec<Expr>),
}

pub(super) fn atom(text: impl Into<String>) -> Expr {
    Expr::Atom(text.into())
}

/// `a + b + …`
pub(super) fn plus(operands: Vec<Expr>) -> Expr {
    Expr::Infix("+", operands)
}

/// A conjunction, nested conjunctions flattened into it; one operand stands alone, and none
/// is `true`.
pub(super) fn and(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::And(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        0 => atom("true"),
        1 => flat.pop().expect("one operand"),
        _ => Expr::And(flat),
    }
}

/// A disjunction, nested disjunctions flattened into it; one operand stands alone, and none
/// is `false`.
pub(super) fn or(operands: impl IntoIterator<Item = Expr>) -> Expr {
    let mut flat = Vec::new();
    for operand in operands {
        match operand {
            Expr::Or(inner) => flat.extend(inner),
            operand => flat.push(operand),
        }
    }
    match flat.len() {
        0 => atom("false"),
        1 => flat.pop().expect("one operand"),
        _ => Expr::Or(flat),
    }
}

/// How wide a line of the expression may be, indentation included.
pub(super) const WIDTH: usize = 92;

impl Expr {
    /// The expression on one line; composite operands in parentheses.
    pub(super) fn flat(&self) -> String {
        match self {
            Expr::Atom(text) => text.clone(),
            Expr::And(operands) => join_flat(operands, " && "),
            Expr::Or(operands) => join_flat(operands, " || "),
            Expr::Infix(operator, operands) => join_flat(operands, &format!(" {operator} ")),
            Expr::Not(operand) => format!("!{}", operand.operand_flat()),
            Expr::Cond(condition, then, otherwise) => format!(
                "{} ? {} : {}",
                condition.operand_flat(),
                then.operand_flat(),
                otherwise.operand_flat()
            ),
            Expr::Exists(range, variable, predicate) => format!(
                "{}.exists({variable}, {})",
                range.operand_flat(),
                predicate.flat()
            ),
            Expr::List(items) => {
                let items: Vec<String> = items.iter().map(Expr::flat).collect();
                format!("[{}]", items.join(", "))
            }
            Expr::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(key, value)| format!("{}: {}", quote(key), value.flat()))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }

    /// Whether the expression stands as an operand without parentheses: an atom, a call, a
    /// literal.
    fn is_primary(&self) -> bool {
        matches!(
            self,
            Expr::Atom(_) | Expr::Exists(..) | Expr::Not(_) | Expr::List(_) | Expr::Map(_)
        )
    }

    /// As an operand of another expression: parenthesised unless primary.
    fn operand_flat(&self) -> String {
        match self.is_primary() {
            true => self.flat(),
            false => format!("({})", self.flat()),
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

/// The column after `text` written from `column`.
fn end_column(text: &str, column: usize) -> usize {
    match text.rsplit_once('\n') {
        Some((_, last)) => last.len(),
        None => column + text.len(),
    }
}

/// Lays the expression out from column `indent`: on one line where it fits, otherwise one
/// operand per line, each composite operand opening a parenthesis on its line and closing it
/// on a line of its own.
pub(super) fn render(expr: &Expr, indent: usize) -> String {
    render_at(expr, indent, indent)
}

/// Lays the expression out from `column` of a line indented by `indent`.
fn render_at(expr: &Expr, indent: usize, column: usize) -> String {
    let flat = expr.flat();
    if column + flat.len() <= WIDTH {
        return flat;
    }
    let pad = " ".repeat(indent);
    match expr {
        Expr::And(operands) => render_chain(operands, "&&", indent),
        Expr::Or(operands) => render_chain(operands, "||", indent),
        Expr::Infix(operator, operands) => render_chain(operands, operator, indent),
        Expr::Not(operand) => format!("!{}", render_operand(operand, indent, column + 1)),
        Expr::Cond(condition, then, otherwise) => format!(
            "{}\n{pad}? {}\n{pad}: {}",
            render_operand(condition, indent, column),
            render_operand(then, indent, indent + 2),
            render_operand(otherwise, indent, indent + 2)
        ),
        Expr::Exists(range, variable, predicate) => {
            // The range is followed on its last line by `.exists(variable,`.
            let call = format!(".exists({variable},");
            let range = render_operand(range, indent, column + call.len());
            let opening = format!("{range}{call}");
            format!(
                "{opening}\n{pad}  {}\n{pad})",
                render(predicate, indent + 2)
            )
        }
        Expr::List(items) => render_list(items, indent, column),
        Expr::Map(entries) => {
            let inner = " ".repeat(indent + 2);
            let entries: Vec<String> = entries
                .iter()
                .map(|(key, value)| {
                    let key = format!("{}: ", quote(key));
                    let value = render_at(value, indent + 2, indent + 2 + key.len());
                    format!("{inner}{key}{value}")
                })
                .collect();
            format!("{{\n{}\n{pad}}}", entries.join(",\n"))
        }
        Expr::Atom(text) => text.clone(),
    }
}

/// Lays out the operands of `operator` from column `indent`: they fill a line while they fit;
/// one that does not starts a line of its own with the operator, and one broken over lines ends
/// its line.
fn render_chain(operands: &[Expr], operator: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut text = String::new();
    let mut column = indent;
    let mut line_open = false;
    for (index, operand) in operands.iter().enumerate() {
        let flat = operand.operand_flat();
        let joined = operator.len() + 2 + flat.len();
        if index > 0 && line_open && column + joined <= WIDTH {
            text.push_str(&format!(" {operator} {flat}"));
            column += joined;
            continue;
        }
        let start = match index {
            0 => indent,
            _ => {
                text.push_str(&format!("\n{pad}{operator} "));
                indent + operator.len() + 1
            }
        };
        let rendered = render_operand(operand, indent, start);
        line_open = !rendered.contains('\n');
        column = end_column(&rendered, start);
        text.push_str(&rendered);
    }
    text
}

/// Lays out a list from `column`: its items fill lines, continued two columns in from `indent`;
/// a lone item that does not fit is laid out on lines of its own, a map within the brackets.
fn render_list(items: &[Expr], indent: usize, column: usize) -> String {
    match items {
        // A map opens and closes with the brackets.
        [only @ Expr::Map(_)] => return format!("[{}]", render_at(only, indent, column + 1)),
        [only] => {
            let pad = " ".repeat(indent);
            return format!("[\n{pad}  {}\n{pad}]", render(only, indent + 2));
        }
        _ => {}
    }
    let inner = indent + 2;
    let mut text = String::from("[");
    let mut column = column + 1;
    for (index, item) in items.iter().enumerate() {
        let flat = item.flat();
        // The item and what follows it on the line: `,` or `]`.
        let width = flat.len() + 1;
        if index > 0 {
            text.push(',');
            column += 1;
        }
        let space = usize::from(index > 0);
        if column + space + width <= WIDTH {
            if index > 0 {
                text.push(' ');
            }
            text.push_str(&flat);
            column += space + flat.len();
        } else {
            text.push_str(&format!("\n{}", " ".repeat(inner)));
            let rendered = render_at(item, inner, inner);
            column = end_column(&rendered, inner);
            text.push_str(&rendered);
        }
    }
    text.push(']');
    text
}

/// Renders an operand that starts at `column` of a line indented by `indent`: composites in
/// parentheses, broken over lines indented two more when they do not fit.
fn render_operand(operand: &Expr, indent: usize, column: usize) -> String {
    let flat = operand.operand_flat();
    if column + flat.len() <= WIDTH {
        return flat;
    }
    if operand.is_primary() {
        return render_at(operand, indent, column);
    }
    let pad = " ".repeat(indent);
    let inner = render(operand, indent + 2);
    format!("(\n{pad}  {inner}\n{pad})")
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
}
