//! What the rules read of a request, read once: the objects the operation compares, the claim
//! of each owner mark on each side — on the object and in each of its templates
//! ([`crate::template`]) — the offer on each side, the owners the requester acts for, and
//! whether the request only finishes a deletion ([`crate::deletion`]) and, on demand, what an
//! update changes ([`crate::edit`]). Every rule is a function
//! of these facts, which no rule changes.

mod sides;

pub use sides::{Sides, annotation_keys, carries_a_mark, marks_of};

use std::cell::OnceCell;

use crate::deletion;
use crate::edit::{self, Edit};
use crate::grant::{self, Grant};
use crate::identity::{self, Acting};
use crate::owner::{Claim, MarkName, Marks, OwnerMark};
use crate::request::{AdmissionRequest, Object};
use crate::settings::Settings;
use crate::template::{self, Template};
use crate::violation::{Change, Reason, Subject, Violation};

/// One owner mark, on the object or in one of its templates, and what each side claims for it.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The mark.
    pub mark: &'a OwnerMark,
    /// The template the mark is in; `None` for the object's own metadata.
    pub template: Option<&'a str>,
    /// `None` on CREATE.
    pub old: Option<Claim<'a>>,
    /// `None` on DELETE.
    pub new: Option<Claim<'a>>,
}

impl<'a> Entry<'a> {
    /// The owners the request moves between (none for a missing side).
    pub fn change(&self) -> Change<'a> {
        Change {
            old: self.old.unwrap_or_default(),
            new: self.new.unwrap_or_default(),
        }
    }

    /// Whether the request moves this mark's owner (sets, removes or changes it).
    pub fn moves(&self) -> bool {
        self.old.unwrap_or_default() != self.new.unwrap_or_default()
    }

    /// The new side's owner, if it names a valid one.
    pub fn owned(&self) -> Option<Claim<'a>> {
        self.new
            .filter(|claim| !claim.is_none() && claim.owner(self.mark).is_ok())
    }
}

/// Everything the rules read of a request.
pub struct Facts<'a> {
    /// The request.
    pub request: &'a AdmissionRequest<'a>,
    /// The policy's settings.
    pub settings: &'a Settings,
    /// The objects the request compares.
    pub sides: Sides<'a>,
    /// Each owner mark on the object, in the order of the settings, then in each template.
    pub entries: Vec<Entry<'a>>,
    /// The offer annotation of the stored object.
    pub old_offer: Option<&'a str>,
    /// The offer annotation of the new object.
    pub new_offer: Option<&'a str>,
    /// The owners the requester acts for; `None` without identities, and in an audit replay.
    pub acting: Option<Acting>,
    /// Whether the request only finishes a deletion that has begun ([`deletion`]).
    pub finishing: bool,
    /// What an UPDATE changes, read once, on the first call of [`Facts::edit`].
    edit: OnceCell<Edit>,
}

impl<'a> Facts<'a> {
    /// Reads the facts of a request the rules judge, on its `sides`; an error names what could
    /// not be read.
    pub fn read(
        request: &'a AdmissionRequest<'a>,
        settings: &'a Settings,
        sides: Sides<'a>,
    ) -> Result<Self, String> {
        let (old, new) = (sides.stored(), sides.incoming());
        let read = |object: Option<&'a Object<'a>>, side: &str| match object {
            Some(object) => marks_of(request, object, settings)
                .map(Some)
                .map_err(|error| format!("{side}.{error}")),
            None => Ok(None),
        };
        let old_marks = read(old, "oldObject")?;
        let new_marks = read(new, "object")?;
        let annotation = settings.offer_annotation.as_str();
        let offer = |marks: &Option<Marks<'a>>| {
            let value = marks.as_ref()?.annotations.get(annotation)?;
            Some(&**value)
        };
        let (old_offer, new_offer) = (offer(&old_marks), offer(&new_marks));
        let mut entries: Vec<Entry<'a>> = settings
            .owner_marks
            .iter()
            .map(|mark| Entry {
                mark,
                template: None,
                old: old_marks.as_ref().map(|marks| Claim::read(mark, marks)),
                new: new_marks.as_ref().map(|marks| Claim::read(mark, marks)),
            })
            .collect();
        if request.writes_the_object() {
            let kind = &request.kind;
            let read = |object: &'a Object<'a>, side: &str| {
                template::templates(&kind.group, &kind.kind, object)
                    .map_err(|error| format!("{side}.{error}"))
            };
            let old_templates = match old {
                Some(old) => read(old, "oldObject")?,
                None => &[],
            };
            // The new object's templates; a DELETE's are the stored object's: deleting a
            // workload deletes what its templates claim (judged under `writes: Owner`, the only
            // one that judges DELETE).
            let templates = match new {
                Some(new) => read(new, "object")?,
                None => old_templates,
            };
            let marks = |template: &'a Template<'a>| Marks {
                labels: &template.labels,
                annotations: &template.annotations,
                object: None,
            };
            for template in templates {
                let old_template = old_templates.iter().find(|old| old.place == template.place);
                entries.extend(settings.owner_marks.iter().map(|mark| Entry {
                    mark,
                    template: Some(template.place.as_str()),
                    old: old_template.map(|old| Claim::read(mark, &marks(old))),
                    new: new.map(|_| Claim::read(mark, &marks(template))),
                }));
            }
        }
        let acting = (!settings.identities.is_empty() && !request.is_audit_replay())
            .then(|| Acting::of(&request.user_info, &settings.identities));
        let finishing = old.is_some_and(|old| deletion::finishes(old, new, &request.options));
        Ok(Facts {
            request,
            settings,
            sides,
            entries,
            old_offer,
            new_offer,
            acting,
            finishing,
            edit: OnceCell::new(),
        })
    }

    /// What the request changes ([`edit`]): read on the first call, only when a rule asks
    /// (`writes: Owner`, for a requester that may not write); `Other` but for an UPDATE.
    pub fn edit(&self) -> Edit {
        *self.edit.get_or_init(|| match self.sides {
            Sides::Update(old, new) => edit::of(old, new, self.request.is_subresource()),
            Sides::Create(_) | Sides::Delete(_) => Edit::Other,
        })
    }

    /// What the requester may change in what `owner` owns: the grants of its identities for
    /// it ([`crate::grant`]). Read only when a rule asks (`writes: Owner`, for a requester that
    /// may not write).
    pub fn grants(&self, owner: Claim<'_>) -> Vec<&'a Grant> {
        let id = owner.id();
        identity::grants_for(&self.request.user_info, &self.settings.identities, &id)
    }

    /// What the request changes beyond `grants`, the first thing; `None` when they cover it.
    pub fn beyond(&self, grants: &[&Grant]) -> Option<grant::Beyond> {
        let guarded = |key: &str| self.settings.guards(key);
        let fits = match self.sides {
            Sides::Update(old, new) => {
                let subresource = &self.request.sub_resource;
                grant::fits(grants, &self.request.kind, old, new, subresource, &guarded)
            }
            Sides::Delete(_) => grant::deletes(grants),
            Sides::Create(_) => Ok(()),
        };
        fits.err()
    }

    /// The entry of the object's own mark of key `key`.
    pub fn object_entry(&self, key: &str) -> Option<&Entry<'a>> {
        self.object_entries().find(|entry| entry.mark.key == key)
    }

    /// The entries of the object's own marks, in the order of the settings.
    pub fn object_entries(&self) -> impl Iterator<Item = &Entry<'a>> {
        self.entries.iter().filter(|entry| entry.template.is_none())
    }

    /// The entries beside `entry`: the other marks of the same object or template.
    pub fn siblings<'s>(&'s self, entry: &'s Entry<'a>) -> impl Iterator<Item = &'s Entry<'a>> {
        self.entries.iter().filter(move |other| {
            other.template == entry.template && !std::ptr::eq(other.mark, entry.mark)
        })
    }

    /// A violation of `mark` (in `template`, if any) by this request.
    pub fn violation(
        &self,
        mark: MarkName<'a>,
        template: Option<&'a str>,
        change: Change<'a>,
        reason: Reason<'a>,
    ) -> Violation<'a> {
        Violation {
            mark,
            template,
            subject: Subject::of(self.request, self.sides.object()),
            change,
            reason,
            controller: None,
            owner: None,
        }
    }

    /// A violation of the rules of `entry`'s mark.
    pub fn entry_violation(
        &self,
        entry: &Entry<'a>,
        change: Change<'a>,
        reason: Reason<'a>,
    ) -> Violation<'a> {
        self.violation(entry.mark.name(), entry.template, change, reason)
    }
}
