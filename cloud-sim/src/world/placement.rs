//! Placement's part of the world: resource providers and the allocations of consumers.

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use super::{UnknownProvider, World};

/// Amounts by resource class, e.g. `VCPU` → 2.
pub(crate) type Resources = BTreeMap<String, u64>;

/// A resource provider: for nova, one compute node.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Provider {
    pub uuid: Uuid,
    pub name: String,
    /// Bumped by every allocation written against it; deleting a consumer's allocations does
    /// not bump it (recorded from Placement 16, fixture `53-rp-allocations-after-delete`).
    pub generation: u64,
    pub allocations: BTreeMap<Uuid, Resources>,
}

/// Who an allocation is for (placement's consumer record).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Consumer {
    pub project_id: String,
    pub user_id: String,
    /// Bumped by every allocation written for the consumer (microversion 1.28).
    pub generation: u64,
}

impl World {
    pub(crate) fn providers(&self) -> &[Provider] {
        &self.providers
    }

    pub(crate) fn provider(&self, uuid: Uuid) -> Option<&Provider> {
        self.providers.iter().find(|provider| provider.uuid == uuid)
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
        self.consumers
            .entry(consumer)
            .or_insert_with(|| Consumer {
                project_id: owner.project_id.clone(),
                user_id: owner.user_id.clone(),
                generation: 0,
            })
            .generation += 1;
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

    /// Removes the consumer's allocations from every provider; false if it had none.
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
    use super::super::Owner;
    use super::*;
    use crate::config::WorldSeed;

    fn world() -> World {
        let owner = Owner {
            project_id: "p".into(),
            user_id: "u".into(),
        };
        World::new(&WorldSeed::default(), owner)
    }

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
        assert!(world.delete_allocations(vm));
        assert_eq!(world.provider(rp).unwrap().generation, 1);
        assert!(!world.delete_allocations(vm));
        assert!(world.consumer(vm).is_none());
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
