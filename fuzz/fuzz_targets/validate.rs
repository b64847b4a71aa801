//! Any bytes as the `validate` payload: the policy answers without panicking, and its answer
//! is the typed verdict's, in a shape policy-server reads. What the rules decide is not checked
//! here: `tests/properties` states their invariants over generated settings and requests, so
//! no second oracle here has to follow a rule change.
//!
//! The answer, the bytes the module hands back (`policy::answer`, with no host):
//! - is deterministic: the same payload answered twice gives the same bytes;
//! - is a well-formed accept, 400 or 403: read back as Kubewarden's `ValidationResponse`, an
//!   acceptance has no code and no message, a rejection has both and nothing else, a 400 says
//!   the request is unreadable;
//! - is the typed verdict's, `Payload::parse(payload)` then `verdict(&NoHost)`: an unreadable
//!   payload or request, a 400 saying why; a denial, a 403 whose message is exactly its
//!   violations, one per line, at least one; an exemption, an acceptance with a warning per
//!   bypassed rule and all of them in the audit annotation; a mutation, an acceptance with the
//!   verdict's object, a JSON object, as its mutated object, which no other verdict gives; a
//!   plain acceptance, an acceptance with nothing else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use kubewarden_policy_sdk::response::ValidationResponse;
use single_owner_policy::NoHost;
use single_owner_policy::policy::{self, Payload, Verdict};

/// How a 400 starts: the request cannot be read.
const UNREADABLE: &str = "cannot read the admission request: ";

fuzz_target!(|payload: &[u8]| {
    let bytes = policy::answer(payload, &NoHost).expect("a response serialises");
    let shown = String::from_utf8_lossy(&bytes);
    assert!(
        policy::answer(payload, &NoHost).expect("a response serialises") == bytes,
        "the same payload answered differently a second time; first: {shown}"
    );
    // What policy-server reads of the answer: the SDK's response, read back from its JSON.
    let response: ValidationResponse =
        serde_json::from_slice(&bytes).expect("the answer is the SDK's response");

    // The shape.
    match (
        response.accepted,
        response.code,
        response.message.as_deref(),
    ) {
        (true, None, None) => {}
        (false, Some(policy::BAD_REQUEST), Some(message)) => {
            assert!(message.starts_with(UNREADABLE), "{shown}")
        }
        (false, Some(policy::DENIED), Some(message)) => assert!(!message.is_empty(), "{shown}"),
        _ => panic!("not an accept, a 400 or a 403: {shown}"),
    }
    if !response.accepted {
        assert!(
            response.mutated_object.is_none()
                && response.audit_annotations.is_none()
                && response.warnings.is_none(),
            "a rejection with more than its code and message: {shown}"
        );
    }
    // Equality with the typed verdict.
    let unreadable = |why: &str| {
        assert!(
            response.code == Some(policy::BAD_REQUEST)
                && response.message.as_deref() == Some(&*format!("{UNREADABLE}{why}")),
            "the request is unreadable: {why}\nanswer: {shown}"
        )
    };
    let parsed = match Payload::parse(payload) {
        Ok(parsed) => parsed,
        Err(why) => return unreadable(&why),
    };
    match parsed.verdict(&NoHost) {
        Verdict::Allow => assert!(
            response.accepted
                && response.mutated_object.is_none()
                && response.audit_annotations.is_none()
                && response.warnings.is_none(),
            "the verdict allows: {shown}"
        ),
        Verdict::Mutate(object) => assert!(
            object.is_object()
                && response.accepted
                && response.mutated_object.as_ref() == Some(&object)
                && response.audit_annotations.is_none()
                && response.warnings.is_none(),
            "the verdict mutates into {object}: {shown}"
        ),
        Verdict::Deny(violations) => {
            assert!(
                !violations.is_empty(),
                "a denial without a violation: {shown}"
            );
            let lines: Vec<_> = violations.iter().map(ToString::to_string).collect();
            assert!(
                response.code == Some(policy::DENIED)
                    && response.message.as_deref() == Some(&*lines.join("\n")),
                "the verdict denies, one a line:\n{}\nanswer: {shown}",
                lines.join("\n")
            );
        }
        Verdict::Exempt { who, violations } => {
            assert!(!violations.is_empty(), "an exemption from nothing: {shown}");
            let lines: Vec<_> = violations.iter().map(ToString::to_string).collect();
            let warnings: Vec<_> = lines
                .iter()
                .map(|violation| format!("{who} bypassed: {violation}"))
                .collect();
            let annotation = format!("{who} bypassed: {}", lines.join("\n"));
            let annotations = response.audit_annotations.as_ref();
            assert!(
                response.accepted
                    && response.mutated_object.is_none()
                    && response.warnings.as_ref() == Some(&warnings)
                    && annotations.is_some_and(|annotations| annotations.len() == 1)
                    && annotations.and_then(|found| found.get(policy::EXEMPTION_ANNOTATION))
                        == Some(&annotation),
                "the verdict exempts {who} from {lines:?}: {shown}"
            );
        }
        Verdict::Unreadable(why) => unreadable(&why),
    }
});
