//! What may differ in a JSON value between the stored object and the new one, and whether two
//! values' texts differ only so ([`fits`]).

use serde_json::value::RawValue;

use super::{Beyond, matches};
use crate::lookup;
use crate::request::Text;

/// What may differ in a JSON value between the stored object and the new one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Room {
    /// Nothing: the value is the same text.
    #[default]
    Nothing,
    /// Anything.
    Any,
    /// An object: these members as their room says, every other member the same.
    Members(Vec<(String, Room)>),
    /// A list: as many items, each as the room says.
    Items(Box<Room>),
    /// An object of values: the members whose key matches one of these patterns.
    Keys(Vec<String>),
    /// A list of objects named by `name`: those whose name matches one of these patterns may
    /// appear, change or go; the others are the same, in the same order.
    Named(Vec<String>),
}

impl Room {
    /// The room of a value at `path` (`[]`: every item of a list) that may be as `leaf` says.
    pub fn at(path: &[&str], leaf: Room) -> Room {
        match path.split_first() {
            None => leaf,
            Some((&"[]", rest)) => Room::Items(Box::new(Room::at(rest, leaf))),
            Some((step, rest)) => Room::Members(vec![((*step).to_owned(), Room::at(rest, leaf))]),
        }
    }

    /// This room and `other`'s: what either lets differ. Rooms of one path are of one shape;
    /// of two shapes, the first is kept (the narrower reading).
    pub fn and(self, other: Room) -> Room {
        match (self, other) {
            (Room::Nothing, room) | (room, Room::Nothing) => room,
            (Room::Any, _) | (_, Room::Any) => Room::Any,
            (Room::Members(mut members), Room::Members(others)) => {
                for (key, room) in others {
                    match members.iter_mut().find(|(name, _)| *name == key) {
                        Some((_, mine)) => *mine = std::mem::take(mine).and(room),
                        None => members.push((key, room)),
                    }
                }
                Room::Members(members)
            }
            (Room::Items(mine), Room::Items(other)) => Room::Items(Box::new(mine.and(*other))),
            (Room::Keys(mut mine), Room::Keys(other)) => {
                mine.extend(other);
                Room::Keys(mine)
            }
            (Room::Named(mut mine), Room::Named(other)) => {
                mine.extend(other);
                Room::Named(mine)
            }
            (mine, _) => mine,
        }
    }
}

/// Whether two lists of top-level fields differ only in what `room` (a [`Room::Members`] of
/// them, or nothing) lets differ.
pub fn fields_fit(
    old: &[(Text<'_>, &RawValue)],
    new: &[(Text<'_>, &RawValue)],
    room: &Room,
    at: &str,
) -> Result<(), Beyond> {
    let added = new.iter().filter(|(key, _)| text_of(old, key).is_none());
    let keys = old.iter().chain(added).map(|(key, _)| &**key);
    for key in keys {
        let member = member_room(room, key);
        fits_at(text_of(old, key), text_of(new, key), member, &join(at, key))?;
    }
    Ok(())
}

/// The room of `key` in `room`, a [`Room::Members`] (or any other room, which lets no member
/// differ but as it says for all of them).
fn member_room<'r>(room: &'r Room, key: &str) -> &'r Room {
    match room {
        Room::Members(members) => (members.iter())
            .find(|(name, _)| name == key)
            .map_or(&Room::Nothing, |(_, room)| room),
        Room::Any => &Room::Any,
        _ => &Room::Nothing,
    }
}

fn join(at: &str, key: &str) -> String {
    match at {
        "" => key.to_owned(),
        at => format!("{at}.{key}"),
    }
}

/// Whether two JSON values (their text; `None`: absent) differ only as `room` lets them, if
/// not the path of the first difference beyond it.
fn fits_at(old: Option<&str>, new: Option<&str>, room: &Room, at: &str) -> Result<(), Beyond> {
    let beyond = || Err(at.to_owned());
    match room {
        Room::Any => Ok(()),
        _ if old == new => Ok(()),
        // Nothing may differ: the first difference inside, for the message.
        Room::Nothing => match (old.map(lookup::value), new.map(lookup::value)) {
            (Some(o), Some(n)) if o.starts_with('{') && n.starts_with('{') => {
                fits_at(Some(o), Some(n), &Room::Members(Vec::new()), at)
            }
            (Some(o), Some(n)) if o.starts_with('[') && n.starts_with('[') => {
                let (o_items, n_items) = (lookup::items(o), lookup::items(n));
                match (o_items.map(Iterator::count), n_items.map(Iterator::count)) {
                    (Some(a), Some(b)) if a == b && a > 0 => {
                        fits_at(Some(o), Some(n), &Room::Items(Box::default()), at)
                    }
                    _ => beyond(),
                }
            }
            _ => beyond(),
        },
        Room::Members(_) => {
            let Some(pairs) = member_pairs(old, new) else {
                return beyond();
            };
            for (key, old, new) in pairs {
                fits_at(old, new, member_room(room, &key), &join(at, &key))?;
            }
            Ok(())
        }
        Room::Items(item) => {
            let (old, new) = (old.unwrap_or("[]"), new.unwrap_or("[]"));
            let (Some(old_items), Some(new_items)) = (lookup::items(old), lookup::items(new))
            else {
                return beyond();
            };
            let (old_items, new_items): (Vec<_>, Vec<_>) = (
                old_items.map(lookup::value).collect(),
                new_items.map(lookup::value).collect(),
            );
            if old_items.len() != new_items.len() {
                return beyond();
            }
            for (index, (o, n)) in old_items.iter().zip(&new_items).enumerate() {
                fits_at(Some(o), Some(n), item, &format!("{at}[{index}]"))?;
            }
            Ok(())
        }
        Room::Keys(patterns) => {
            let Some(pairs) = member_pairs(old, new) else {
                return beyond();
            };
            for (key, old, new) in pairs {
                if old != new && !patterns.iter().any(|pattern| matches(pattern, &key)) {
                    return Err(join(at, &key));
                }
            }
            Ok(())
        }
        Room::Named(patterns) => {
            let (old, new) = (old.unwrap_or("[]"), new.unwrap_or("[]"));
            let named = |list: &str| -> Option<Vec<(Option<String>, String)>> {
                let items = lookup::items(list)?;
                Some(
                    items
                        .map(lookup::value)
                        .map(|item| (name_of(item), item.to_owned()))
                        .collect(),
                )
            };
            let (Some(old_items), Some(new_items)) = (named(old), named(new)) else {
                return beyond();
            };
            let free = |name: &Option<String>| {
                name.as_deref()
                    .is_some_and(|name| patterns.iter().any(|pattern| matches(pattern, name)))
            };
            let kept = |items: &[(Option<String>, String)]| -> Vec<String> {
                (items.iter())
                    .filter(|(name, _)| !free(name))
                    .map(|(_, item)| item.clone())
                    .collect()
            };
            match kept(&old_items) == kept(&new_items) {
                true => Ok(()),
                false => beyond(),
            }
        }
    }
}

/// The text of the field `key` of a list of fields.
fn text_of<'v>(fields: &[(Text<'_>, &'v RawValue)], key: &str) -> Option<&'v str> {
    (fields.iter())
        .find(|(name, _)| **name == *key)
        .map(|(_, raw)| raw.get())
}

/// A member of two objects: its key, and its value in the stored and in the new one.
type Pair<'v> = (String, Option<&'v str>, Option<&'v str>);

/// Each member of two JSON objects' texts (absent: no member), once, with its value in each;
/// `None` when either is no object.
fn member_pairs<'v>(old: Option<&'v str>, new: Option<&'v str>) -> Option<Vec<Pair<'v>>> {
    let (old, new) = (members(old.unwrap_or("{}"))?, members(new.unwrap_or("{}"))?);
    let get = |members: &[(String, &'v str)], key: &str| {
        (members.iter())
            .find(|(name, _)| name == key)
            .map(|(_, value)| *value)
    };
    let added = new.iter().filter(|(key, _)| get(&old, key).is_none());
    let pairs = (old.iter().chain(added))
        .map(|(key, _)| (key.clone(), get(&old, key), get(&new, key)))
        .collect();
    Some(pairs)
}

/// The members of a JSON object's text, each key unquoted: `None` when it is no object.
fn members(object: &str) -> Option<Vec<(String, &str)>> {
    let members = lookup::members(object)?;
    Some(
        members
            .map(|(name, value)| {
                let key = serde_json::from_str::<String>(name).unwrap_or_default();
                (key, value)
            })
            .collect(),
    )
}

/// The `name` of a list item, when it is an object with a string `name`.
fn name_of(item: &str) -> Option<String> {
    let name = lookup::field(item, "name")??;
    serde_json::Deserializer::from_str(name)
        .into_iter::<String>()
        .next()?
        .ok()
}
