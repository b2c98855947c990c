//! What only the PostgreSQL backend does: its schema's migrations, the lease and the fence
//! of high availability, and riding out an outage of the server.

use std::time::Duration;

use crate::common::{Place, new_run, sql};
use opsbot_state::{PgConfig, Store, StoreError};

fn config(place: &Place) -> &PgConfig {
    match place {
        Place::Postgres(config) => config,
        Place::Sled(_) => unreachable!("a PostgreSQL place"),
    }
}

#[test]
fn migrations_are_applied_once_and_recorded() {
    let place = Place::postgres();
    drop(place.open().unwrap());
    let store = place.open().unwrap();
    assert_eq!(store.kind(), "postgres");
    let rows = sql(
        config(&place),
        "SELECT version, name FROM opsbot_migrations ORDER BY version",
    );
    let applied: Vec<(i32, String)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    assert_eq!(applied, [(1, "initial".to_owned())]);
}

#[test]
fn a_schema_from_a_newer_opsbot_is_refused() {
    let place = Place::postgres();
    drop(place.open().unwrap());
    sql(
        config(&place),
        "INSERT INTO opsbot_migrations (version, name) VALUES (99, 'from the future')",
    );
    let error = place.open().unwrap_err();
    assert!(
        matches!(
            &error,
            StoreError::NewerRow {
                found: 99,
                supported: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("newer opsbot"), "{error}");
}

#[test]
fn a_damaged_unfinished_run_stops_the_store_from_opening() {
    let place = Place::postgres();
    let store = place.open().unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();
    drop(store);
    sql(
        config(&place),
        r#"UPDATE runs SET record = '{"v":1,"data":{"id":1}}' WHERE id = 1"#,
    );
    let error = place.open().unwrap_err();
    assert!(
        matches!(&error, StoreError::CorruptRow { table: "runs", key, .. } if *key == run.id.to_string()),
        "{error:?}"
    );
}

#[test]
fn the_lease_changes_hands_only_when_free_or_expired_and_its_epoch_counts_the_holders() {
    let store = Place::postgres().open().unwrap();
    let long = Duration::from_secs(60);
    assert_eq!(store.lease().unwrap(), None);
    assert_eq!(store.acquire_lease("a", long).unwrap(), Some(1));
    // Taken again by its holder: the same epoch; by another while it runs: refused.
    assert_eq!(store.acquire_lease("a", long).unwrap(), Some(1));
    assert_eq!(store.acquire_lease("b", long).unwrap(), None);
    assert!(store.renew_lease("a", 1, long).unwrap());
    assert!(!store.renew_lease("a", 2, long).unwrap());
    assert!(!store.renew_lease("b", 1, long).unwrap());
    let lease = store.lease().unwrap().unwrap();
    assert_eq!((lease.holder.as_str(), lease.epoch), ("a", 1));
    assert!(lease.remaining > Duration::ZERO && lease.remaining <= long);

    // Released: the next holder takes it at once, one epoch up.
    assert!(store.release_lease("a", 1).unwrap());
    assert_eq!(store.acquire_lease("b", Duration::ZERO).unwrap(), Some(2));
    assert!(!store.renew_lease("a", 1, long).unwrap());
    // b's lease of no time expired by the database's clock as it was taken: a takes over.
    assert_eq!(store.acquire_lease("a", long).unwrap(), Some(3));
    assert_eq!(store.lease().unwrap().unwrap().holder, "a");
    assert!(!store.release_lease("b", 2).unwrap());
}

#[test]
fn a_write_under_an_old_epoch_is_fenced_and_writes_nothing() {
    let place = Place::postgres();
    let (old, new) = (place.open().unwrap(), place.open().unwrap());
    let epoch = old.acquire_lease("old", Duration::ZERO).unwrap().unwrap();
    old.fence(epoch).unwrap();
    let run = old.create_run(new_run("logs"), None).unwrap();

    // The old holder's lease expired; another instance takes over and writes.
    let taken = new
        .acquire_lease("new", Duration::from_secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(taken, epoch + 1);
    new.fence(taken).unwrap();
    let audit_before = new.audit().unwrap().len();

    let error = old.create_run(new_run("other"), None).unwrap_err();
    assert!(
        matches!(&error, StoreError::Fenced { mine, current: Some(current), holder: Some(holder) }
            if *mine == epoch && *current == taken && holder == "new"),
        "{error:?}"
    );
    assert!(matches!(
        old.update_run(run.id, None, |run| {
            run.progress_message = None;
            Ok::<_, ()>(vec![opsbot_commands::audit::AuditKind::CancelRequested])
        }),
        Err(opsbot_state::UpdateError::Store(StoreError::Fenced { .. }))
    ));
    assert!(matches!(
        old.first_delivery("interaction-1"),
        Err(StoreError::Fenced { .. })
    ));
    // Nothing of the fenced writes is in the store; the new holder writes on.
    assert_eq!(new.runs().unwrap().len(), 1);
    assert_eq!(new.audit().unwrap().len(), audit_before);
    assert!(!new.delivered("interaction-1").unwrap());
    new.create_run(new_run("other"), None).unwrap();
    // Reads are not fenced: a standby may look.
    assert_eq!(old.runs().unwrap().len(), 2);
}

#[test]
fn an_outage_is_unavailable_and_the_store_works_again_when_the_server_is_back() {
    let mut server = opsbot_tmp_postgres::Server::start().unwrap();
    let mut config = PgConfig::new(server.url("postgres"));
    config.connect_timeout = Duration::from_secs(1);
    config.statement_timeout = Duration::from_secs(2);
    let store = Store::open_postgres(&config).unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();

    server.stop().unwrap();
    let error = store.run(run.id).unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");
    assert!(error.to_string().contains("PostgreSQL is up"), "{error}");
    let error = store.create_run(new_run("other"), None).unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");

    server.start_again().unwrap();
    assert_eq!(store.run(run.id).unwrap().map(|run| run.id), Some(run.id));
    let other = store.create_run(new_run("other"), None).unwrap();
    assert_eq!(other.id.get(), 2, "the failed creation took no id");
}

#[test]
fn what_sled_alone_does_is_refused_on_postgres_and_the_lease_on_sled() {
    let store = Place::postgres().open().unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        store.backup(&dir.path().join("backup")),
        Err(StoreError::NotOnPostgres { .. })
    ));
    assert!(matches!(
        store.archive_paths(),
        Err(StoreError::NotOnPostgres { .. })
    ));
    assert_eq!(
        store.compact(time::OffsetDateTime::now_utc(), 10).unwrap(),
        opsbot_state::Compacted::default()
    );
    assert!(store.size_on_disk().unwrap() > 0);

    let sled = Place::sled().open().unwrap();
    assert_eq!(sled.kind(), "sled");
    assert!(matches!(
        sled.acquire_lease("a", Duration::from_secs(1)),
        Err(StoreError::NotOnSled { .. })
    ));
    assert!(matches!(sled.fence(1), Err(StoreError::NotOnSled { .. })));
}

#[test]
fn a_password_never_shows_in_what_the_store_says_of_itself() {
    let server = opsbot_tmp_postgres::shared().unwrap();
    // Trust authentication ignores the password; it must not show all the same.
    let url = server.url("postgres").replace("opsbot@", "opsbot:hunter2@");
    let mut config = PgConfig::new(url);
    config.schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let store = Store::open_postgres(&config).unwrap();
    for shown in [
        store.describe(),
        format!("{store:?}"),
        format!("{config:?}"),
    ] {
        assert!(!shown.contains("hunter2"), "{shown}");
    }
    assert!(store.describe().contains(&config.schema));
}

#[test]
fn two_instances_creating_at_once_are_told_only_one_may_write() {
    let place = Place::postgres();
    let (a, b) = (place.open().unwrap(), place.open().unwrap());
    // b creates r-1 while a builds the run it was given r-1 for.
    let error = a
        .create_run(
            |id| {
                b.create_run(new_run("other"), None).unwrap();
                new_run("logs")(id)
            },
            None,
        )
        .unwrap_err();
    assert!(matches!(error, StoreError::Contended { .. }), "{error:?}");
    let runs = b.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].plan().request().target().lock_keys(), ["other"]);
}

/// A CA and a certificate it signed for 127.0.0.1, as PEM: (CA, certificate, key).
fn certificates() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let issuer = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    (issuer.pem(), leaf.pem(), key.serialize_pem())
}

#[test]
fn tls_verifies_the_server_against_the_ca_file() {
    let server = opsbot_tmp_postgres::Server::start().unwrap();
    let plain = PgConfig::new(server.url("postgres"));
    let (ca, cert, key) = certificates();
    // The server writes its certificate and key itself (owned by it, in its data directory;
    // the key readable by it alone), then turns TLS on.
    let data: String = sql(&plain, "SHOW data_directory")[0].get(0);
    for (file, pem) in [("server.crt", &cert), ("server.key", &key)] {
        sql(
            &plain,
            &format!(
                "COPY (SELECT unnest(string_to_array('{}', E'\\n'))) TO '{data}/{file}'",
                pem.trim()
            ),
        );
    }
    let key_file = std::path::Path::new(&data).join("server.key");
    std::fs::set_permissions(
        &key_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    sql(
        &plain,
        "ALTER SYSTEM SET ssl_cert_file = 'server.crt'; \
         ALTER SYSTEM SET ssl_key_file = 'server.key'; \
         ALTER SYSTEM SET ssl = on; SELECT pg_reload_conf()",
    );

    let dir = tempfile::tempdir().unwrap();
    let (ca_file, other_ca) = (dir.path().join("ca.pem"), dir.path().join("other.pem"));
    std::fs::write(&ca_file, &ca).unwrap();
    std::fs::write(&other_ca, certificates().0).unwrap();

    let mut config = PgConfig::new(format!("{}?sslmode=verify-full", server.url("postgres")));
    config.ca_file = Some(ca_file);
    // The server reloads its settings in its own time, and says so only in its log: poll.
    let mut opened = Store::open_postgres(&config);
    for _ in 0..250 {
        match &opened {
            Err(StoreError::Unavailable { detail, .. }) if detail.contains("not support TLS") => {
                std::thread::sleep(Duration::from_millis(20));
                opened = Store::open_postgres(&config);
            }
            _ => break,
        }
    }
    opened.unwrap().create_run(new_run("logs"), None).unwrap();

    config.ca_file = Some(other_ca);
    config.schema = "elsewhere".to_owned();
    let error = Store::open_postgres(&config).unwrap_err();
    assert!(
        matches!(&error, StoreError::Unavailable { detail, .. } if detail.contains("certificate")),
        "{error:?}"
    );
}

#[test]
fn a_write_held_up_past_its_timeout_is_unavailable_writes_nothing_and_the_store_goes_on() {
    let Place::Postgres(mut config) = Place::postgres() else {
        unreachable!("a PostgreSQL place")
    };
    config.statement_timeout = Duration::from_secs(1);
    let store = Store::open_postgres(&config).unwrap();
    // Another session holds the counters, as a stuck transaction of a DBA's would.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut pg: tokio_postgres::Config = config.url.parse().unwrap();
    pg.options(format!("-c search_path={}", config.schema));
    let (client, connection) = runtime.block_on(pg.connect(tokio_postgres::NoTls)).unwrap();
    runtime.spawn(connection);
    runtime
        .block_on(client.batch_execute("BEGIN; LOCK TABLE counters IN ACCESS EXCLUSIVE MODE"))
        .unwrap();

    let error = store.create_run(new_run("logs"), None).unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");

    runtime.block_on(client.batch_execute("ROLLBACK")).unwrap();
    let run = store.create_run(new_run("logs"), None).unwrap();
    assert_eq!(run.id.get(), 1, "the write held up took no id");
    assert_eq!(store.audit().unwrap().len(), 1);
}

#[test]
fn instances_starting_together_migrate_once() {
    let Place::Postgres(config) = Place::postgres() else {
        unreachable!("a PostgreSQL place")
    };
    let start = std::sync::Barrier::new(4);
    std::thread::scope(|scope| {
        let opening: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    Store::open_postgres(&config)
                })
            })
            .collect();
        for opened in opening {
            opened.join().unwrap().unwrap();
        }
    });
    let rows = sql(&config, "SELECT count(*) FROM opsbot_migrations");
    assert_eq!(rows[0].get::<_, i64>(0), 1);
}

/// A login the server refuses is named as one, with the settings to check, not as a problem
/// of rights on the schema. (The test server trusts every known user, so an unknown one
/// stands in for a wrong password: both are class 28.)
#[test]
fn a_refused_login_names_the_password_and_the_user() {
    let server = opsbot_tmp_postgres::shared().unwrap();
    let url = server.url("postgres").replace("opsbot@", "nobody@");
    let config = PgConfig::new(url);
    let error = Store::open_postgres(&config).unwrap_err();
    assert!(matches!(error, StoreError::Login { .. }), "{error:?}");
    let said = error.to_string();
    assert!(
        said.contains("refused the store's login")
            && said.contains("(28000)")
            && said.contains("[store] password_file or password_env"),
        "{said}"
    );
}
