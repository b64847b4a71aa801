//! What a request is to the rules: the objects they compare, and which requests they judge at
//! all (a subresource write only when it changes what they guard).

use crate::owner::{Claim, Marks, Place, Tracked};
use crate::persisted;
use crate::request::{AdmissionRequest, BINDING, DECLARING_SUBRESOURCES, Object, Operation};
use crate::settings::Settings;

/// The objects the rules compare, by operation.
#[derive(Debug, Clone, Copy)]
pub enum Sides<'a> {
    /// A CREATE: the new object.
    Create(&'a Object<'a>),
    /// An UPDATE: the stored object and the new one.
    Update(&'a Object<'a>, &'a Object<'a>),
    /// A DELETE: the stored object.
    Delete(&'a Object<'a>),
}

impl<'a> Sides<'a> {
    /// The sides of a request the rules judge; `None` for a request they do not judge: a
    /// subresource write that changes nothing they guard, CONNECT, and DELETE unless
    /// `writes: Owner`.
    pub fn of(
        request: &'a AdmissionRequest<'a>,
        settings: &Settings,
    ) -> Result<Option<Self>, String> {
        let guards_deletes = settings.judges_writes();
        match (request.operation, &request.old_object, &request.object) {
            _ if request.is_subresource() && !subresource_is_judged(request, settings) => Ok(None),
            (Operation::Create, _, Some(new)) => Ok(Some(Sides::Create(new))),
            (Operation::Update, Some(old), Some(new)) => Ok(Some(Sides::Update(old, new))),
            (Operation::Delete, Some(old), _) if guards_deletes => Ok(Some(Sides::Delete(old))),
            (Operation::Delete, _, _) if guards_deletes => {
                Err("a DELETE request needs `oldObject`".to_owned())
            }
            (Operation::Delete | Operation::Connect, _, _) => Ok(None),
            (Operation::Create, _, None) => Err("a CREATE request needs `object`".to_owned()),
            (Operation::Update, _, _) => {
                Err("an UPDATE request needs `object` and `oldObject`".to_owned())
            }
        }
    }

    /// The stored object; `None` on CREATE.
    pub fn stored(self) -> Option<&'a Object<'a>> {
        match self {
            Sides::Create(_) => None,
            Sides::Update(old, _) | Sides::Delete(old) => Some(old),
        }
    }

    /// The new object; `None` on DELETE.
    pub fn incoming(self) -> Option<&'a Object<'a>> {
        match self {
            Sides::Create(new) | Sides::Update(_, new) => Some(new),
            Sides::Delete(_) => None,
        }
    }

    /// The object messages name: the new one, or the stored one on DELETE.
    pub fn object(self) -> &'a Object<'a> {
        match self {
            Sides::Create(object) | Sides::Update(_, object) | Sides::Delete(object) => object,
        }
    }
}

/// Whether a subresource request is judged: it changes what the rules guard; under
/// `writes: Owner` it writes what an owner declared ([`DECLARING_SUBRESOURCES`]) or stores a
/// change of the metadata an owner declared ([`persisted`]); or it is a Binding that carries a
/// guarded mark or the offer, which the API server copies onto the Pod.
fn subresource_is_judged<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> bool {
    let operation = request.operation;
    let declaring = || {
        DECLARING_SUBRESOURCES
            .iter()
            .any(|sub| request.targets(*sub))
    };
    let binding_marks =
        || (request.object.as_ref()).is_some_and(|binding| carries_a_mark(binding, settings));
    // A `scale` UPDATE rewritten as one of its target (`crate::scale`): its body the object.
    let scaled = || request.writes_the_object();
    // Whether the subresource stores a change of the metadata `of` names.
    let persists_a_change_of = |of: persisted::Persisted| {
        let (Some(old), Some(new)) = (&request.old_object, &request.object) else {
            return false;
        };
        let persisted = persisted::by(
            &request.resource.group,
            &request.resource.resource,
            &request.sub_resource,
        );
        persisted::changes(persisted.and(of), &old.metadata, &new.metadata)
    };
    let persists_a_change = || persists_a_change_of(persisted::ALL);
    // With followed kinds, a write that stores new owner references may repoint an owned
    // object (`crate::derivation::repoint_rule`).
    let repoints =
        || settings.follows_repoints() && persists_a_change_of(persisted::OWNER_REFERENCES);
    (operation == Operation::Update
        && ((settings.judges_writes() && (declaring() || scaled() || persists_a_change()))
            || repoints()))
        || (operation == Operation::Create && request.targets(BINDING) && binding_marks())
        || subresource_changes_ownership(request, settings)
}

/// Whether `object` carries a guarded mark or the offer in its metadata, valid or not.
pub fn carries_a_mark(object: &Object<'_>, settings: &Settings) -> bool {
    let metadata = &object.metadata;
    settings.guarded_keys().any(|(place, key)| match place {
        Place::Label => metadata.labels.contains_key(key),
        Place::Annotation => metadata.annotations.contains_key(key),
    }) || (metadata.annotations).contains_key(&*settings.offer_annotation)
}

/// Whether a subresource request may change what the rules guard, and so is judged like a
/// request on the object itself: an UPDATE whose body is the object (a `Pod` on `pods/status`,
/// not the `Scale` of `deployments/scale`) and whose owner marks or offer differ from the
/// stored object's. Most built-in kinds' status strategies persist metadata changes
/// (`podStatusStrategy.PrepareForUpdate` keeps the new object's metadata), so a status write can
/// move an object between owners; one that keeps them is accepted whoever sends it, since
/// kubelets and controllers write the status of every owner's objects.
fn subresource_changes_ownership<'a>(
    request: &'a AdmissionRequest<'a>,
    settings: &Settings,
) -> bool {
    if request.operation != Operation::Update {
        return false;
    }
    // Without both objects, an UPDATE is unreadable (400), on a subresource too.
    let (Some(old), Some(new)) = (&request.old_object, &request.object) else {
        return true;
    };
    if request.body_is_a_scale() {
        return false;
    }
    let (Ok(old_marks), Ok(new_marks)) = (
        marks_of(request, old, settings),
        marks_of(request, new, settings),
    ) else {
        // An annotation the rules cannot read: judged, and so reported.
        return true;
    };
    let owners_differ = settings
        .owner_marks
        .iter()
        .any(|mark| Claim::read(mark, &old_marks) != Claim::read(mark, &new_marks));
    fn offer<'o>(object: &'o Object<'_>, annotation: &str) -> Option<&'o str> {
        object
            .metadata
            .annotations
            .get(annotation)
            .map(|raw| raw.get())
    }
    let annotation = settings.offer_annotation.as_str();
    owners_differ || offer(old, annotation) != offer(new, annotation)
}

/// The annotations whose values the rules read: the marks', and the offer, whose value is read
/// with theirs (see `Facts`).
pub fn annotation_keys(settings: &Settings) -> impl Iterator<Item = &str> {
    settings
        .guarded_keys()
        .filter(|(place, _)| *place == Place::Annotation)
        .map(|(_, key)| key)
        .chain([settings.offer_annotation.as_str()])
}

/// The metadata an object's marks are read from, with the value of its offer annotation.
pub fn marks_of<'a>(
    request: &'a AdmissionRequest<'a>,
    object: &'a Object<'a>,
    settings: &Settings,
) -> Result<Marks<'a>, String> {
    let keys = annotation_keys(settings);
    let namespace = request.object_scope().namespace();
    Ok(Marks {
        labels: &object.metadata.labels,
        annotations: object.mark_annotations(keys)?,
        object: Some(Tracked {
            group: &request.kind.group,
            kind: &request.kind.kind,
            namespace,
            name: &object.metadata.name,
        }),
    })
}
