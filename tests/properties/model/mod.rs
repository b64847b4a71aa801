//! The model of the rules, restated here and independent of the policy's code: the world
//! (`world.rs`: owner mark shapes, places, owners, and what an offer says), cases (`case.rs`:
//! settings and a request, as models and as JSON, and what a case is due — its claims, its
//! stamp, its `one owner` lines), and responses (`response.rs`: the parts of the policy's answer
//! the properties read, and what a patch changed). Only `response.rs` calls the policy, to get
//! its answer; what is expected is never asked of it.

mod case;
mod response;
mod world;

pub(crate) use case::{
    Access, Admission, Case, GRACE_PERIOD, Identity, Object, Op, SETTINGS_WRITERS, Settings,
    TrustedWriter, groups_of, identity, resource_of,
};

pub(crate) use response::{Patch, Response, annotation_in, respond};

pub(crate) use world::{
    CRON_JOB, Claim, Labels, Owner, PLACES, Place, STATEFUL_SET, Shape, Spot, TEMPLATE_PLACES,
    TRUST_PLACES, UNKNOWN_KIND, Written, offer_text, parse_offer, pick, place,
};
