use super::*;
use crate::process::CommandTemplate;

fn node() -> NodeAddr {
    NodeAddr::parse("10.0.0.13").unwrap()
}

fn command(stop: &[&str], timeout: Duration) -> NodeControl {
    NodeControl::new(
        NodeControlConfig::Command {
            stop: CommandTemplate::of(stop).unwrap(),
            start: CommandTemplate::of(&["true"]).unwrap(),
            container: "opensearch".into(),
            hosts: [(node(), "ctl3".to_owned())].into_iter().collect(),
            timeout,
            unlist: None,
            redeploy: Some(
                CommandTemplate::of(&["echo", "redeploy", "{container}", "without", "{node}"])
                    .unwrap(),
            ),
            redeploy_timeout: Duration::from_secs(5),
        },
        "http://127.0.0.1:9",
        &Tls::default(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_command_gets_its_placeholders_and_its_output_is_kept() {
    let control = command(
        &["echo", "{host}", "{node}", "{container}"],
        Duration::from_secs(5),
    );
    let outcome = control.apply(NodeOp::Stop, node()).await.unwrap();
    let Outcome::Done { output, note } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(output, vec!["ctl3 10.0.0.13 opensearch".to_owned()]);
    assert!(note.contains("exited 0"), "{note}");
}

#[tokio::test]
async fn a_failing_command_reports_its_exit_code_and_last_line() {
    let control = command(&["ls", "/nonexistent-{container}"], Duration::from_secs(5));
    let error = control.apply(NodeOp::Stop, node()).await.unwrap_err();
    let CommandError::Failed {
        ending, last_line, ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(ending, "exited 2");
    assert!(last_line.contains("nonexistent-opensearch"), "{last_line}");
}

#[tokio::test]
async fn a_hanging_command_is_killed_at_its_timeout() {
    let control = command(&["sleep", "30"], Duration::from_millis(200));
    let started = std::time::Instant::now();
    let error = control.apply(NodeOp::Stop, node()).await.unwrap_err();
    assert!(matches!(error, CommandError::Timeout { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let control = command(&["no-such-program-opsbot"], Duration::from_secs(5));
    let error = control.apply(NodeOp::Stop, node()).await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`no-such-program-opsbot` could not be started")
    );
}

#[tokio::test]
async fn manual_control_asks_an_operator() {
    let control = NodeControl::new(
        NodeControlConfig::Manual {
            container: "elasticsearch".into(),
        },
        "http://127.0.0.1:9",
        &Tls::default(),
    )
    .unwrap();
    assert_eq!(
        control.apply(NodeOp::Start, node()).await.unwrap(),
        Outcome::AskOperator {
            prompt: "start the `elasticsearch` container on 10.0.0.13".into()
        }
    );
}

#[tokio::test]
async fn the_deployment_is_changed_by_its_command_or_by_an_operator() {
    let control = command(&["true"], Duration::from_secs(5));
    assert_eq!(
        control.apply(NodeOp::Unlist, node()).await.unwrap(),
        Outcome::AskOperator {
            prompt: "remove 10.0.0.13 from the `opensearch` group of the deployment inventory \
                     (Kolla: the multinode inventory file)"
                .into()
        }
    );
    let Outcome::Done { output, .. } = control.apply(NodeOp::Redeploy, node()).await.unwrap()
    else {
        panic!("the redeploy template was not run")
    };
    assert_eq!(
        output,
        vec!["redeploy opensearch without 10.0.0.13".to_owned()]
    );

    let manual = NodeControl::new(
        NodeControlConfig::Manual {
            container: "opensearch".into(),
        },
        "http://127.0.0.1:9",
        &Tls::default(),
    )
    .unwrap();
    let Outcome::AskOperator { prompt } = manual.apply(NodeOp::Redeploy, node()).await.unwrap()
    else {
        panic!("manual control did not ask")
    };
    assert!(prompt.contains("kolla_serial=1"), "{prompt}");
}
