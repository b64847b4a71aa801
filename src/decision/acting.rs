//! Who acts: the identity rules' reasons, `writes: Owner`, and the owner stamped on a CREATE.

use super::{Entry, Reading};
use crate::identity::Access;
use crate::owner::{Claim, Place};
use crate::settings::Writes;
use crate::violation::{Change, Rule, Violation};

impl<'a> Reading<'a> {
    /// Why the requester may not `act` on `owner`, when identities are set and it lacks the
    /// `access` the act needs: acting for the owner, or (for `Write`) writing for it.
    pub(super) fn not_allowed(
        &self,
        owner: Claim<'_>,
        act: &str,
        access: Access,
    ) -> Option<String> {
        let acting = self.acting.as_ref()?;
        let id = owner.id();
        let writes = acting.writes_for(&id);
        if acting.acts_for(&id) || (access == Access::Write && writes) {
            return None;
        }
        let user = match &*self.request.user_info.username {
            "" => "\"\"",
            user => user,
        };
        if writes {
            return Some(format!(
                "user {user} only writes for {owner} (access: Write); only a requester acting \
                 for an owner may {act} it"
            ));
        }
        Some(format!(
            "user {user} acts for {acting}, not for {owner}; only a requester acting for an \
             owner may {act} it"
        ))
    }

    /// Under `writes: Owner`, an UPDATE or DELETE of an owned object requires writing for its
    /// owner — through a subresource too, when the write changes what the rules guard (one that
    /// does not is never judged: status writers write for every owner's objects). A write that
    /// finishes a deletion that has begun needs no owner, nor does an object whose mark names
    /// no owner the settings can read (it predates the policy; audit reports it).
    pub(super) fn check_writes(
        &self,
        entry: &Entry<'a>,
        owner: Claim<'a>,
    ) -> Option<Violation<'a>> {
        if self.settings.writes != Writes::Owner
            || owner.is_none()
            || self.finishing
            || owner.owner(entry.mark).is_err()
        {
            return None;
        }
        let reason = self.not_allowed(owner, "update or delete", Access::Write)?;
        let reason = format!("{reason} (writes: Owner)");
        Some(self.entry_violation(entry, Rule::OwnerWrites, Change::kept(owner), reason))
    }

    /// The marks that stamp, on a CREATE under `stamp: true`, the one owner the requester acts
    /// for: the first mark whose shape reads it as a valid owner in scope (a tracking id, which
    /// names the object too, is never stamped), unless the object already carries an owner mark.
    pub(super) fn stamp(&self) -> Option<(Place, Vec<(String, String)>)> {
        let (true, None, Some(acting)) = (self.settings.stamp, self.sides.old, &self.acting) else {
            return None;
        };
        let owner = acting.single_owner()?;
        let object_entries = || self.entries.iter().filter(|entry| entry.template.is_none());
        if object_entries().any(|entry| !entry.new.unwrap_or_default().is_none()) {
            return None;
        }
        object_entries().find_map(|entry| {
            let claim = Claim::of_owner(entry.mark, owner);
            self.check_owner(entry.mark, claim).ok()?;
            let values = claim.values(entry.mark)?;
            let values = values
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect();
            Some((entry.mark.place, values))
        })
    }
}
