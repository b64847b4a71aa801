//! Writes that reach another object: a `scale` its target ([`crate::scale`]), a Binding its Pod
//! ([`crate::binding`]), an HPA the object it scales ([`crate::autoscaler`]), a write of an
//! unmarked object the owner of its controllers ([`crate::children`]). Each of those modules
//! says when a request reaches an object the host must read, reads it, and rewrites the request
//! as one about that object; the policy judges the rewritten request like any other, after the
//! request itself ([`crate::policy`]).

use serde_json::{Map, Value};

/// A request about the object a write reaches, to be judged like any payload.
pub struct Reached {
    /// The rewritten payload.
    pub payload: Vec<u8>,
    /// What a denial of it says last, on each line: how the write reaches the object (empty
    /// where the rewritten request says it by itself).
    pub because: String,
}

/// Why a write that reaches another object cannot be judged.
#[derive(Debug)]
pub enum Refusal {
    /// The object cannot be read, or is not the one the write names: denied, saying why.
    Denied(String),
    /// What the host read cannot be made into a request: the request cannot be read.
    Unreadable(String),
}

/// What a write reaches, if anything: `None` when it reaches no object the policy reads.
pub type Reach = Option<Result<Reached, Refusal>>;

/// The payload of a write judged from an object the host read (its text, and the JSON `read`
/// of `what`), its request rewritten by `edit`, which is given the object read. The policy
/// reads the result like any payload.
pub fn rewritten(
    text: &str,
    read: &str,
    what: &str,
    edit: impl FnOnce(&mut Map<String, Value>, Value),
) -> Result<Vec<u8>, Refusal> {
    let read: Value = serde_json::from_str(read)
        .map_err(|error| Refusal::Unreadable(format!("{what} is not JSON: {error}")))?;
    edited(text, |request| edit(request, read))
}

/// The payload of a write (its text), its request rewritten by `edit`.
pub fn edited(text: &str, edit: impl FnOnce(&mut Map<String, Value>)) -> Result<Vec<u8>, Refusal> {
    let unreadable = |error: serde_json::Error| Refusal::Unreadable(error.to_string());
    let mut payload: Value = serde_json::from_str(text).map_err(unreadable)?;
    let request = (payload.get_mut("request"))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Refusal::Unreadable("the payload has no `request` object".to_owned()))?;
    edit(request);
    serde_json::to_vec(&payload).map_err(unreadable)
}
