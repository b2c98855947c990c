//! Placement's part of the world: resource providers and the allocations of consumers.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{UnknownProvider, World};

/// Amounts by resource class, e.g. `VCPU` → 2.
pub(crate) type Resources = BTreeMap<String, u64>;

/// A resource provider: for nova, one compute node.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Provider {
    pub uuid: Uuid,
    pub name: String,
    /// Bumped once by every allocation write that lists it; deleting a consumer's allocations
    /// does not bump it (recorded from Placement 16, fixture `53-rp-allocations-after-delete`).
    pub generation: u64,
    pub allocations: BTreeMap<Uuid, Resources>,
}

/// A consumer's type (placement microversion 1.38), as `GET /allocations/{consumer}` shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConsumerType {
    /// `INSTANCE`.
    #[serde(rename = "INSTANCE")]
    Instance,
    /// `MIGRATION`.
    #[serde(rename = "MIGRATION")]
    Migration,
    /// `unknown`: written without a type (before 1.38, or by a client that sends none, which
    /// includes every Nova release: its report client writes allocations at 1.28).
    #[default]
    #[serde(rename = "unknown")]
    Unknown,
}

/// Who an allocation is for (placement's consumer record).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Consumer {
    pub project_id: String,
    pub user_id: String,
    /// Bumped by every allocation written for the consumer (microversion 1.28).
    pub generation: u64,
    pub consumer_type: ConsumerType,
}

/// One consumer's part of an allocation write: the body of `PUT /allocations/{consumer}`, or
/// one entry of `POST /allocations`. Empty `allocations` remove the consumer's allocations.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub consumer: Uuid,
    pub allocations: BTreeMap<Uuid, Resources>,
    pub project_id: String,
    pub user_id: String,
    /// `None` leaves an existing consumer's type alone and gives a new one `unknown`.
    pub consumer_type: Option<ConsumerType>,
}

impl World {
    pub(crate) fn providers(&self) -> &[Provider] {
        &self.providers
    }

    pub(crate) fn provider(&self, uuid: Uuid) -> Option<&Provider> {
        self.providers.iter().find(|provider| provider.uuid == uuid)
    }

    /// The provider of a compute host: nova names a compute node's provider after it.
    pub(crate) fn provider_of_host(&self, host: &str) -> Option<&Provider> {
        self.providers.iter().find(|provider| provider.name == host)
    }

    /// Adds a provider with its allocations, as nova's resource tracker would create it.
    pub(crate) fn add_provider(
        &mut self,
        uuid: Uuid,
        name: &str,
        allocations: &[(Uuid, Resources)],
    ) {
        self.providers.push(Provider {
            uuid,
            name: name.to_owned(),
            generation: 0,
            allocations: BTreeMap::new(),
        });
        let index = self.providers.len() - 1;
        for (consumer, resources) in allocations {
            self.allocate(index, *consumer, resources.clone());
        }
    }

    /// Sets a consumer's allocation on one provider, as a PUT of its allocations would.
    pub(crate) fn add_allocation(
        &mut self,
        provider: Uuid,
        consumer: Uuid,
        resources: Resources,
    ) -> Result<(), UnknownProvider> {
        let index = self
            .providers
            .iter()
            .position(|candidate| candidate.uuid == provider)
            .ok_or(UnknownProvider(provider))?;
        self.allocate(index, consumer, resources);
        Ok(())
    }

    fn allocate(&mut self, index: usize, consumer: Uuid, resources: Resources) {
        if let Some(target) = self.providers.get_mut(index) {
            target.allocations.insert(consumer, resources);
            target.generation += 1;
        }
        let owner = &self.owner;
        let consumer_type = self.settings.nova_type(ConsumerType::Instance);
        let record = self.consumers.entry(consumer).or_insert_with(|| Consumer {
            project_id: owner.project_id.clone(),
            user_id: owner.user_id.clone(),
            generation: 0,
            consumer_type: consumer_type.unwrap_or_default(),
        });
        record.generation += 1;
    }

    /// Writes allocations as placement's `POST /allocations` does (one `PUT` is a single
    /// write): each listed consumer's allocations are replaced; every provider named in the
    /// new allocations, or holding allocations a write empties, gets one generation bump (a
    /// provider a consumer merely leaves does not, as recorded from Placement 16); a consumer
    /// left without allocations is deleted, the others' generations go up by one.
    pub(crate) fn write_allocations(&mut self, writes: Vec<Write>) {
        let mut bumped = BTreeSet::new();
        for write in &writes {
            if write.allocations.is_empty() {
                bumped.extend(self.allocations_of(write.consumer).into_keys());
            }
            bumped.extend(write.allocations.keys().copied());
        }
        for write in writes {
            for provider in &mut self.providers {
                provider.allocations.remove(&write.consumer);
            }
            if write.allocations.is_empty() {
                self.consumers.remove(&write.consumer);
                continue;
            }
            for (uuid, resources) in write.allocations {
                if let Some(provider) = self.providers.iter_mut().find(|p| p.uuid == uuid) {
                    provider.allocations.insert(write.consumer, resources);
                }
            }
            let record = self
                .consumers
                .entry(write.consumer)
                .or_insert_with(|| Consumer {
                    project_id: write.project_id.clone(),
                    user_id: write.user_id.clone(),
                    generation: 0,
                    consumer_type: ConsumerType::Unknown,
                });
            record.generation += 1;
            (record.project_id, record.user_id) = (write.project_id, write.user_id);
            if let Some(consumer_type) = write.consumer_type {
                record.consumer_type = consumer_type;
            }
        }
        for provider in &mut self.providers {
            if bumped.contains(&provider.uuid) {
                provider.generation += 1;
            }
        }
    }

    /// Nova's `SchedulerReportClient.move_allocations`: one `POST /allocations` that gives
    /// `to` everything `from` holds (with `from`'s project and user) and empties `from`.
    pub(crate) fn move_allocations(&mut self, from: Uuid, to: Uuid, to_type: Option<ConsumerType>) {
        let Some(source) = self.consumers.get(&from) else {
            return;
        };
        let (project_id, user_id) = (source.project_id.clone(), source.user_id.clone());
        let allocations = self.allocations_of(from);
        self.write_allocations(vec![
            Write {
                consumer: from,
                allocations: BTreeMap::new(),
                project_id: project_id.clone(),
                user_id: user_id.clone(),
                consumer_type: None,
            },
            Write {
                consumer: to,
                allocations,
                project_id,
                user_id,
                consumer_type: to_type,
            },
        ]);
    }

    /// A consumer's allocations by provider uuid.
    pub(crate) fn allocations_of(&self, consumer: Uuid) -> BTreeMap<Uuid, Resources> {
        self.consumer_allocations(consumer)
            .into_iter()
            .map(|(provider, resources)| (provider.uuid, resources.clone()))
            .collect()
    }

    /// The consumer's allocations, provider by provider.
    pub(crate) fn consumer_allocations(&self, consumer: Uuid) -> Vec<(&Provider, &Resources)> {
        self.providers
            .iter()
            .filter_map(|provider| {
                provider
                    .allocations
                    .get(&consumer)
                    .map(|resources| (provider, resources))
            })
            .collect()
    }

    pub(crate) fn consumer(&self, consumer: Uuid) -> Option<&Consumer> {
        self.consumers.get(&consumer)
    }

    /// Sets the type placement reports for a consumer; false if it has no allocations.
    pub(crate) fn set_consumer_type(
        &mut self,
        consumer: Uuid,
        consumer_type: ConsumerType,
    ) -> bool {
        self.consumers
            .get_mut(&consumer)
            .map(|record| record.consumer_type = consumer_type)
            .is_some()
    }

    /// `DELETE /allocations/{consumer}`: removes the consumer's allocations from every
    /// provider without bumping generations; false if it had none.
    pub(crate) fn delete_allocations(&mut self, consumer: Uuid) -> bool {
        let mut found = false;
        for provider in &mut self.providers {
            found |= provider.allocations.remove(&consumer).is_some();
        }
        // Placement deletes the consumer record along with its last allocation.
        self.consumers.remove(&consumer);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::tests::world;

    #[test]
    fn writes_bump_generations_and_deletes_do_not() {
        let mut world = world();
        let (rp, vm) = (Uuid::new_v4(), Uuid::new_v4());
        world.add_provider(rp, "compute-01", &[]);
        world
            .add_allocation(rp, vm, Resources::from([("VCPU".into(), 2)]))
            .unwrap();
        assert_eq!(world.provider(rp).unwrap().generation, 1);
        assert_eq!(world.consumer(vm).unwrap().generation, 1);
        assert_eq!(
            world.consumer(vm).unwrap().consumer_type,
            ConsumerType::Unknown
        );
        assert!(world.delete_allocations(vm));
        assert_eq!(world.provider(rp).unwrap().generation, 1);
        assert!(!world.delete_allocations(vm));
        assert!(world.consumer(vm).is_none());
    }

    /// The sequence recorded from Placement 16 for a move and its revert (generations of the
    /// two providers and of the instance consumer).
    #[test]
    fn moves_bump_as_placement_does() {
        let mut world = world();
        let (src, dst, vm, mig) = (
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );
        world.add_provider(src, "compute-01", &[]);
        world.add_provider(dst, "compute-02", &[]);
        let small = Resources::from([("VCPU".into(), 2)]);
        world.add_allocation(src, vm, small.clone()).unwrap();
        world.move_allocations(vm, mig, Some(ConsumerType::Migration));
        assert!(world.consumer(vm).is_none());
        assert_eq!(world.consumer(mig).unwrap().generation, 1);
        assert_eq!(
            world.consumer(mig).unwrap().consumer_type,
            ConsumerType::Migration
        );
        assert_eq!(world.provider(src).unwrap().generation, 2);
        world.write_allocations(vec![Write {
            consumer: vm,
            allocations: BTreeMap::from([(dst, small)]),
            project_id: "p".into(),
            user_id: "u".into(),
            consumer_type: None,
        }]);
        world.move_allocations(mig, vm, None);
        assert_eq!(world.consumer(vm).unwrap().generation, 2);
        assert_eq!(world.provider(src).unwrap().generation, 3);
        assert_eq!(world.provider(dst).unwrap().generation, 1);
        assert!(world.provider(dst).unwrap().allocations.is_empty());
        assert_eq!(
            world.allocations_of(vm).into_keys().collect::<Vec<_>>(),
            [src]
        );
    }

    #[test]
    fn unknown_provider_is_refused() {
        let rp = Uuid::new_v4();
        assert_eq!(
            world().add_allocation(rp, Uuid::new_v4(), Resources::new()),
            Err(UnknownProvider(rp))
        );
    }
}
