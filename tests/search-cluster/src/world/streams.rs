//! Composable index templates and data streams: which template a new index or stream takes its
//! settings from, a stream's hidden backing indices, its generations and its write index.
//!
//! From ES's `MetadataIndexTemplateService.findV2Template` (the highest-priority template whose
//! `index_patterns` match), `MetadataCreateDataStreamService` (the first backing index is
//! created hidden, named by `DataStream.getDefaultBackingIndexName`: `.ds-<stream>-000001` in
//! ES 7.9/7.10 and OpenSearch, `.ds-<stream>-<yyyy.MM.dd>-000001` from ES 7.11) and
//! `MetadataRolloverService` (a new generation becomes the write index).

use serde_json::Value;

use super::World;
use super::index_settings::{HIDDEN, IndexSettings, LIFECYCLE_NAME};
use super::resolve::glob_match;
use crate::flavor::{Flavor, Product};

/// A composable index template (`PUT _index_template/{name}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub name: String,
    pub index_patterns: Vec<String>,
    pub priority: i64,
    /// `template.settings`, flat and normalized.
    pub settings: IndexSettings,
    /// `data_stream`: the timestamp field of the streams it creates; `None` for index templates.
    pub data_stream: Option<String>,
    /// The body as it was put, for `GET _index_template`.
    pub body: Value,
}

/// A data stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataStream {
    pub name: String,
    pub timestamp_field: String,
    /// Backing index names, oldest first; the last one is the write index.
    pub indices: Vec<String>,
    pub generation: u64,
    pub template: String,
}

/// Why a data stream request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// `illegal_argument_exception` with this reason.
    Illegal(String),
    /// `resource_already_exists_exception` with this reason.
    Exists(String),
    /// `index_not_found_exception` for this name.
    Missing(String),
}

impl StreamError {
    /// The exception's `reason`.
    pub(crate) fn reason(&self) -> String {
        match self {
            StreamError::Illegal(reason) | StreamError::Exists(reason) => reason.clone(),
            StreamError::Missing(name) => format!("no such index [{name}]"),
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct Streams {
    templates: Vec<Template>,
    streams: Vec<DataStream>,
}

/// A template the default distribution installs itself (ES 7.9+ X-Pack `stack` plugin):
/// `logs-*-*`, `metrics-*-*` and `synthetics-*-*` at priority 100, each a data stream template
/// with its own ILM policy. A user template must outrank them to take those names.
fn built_in_template(name: &str) -> Template {
    let settings = IndexSettings::from([
        (LIFECYCLE_NAME.to_owned(), name.to_owned()),
        ("index.codec".to_owned(), "best_compression".to_owned()),
    ]);
    let pattern = format!("{name}-*-*");
    Template {
        name: name.to_owned(),
        index_patterns: vec![pattern.clone()],
        priority: 100,
        body: serde_json::json!({
            "index_patterns": [pattern],
            "template": {"settings": {"index": {"lifecycle": {"name": name}, "codec": "best_compression"}}},
            "priority": 100,
            "data_stream": {},
            "_meta": {"description": format!("default {name} template installed by x-pack"), "managed": true},
        }),
        settings,
        data_stream: Some("@timestamp".to_owned()),
    }
}

impl Streams {
    pub(super) fn built_in(product: Product) -> Self {
        let templates = if product.has_ilm() && product.has_data_streams() {
            ["logs", "metrics", "synthetics"]
                .into_iter()
                .map(built_in_template)
                .collect()
        } else {
            Vec::new()
        };
        Streams {
            templates,
            streams: Vec::new(),
        }
    }

    pub(super) fn data_streams(&self) -> &[DataStream] {
        &self.streams
    }

    /// The data stream whose write index this is.
    pub(super) fn write_index_of(&self, index: &str) -> Option<&str> {
        self.streams
            .iter()
            .find(|stream| stream.indices.last().is_some_and(|last| last == index))
            .map(|stream| stream.name.as_str())
    }

    pub(super) fn forget_backing_index(&mut self, index: &str) {
        for stream in &mut self.streams {
            stream.indices.retain(|backing| backing != index);
        }
    }
}

/// `DataStream.getDefaultBackingIndexName`.
fn backing_index_name(product: Product, stream: &str, generation: u64, wall_ms: i64) -> String {
    if product.flavor == Flavor::Es8 {
        let date = crate::units::format_date_millis(wall_ms);
        let day = date.get(..10).unwrap_or("").replace('-', ".");
        format!(".ds-{stream}-{day}-{generation:06}")
    } else {
        format!(".ds-{stream}-{generation:06}")
    }
}

impl World {
    pub(crate) fn templates(&self) -> &[Template] {
        &self.streams.templates
    }

    pub(crate) fn data_streams(&self) -> &[DataStream] {
        &self.streams.streams
    }

    /// `findV2Template`: the highest-priority template matching `name`.
    pub(crate) fn matching_template(&self, name: &str) -> Option<&Template> {
        self.streams
            .templates
            .iter()
            .filter(|template| {
                template
                    .index_patterns
                    .iter()
                    .any(|pattern| glob_match(pattern, name))
            })
            .max_by_key(|template| template.priority)
    }

    /// Adds or replaces a template (validated by the caller); refuses one that would tie with
    /// another matching the same names at the same priority.
    pub(crate) fn put_template(&mut self, template: Template) -> Result<(), String> {
        let clash: Vec<&Template> = self
            .streams
            .templates
            .iter()
            .filter(|other| {
                other.name != template.name
                    && other.priority == template.priority
                    && other.index_patterns.iter().any(|theirs| {
                        template
                            .index_patterns
                            .iter()
                            .any(|ours| glob_match(ours, theirs) || glob_match(theirs, ours))
                    })
            })
            .collect();
        if !clash.is_empty() {
            let names: Vec<&str> = clash.iter().map(|other| other.name.as_str()).collect();
            let patterns: Vec<String> = clash
                .iter()
                .map(|other| format!("{} => [{}]", other.name, other.index_patterns.join(", ")))
                .collect();
            return Err(format!(
                "index template [{}] has index patterns [{}] matching patterns from existing templates [{}] with patterns ({}) that have the same priority [{}], multiple index templates may not match during index creation, please use a different priority",
                template.name,
                template.index_patterns.join(", "),
                names.join(", "),
                patterns.join(","),
                template.priority
            ));
        }
        self.streams
            .templates
            .retain(|other| other.name != template.name);
        self.streams.templates.push(template);
        Ok(())
    }

    /// Removes a template; `false` if there was none of that name.
    pub(crate) fn delete_template(&mut self, name: &str) -> bool {
        let before = self.streams.templates.len();
        self.streams
            .templates
            .retain(|template| template.name != name);
        before != self.streams.templates.len()
    }

    /// `PUT _data_stream/{name}`: needs a matching data stream template; creates generation 1.
    pub(crate) fn create_data_stream(&mut self, name: &str) -> Result<(), StreamError> {
        if self
            .streams
            .streams
            .iter()
            .any(|stream| stream.name == name)
            || self.index(name).is_some()
        {
            return Err(StreamError::Exists(format!(
                "data_stream [{name}] already exists"
            )));
        }
        let Some(template) = self.matching_template(name) else {
            return Err(StreamError::Illegal(format!(
                "no matching index template found for data stream [{name}]"
            )));
        };
        let Some(timestamp_field) = template.data_stream.clone() else {
            return Err(StreamError::Illegal(format!(
                "matching index template [{}] for data stream [{name}] has no data stream template",
                template.name
            )));
        };
        let template = template.name.clone();
        self.streams.streams.push(DataStream {
            name: name.to_owned(),
            timestamp_field,
            indices: Vec::new(),
            generation: 0,
            template,
        });
        if self.roll_data_stream(name).is_none() {
            // Its first backing index's name is taken (by an index created by hand).
            self.streams.streams.retain(|stream| stream.name != name);
            return Err(StreamError::Exists(format!(
                "data_stream [{name}] already exists"
            )));
        }
        Ok(())
    }

    /// A data stream that has been running at start: `generations` backing indices, all
    /// started, the last one written to. Needs a matching data stream template.
    pub(crate) fn seed_data_stream(
        &mut self,
        name: &str,
        generations: u64,
        creation_ms: i64,
    ) -> Result<(), StreamError> {
        self.create_data_stream(name)?;
        for _ in 1..generations {
            self.roll_data_stream(name);
        }
        let backing = self
            .data_streams()
            .iter()
            .find(|stream| stream.name == name)
            .map(|stream| stream.indices.clone())
            .unwrap_or_default();
        for index in backing {
            self.start_at_once(&index, creation_ms);
        }
        Ok(())
    }

    /// The name a data stream's next backing index would get now.
    pub(crate) fn next_backing_index(&self, name: &str) -> Option<String> {
        let stream = self.streams.streams.iter().find(|s| s.name == name)?;
        let wall = self.wall_ms(self.now_ms);
        Some(backing_index_name(
            self.product,
            name,
            stream.generation + 1,
            wall,
        ))
    }

    /// Creates a data stream's next generation and makes it the write index; returns the old and
    /// new write index. `None` if there is no such stream.
    pub(crate) fn roll_data_stream(&mut self, name: &str) -> Option<(Option<String>, String)> {
        let backing = self.next_backing_index(name)?;
        let stream = self.streams.streams.iter().find(|s| s.name == name)?;
        let generation = stream.generation + 1;
        let old = stream.indices.last().cloned();
        let mut settings = self
            .matching_template(name)
            .map(|template| template.settings.clone())
            .unwrap_or_default();
        settings.insert(HIDDEN.to_owned(), "true".to_owned());
        // A name clash would need a backing index created by hand: ES fails the same way.
        self.create_index(&backing, &settings).ok()?;
        let stream = self.streams.streams.iter_mut().find(|s| s.name == name)?;
        stream.generation = generation;
        stream.indices.push(backing.clone());
        Some((old, backing))
    }

    /// `DELETE _data_stream/{name}`: the stream and all its backing indices, applied at once.
    pub(crate) fn delete_data_stream(&mut self, name: &str) -> Result<(), StreamError> {
        let Some(position) = self.streams.streams.iter().position(|s| s.name == name) else {
            return Err(StreamError::Missing(name.to_owned()));
        };
        let stream = self.streams.streams.remove(position);
        for backing in &stream.indices {
            if let Some(uuid) = self.index(backing).map(|index| index.uuid.clone()) {
                self.remove_index(&uuid);
            }
        }
        self.settle();
        Ok(())
    }
}
