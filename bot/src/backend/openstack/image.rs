//! Image: finding an image by id or name, and patching its properties.

use std::collections::BTreeMap;

use opsbot_commands::openstack::ids::{ImageId, ImageRef};
use opsbot_commands::openstack::image::{Image, PropertyChange, PropertyKey};
use reqwest::Method;
use serde_json::Value;

use super::{Api, Body, CloudClient, wire};
use crate::backend::error::{BackendError, Fault};

/// The image API takes property updates only as this JSON-patch media type.
const JSON_PATCH: &str = "application/openstack-images-v2.1-json-patch";

impl CloudClient {
    /// The images `reference` names: by id at most one, by name any number (names are not
    /// unique in the image service).
    pub async fn images(&self, reference: &ImageRef) -> Result<Vec<Image>, BackendError> {
        match reference {
            ImageRef::Id(id) => {
                let path = format!("/v2/images/{id}");
                let request = format!("GET {path}");
                match self.send(Api::Image, Method::GET, &path, &[], None).await? {
                    (200, text) => {
                        let raw: BTreeMap<String, Value> =
                            serde_json::from_str(&text).map_err(|e| {
                                self.error(Api::Image, &request, Fault::Decode(e.to_string()))
                            })?;
                        Ok(vec![self.image(&request, &raw)?])
                    }
                    (404, _) => Ok(Vec::new()),
                    (status, text) => Err(self.status_error(Api::Image, &request, status, &text)),
                }
            }
            ImageRef::Name(name) => {
                let answer: wire::Images = self
                    .json(
                        Api::Image,
                        Method::GET,
                        "/v2/images",
                        &[("name", name)],
                        None,
                    )
                    .await?;
                answer
                    .images
                    .iter()
                    .map(|raw| self.image("GET /v2/images", raw))
                    .collect()
            }
        }
    }

    /// `PATCH /v2/images/{id}` with the changes as one JSON patch; the image as it is after.
    pub async fn patch_image(
        &self,
        id: ImageId,
        changes: &[PropertyChange],
    ) -> Result<Image, BackendError> {
        let path = format!("/v2/images/{id}");
        let body = Body {
            content_type: JSON_PATCH,
            json: Value::Array(changes.iter().map(PropertyChange::patch_op).collect()),
        };
        let raw: BTreeMap<String, Value> = self
            .json(Api::Image, Method::PATCH, &path, &[], Some(&body))
            .await?;
        self.image(&format!("PATCH {path}"), &raw)
    }

    /// An image from the API's flat JSON, where properties are top-level keys.
    fn image(&self, request: &str, raw: &BTreeMap<String, Value>) -> Result<Image, BackendError> {
        let text = |key: &str| raw.get(key).and_then(Value::as_str).unwrap_or_default();
        let id = ImageId::parse(text("id"))
            .map_err(|e| self.error(Api::Image, request, Fault::Decode(e.to_string())))?;
        let properties = PropertyKey::ALL
            .into_iter()
            .filter_map(|key| Some((key, raw.get(key.as_str())?.as_str()?.to_owned())))
            .collect();
        Ok(Image {
            id,
            name: text("name").to_owned(),
            status: text("status").to_owned(),
            properties,
        })
    }
}
