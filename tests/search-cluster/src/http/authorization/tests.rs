use axum::http::Method;

use super::*;

fn role(cluster: &[&str], index: &[&str]) -> Role {
    Role {
        name: "opsbot".into(),
        cluster: cluster.iter().map(|p| (*p).to_owned()).collect(),
        index: index.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn user() -> Principal {
    Principal::User("opsbot".into())
}

fn refusal(result: Result<(), ApiError>) -> String {
    match result {
        Err(ApiError::Exception(exception)) => {
            assert_eq!(exception.status, StatusCode::FORBIDDEN);
            assert_eq!(exception.kind, "security_exception");
            exception.reason.unwrap_or_default()
        }
        other => panic!("not a 403: {other:?}"),
    }
}

#[test]
fn a_monitoring_role_reads_but_may_not_change_settings_or_delete() {
    let monitor = role(&["monitor"], &["monitor", "view_index_metadata"]);
    let allowed = |endpoint: &Endpoint, method: &Method| {
        authorize(Some(&monitor), &user(), endpoint, method, "*").is_ok()
    };
    assert!(allowed(&Endpoint::ClusterHealth, &Method::GET));
    assert!(allowed(&Endpoint::ClusterSettings, &Method::GET));
    assert!(allowed(&Endpoint::CatIndices(None), &Method::GET));
    assert_eq!(
        refusal(authorize(
            Some(&monitor),
            &user(),
            &Endpoint::ClusterSettings,
            &Method::PUT,
            "*"
        )),
        "action [cluster:admin/settings/update] is unauthorized for user [opsbot] with effective \
         roles [opsbot], this action is granted by the cluster privileges [manage,all]"
    );
    assert_eq!(
        refusal(authorize(
            Some(&monitor),
            &user(),
            &Endpoint::Index("flog-2026.01.01".into()),
            &Method::DELETE,
            "flog-2026.01.01"
        )),
        "action [indices:admin/delete] is unauthorized for user [opsbot] with effective roles \
         [opsbot] on indices [flog-2026.01.01], this action is granted by the index privileges \
         [delete_index,manage,all]"
    );
}

#[test]
fn manage_and_all_imply_the_privileges_es_says_they_do() {
    let managing = role(&["manage"], &["manage"]);
    assert!(grants(&managing, Scope::Cluster, "monitor"));
    assert!(!grants(&managing, Scope::Cluster, "manage_security"));
    for privilege in [
        "monitor",
        "view_index_metadata",
        "delete_index",
        "maintenance",
    ] {
        assert!(grants(&managing, Scope::Index, privilege), "{privilege}");
    }
    assert!(!grants(&managing, Scope::Index, "create_doc"));
    let everything = role(&["all"], &["all"]);
    assert!(grants(&everything, Scope::Cluster, "manage"));
    assert!(grants(&everything, Scope::Index, "delete_index"));
    // A superuser (no role) may do anything.
    assert!(authorize(None, &user(), &Endpoint::Flush, &Method::POST, "*").is_ok());
}

#[test]
fn cat_indices_needs_the_cluster_monitor_privilege_too() {
    // ES's prerequisites: `monitor` (or `manage`) on the cluster and on the indices listed.
    let indices_only = role(&[], &["monitor"]);
    assert_eq!(
        refusal(authorize(
            Some(&indices_only),
            &user(),
            &Endpoint::CatIndices(None),
            &Method::GET,
            "*"
        )),
        "action [cluster:monitor/state] is unauthorized for user [opsbot] with effective roles \
         [opsbot], this action is granted by the cluster privileges [monitor,manage,all]"
    );
    let cluster_only = role(&["monitor"], &[]);
    assert!(
        refusal(authorize(
            Some(&cluster_only),
            &user(),
            &Endpoint::CatIndices(None),
            &Method::GET,
            "*"
        ))
        .starts_with("action [indices:monitor/stats]")
    );
}
