use super::*;
use crate::cluster::Observation;
use crate::cluster::{Distribution, HealthStatus, Membership, ServerVersion};
use crate::consent::ConsentPolicy;
use crate::name::{NodeAddr, RunId};
use crate::people::testing::person;
use crate::planner::{ClusterFacts, Facts, plan as make_plan};
use crate::request::ProcedureRequest;
use crate::run::ChannelId;
use crate::run::{Outcome, Run, RunState, StepState};
use time::macros::datetime;

const T0: OffsetDateTime = datetime!(2026-11-21 03:00:00 UTC);

fn restart_run() -> Run {
    let nodes: Vec<NodeAddr> = (11..=13)
        .map(|i| NodeAddr::parse(&format!("10.0.0.{i}")).unwrap())
        .collect();
    let facts = Facts::Cluster(ClusterFacts {
        inventory: nodes.clone(),
        version: ServerVersion::parse(Distribution::OpenSearch, "2.11.1"),
        membership: Membership::Formed {
            nodes,
            master: None,
        },
    });
    let request = ProcedureRequest::ClusterRestart {
        cluster: crate::name::ClusterName::parse("logs").unwrap(),
    };
    let plan = make_plan(&request, &facts).unwrap();
    Run::new(
        RunId::new(3),
        plan,
        person("alice"),
        ChannelId("console".into()),
        T0,
        time::Duration::minutes(30),
    )
}

fn done(note: &str) -> StepState {
    StepState::done(T0, note)
}

#[test]
fn progress_shows_the_step_and_what_is_observed() {
    let mut run = restart_run();
    for step in &mut run.steps_mut()[..7] {
        *step = done("");
    }
    run.steps_mut()[7] = StepState::Started { at: T0 };
    let observed = Observation {
        nodes_joined: Some((1, 3)),
        status: Some(HealthStatus::Yellow),
        unassigned_shards: Some(48),
        ..Observation::default()
    };
    let text = progress(&run, Some(&observed), T0 + time::Duration::seconds(72));
    insta::assert_snapshot!(text);
}

#[test]
fn final_states_read_well() {
    let bob = person("bob");
    let later = T0 + time::Duration::seconds(252);
    let mut texts = Vec::new();

    let mut ok = restart_run();
    let last = ok.steps().len() - 1;
    for step in ok.steps_mut() {
        *step = done("");
    }
    ok.steps_mut()[last] =
        done("status green · nodes 3/3 · shards 186 active · no recoveries running");
    ok.finish(Outcome::Succeeded, later);
    texts.push(progress(&ok, None, later));

    let mut failed = restart_run();
    failed.steps_mut()[0] = done("");
    failed.steps_mut()[1] = StepState::Failed {
        at: later,
        error: "x".into(),
        unchanged: false,
    };
    failed.finish(
        Outcome::Failed {
            error: "search cluster `logs`: POST /_flush answered 503 after 5 tries; check the \
                    cluster, then /cluster restart cluster:logs again"
                .into(),
        },
        later,
    );
    texts.push(progress(&failed, None, later));

    let mut cancelled = restart_run();
    cancelled.finish(
        Outcome::Cancelled {
            by: bob.clone(),
            note: "allocation is still disabled; /cluster start cluster:logs re-enables it".into(),
        },
        later,
    );
    texts.push(progress(&cancelled, None, later));

    let mut waiting = restart_run();
    waiting.state = RunState::AwaitingApproval {
        expires_at: T0 + time::Duration::minutes(30),
    };
    texts.push(progress(&waiting, None, later));

    let mut manual = restart_run();
    manual.steps_mut()[0] = done("");
    manual.steps_mut()[1] = done("");
    manual.steps_mut()[2] = StepState::AwaitingOperator {
        since: T0,
        prompt: "stop the search container on 10.0.0.11, then type /run done id:r-3".into(),
    };
    texts.push(progress(&manual, None, later));

    insta::assert_snapshot!(texts.join("\n\n"));
}

#[test]
fn run_status_lists_every_step() {
    let mut run = restart_run();
    run.steps_mut()[0] = done("");
    run.steps_mut()[1] = done("62 shards flushed");
    run.steps_mut()[2] = StepState::Started { at: T0 };
    insta::assert_snapshot!(run_status(&run, None, T0 + time::Duration::seconds(9)));
}

#[test]
fn help_is_derived_from_the_catalogue() {
    insta::assert_snapshot!(help(None, true, &Default::default()));
    assert!(!help(None, false, &Default::default()).contains("/as"));
    assert!(help(Some("run"), false, &Default::default()).contains("/run cancel id:<run id>"));
    assert!(
        help(Some("nonsense"), false, &Default::default())
            .starts_with("no commands about `nonsense`")
    );
}

#[test]
fn durations_are_compact() {
    let d = time::Duration::seconds;
    assert_eq!(duration(d(42)), "42s");
    assert_eq!(duration(d(252)), "4m12s");
    assert_eq!(duration(d(3720)), "1h02m");
    assert_eq!(duration(d(984 * 3600)), "41d00h");
}

#[test]
fn long_texts_are_cut_to_the_chat_limit() {
    let long = "é".repeat(3000);
    let cut = fit(&long);
    assert_eq!(cut.chars().count(), MESSAGE_LIMIT);
    assert!(cut.ends_with("/run status shows the rest)"));
}

#[test]
fn the_final_report_summarises_the_three_cat_answers() {
    use crate::cluster::{CatHealthRow, CatNodeRow, CatRecoveryRow, CatReport};
    let health = CatHealthRow {
        cluster: "kolla_logging".into(),
        status: "yellow".into(),
        node_total: "5".into(),
        shards: "120".into(),
        unassign: "56".into(),
        init: "4".into(),
        relo: "0".into(),
        active_shards_percent: "66.7%".into(),
    };
    let recovery = |index: &str, pct: &str| CatRecoveryRow {
        index: index.into(),
        shard: "0".into(),
        kind: "peer".into(),
        stage: "index".into(),
        source_node: "10.0.0.11".into(),
        target_node: "10.0.0.13".into(),
        bytes_percent: pct.into(),
    };
    let node = |ip: &str, master: &str| CatNodeRow {
        ip: ip.into(),
        name: ip.into(),
        master: master.into(),
        heap_percent: Some("41".into()),
    };
    let report = CatReport {
        health: vec![health],
        recovery: (1..=4)
            .map(|d| recovery(&format!("flog-2026.09.0{d}"), "38.7%"))
            .collect(),
        nodes: vec![node("10.0.0.11", "*"), node("10.0.0.12", "-")],
    };
    let cluster = crate::name::ClusterName::parse("logs").unwrap();
    insta::assert_snapshot!(super::report(&report, &cluster));
}

fn index_row(name: &str, docs: Option<&str>, size: Option<&str>) -> crate::cluster::CatIndexRow {
    crate::cluster::CatIndexRow {
        index: name.into(),
        uuid: None,
        health: docs.map(|_| "green".into()),
        status: Some(if docs.is_some() { "open" } else { "close" }.into()),
        docs_count: docs.map(Into::into),
        store_size: size.map(Into::into),
    }
}

#[test]
fn a_short_index_list_is_a_sorted_table_with_totals() {
    let rows = vec![
        index_row("flog-2026.10.02", Some("7590211"), Some("4080218931")),
        index_row(".kibana_1", Some("4"), Some("46489")),
        index_row("flog-2026.10.01", Some("8283538"), Some("4509715660")),
        index_row("flog-2026.09.30", None, None),
    ];
    let cluster = crate::name::ClusterName::parse("logs").unwrap();
    insta::assert_snapshot!(index_list(&rows, &cluster, None));
}

#[test]
fn a_long_index_list_keeps_the_oldest_and_newest_within_the_chat_limit() {
    let rows: Vec<_> = (0..400)
        .map(|i| {
            index_row(
                &format!("flog-{:04}.01.01", 1700 + i),
                Some("1000"),
                Some("2048"),
            )
        })
        .collect();
    let cluster = crate::name::ClusterName::parse("logs").unwrap();
    let pattern = crate::index::IndexPattern::parse("flog-*").unwrap();
    let text = index_list(&rows, &cluster, Some(&pattern));
    assert!(text.chars().count() <= MESSAGE_LIMIT);
    assert!(
        text.starts_with("indices of logs matching flog-* · 400 indices · 800.0kb · 400.0k docs"),
        "{text}"
    );
    assert!(text.contains("flog-1700.01.01"));
    assert!(text.contains("flog-2099.01.01"));
    assert!(text.contains("more; narrow it with pattern:"));
}

#[test]
fn an_empty_listing_of_a_whole_name_says_how_to_ask_for_a_prefix() {
    // What the service renders once the pattern left no row.
    let rows = Vec::new();
    let cluster = crate::name::ClusterName::parse("logs").unwrap();
    let whole = crate::index::IndexPattern::parse(".kibana").unwrap();
    assert_eq!(
        index_list(&rows, &cluster, Some(&whole)),
        "indices of logs matching .kibana: none (a pattern without * is a whole name; \
         pattern:.kibana* matches the names that start with it)"
    );
    let globbed = crate::index::IndexPattern::parse("audit-*").unwrap();
    assert_eq!(
        index_list(&rows, &cluster, Some(&globbed)),
        "indices of logs matching audit-*: none"
    );
}

#[test]
fn sizes_read_like_the_servers_write_them() {
    assert_eq!(bytes(0), "0b");
    assert_eq!(bytes(46489), "45.4kb");
    assert_eq!(bytes(4_509_715_660), "4.2gb");
}

#[test]
fn a_long_audit_trail_keeps_the_newest_events_within_the_chat_limit() {
    use crate::audit::{AuditEvent, AuditKind};
    let events: Vec<AuditEvent> = (0..200)
        .map(|i| AuditEvent {
            at: T0 + time::Duration::minutes(i),
            run: Some(RunId::new(7)),
            actor: None,
            event: AuditKind::StepDone {
                step: i as usize,
                note: "stopped 10.0.0.12".into(),
            },
        })
        .rev()
        .collect();
    let text = audit(&events, None, None, crate::page::Page::FIRST, true);
    assert!(text.chars().count() <= MESSAGE_LIMIT);
    assert!(
        text.starts_with("… earlier events: /audit page:2\n… "),
        "{text}"
    );
    assert!(text.contains(" earlier; narrow with since: or run:"));
    assert!(
        text.ends_with("r-7 opsbot · step 200 done: stopped 10.0.0.12"),
        "{text}"
    );
}

/// A full page of events whose lines are long: every one of them is on it, cut, and the
/// pointer repeats the filters, so that the next page starts where this one ends.
#[test]
fn a_full_audit_page_of_long_events_shows_every_one_and_points_at_the_next_with_its_filters() {
    use crate::audit::{AuditEvent, AuditKind, Since};
    use crate::page::{PER_PAGE, Page};
    let events: Vec<AuditEvent> = (0..PER_PAGE)
        .map(|i| AuditEvent {
            at: T0 + time::Duration::minutes(i as i64),
            run: Some(RunId::new(7)),
            actor: None,
            event: AuditKind::StepDone {
                step: i,
                note: format!("step {} {}", i + 1, "x".repeat(400)),
            },
        })
        .rev()
        .collect();
    let since = Since::parse("2h").ok();
    let text = audit(&events, Some(RunId::new(7)), since, Page::FIRST, true);
    assert!(text.chars().count() <= MESSAGE_LIMIT, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "… earlier events: /audit run:r-7 since:2h page:2");
    assert_eq!(lines.len(), PER_PAGE + 1, "{text}");
    for (i, line) in lines[1..].iter().enumerate() {
        assert!(line.contains(&format!("step {} x", i + 1)), "{line}");
        assert!(line.ends_with('…'), "{line}");
    }
}

/// A page whose lines do not all fit whole: only the longest are cut, to one common length, and
/// the short ones, which leave room for them, are kept whole.
#[test]
fn a_page_cuts_only_its_longest_lines_and_only_as_much_as_the_message_needs() {
    use crate::audit::{AuditEvent, AuditKind};
    use crate::page::Page;
    let event = |i: usize, note: String| AuditEvent {
        at: T0 + time::Duration::minutes(i as i64),
        run: Some(RunId::new(7)),
        actor: None,
        event: AuditKind::StepDone { step: i, note },
    };
    // Two long events and ten short ones: the long ones get what the short ones leave, which
    // is far more than an even share (MESSAGE_LIMIT / PER_PAGE).
    let mut events: Vec<AuditEvent> = (0..10).map(|i| event(i, "short".to_owned())).collect();
    events.push(event(10, format!("long {}", "x".repeat(1500))));
    events.push(event(11, format!("long {}", "y".repeat(1500))));
    events.reverse();
    let text = audit(&events, None, None, Page::FIRST, true);
    assert!(text.chars().count() <= MESSAGE_LIMIT, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 13, "{text}");
    for line in &lines[1..11] {
        assert!(line.ends_with("done: short"), "{line}");
    }
    let (x, y) = (lines[11], lines[12]);
    assert!(x.ends_with('…') && y.ends_with('…'), "{x}\n{y}");
    assert_eq!(x.chars().count(), y.chars().count());
    assert!(x.chars().count() > 500, "{x}");
    // A page that fits whole is shown whole.
    let mut fitting: Vec<AuditEvent> = events[2..].to_vec();
    fitting.insert(0, event(10, "z".repeat(1000)));
    let whole = audit(&fitting, None, None, Page::FIRST, false);
    assert!(whole.contains(&"z".repeat(1000)), "{whole}");
}

/// A full page of runs whose lines are long: every one is on it, and the pointer to the older
/// ones is not cut away.
#[test]
fn a_full_run_list_page_of_long_lines_keeps_every_run_and_the_pointer() {
    use crate::name::{ParamName, RunbookName};
    use crate::page::{PER_PAGE, Page};
    use crate::plan::Plan;
    use crate::runbook::RunbookRequest;
    let runs: Vec<Run> = (0..PER_PAGE)
        .map(|i| {
            let mut run = restart_run();
            run.id = RunId::new(i as u64 + 1);
            let request = RunbookRequest {
                runbook: RunbookName::parse("debug-silent-service").unwrap(),
                params: [(ParamName::parse("process").unwrap(), "p".repeat(300))].into(),
                hosts: Default::default(),
                maintenance: false,
            };
            run.replan(std::sync::Arc::new(Plan::runbook(request, vec![], vec![])));
            run
        })
        .collect();
    let text = run_list(&runs, Page::FIRST, true, T0);
    assert!(text.chars().count() <= MESSAGE_LIMIT, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), PER_PAGE + 1, "{text}");
    for (line, run) in lines.iter().zip(&runs) {
        assert!(line.contains(&format!(" {} · ", run.id)), "{line}");
    }
    assert_eq!(lines[PER_PAGE], "… older runs: /run list page:2");
}

#[test]
fn a_stopped_cluster_run_reports_the_nodes_as_the_cluster_shows_them() {
    let mut run = restart_run();
    // Its own steps say 10.0.0.11 was stopped, and the wait for it to leave failed.
    run.steps_mut()[0] = done("");
    run.steps_mut()[1] = done("");
    run.steps_mut()[2] = done("");
    run.steps_mut()[3] = StepState::Failed {
        at: T0,
        error: "gave up".into(),
        unchanged: false,
    };
    let node = |n: u8| NodeAddr::parse(&format!("10.0.0.{n}")).unwrap();
    // The cluster shows 10.0.0.13 gone and 10.0.0.11 still there: a wrong host mapping.
    let seen = Observation {
        nodes_joined: Some((2, 3)),
        missing: vec![node(13)],
        ..Observation::default()
    };
    let said = aftermath(&run, Some(&seen));
    assert_eq!(
        said,
        "left in place: shard allocation is disabled (persistent \
         cluster.routing.allocation.enable: none); as the cluster shows its nodes now: nodes \
         2/3 joined · not in the cluster: 10.0.0.13\n\
         to bring the cluster back: /cluster start cluster:logs"
    );
    assert!(!said.contains("10.0.0.11"), "{said}");
    // When the cluster does not answer, the report says what it rests on.
    let blind = aftermath(&run, None);
    assert!(
        blind.contains(
            "the cluster could not be asked where its nodes stand; this run stopped 10.0.0.11"
        ),
        "{blind}"
    );
    // All back: nothing left.
    let mut back = restart_run();
    for step in back.steps_mut() {
        *step = done("");
    }
    let all = Observation {
        nodes_joined: Some((3, 3)),
        ..Observation::default()
    };
    assert_eq!(aftermath(&back, Some(&all)), "nothing was left changed");
}

#[test]
fn a_deletion_whose_check_found_indices_left_does_not_claim_them_deleted() {
    use crate::index::{IndexName, PlannedIndex};
    use crate::plan::{ClusterDestructive, ClusterSafe, ClusterStep, Plan};
    let planned = |name: &str| PlannedIndex {
        name: IndexName::parse(name).unwrap(),
        uuid: None,
        bytes: None,
        created: None,
    };
    let plan = Plan::new(
        ProcedureRequest::IndicesDelete {
            cluster: crate::name::ClusterName::parse("logs").unwrap(),
            index: IndexName::parse("flog-2026.01.01").unwrap(),
        },
        vec![
            ClusterStep::Destructive(ClusterDestructive::DeleteIndices {
                indices: vec![planned("flog-2026.01.01")],
            }),
            ClusterStep::Safe(ClusterSafe::VerifyDeleted),
        ],
        vec![],
    )
    .unwrap();
    let mut run = Run::new(
        RunId::new(5),
        plan,
        person("alice"),
        ChannelId("c".into()),
        T0,
        time::Duration::minutes(30),
    );
    run.steps_mut()[0] = done("deleted 1");
    run.steps_mut()[1] = StepState::Failed {
        at: T0,
        error: "still present after the delete: flog-2026.01.01".into(),
        unchanged: false,
    };
    assert_eq!(
        aftermath(&run, None),
        "the cluster answered every DELETE, but the check after found some of the 1 selected \
         indices still there (above, counted per index)"
    );
    run.steps_mut()[1] = StepState::Pending;
    assert_eq!(aftermath(&run, None), "deleted 1 of 1 selected indices");
    // The chunk's DELETE removed none of it: the index was gone before it.
    run.steps_mut()[0] = StepState::Done {
        at: T0,
        note: "deleted 0; already gone before the delete (not an error): flog-2026.01.01".into(),
        deleted: Some(0),
    };
    assert_eq!(
        aftermath(&run, None),
        "deleted 0 of 1 selected indices; 1 was gone before its delete or re-created since the \
         plan and kept (the steps say which)"
    );
}

#[test]
fn a_scheduled_deletion_under_a_standing_approval_says_which_and_whose() {
    use crate::index::{IndexName, PlannedIndex};
    use crate::plan::{ClusterDestructive, ClusterStep, Plan};
    use crate::retention::RetentionDays;
    use crate::schedule::standing::{Scheduled, StandingGrant};
    use crate::schedule::{Bounds, ScheduleName, StandingId};
    let request = ProcedureRequest::IndicesPrune {
        cluster: crate::name::ClusterName::parse("logs").unwrap(),
        older_than: RetentionDays::parse("30").unwrap(),
        prefix: Some(IndexName::parse_prefix("flog-").unwrap()),
    };
    let plan = Plan::new(
        request.clone(),
        vec![ClusterStep::Destructive(
            ClusterDestructive::DeleteIndices {
                indices: vec![PlannedIndex {
                    name: IndexName::parse("flog-2026.09.01").unwrap(),
                    uuid: None,
                    bytes: None,
                    created: None,
                }],
            },
        )],
        vec![],
    )
    .unwrap();
    let grant = StandingGrant {
        id: StandingId::new(3),
        command: request.to_string(),
        bounds: Bounds {
            max_indices: 10,
            min_age_days: RetentionDays::parse("30").unwrap(),
            prefix: Some(IndexName::parse_prefix("flog-").unwrap()),
            max_total_bytes: None,
        },
        asked_by: person("alice"),
        approved_by: person("bob"),
        until: datetime!(2027-02-01 00:00 UTC),
    };
    let scheduled = Scheduled {
        schedule: ScheduleName::parse("nightly-prune").unwrap(),
        fire_at: T0,
        standing: Some(grant),
    };
    let run = Run::scheduled(
        RunId::new(7),
        plan,
        ScheduleName::parse("nightly-prune").unwrap().as_requester(),
        ChannelId("c".into()),
        T0,
        time::Duration::minutes(30),
        scheduled,
    );
    assert_eq!(run.state, RunState::Running, "covered: no per-run approval");
    let text = progress(&run, None, T0);
    assert!(
        text.contains("\nunder standing approval sa-3 (alice, bob, until 2027-02-01 00:00 UTC)"),
        "{text}"
    );
    // An ordinary run of the same plan says nothing of the kind.
    let ordinary = progress(&restart_run(), None, T0);
    assert!(!ordinary.contains("standing approval"), "{ordinary}");
}

/// A start stopped after its first node came up leaves one node up and no master: the report
/// says so, never "nothing was left changed".
#[test]
fn a_start_stopped_after_its_first_node_says_which_node_it_started() {
    let nodes: Vec<NodeAddr> = (11..=13)
        .map(|i| NodeAddr::parse(&format!("10.0.0.{i}")).unwrap())
        .collect();
    let facts = Facts::Cluster(ClusterFacts {
        inventory: nodes,
        version: None,
        membership: Membership::Unreachable,
    });
    let request = ProcedureRequest::ClusterStart {
        cluster: crate::name::ClusterName::parse("logs").unwrap(),
    };
    let plan = make_plan(&request, &facts).unwrap();
    let mut run = Run::new(
        RunId::new(4),
        plan,
        person("alice"),
        ChannelId("console".into()),
        T0,
        time::Duration::minutes(30),
    );
    run.steps_mut()[0] = done("started 10.0.0.11");
    assert_eq!(
        aftermath(&run, None),
        "left in place: the cluster could not be asked where its nodes stand; this run started \
         10.0.0.11\nto bring the cluster back: /cluster start cluster:logs"
    );
}

#[test]
fn help_says_what_each_procedure_waits_for_under_the_policy() {
    let policy = ConsentPolicy::parse([("cluster restart", "none")]).unwrap();
    let text = help(Some("cluster"), false, &policy);
    assert!(
        text.contains("stop the nodes one by one · approval: confirm\n"),
        "{text}"
    );
    assert!(text.contains("as one run · approval: none\n"), "{text}");
    assert!(
        text.ends_with("out of the deployment · approval: second-person"),
        "{text}"
    );
    assert!(
        text.contains("runs of a cluster\n"),
        "a command that starts no run: {text}"
    );
    let runbooks = help(Some("runbook"), false, &policy);
    assert!(
        runbooks.contains("approval: at the runbook's gates"),
        "{runbooks}"
    );
}

#[test]
fn audit_lines_are_timed_to_the_second() {
    use crate::audit::{AuditEvent, AuditKind};
    let at = |seconds| AuditEvent {
        at: T0 + time::Duration::seconds(seconds),
        run: Some(RunId::new(7)),
        actor: None,
        event: AuditKind::CancelRequested,
    };
    let text = audit(&[at(9), at(3)], None, None, crate::page::Page::FIRST, false);
    let times: Vec<&str> = text.lines().map(|l| &l[11..19]).collect();
    assert_eq!(times.len(), 2, "{text}");
    assert!(
        times[0] < times[1],
        "oldest first, told apart by their seconds: {text}"
    );
    assert!(
        times
            .iter()
            .all(|t| t.ends_with(":03") || t.ends_with(":09")),
        "{text}"
    );
}
