use super::*;
use crate::name::ClusterName;

fn stop() -> ProcedureRequest {
    ProcedureRequest::ClusterStop {
        cluster: ClusterName::parse("logs").unwrap(),
    }
}

fn prune() -> ProcedureRequest {
    ProcedureRequest::IndicesPrune {
        cluster: ClusterName::parse("logs").unwrap(),
        older_than: crate::retention::RetentionDays::parse("30").unwrap(),
        prefix: None,
    }
}

#[test]
fn stop_start_and_restart_ask_the_requester_to_confirm_by_default() {
    let policy = ConsentPolicy::default();
    assert_eq!(policy.of(&stop()), Consent::Confirm);
    assert_eq!(policy.of(&prune()), Consent::SecondPerson);
}

#[test]
fn the_config_chooses_within_the_rule_with_or_without_the_slash() {
    let policy = ConsentPolicy::parse([
        ("cluster stop", "none"),
        ("/image properties", "second-person"),
    ])
    .unwrap();
    assert_eq!(policy.of(&stop()), Consent::None);
    let image = crate::parse::command_by_path("image", Some("properties")).unwrap();
    assert_eq!(policy.of_command(image), Some(Consent::SecondPerson));
    // Saying what is already the rule is allowed.
    let policy = ConsentPolicy::parse([("indices prune", "second-person")]).unwrap();
    assert_eq!(policy.of(&prune()), Consent::SecondPerson);
}

#[test]
fn a_deletion_cannot_be_lowered_and_the_config_says_so() {
    for value in ["confirm", "none"] {
        let error = ConsentPolicy::parse([("indices prune", value)]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "`indices prune` always needs a second person's approval (it deletes or removes \
                 what cannot be brought back); the config cannot lower it to `{value}`"
            )
        );
    }
    for key in [
        "indices delete",
        "cluster remove-node",
        "placement stale",
        "compute rpc-cap",
    ] {
        assert!(
            matches!(
                ConsentPolicy::parse([(key, "none")]),
                Err(PolicyError::CannotLower { .. })
            ),
            "{key}"
        );
    }
}

#[test]
fn unknown_procedures_policies_and_runbooks_are_refused_with_what_to_do() {
    let error = ConsentPolicy::parse([("cluster status", "none")]).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`cluster status` is not a procedure; the procedures are: /cluster stop"),
        "{error}"
    );
    assert_eq!(
        ConsentPolicy::parse([("cluster stop", "yes")])
            .unwrap_err()
            .to_string(),
        "`yes` is not a policy for `cluster stop`; use second-person, confirm or none"
    );
    assert!(matches!(
        ConsentPolicy::parse([("runbook run", "none")]),
        Err(PolicyError::Runbook { .. })
    ));
}

#[test]
fn every_procedure_has_a_rule_in_the_catalogue() {
    let procedures: Vec<String> = procedures().map(|c| c.path()).collect();
    assert_eq!(
        procedures,
        [
            "/cluster stop",
            "/cluster start",
            "/cluster restart",
            "/cluster remove-node",
            "/indices prune",
            "/indices delete",
            "/placement stale",
            "/compute rpc-cap",
            "/image properties",
            "/runbook run",
        ]
    );
}
