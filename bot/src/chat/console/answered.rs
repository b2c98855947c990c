//! The runs a console's answers showed waiting for a decision. A run's first progress message
//! says the same (waiting for whom, until when, how to decide it), so the console that answered
//! leaves it out; the next one, once something changed, is shown.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use opsbot_commands::name::RunId;
use opsbot_commands::render::ProgressView;

/// Filled by answers, emptied by the first progress message of each run.
#[derive(Debug, Default)]
pub(super) struct Answered(Mutex<HashSet<RunId>>);

impl Answered {
    /// Remembers the run an answer showed waiting, if it showed one. Its first message may come
    /// after further answers: each run is remembered until its first message.
    pub(super) fn showed(&self, run: Option<RunId>) {
        if let Some(run) = run {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(run);
        }
    }

    /// Whether a run's first message only repeats what its answer showed: it still shows the
    /// run waiting. Either way the run is forgotten.
    pub(super) fn repeats(&self, first: FirstPost) -> bool {
        let answered = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&first.run);
        answered && first.waiting
    }
}

/// A run's first progress message (a post, not an edit): what [`Answered::repeats`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FirstPost {
    run: RunId,
    waiting: bool,
}

impl FirstPost {
    pub(super) fn of(view: &ProgressView) -> Self {
        Self {
            run: view.run,
            waiting: view.plan.is_some(),
        }
    }
}
