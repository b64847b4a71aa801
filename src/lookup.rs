//! Looks a key up in the text of a JSON object, reading no further than the key.
//!
//! The fields a request keeps raw ([`crate::request`]) are JSON serde_json has already read
//! through once; finding `spec.template.metadata` in a workload's `spec` needs only to step
//! over the values before each key, without reading them again, nor the value found or those
//! after it — a pod template's `spec` is most of a workload.

/// The text from the value of `key` in `object` (valid JSON) on: the value, then the rest of
/// `object`, for a reader that stops at the value's end. `Some(None)` when the key is missing
/// or `null` (as is `object` itself), `None` when `object` is not an object (the caller asks
/// serde_json why, as when the text ends early, which a value serde_json has read cannot). Of
/// two values of one key, the first.
pub(crate) fn field<'a>(object: &'a str, key: &str) -> Option<Option<&'a str>> {
    let text = object.as_bytes();
    let mut at = blank(text, 0);
    match text.get(at) {
        Some(b'{') => at += 1,
        Some(b'n') => return Some(None),
        _ => return None,
    }
    loop {
        at = blank(text, at);
        if text.get(at) != Some(&b'"') {
            // `}`: the key is not there.
            return Some(None);
        }
        let name = object.get(at..value_end(text, at))?;
        at = blank(text, at + name.len());
        // The colon.
        at = blank(text, at + 1);
        if is_key(name, key) {
            let value = object.get(at..)?;
            return Some((!value.starts_with("null")).then_some(value));
        }
        at = blank(text, value_end(text, at));
        // The comma, or the closing brace (then no key follows).
        at += 1;
    }
}

/// Whether the JSON string `name` (quoted) says `key`.
pub(crate) fn is_key(name: &str, key: &str) -> bool {
    match name.contains('\\') {
        false => name.get(1..name.len() - 1) == Some(key),
        true => serde_json::from_str::<String>(name).is_ok_and(|name| name == key),
    }
}

/// The offset after the blanks from `at`.
fn blank(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The items of the JSON array `array` (valid JSON), each as the text from it on, as [`field`]
/// gives a value; none for `null`, `None` when `array` is neither.
pub(crate) fn items(array: &str) -> Option<impl Iterator<Item = &str>> {
    let text = array.as_bytes();
    let mut at = blank(text, 0);
    match text.get(at) {
        Some(b'[') => at = blank(text, at + 1),
        Some(b'n') => at = text.len(),
        _ => return None,
    }
    Some(std::iter::from_fn(move || {
        if text.get(at).is_none_or(|&byte| byte == b']') {
            return None;
        }
        let item = array.get(at..)?;
        // Past the item, its comma and the blanks after.
        at = blank(text, blank(text, value_end(text, at)) + 1);
        Some(item)
    }))
}

/// The members of the JSON object `object` (valid JSON), in order: each key, quoted as written,
/// and the text of its value; none for `null`, `None` when `object` is neither.
pub(crate) fn members(object: &str) -> Option<impl Iterator<Item = (&str, &str)>> {
    let text = object.as_bytes();
    let mut at = blank(text, 0);
    match text.get(at) {
        Some(b'{') => at += 1,
        Some(b'n') => at = text.len(),
        _ => return None,
    }
    Some(std::iter::from_fn(move || {
        at = blank(text, at);
        if text.get(at) != Some(&b'"') {
            return None;
        }
        let name = object.get(at..value_end(text, at))?;
        // Past the name, the blanks and the colon.
        at = blank(text, blank(text, at + name.len()) + 1);
        let value = value(object.get(at..)?);
        // Past the value, and its comma or the closing brace.
        at = blank(text, at + value.len()) + 1;
        Some((name, value))
    }))
}

/// The text of the JSON value `text` starts with, without what follows it.
pub(crate) fn value(text: &str) -> &str {
    text.get(..value_end(text.as_bytes(), 0)).unwrap_or(text)
}

/// The offset after the value that starts at `at`; past the end of `text` when the value runs
/// over it.
fn value_end(text: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&byte) = text.get(at) {
        at += 1;
        match byte {
            b'"' => {
                while let Some(&byte) = text.get(at) {
                    at += 1;
                    match byte {
                        b'\\' => at += 1,
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            // A number, `true`, `false` or `null`: up to what follows it.
            _ if depth == 0 => {
                while text
                    .get(at)
                    .is_some_and(|byte| !b" \t\n\r,]}".contains(byte))
                {
                    at += 1;
                }
            }
            _ => {}
        }
        if depth == 0 {
            return at;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_ends_early_gives_an_answer_not_a_panic() {
        let cuts = [
            r#"{"a"#,
            r#"{"a""#,
            r#"{"a":"#,
            r#"{"a": "x\"#,
            r#"{"b": 1, "a"#,
            r#"{"b": "x\"#,
        ];
        for cut in cuts {
            if let Some(Some(value)) = field(cut, "a") {
                assert!(cut.ends_with(value), "{cut}");
            }
        }
    }

    #[test]
    fn members_are_each_key_as_written_and_its_value() {
        let object = r#" { "a" : [1, {"}": "]"}], "b\"": "x\\\"", "n": null, "t": true } "#;
        let found: Vec<_> = members(object).expect("an object").collect();
        let expected = [
            (r#""a""#, r#"[1, {"}": "]"}]"#),
            (r#""b\"""#, r#""x\\\"""#),
            (r#""n""#, "null"),
            (r#""t""#, "true"),
        ];
        assert_eq!(found, expected);
        assert_eq!(members("{}").map(Iterator::count), Some(0));
        assert_eq!(members("null").map(Iterator::count), Some(0));
        assert!(members("[]").is_none());
        let found: Vec<_> = items(r#"[{"a": 1}, "x" , 2]"#)
            .unwrap()
            .map(value)
            .collect();
        assert_eq!(found, [r#"{"a": 1}"#, r#""x""#, "2"]);
    }

    #[test]
    fn a_key_is_found_by_stepping_over_the_values_before_it() {
        let object = r#" { "a" : [1, {"}": "]"}], "b\"": "x\\\"", "n": null,
                          "t\u0065mplate": {"k": -1.5e3 }, "t": true, "template": 2 } "#;
        let rows = [
            ("a", Some(r#"[1, {"}": "]"}]"#)),
            ("b\"", Some(r#""x\\\"""#)),
            ("n", None),
            ("template", Some(r#"{"k": -1.5e3 }"#)),
            ("t", Some("true")),
            ("missing", None),
        ];
        for (key, value) in rows {
            let found = field(object, key).expect("an object");
            assert_eq!(
                found.map(|rest| &rest[..value_end(rest.as_bytes(), 0)]),
                value,
                "{key}"
            );
        }
        assert_eq!(field("{}", "a"), Some(None));
        assert_eq!(field("null", "a"), Some(None));
        assert_eq!(field(r#"{"a": 12}"#, "a"), Some(Some("12}")));
        for not_an_object in ["[]", "\"x\"", "1", "true"] {
            assert_eq!(field(not_an_object, "a"), None, "{not_an_object}");
        }
    }
}
