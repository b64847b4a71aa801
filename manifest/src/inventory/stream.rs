//! The List `kubectl get … -o json` prints, read as a stream: each item handed on, as its text,
//! and dropped before the next; the List's other fields skipped.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// Hands each item of the List in `input` to `each`, with its index; an error says what is not
/// a List, or what `each` refused and where.
pub fn items(
    input: impl Read,
    each: impl FnMut(usize, &str) -> Result<(), String>,
) -> Result<(), String> {
    let mut deserializer = serde_json::Deserializer::from_reader(std::io::BufReader::new(input));
    ListSeed { each }
        .deserialize(&mut deserializer)
        .map_err(
            |error| match error.is_data() || error.is_syntax() || error.is_eof() {
                true => format!(
                    "the input is no List of objects (kubectl get <kinds> -A -o json): {error}"
                ),
                false => error.to_string(),
            },
        )?;
    deserializer.end().map_err(|error| {
        format!(
            "the input holds more than one List; give one (kubectl get <kinds> -A -o json): \
             {error}"
        )
    })
}

/// The List: its `items`, read one at a time; its other fields skipped.
struct ListSeed<F> {
    each: F,
}

impl<'de, F: FnMut(usize, &str) -> Result<(), String>> DeserializeSeed<'de> for ListSeed<F> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: FnMut(usize, &str) -> Result<(), String>> Visitor<'de> for ListSeed<F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a List: an object with items")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut items = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "items" => {
                    items = true;
                    map.next_value_seed(ItemsSeed {
                        each: &mut self.each,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match items {
            true => Ok(()),
            false => Err(de::Error::custom(
                "it has no items: one object's JSON, not a List's",
            )),
        }
    }
}

/// The List's items, each handed on and dropped before the next.
struct ItemsSeed<'f, F> {
    each: &'f mut F,
}

impl<'de, F: FnMut(usize, &str) -> Result<(), String>> DeserializeSeed<'de> for ItemsSeed<'_, F> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, &str) -> Result<(), String>> Visitor<'de> for ItemsSeed<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(item) = seq.next_element::<Box<RawValue>>()? {
            (self.each)(index, item.get()).map_err(de::Error::custom)?;
            index += 1;
        }
        Ok(())
    }
}
