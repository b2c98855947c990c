//! Glance's part of the world: images with their base attributes and custom properties.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::World;
use crate::config::ImageSeed;

/// A Glance image as the simulator holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// Image uuid.
    pub id: Uuid,
    /// Image name.
    pub name: String,
    /// Glance status; seeded images are `active`.
    pub status: String,
    /// `public`, `private`, `shared` or `community`.
    pub visibility: String,
    /// Whether deletion is refused.
    pub protected: bool,
    /// Hidden from default listings.
    pub os_hidden: bool,
    /// Minimum disk in GB.
    pub min_disk: u64,
    /// Minimum RAM in MB.
    pub min_ram: u64,
    /// Disk format, e.g. `qcow2`.
    pub disk_format: String,
    /// Container format, e.g. `bare`.
    pub container_format: String,
    /// Size in bytes.
    pub size: u64,
    /// Owning project id.
    pub owner: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Creation time.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Custom properties, shown by Glance as top-level string keys.
    pub properties: BTreeMap<String, String>,
}

/// A believable size for a small cloud image.
const SEEDED_SIZE: u64 = 16_338_944;

impl World {
    pub(crate) fn add_image(&mut self, seed: &ImageSeed) {
        let now = crate::timestamps::now_seconds();
        self.images.push(Image {
            id: seed.id,
            name: seed.name.clone(),
            status: "active".to_owned(),
            visibility: "public".to_owned(),
            protected: false,
            os_hidden: false,
            min_disk: 0,
            min_ram: 0,
            disk_format: "qcow2".to_owned(),
            container_format: "bare".to_owned(),
            size: SEEDED_SIZE,
            owner: self.owner.project_id.clone(),
            tags: Vec::new(),
            created_at: now,
            updated_at: now,
            properties: seed.properties.clone(),
        });
    }

    pub(crate) fn images(&self) -> &[Image] {
        &self.images
    }

    pub(crate) fn image(&self, id: Uuid) -> Option<&Image> {
        self.images.iter().find(|image| image.id == id)
    }

    pub(crate) fn image_mut(&mut self, id: Uuid) -> Option<&mut Image> {
        self.images.iter_mut().find(|image| image.id == id)
    }
}
