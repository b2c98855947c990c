//! Keystone's records: users with their domain, project and roles, and the service catalog.

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use crate::config::{CloudSimConfig, Interface};

/// The domain Keystone creates at bootstrap, whose id is spelled out rather than generated.
const DEFAULT_DOMAIN: (&str, &str) = ("default", "Default");

/// An id and a name, the way Keystone refers to domains, projects and roles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Named {
    pub id: String,
    pub name: String,
}

/// A user able to get a token, with everything a token shows about it.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub user: Named,
    pub password: String,
    pub domain: Named,
    pub project: Named,
    pub roles: Vec<Named>,
}

/// How a request names a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DomainRef {
    Name(String),
    Id(String),
}

impl DomainRef {
    fn matches(&self, domain: &Named) -> bool {
        match self {
            DomainRef::Name(name) => *name == domain.name,
            DomainRef::Id(id) => *id == domain.id,
        }
    }
}

/// One catalog endpoint, in Keystone's key order.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Endpoint {
    pub id: String,
    pub interface: Interface,
    pub region_id: String,
    pub url: String,
    pub region: String,
}

/// One catalog service, in Keystone's key order.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CatalogService {
    pub endpoints: Vec<Endpoint>,
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'static str,
}

/// Keystone's data, fixed when the server starts.
#[derive(Debug)]
pub(crate) struct Directory {
    accounts: Vec<Account>,
    catalog: Vec<CatalogService>,
}

/// Keystone's ids: 32 hex digits.
fn hex_id() -> String {
    Uuid::new_v4().simple().to_string()
}

/// Hands out one id per distinct key, so that users sharing a project share its id.
#[derive(Default)]
struct Ids(BTreeMap<String, String>);

impl Ids {
    fn named(&mut self, key: String, name: &str) -> Named {
        let id = self.0.entry(key).or_insert_with(hex_id).clone();
        Named {
            id,
            name: name.to_owned(),
        }
    }
}

impl Directory {
    pub(crate) fn new(config: &CloudSimConfig, base_url: &str) -> Self {
        let mut ids = Ids::default();
        ids.0.insert(
            format!("domain:{}", DEFAULT_DOMAIN.1),
            DEFAULT_DOMAIN.0.to_owned(),
        );
        let accounts = config
            .users
            .iter()
            .map(|user| Account {
                user: ids.named(format!("user:{}:{}", user.domain, user.name), &user.name),
                password: user.password.clone(),
                domain: ids.named(format!("domain:{}", user.domain), &user.domain),
                project: ids.named(
                    format!("project:{}:{}", user.domain, user.project),
                    &user.project,
                ),
                roles: user
                    .roles
                    .iter()
                    .map(|role| ids.named(format!("role:{role}"), role))
                    .collect(),
            })
            .collect();
        Directory {
            accounts,
            catalog: catalog(config, base_url),
        }
    }

    pub(crate) fn account(&self, index: usize) -> Option<&Account> {
        self.accounts.get(index)
    }

    /// The account a user name, domain and password identify.
    pub(crate) fn authenticate(
        &self,
        name: &str,
        domain: &DomainRef,
        password: &str,
    ) -> Option<usize> {
        self.accounts.iter().position(|account| {
            account.user.name == name
                && domain.matches(&account.domain)
                && account.password == password
        })
    }

    /// Whether a requested project scope names the account's project.
    pub(crate) fn scope_matches(account: &Account, project: &ProjectRef) -> bool {
        match project {
            ProjectRef::Id(id) => *id == account.project.id,
            ProjectRef::Name(name, domain) => {
                *name == account.project.name && domain.matches(&account.domain)
            }
        }
    }

    pub(crate) fn catalog(&self) -> &[CatalogService] {
        &self.catalog
    }
}

/// How a request names the project to scope a token to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProjectRef {
    Id(String),
    Name(String, DomainRef),
}

fn catalog(config: &CloudSimConfig, base_url: &str) -> Vec<CatalogService> {
    let service = |kind, name, url: String, interfaces: &[Interface]| CatalogService {
        endpoints: interfaces
            .iter()
            .map(|interface| Endpoint {
                id: hex_id(),
                interface: *interface,
                region_id: config.region.clone(),
                url: url.clone(),
                region: config.region.clone(),
            })
            .collect(),
        id: hex_id(),
        kind,
        name,
    };
    vec![
        service(
            "identity",
            "keystone",
            format!("{base_url}/identity/v3/"),
            &Interface::ALL,
        ),
        service(
            "placement",
            "placement",
            format!("{base_url}/placement"),
            &config.placement_interfaces,
        ),
        service(
            "compute",
            "nova",
            format!("{base_url}/compute/v2.1"),
            &Interface::ALL,
        ),
        service(
            "image",
            "glance",
            format!("{base_url}/image"),
            &Interface::ALL,
        ),
    ]
}
