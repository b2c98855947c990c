//! Nova under `/compute/v2.1`: server show, the os-services list and delete, and the
//! migration listings (in [`super::migrations`]).

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use uuid::Uuid;

use super::errors::{nova, with_allow};
use super::microversion::{self, NOVA_MAX, NOVA_MIN, Version, VersionError, stamp_nova};
use super::reply::json;
use super::routing::{Miss, allow, segments, select};
use super::{Ctx, auth, migrations};
use crate::timestamps;
use crate::world::{ComputeService, World};

/// Services are identified by uuid instead of integer from this microversion on.
const UUID_FOR_ID: Version = Version::new(2, 53);

enum Endpoint<'a> {
    Root,
    Server(&'a str),
    Services,
    Service(&'a str),
    Migrations,
    ServerMigrations(&'a str),
    ServerMigration(&'a str, &'a str),
}

fn route(path: &str) -> Option<(Endpoint<'_>, &'static [Method])> {
    const GET: &[Method] = &[Method::GET];
    match segments(path).as_slice() {
        [] => Some((Endpoint::Root, GET)),
        ["servers", id] => Some((Endpoint::Server(id), GET)),
        ["os-services"] => Some((Endpoint::Services, GET)),
        ["os-services", id] => Some((Endpoint::Service(id), &[Method::DELETE])),
        ["os-migrations"] => Some((Endpoint::Migrations, GET)),
        ["servers", id, "migrations"] => Some((Endpoint::ServerMigrations(id), GET)),
        ["servers", id, "migrations", migration] => {
            Some((Endpoint::ServerMigration(id, migration), GET))
        }
        _ => None,
    }
}

/// A failed request: status and nova's message.
pub(super) type Failure = (StatusCode, String);

/// Token check (except for the version document), then the microversion, then the endpoint.
pub(super) fn handle(ctx: &Ctx<'_>) -> Response {
    let found = route(ctx.rest);
    if !matches!(found, Some((Endpoint::Root, _))) {
        if let Some(refused) = auth::refusal(ctx) {
            return refused;
        }
    }
    let version = match microversion::nova(&ctx.parts.headers) {
        Ok(version) => version,
        Err(VersionError::Invalid(message)) => {
            return nova(StatusCode::BAD_REQUEST, &message, None);
        }
        Err(VersionError::Unacceptable(message)) => {
            return nova(StatusCode::NOT_ACCEPTABLE, &message, None);
        }
    };
    let result = match select(found, &ctx.parts.method) {
        Ok(endpoint) => dispatch(ctx, endpoint, version),
        Err(Miss::NotFound) => Err((
            StatusCode::NOT_FOUND,
            "The resource could not be found.".to_owned(),
        )),
        Err(Miss::Method(allowed)) => {
            let refused = nova(
                StatusCode::METHOD_NOT_ALLOWED,
                "The method specified is not allowed for this resource.",
                Some(version),
            );
            return with_allow(refused, &allow(allowed));
        }
    };
    match result {
        Ok(mut response) => {
            stamp_nova(&mut response, version);
            response
        }
        Err((status, message)) => nova(status, &message, Some(version)),
    }
}

fn dispatch(ctx: &Ctx<'_>, endpoint: Endpoint<'_>, version: Version) -> Result<Response, Failure> {
    let base = format!("{}/compute", ctx.app.base_url);
    let mut world = ctx.app.world();
    match endpoint {
        Endpoint::Root => Ok(json(
            StatusCode::OK,
            &json!({"version": {
                "id": "v2.1",
                "status": "CURRENT",
                "version": NOVA_MAX.to_string(),
                "min_version": NOVA_MIN.to_string(),
                "updated": "2013-07-23T11:33:21Z",
                "links": [{"rel": "self", "href": format!("{base}/v2.1/")}],
                "media-types": [{
                    "base": "application/json",
                    "type": "application/vnd.openstack.compute+json;version=2.1",
                }],
            }}),
        )),
        Endpoint::Server(raw) => {
            let view = Uuid::parse_str(raw)
                .ok()
                .and_then(|id| server_view(&world, id, version, &base))
                .ok_or_else(|| {
                    (
                        StatusCode::NOT_FOUND,
                        format!("Instance {raw} could not be found."),
                    )
                })?;
            Ok(json(StatusCode::OK, &json!({"server": view})))
        }
        Endpoint::Services => {
            let query = ctx.query().unwrap_or_default();
            let wanted = |key: &str| {
                query
                    .iter()
                    .find(|(name, value)| name == key && !value.is_empty())
                    .map(|(_, value)| value.as_str())
            };
            let services: Vec<Value> = world
                .services()
                .iter()
                .filter(|service| wanted("binary").is_none_or(|binary| binary == service.binary))
                .filter(|service| wanted("host").is_none_or(|host| host == service.host))
                .map(|service| service_view(service, version))
                .collect();
            Ok(json(StatusCode::OK, &json!({"services": services})))
        }
        Endpoint::Service(raw) => delete_service(&mut world, raw, version),
        Endpoint::Migrations => migrations::index(ctx, &world, version, &base).map(ok),
        Endpoint::ServerMigrations(raw) => migrations::server_index(&world, raw, version).map(ok),
        Endpoint::ServerMigration(raw, id) => {
            migrations::server_show(&world, raw, id, version).map(ok)
        }
    }
}

/// A 200 with a JSON body.
fn ok(body: Value) -> Response {
    json(StatusCode::OK, &body)
}

/// Nova's states for a server status: `OS-EXT-STS:vm_state`, the power state number and the
/// task state (nova's `common._STATE_MAP`, read backwards).
fn vm_state(status: &str) -> (String, u8, Option<&'static str>) {
    match status {
        "ACTIVE" => ("active".to_owned(), 1, None),
        "SHUTOFF" => ("stopped".to_owned(), 4, None),
        "PAUSED" => ("paused".to_owned(), 3, None),
        "SUSPENDED" => ("suspended".to_owned(), 4, None),
        "BUILD" => ("building".to_owned(), 0, None),
        "RESIZE" => ("active".to_owned(), 1, Some("resize_migrating")),
        "VERIFY_RESIZE" => ("resized".to_owned(), 1, None),
        "MIGRATING" => ("active".to_owned(), 1, Some("migrating")),
        other => (other.to_ascii_lowercase(), 0, None),
    }
}

/// A server as `GET /servers/{id}` shows it to an admin at a microversion.
fn server_view(world: &World, id: Uuid, version: Version, base: &str) -> Option<Value> {
    let server = world.server(id)?;
    let (state, power, task) = vm_state(&server.status);
    let created = timestamps::glance(server.created);
    // Nova's hostId hides the host name: a hash of project and host.
    let host_id = server.host.as_ref().map_or_else(String::new, |host| {
        use sha2::{Digest, Sha224};
        let digest = Sha224::digest(format!("{}{host}", server.project_id));
        digest.iter().map(|byte| format!("{byte:02x}")).collect()
    });
    let index = u32::from_be_bytes([id.as_bytes()[0], id.as_bytes()[1], 0, 0]);
    let mut view = json!({
        "id": id,
        "name": server.name,
        "status": server.status,
        "tenant_id": server.project_id,
        "user_id": server.user_id,
        "metadata": {},
        "hostId": host_id,
        "image": "",
        "flavor": {"id": "2", "links": [{"rel": "bookmark", "href": format!("{base}/flavors/2")}]},
        "created": created,
        "updated": created,
        "addresses": {},
        "accessIPv4": "",
        "accessIPv6": "",
        "links": [
            {"rel": "self", "href": format!("{base}/v2.1/servers/{id}")},
            {"rel": "bookmark", "href": format!("{base}/servers/{id}")},
        ],
        "OS-DCF:diskConfig": "MANUAL",
        "progress": 0,
        "OS-EXT-AZ:availability_zone": "nova",
        "config_drive": "",
        "key_name": null,
        "OS-SRV-USG:launched_at": server.host.as_ref().map(|_| created.clone()),
        "OS-SRV-USG:terminated_at": null,
        "OS-EXT-SRV-ATTR:host": server.host,
        "OS-EXT-SRV-ATTR:instance_name": format!("instance-{index:08x}"),
        "OS-EXT-SRV-ATTR:hypervisor_hostname": server.host,
        "OS-EXT-STS:task_state": task,
        "OS-EXT-STS:vm_state": state,
        "OS-EXT-STS:power_state": power,
        "os-extended-volumes:volumes_attached": [],
    });
    if version >= Version::new(2, 47) {
        view["flavor"] = json!({
            "vcpus": 1, "ram": 2048, "disk": 20, "ephemeral": 0, "swap": 0,
            "original_name": "m1.small", "extra_specs": {},
        });
    }
    for (key, since, value) in [
        ("locked", 9, json!(false)),
        (
            "host_status",
            16,
            json!(if server.host.is_some() { "UP" } else { "" }),
        ),
        ("description", 19, Value::Null),
        ("tags", 26, json!([])),
    ] {
        if version >= Version::new(2, since) {
            view[key] = value;
        }
    }
    Some(view)
}

/// A service as `GET /os-services` shows it at a microversion.
fn service_view(service: &ComputeService, version: Version) -> Value {
    let id = if version >= UUID_FOR_ID {
        json!(service.uuid)
    } else {
        json!(service.id)
    };
    let mut view = json!({
        "id": id,
        "binary": service.binary,
        "disabled_reason": service.disabled_reason,
        "host": service.host,
        "state": service.state,
        "status": service.status,
        "updated_at": timestamps::nova(service.updated_at),
        "zone": service.zone,
    });
    if version >= Version::new(2, 11) {
        view["forced_down"] = json!(service.forced_down);
    }
    view
}

/// `DELETE /os-services/{id}`, with the id in the form the microversion calls for.
fn delete_service(world: &mut World, raw: &str, version: Version) -> Result<Response, Failure> {
    let bad = |message: String| (StatusCode::BAD_REQUEST, message);
    let deleted = if version >= UUID_FOR_ID {
        let uuid = Uuid::parse_str(raw).map_err(|_| bad(format!("Invalid uuid {raw}")))?;
        world.delete_service(|service| service.uuid == uuid)
    } else {
        let id: u32 = raw
            .parse()
            .map_err(|_| bad("Invalid input received: id must be an integer".to_owned()))?;
        world.delete_service(|service| service.id == id)
    };
    if deleted {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err((StatusCode::NOT_FOUND, format!("Service {raw} not found.")))
    }
}
