//! Ctrl-C at the console. The console is the bot while it runs: stopping it in the middle of a
//! run leaves the run where it is (a restart with every node down). So the first Ctrl-C says
//! which runs are executing and what stopping now would leave; only a second one stops, and
//! says that they resume at the next start.

use opsbot_commands::name::RunId;
use opsbot_commands::render;

use crate::engine::Engine;

/// What the first Ctrl-C says, or `None` when no run is executing and the console may stop
/// at once.
pub(super) fn warning(engine: &Engine) -> Option<String> {
    let executing = match engine.executing() {
        Ok(executing) => executing,
        Err(error) => {
            return Some(format!(
                "the store cannot say which runs are executing ({error}); Ctrl-C again stops \
                 the console all the same"
            ));
        }
    };
    if executing.is_empty() {
        return None;
    }
    let now = engine.clock().now();
    let mut text = String::from(
        "Ctrl-C: runs are executing here, and stopping now leaves them where they are:",
    );
    for id in &executing {
        let shown = match engine.store().run(*id) {
            Ok(Some(run)) => format!(
                "{}\n  if stopped now: {}",
                render::progress(&run, None, now),
                render::aftermath(&run, None)
            ),
            _ => id.to_string(),
        };
        text.push_str(&format!("\n{shown}"));
    }
    text.push_str(&format!(
        "\nCtrl-C again stops the console now; {} resume{} at the next start of opsbot",
        names(&executing),
        if executing.len() == 1 { "s" } else { "" }
    ));
    Some(text)
}

/// Why the console stopped (`by` a second Ctrl-C, or SIGTERM), for the runs it leaves: the
/// error `opsbot console` ends with.
pub(super) fn stopped(engine: &Engine, by: &str) -> anyhow::Error {
    match engine.executing() {
        Ok(executing) if !executing.is_empty() => anyhow::anyhow!(
            "stopped by {by}: {} resume{} at the next start of opsbot (console or run)",
            names(&executing),
            if executing.len() == 1 { "s" } else { "" }
        ),
        _ => anyhow::anyhow!("stopped by {by}"),
    }
}

/// `r-1`, `r-1 and r-2`, `r-1, r-2 and r-3`.
pub(super) fn names(runs: &[RunId]) -> String {
    let ids: Vec<String> = runs.iter().map(RunId::to_string).collect();
    match ids.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
