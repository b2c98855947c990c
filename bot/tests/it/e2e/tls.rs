//! Reaching real services: an HTTPS cluster with a private CA and Elasticsearch security (basic
//! auth), a real Keystone behind TLS, and what `opsbot check` says when any of it is wrong: the
//! refused certificate by subject and issuer, 401 with what to check, the address and cause of
//! an unreachable server, a timeout, an answer too large to read.

use std::path::Path;

use opsbot::check::{Outcome, check};
use opsbot::config::Config;
use opsbot_commands::parse::{Origin, parse_line};
use opsbot_commands::request::Request;
use opsbot_search_sim::{Flavor, Role, Security, SimConfig, SimHandle, SimTls};
use opsbot_tests::openstack::real_cloud;
use opsbot_tests::tls::{Authority, Leaf, tls_proxy, write};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const USER: &str = "opsbot";
const PASSWORD: &str = "correct horse";

/// A config of `body` (clusters, clouds, engine) with a store in `dir` and one person.
fn config(dir: &Path, body: &str) -> Config {
    let text = format!(
        "[store]\npath = \"{}\"\n{body}\n[[people]]\nname = \"alice\"\nroles = [\"operator\"]\n\
         accounts = [\"alice\"]\n",
        dir.join("store").display()
    );
    let config = Config::parse(&text).unwrap();
    config.validate().unwrap();
    config
}

/// `[[clusters]]` `logs` at `url` with `extra` lines.
fn cluster(url: &str, extra: &str) -> String {
    format!(
        "[[clusters]]\nname = \"logs\"\nurl = \"{url}\"\nnodes = [\"10.0.0.11\", \"10.0.0.12\", \"10.0.0.13\"]\n{extra}\n\
         [clusters.node_control]\nkind = \"manual\"\ncontainer = \"elasticsearch\"\n"
    )
}

async fn outcomes(config: &Config) -> Vec<Outcome> {
    let mut seen = Vec::new();
    check(config, |outcome| seen.push(outcome)).await;
    seen
}

/// The one line `opsbot check` prints for a config of one target.
async fn line_of(config: &Config) -> String {
    let seen = outcomes(config).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    seen[0].to_string()
}

/// An ES 8 simulator serving HTTPS with `leaf` and requiring basic auth of [`USER`], and a
/// client certificate `client_ca` issued when given.
async fn secured_sim(
    leaf: &Leaf,
    client_ca: Option<&Authority>,
    roles: Vec<(String, Role)>,
) -> SimHandle {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = SimConfig {
        flavor: Flavor::Es8,
        node_count: 3,
        days_of_indices: 3,
        tls: Some(SimTls {
            client_ca_pem: client_ca.map(Authority::pem),
            ..leaf.serving()
        }),
        security: Some(Security {
            users: vec![(USER.to_owned(), PASSWORD.to_owned())],
            api_keys: vec![("opsbot-key".to_owned(), "s3cr3t-api-key".to_owned())],
            roles,
        }),
        ..SimConfig::default()
    };
    opsbot_search_sim::spawn(config, listener).await.unwrap()
}

struct Secured {
    sim: SimHandle,
    ca: Authority,
    dir: tempfile::TempDir,
}

async fn secured() -> Secured {
    secured_requiring(None).await
}

/// [`secured`], requiring a client certificate `client_ca` issued when given.
async fn secured_requiring(client_ca: Option<&Authority>) -> Secured {
    secured_with(client_ca, Vec::new()).await
}

/// [`secured_requiring`], with `roles` for principals (the others are superusers).
async fn secured_with(client_ca: Option<&Authority>, roles: Vec<(String, Role)>) -> Secured {
    let ca = Authority::new("Elasticsearch security auto-configuration HTTP CA").unwrap();
    let leaf = ca.leaf("logs-vip", &["127.0.0.1"]).unwrap();
    let sim = secured_sim(&leaf, client_ca, roles).await;
    Secured {
        sim,
        ca,
        dir: tempfile::tempdir().unwrap(),
    }
}

impl Secured {
    /// The cluster trusting `ca_pem`, with `auth` lines.
    fn config(&self, ca_pem: &str, auth: &str) -> Config {
        let ca = write(self.dir.path(), "ca.pem", ca_pem);
        let extra = format!("ca_file = \"{}\"\n{auth}", ca.display());
        config(self.dir.path(), &cluster(&self.sim.base_url(), &extra))
    }

    fn password(&self, password: &str) -> String {
        let file = write(self.dir.path(), "password", &format!("{password}\n"));
        format!(
            "username = \"{USER}\"\npassword_file = \"{}\"",
            file.display()
        )
    }
}

#[tokio::test]
async fn an_https_cluster_with_a_private_ca_and_basic_auth_is_reached() {
    let scene = secured().await;
    assert!(scene.sim.base_url().starts_with("https://"));
    let config = scene.config(&scene.ca.pem(), &scene.password(PASSWORD));
    let line = line_of(&config).await;
    assert!(
        line.starts_with("ok    cluster `logs` at https://127.0.0.1:"),
        "{line}"
    );
    assert!(
        line.contains("Elasticsearch 8.") && line.contains("health green"),
        "{line}"
    );

    // The engine's own path: a plan observes the cluster through the same client.
    let Request::Procedure(request) =
        parse_line("/cluster restart cluster:logs", Origin::Chat).unwrap()
    else {
        panic!("a procedure");
    };
    let clusters = opsbot::clusters::Clusters::new(&config, &Default::default()).unwrap();
    let name = opsbot_commands::name::ClusterName::parse("logs").unwrap();
    let plan = clusters
        .plan(&name, &request, time::OffsetDateTime::now_utc())
        .await
        .unwrap();
    assert!(!plan.is_empty());
    assert!(
        scene.sim.calls().iter().all(|call| call.status != 401),
        "every request authenticated: {:?}",
        scene.sim.calls()
    );
}

#[tokio::test]
async fn the_wrong_ca_names_the_refused_certificate() {
    let scene = secured().await;
    let other = Authority::new("Some other CA").unwrap();
    let line = line_of(&scene.config(&other.pem(), &scene.password(PASSWORD))).await;
    assert!(
        line.starts_with("FAIL  cluster `logs` at https://"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "GET / could not be reached at {}: TLS: the server's certificate `CN=logs-vip` \
             (issued by `CN=Elasticsearch security auto-configuration HTTP CA`) is not signed by \
             a CA opsbot trusts; set ca_file to the CA that issued it",
            scene.sim.base_url()
        )),
        "{line}"
    );
    // Without a ca_file only the web roots are trusted: the same refusal.
    let dir = tempfile::tempdir().unwrap();
    let line = line_of(&config(dir.path(), &cluster(&scene.sim.base_url(), ""))).await;
    assert!(line.contains("certificate `CN=logs-vip`"), "{line}");
    assert!(
        scene.sim.calls().is_empty(),
        "nothing reached the cluster API"
    );
}

#[tokio::test]
async fn a_server_refusing_the_client_certificate_says_to_set_one() {
    let clients = Authority::new("Operators' client CA").unwrap();
    let scene = secured_requiring(Some(&clients)).await;
    let password = scene.password(PASSWORD);
    // TLS 1.3: the refusal comes after the client's side of the handshake, on the first read.
    let line = line_of(&scene.config(&scene.ca.pem(), &password)).await;
    assert_eq!(
        line,
        format!(
            "FAIL  cluster `logs` at {url}: GET / could not be reached at {url}: TLS: the server \
             ended the handshake (CertificateRequired): it wants a client certificate it trusts \
             (client_cert, client_key)",
            url = scene.sim.base_url()
        )
    );
    let identity = |leaf: &Leaf| {
        let cert = write(scene.dir.path(), "client.pem", &leaf.cert_pem);
        let key = write(scene.dir.path(), "client.key", &leaf.key_pem);
        format!(
            "client_cert = \"{}\"\nclient_key = \"{}\"\n{password}",
            cert.display(),
            key.display()
        )
    };
    let stranger = Authority::new("Some other CA")
        .unwrap()
        .client("opsbot")
        .unwrap();
    let line = line_of(&scene.config(&scene.ca.pem(), &identity(&stranger))).await;
    assert!(
        line.ends_with(
            "TLS: the server ended the handshake (UnknownCA): it wants a client certificate it \
             trusts (client_cert, client_key)"
        ),
        "{line}"
    );
    assert!(scene.sim.calls().is_empty(), "no request got through");
    let trusted = clients.client("opsbot").unwrap();
    let line = line_of(&scene.config(&scene.ca.pem(), &identity(&trusted))).await;
    assert!(line.starts_with("ok    cluster `logs`"), "{line}");
}

#[tokio::test]
async fn the_simulators_admin_api_is_reached_as_its_cluster_is() {
    use opsbot::config::{NodeControlConfig, Tls};
    use opsbot::node_control::{NodeControl, NodeOp, Outcome};

    let scene = secured().await;
    let tls = Tls {
        ca_file: Some(write(scene.dir.path(), "ca.pem", &scene.ca.pem())),
        identity: None,
    };
    let sim = NodeControlConfig::Sim { url: None };
    let control = NodeControl::new(sim, &scene.sim.base_url(), &tls).unwrap();
    let node = opsbot_commands::name::NodeAddr::parse("10.0.0.13").unwrap();
    let stopped = control.apply(NodeOp::Stop, node).await.unwrap();
    assert_eq!(
        stopped,
        Outcome::Done {
            note: "stopped 10.0.0.13".into(),
            output: Vec::new()
        }
    );
}

#[tokio::test]
async fn missing_or_wrong_credentials_are_a_401_saying_what_to_check() {
    let scene = secured().await;
    let line = line_of(&scene.config(&scene.ca.pem(), "")).await;
    assert!(
        line.contains(
            "GET / answered 401 (missing authentication credentials for REST request [/]; check \
             the cluster's username and password, or its API key)"
        ),
        "{line}"
    );
    let line = line_of(&scene.config(&scene.ca.pem(), &scene.password("wrong"))).await;
    assert!(
        line.contains("answered 401 (unable to authenticate user [opsbot] for REST request [/]"),
        "{line}"
    );
    assert!(
        !line.contains("wrong"),
        "the password is never shown: {line}"
    );
}

#[tokio::test]
async fn missing_privileges_are_named_by_check_and_by_the_403_of_a_run() {
    let monitoring = Role {
        name: "logs_monitor".to_owned(),
        cluster: vec!["monitor".to_owned()],
        index: vec!["monitor".to_owned(), "view_index_metadata".to_owned()],
    };
    let scene = secured_with(None, vec![(USER.to_owned(), monitoring)]).await;
    let config = scene.config(&scene.ca.pem(), &scene.password(PASSWORD));
    let line = line_of(&config).await;
    assert!(line.starts_with("FAIL  cluster `logs`"), "{line}");
    assert!(
        line.contains(
            "health green, but the credentials lack cluster `manage` (the allocation and \
             exclusion settings of restart, stop and remove-node), index `maintenance` (the \
             flush before nodes stop), index `delete_index` (prune and delete); grant them to \
             their role"
        ),
        "{line}"
    );
    // What a run meets without the check: the step's error is ES's own 403, naming the action
    // and the privileges that grant it.
    let clusters = opsbot::clusters::Clusters::new(&config, &Default::default()).unwrap();
    let name = opsbot_commands::name::ClusterName::parse("logs").unwrap();
    let search = &clusters.get(&name).unwrap().search;
    let error = search
        .set_allocation_enable(Some("none"))
        .await
        .unwrap_err();
    assert_eq!(error.fault.kind(), "http_403");
    assert!(
        error.to_string().contains(
            "answered 403 (action [cluster:admin/settings/update] is unauthorized for user \
             [opsbot] with effective roles [logs_monitor], this action is granted by the cluster \
             privileges [manage,all])"
        ),
        "{error}"
    );
    // A superuser holds every privilege.
    let scene = secured().await;
    let line = line_of(&scene.config(&scene.ca.pem(), &scene.password(PASSWORD))).await;
    assert!(
        line.starts_with("ok    ") && line.ends_with("every privilege opsbot uses"),
        "{line}"
    );
}

#[tokio::test]
async fn an_api_key_is_sent_as_elasticsearch_expects_it() {
    let scene = secured().await;
    // base64("opsbot-key:s3cr3t-api-key"): the `encoded` of the create-API-key answer.
    let key = write(
        scene.dir.path(),
        "api-key",
        "b3BzYm90LWtleTpzM2NyM3QtYXBpLWtleQ==\n",
    );
    let auth = format!("api_key_file = \"{}\"", key.display());
    let line = line_of(&scene.config(&scene.ca.pem(), &auth)).await;
    assert!(line.starts_with("ok    cluster `logs`"), "{line}");
    let other = write(scene.dir.path(), "other-key", "b3BzYm90LWtleTp3cm9uZw==\n");
    let auth = format!("api_key_file = \"{}\"", other.display());
    let line = line_of(&scene.config(&scene.ca.pem(), &auth)).await;
    assert!(
        line.contains("answered 401 (unable to authenticate with provided credentials"),
        "{line}"
    );
}

#[tokio::test]
async fn the_simulator_answers_like_elasticsearch_security() {
    let scene = secured().await;
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(scene.ca.pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let url = format!("{}/_cluster/health?pretty", scene.sim.base_url());
    let refused = client.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let challenges: Vec<_> = refused
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        challenges,
        [
            "Basic realm=\"security\" charset=\"UTF-8\"",
            "Bearer realm=\"security\"",
            "ApiKey"
        ]
    );
    let text = refused.text().await.unwrap();
    assert!(
        text.starts_with("{\n  \"error\" : {\n"),
        "pretty, as asked: {text}"
    );
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let reason = "missing authentication credentials for REST request [/_cluster/health?pretty]";
    assert_eq!(body["status"], 401);
    assert_eq!(body["error"]["type"], "security_exception");
    assert_eq!(body["error"]["reason"], reason);
    assert_eq!(body["error"]["root_cause"][0]["reason"], reason);
    assert_eq!(
        body["error"]["header"]["WWW-Authenticate"][0],
        challenges[0]
    );
    let answered = client
        .get(&url)
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);

    // base64 of an API key without its id: ApiKeyService's refusal, wrapped.
    let invalid = client
        .get(&url)
        .header("authorization", "ApiKey czNjcjN0LWFwaS1rZXk=")
        .send()
        .await
        .unwrap();
    assert_eq!(invalid.status(), 401);
    let body: serde_json::Value = invalid.json().await.unwrap();
    let error = &body["error"];
    assert_eq!(error["reason"], "error attempting to authenticate request");
    assert_eq!(error["caused_by"]["type"], "illegal_argument_exception");
    assert_eq!(error["caused_by"]["reason"], "invalid ApiKey value");
    assert!(error["root_cause"][0].get("caused_by").is_none(), "{body}");

    // The has-privileges API exists for GET and POST only: another method is ES's 405.
    let wrong = client
        .put(format!(
            "{}/_security/user/_has_privileges",
            scene.sim.base_url()
        ))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 405);
    let allow = wrong.headers()["allow"].to_str().unwrap().to_owned();
    assert_eq!(allow, "GET,POST");
    let body: serde_json::Value = wrong.json().await.unwrap();
    assert_eq!(
        body["error"],
        "Incorrect HTTP method for uri [/_security/user/_has_privileges] and method [PUT], \
         allowed: [GET, POST]"
    );
}

#[tokio::test]
async fn an_unreachable_cluster_says_its_address_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let (_held, closed) = crate::support::refusing_address();
    let url = format!("http://{closed}");
    let line = line_of(&config(dir.path(), &cluster(&url, ""))).await;
    assert_eq!(
        line,
        format!(
            "FAIL  cluster `logs` at {url}: GET / could not be reached at {url}: connection refused"
        )
    );
    let url = "http://opsbot-check.invalid:9200";
    let line = line_of(&config(dir.path(), &cluster(url, ""))).await;
    assert!(
        line.ends_with(&format!(
            "could not be reached at {url}: the host name does not resolve (DNS)"
        )),
        "{line}"
    );
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_huge_answer_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    // Accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let body = format!(
        "[engine]\nrequest_timeout = \"300ms\"\n{}",
        cluster(&url, "")
    );
    let line = line_of(&config(dir.path(), &body)).await;
    assert!(line.ends_with("GET / did not answer in time"), "{line}");
    drop(silent);

    // Answers with an endless chunked body.
    let endless = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", endless.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut stream, _) = endless.accept().await.unwrap();
        // The request first: an answer before it would be a broken server, not a big answer.
        let mut request = [0; 4096];
        let _ = stream.read(&mut request).await;
        let chunk = vec![b'x'; 1024 * 1024];
        let head = format!("{:x}\r\n", chunk.len());
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        loop {
            let sent = async {
                stream.write_all(head.as_bytes()).await?;
                stream.write_all(&chunk).await?;
                stream.write_all(b"\r\n").await
            };
            if sent.await.is_err() {
                break; // the client hung up, as it must
            }
        }
    });
    let line = line_of(&config(dir.path(), &cluster(&url, ""))).await;
    assert!(
        line.ends_with("GET / sent an answer larger than 64 MiB; opsbot refuses it unread"),
        "{line}"
    );

    // Announces 100 MB and sends none of it: refused on the announcement alone.
    let announced = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", announced.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut stream, _) = announced.accept().await.unwrap();
        let mut request = [0; 4096];
        let _ = stream.read(&mut request).await;
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100000000\r\n\r\n")
            .await;
        // Held open: a client waiting for the body would wait for the timeout.
        let _ = stream.read(&mut request).await;
    });
    let line = line_of(&config(dir.path(), &cluster(&url, ""))).await;
    assert!(
        line.ends_with("larger than 64 MiB; opsbot refuses it unread"),
        "{line}"
    );
}

/// A real Keystone behind a TLS proxy whose certificate `ca` signed.
async fn keystone_behind_tls(ca: &Authority) -> String {
    let cloud = real_cloud().await;
    let keystone = reqwest::Url::parse(&cloud.keystone_url()).unwrap();
    let upstream = format!("127.0.0.1:{}", keystone.port().unwrap())
        .parse()
        .unwrap();
    let proxy = tls_proxy(
        &ca.leaf("keystone.internal", &["127.0.0.1"]).unwrap(),
        upstream,
    )
    .await;
    format!("https://{proxy}/v3")
}

fn cloud(dir: &Path, auth_url: &str, ca_pem: &str) -> Config {
    let ca = write(dir, "cloud-ca.pem", ca_pem);
    let password = write(dir, "cloud-password", "adminpass\n");
    config(
        dir,
        &format!(
            "[[clouds]]\nname = \"prod\"\nauth_url = \"{auth_url}\"\nusername = \"admin\"\n\
             project = \"admin\"\npassword_file = \"{}\"\nca_file = \"{}\"\n",
            password.display(),
            ca.display()
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_behind_tls_issues_tokens_to_a_cloud_trusting_its_ca() {
    let ca = Authority::new("Kolla internal CA").unwrap();
    let auth_url = keystone_behind_tls(&ca).await;
    let dir = tempfile::tempdir().unwrap();
    let seen = outcomes(&cloud(dir.path(), &auth_url, &ca.pem())).await;
    let lines: Vec<String> = seen.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines[0],
        format!("ok    cloud `prod` identity at {auth_url}: token issued, with its catalog")
    );
    // Placement is in the real catalog (plain HTTP there); the same client reaches it.
    assert_eq!(
        lines[1],
        "ok    cloud `prod` placement: the token is accepted and the API answers"
    );
    // No compute or image service runs with the real Keystone: said, not hidden.
    assert!(
        lines[2].starts_with("FAIL  cloud `prod` compute:"),
        "{lines:?}"
    );
    assert!(
        lines[2].contains("no internal compute endpoint"),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_with_the_wrong_ca_names_its_certificate() {
    let ca = Authority::new("Kolla internal CA").unwrap();
    let auth_url = keystone_behind_tls(&ca).await;
    let dir = tempfile::tempdir().unwrap();
    let other = Authority::new("Not the Kolla CA").unwrap();
    let seen = outcomes(&cloud(dir.path(), &auth_url, &other.pem())).await;
    assert_eq!(
        seen.len(),
        1,
        "nothing else is tried without a token: {seen:?}"
    );
    let line = seen[0].to_string();
    let origin = auth_url.trim_end_matches("/v3");
    assert_eq!(
        line,
        format!(
            "FAIL  cloud `prod` identity at {auth_url}: POST /v3/auth/tokens could not be \
             reached at {origin}: TLS: the server's certificate `CN=keystone.internal` (issued by \
             `CN=Kolla internal CA`) is not signed by a CA opsbot trusts; set ca_file to the CA \
             that issued it"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_is_checked_with_the_bots_own_start_up_check() {
    use opsbot_fake_discord::permissions::{EMBED_LINKS, MEMBER, SEND_MESSAGES};
    use opsbot_fake_discord::{FakeConfig, FakeDiscord};
    use opsbot_tests::discord::{ANNOUNCE_CHANNEL, CHANNEL, discord_config};

    let fake = FakeDiscord::start(FakeConfig {
        channels: vec![CHANNEL, ANNOUNCE_CHANNEL],
        ..FakeConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), &cluster("http://127.0.0.1:9", ""));
    config.clusters.clear();
    config.discord = Some(discord_config(&fake, dir.path()));
    assert_eq!(
        line_of(&config).await,
        "ok    discord: token, guild and channels answer"
    );
    // Connecting is not enough: a channel where the bot may not post fails, naming what to grant.
    fake.set_bot_permissions(ANNOUNCE_CHANNEL, MEMBER & !SEND_MESSAGES);
    fake.set_bot_permissions(CHANNEL, MEMBER & !EMBED_LINKS);
    assert_eq!(
        line_of(&config).await,
        format!(
            "FAIL  discord: the bot lacks Embed Links in channel {CHANNEL}; the bot lacks Send \
             Messages in channel {ANNOUNCE_CHANNEL}"
        )
    );
    std::fs::write(dir.path().join("discord-token"), "not-the-token").unwrap();
    let line = line_of(&config).await;
    assert!(
        line.starts_with(
            "FAIL  discord: checking the bot token: Discord refused the bot token (401)"
        ),
        "{line}"
    );
}
