//! Image properties (spec 2.10): only the values that differ are patched.

use crate::name::CloudName;
use crate::openstack::ids::ImageRef;
use crate::openstack::image::{Image, PropertyChange, PropertySet};
use crate::plan::{CloudSafe, CloudStep, Plan};
use crate::planner::PlanError;
use crate::request::ProcedureRequest;

/// The images the reference matched: by id at most one, by name any number.
#[derive(Debug, Clone)]
pub struct ImageFacts {
    pub matches: Vec<Image>,
}

pub(super) fn properties(
    request: &ProcedureRequest,
    cloud: &CloudName,
    image: &ImageRef,
    properties: &PropertySet,
    facts: &ImageFacts,
) -> Result<Plan, PlanError> {
    let found = match facts.matches.as_slice() {
        [] => {
            return Err(PlanError::UnknownImage {
                cloud: cloud.clone(),
                image: image.to_string(),
            });
        }
        [one] => one,
        several => {
            return Err(PlanError::SeveralImages {
                image: image.to_string(),
                ids: several
                    .iter()
                    .map(|i| i.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    let changes = PropertyChange::needed(properties.iter(), &found.properties);
    let mut notes = vec![format!(
        "image `{}` ({}), {}",
        found.name, found.id, found.status
    )];
    for change in &changes {
        notes.push(match &change.before {
            Some(before) => format!(
                "{}: {before} → {}",
                change.property.key(),
                change.property.value()
            ),
            None => format!(
                "{}: (unset) → {}",
                change.property.key(),
                change.property.value()
            ),
        });
    }
    if changes.is_empty() {
        notes.push(format!(
            "nothing to change: `{}` already has {properties}",
            found.name
        ));
        return Ok(Plan::new(request.clone(), Vec::<CloudStep>::new(), notes)?);
    }
    Ok(Plan::new(
        request.clone(),
        vec![CloudStep::Safe(CloudSafe::SetImageProperties {
            image: found.id,
            name: found.name.clone(),
            changes,
        })],
        notes,
    )?)
}
