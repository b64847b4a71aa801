//! Names the field where serde_json stopped reading a document with an error.
//!
//! An error of serde_json carries its position (line and column); the document, scanned up to
//! that position, says which field was being read there: `request.object.metadata.labels.appID`,
//! `identities[0].access`. Parsing once more with every value path-tracked would say the same at
//! the cost of a second copy of every parser in the module; this scan of the document's text is
//! run only to explain an error.

/// The error as `path: error`, or as serde_json writes it when it was at the top level.
pub(crate) fn explain(json: &[u8], error: &serde_json::Error) -> String {
    match path(json, error) {
        path if path.is_empty() => error.to_string(),
        path => format!("{path}: {error}"),
    }
}

/// The document as text, checked to be UTF-8 once so that serde_json need not check each string
/// it reads (which it does not do for text). Otherwise the error serde_json gives a string that
/// is not UTF-8, placed after the first byte that is wrong, with the path of its field.
pub(crate) fn utf8(json: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(json).map_err(|error| {
        let wrong = error.valid_up_to();
        let (line, column) = position(json, wrong + 1);
        let message = format!("invalid unicode code point at line {line} column {column}");
        match path_at(&json[..wrong], Reading::Exact, false) {
            path if path.is_empty() => message,
            path => format!("{path}: {message}"),
        }
    })
}

/// The path of the field `error` is in, such as `request.object.metadata.labels.appID` or
/// `identities[0].access`; empty at the top level.
pub(crate) fn path(json: &[u8], error: &serde_json::Error) -> String {
    let at = offset(json, error.line(), error.column());
    if error.is_data() {
        // A value's reader raises its error after reading the value, and serde_json places it
        // there or, when the reader is not serde_json's own, after the container around the
        // value (and the blanks before what follows); a container's reader raises its missing
        // fields and lengths at its end.
        let message = error.to_string();
        let of_container =
            message.starts_with("missing field") || message.starts_with("invalid length");
        path_at(&json[..at], Reading::ThenBlanks, !of_container)
    } else {
        // A syntax error is placed after the byte that is wrong.
        let at = if error.is_syntax() {
            at.saturating_sub(1)
        } else {
            at
        };
        path_at(&json[..at], Reading::Exact, false)
    }
}

/// The byte offset of a serde_json position: `column` bytes into line `line` (from 1). Line 0
/// (no position) gives 0.
fn offset(json: &[u8], line: usize, column: usize) -> usize {
    let start = match line {
        0 => return 0,
        1 => 0,
        _ => json
            .iter()
            .enumerate()
            .filter(|(_, byte)| **byte == b'\n')
            .nth(line - 2)
            .map_or(json.len(), |(at, _)| at + 1),
    };
    (start + column).min(json.len())
}

/// The serde_json position (line from 1, column in bytes) of byte `offset`.
fn position(json: &[u8], offset: usize) -> (usize, usize) {
    let before = &json[..offset];
    let start = before
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |at| at + 1);
    let lines = before[..start]
        .iter()
        .filter(|byte| **byte == b'\n')
        .count();
    (1 + lines, offset - start)
}

/// A JSON container open at the position, with the value being read in it.
enum Frame {
    /// An object, with the key of its current value; `None` before a key is read.
    Object {
        key: Option<String>,
        wants_key: bool,
    },
    /// An array, with the index of its current value; `None` before the first.
    Array { index: Option<usize> },
}

/// The innermost container's current value, as far as the scan has read.
enum Value {
    /// None yet, or the last one is followed by a comma.
    None,
    /// A key was read, its value not yet, or the value runs to the end of the scan.
    Reading,
    /// The value ended at this offset.
    Ended(usize),
}

/// Whether a value that ended before the end of the scan is still the one being read.
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    /// Only up to its end.
    Exact,
    /// Up to its end and the blanks after it.
    ThenBlanks,
}

/// The path of the value being read at the end of `text`: the keys and indices of the
/// containers open there, then the current key or index of the innermost one while its value is
/// being read (as `reading` says). With `into_closed`, when that value is a container that has
/// just closed, the path goes on into its last value. Empty at the top level.
fn path_at(text: &[u8], reading: Reading, into_closed: bool) -> String {
    let mut frames: Vec<Frame> = Vec::new();
    // The state of the innermost container's current value, and the container that value is
    // when it was just closed.
    let mut value = Value::None;
    let mut closed = None;
    let mut at = 0;
    while at < text.len() {
        let byte = text[at];
        at += 1;
        if byte.is_ascii_whitespace() {
            continue;
        }
        closed = None;
        match byte {
            b':' => {}
            b',' => {
                if let Some(Frame::Object { key, wants_key }) = frames.last_mut() {
                    *key = None;
                    *wants_key = true;
                }
                value = Value::None;
            }
            b'}' | b']' => {
                closed = frames.pop();
                value = Value::Ended(at);
            }
            b'"' => {
                let start = at - 1;
                at = string_end(text, at);
                if let Some(Frame::Object { key, wants_key }) = frames.last_mut()
                    && *wants_key
                {
                    *key = Some(key_text(&text[start..at]));
                    *wants_key = false;
                    value = Value::Reading;
                } else {
                    start_value(&mut frames);
                    value = Value::Ended(at);
                }
            }
            b'{' | b'[' => {
                start_value(&mut frames);
                frames.push(match byte {
                    b'{' => Frame::Object {
                        key: None,
                        wants_key: true,
                    },
                    _ => Frame::Array { index: None },
                });
                value = Value::None;
            }
            _ => {
                // A number, `true`, `false` or `null`: read while it runs, ended by what follows.
                start_value(&mut frames);
                while at < text.len() && !b" \t\n\r,:]}\"[{".contains(&text[at]) {
                    at += 1;
                }
                value = match at < text.len() {
                    true => Value::Ended(at),
                    false => Value::Reading,
                };
            }
        }
    }
    let current = match value {
        Value::None => false,
        Value::Reading => true,
        Value::Ended(end) => match reading {
            Reading::Exact => end == text.len(),
            Reading::ThenBlanks => text[end..].trim_ascii().is_empty(),
        },
    };
    let innermost = frames.len().saturating_sub(usize::from(!current));
    let mut path = String::new();
    let into = closed.filter(|_| current && into_closed);
    for frame in frames[..innermost].iter().chain(&into) {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Array { index: Some(index) } => path.push_str(&format!("[{index}]")),
            _ => {}
        }
    }
    path
}

/// A value begins in the innermost container: an array moves to its next index.
fn start_value(frames: &mut [Frame]) {
    if let Some(Frame::Array { index }) = frames.last_mut() {
        *index = Some(index.map_or(0, |index| index + 1));
    }
}

/// The offset after the string that starts before `at` (after its opening quote), or the end
/// of `text` when it runs past it.
fn string_end(text: &[u8], mut at: usize) -> usize {
    while at < text.len() {
        match text[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    text.len()
}

/// A key as its JSON string says it; as sent when it cannot be decoded (cut off by the error).
fn key_text(quoted: &[u8]) -> String {
    let quoted = String::from_utf8_lossy(quoted);
    serde_json::from_str(&quoted)
        .unwrap_or_else(|_| quoted.strip_prefix('"').unwrap_or(&quoted).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_that_of_the_value_read_at_the_offset() {
        let json = br#"{"a": {"b": [1, {"c": "x"}], "d": 2}, "e\u0021": [] }"#;
        let text = std::str::from_utf8(json).unwrap();
        // (the JSON up to the offset, the path there)
        let rows = [
            (r#"{"#, ""),
            (r#"{"a""#, "a"),
            (r#"{"a": {"b": [1"#, "a.b[0]"),
            (r#"{"a": {"b": [1,"#, "a.b"),
            (r#"{"a": {"b": [1, {"c": "x"#, "a.b[1].c"),
            (r#"{"a": {"b": [1, {"c": "x""#, "a.b[1].c"),
            (r#"{"a": {"b": [1, {"c": "x"}"#, "a.b[1]"),
            (r#"{"a": {"b": [1, {"c": "x"}]"#, "a.b"),
            (r#"{"a": {"b": [1, {"c": "x"}],"#, "a"),
            (r#"{"a": {"b": [1, {"c": "x"}], "d": 2"#, "a.d"),
            (r#"{"a": {"b": [1, {"c": "x"}], "d": 2}"#, "a"),
            (r#"{"a": {"b": [1, {"c": "x"}], "d": 2}, "e\u0021": "#, "e!"),
            (
                r#"{"a": {"b": [1, {"c": "x"}], "d": 2}, "e\u0021": []"#,
                "e!",
            ),
            (
                r#"{"a": {"b": [1, {"c": "x"}], "d": 2}, "e\u0021": [] "#,
                "",
            ),
            (text, ""),
        ];
        for (prefix, path) in rows {
            assert!(text.starts_with(prefix), "{prefix}");
            let text = &json[..prefix.len()];
            assert_eq!(
                path_at(text, Reading::Exact, false),
                path,
                "at the end of {prefix}"
            );
        }
        // An error about a value placed after the container around it.
        let rows = [
            (r#"{"a": {"b": [1, {"c": "x"}]"#, "a.b[1]"),
            (r#"{"a": {"b": [1, {"c": "x"}], "d": 2}"#, "a.d"),
            (text, "e!"),
        ];
        for (prefix, path) in rows {
            let text = &json[..prefix.len()];
            assert_eq!(
                path_at(text, Reading::ThenBlanks, true),
                path,
                "after {prefix}"
            );
        }
        // Blanks after a value that ended.
        let text = br#"{"a": ["x" ] "#;
        assert_eq!(path_at(&text[..11], Reading::ThenBlanks, false), "a[0]");
        assert_eq!(path_at(&text[..11], Reading::Exact, false), "a");
        assert_eq!(path_at(text, Reading::ThenBlanks, true), "a[0]");
        assert_eq!(path_at(text, Reading::ThenBlanks, false), "a");
    }

    #[test]
    fn offsets_count_lines_from_1_and_columns_in_bytes() {
        let json = b"{\n  \"a\":\n  1x}";
        assert_eq!(offset(json, 1, 1), 1);
        assert_eq!(offset(json, 2, 5), 7);
        assert_eq!(offset(json, 3, 3), 12);
        assert_eq!(offset(json, 0, 0), 0);
        assert_eq!(offset(json, 9, 0), json.len());
    }

    #[test]
    fn text_that_is_not_utf8_is_placed_as_serde_json_places_it() {
        let json = b"{\"a\": [\n \"\xff\"]}";
        let error = serde_json::from_slice::<serde_json::Value>(json).unwrap_err();
        assert_eq!(utf8(json), Err(format!("a[0]: {error}")));
        assert_eq!(utf8(b"{}"), Ok("{}"));
    }

    #[test]
    fn errors_are_prefixed_with_their_path_unless_at_the_top() {
        let error = serde_json::from_slice::<serde_json::Value>(b"{\"a\": [1, tru]}").unwrap_err();
        assert_eq!(
            explain(b"{\"a\": [1, tru]}", &error),
            format!("a[1]: {error}")
        );
        let error = serde_json::from_slice::<serde_json::Value>(b"nope").unwrap_err();
        assert_eq!(explain(b"nope", &error), error.to_string());
    }
}
