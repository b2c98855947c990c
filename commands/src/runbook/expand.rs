//! From a runbook and an operator's values to a plan: values checked, `each` blocks unrolled
//! host by host, parameters filled in, and every step after the approval gate destructive.

use std::collections::{BTreeMap, BTreeSet};

use super::template::Template;
use super::{Inventory, Runbook, RunbookError, RunbookRequest, StepKind, StepSpec};
use crate::name::HostName;
use crate::plan::{HostCommand, HostDestructive, HostSafe, HostStep, HostWait, OutputWait, Plan};

/// One step to plan, with the host an `each` block bound.
struct Unrolled<'a> {
    spec: &'a StepSpec,
    host: Option<&'a HostName>,
}

impl Runbook {
    /// Checks `given` (name, value) pairs against the parameters and resolves the hosts the
    /// run will touch.
    pub fn request(
        &self,
        given: &[(&str, &str)],
        inventory: &Inventory,
    ) -> Result<RunbookRequest, RunbookError> {
        let mut params = BTreeMap::new();
        for (name, value) in given {
            let Some(param) = self.param(name) else {
                return Err(RunbookError::UnknownParam {
                    runbook: self.name.clone(),
                    param: crate::echo::visible(name, 32),
                    usage: self.usage(),
                });
            };
            param
                .check(value, inventory)
                .map_err(|why| RunbookError::BadValue {
                    param: param.name.clone(),
                    why,
                })?;
            params.insert(param.name.clone(), (*value).to_owned());
        }
        for param in &self.params {
            if params.contains_key(&param.name) {
                continue;
            }
            let Some(default) = &param.default else {
                return Err(RunbookError::MissingParam {
                    runbook: self.name.clone(),
                    param: param.name.clone(),
                    usage: self.usage(),
                });
            };
            params.insert(param.name.clone(), default.clone());
        }
        let mut request = RunbookRequest {
            runbook: self.name.clone(),
            params,
            hosts: BTreeSet::new(),
            maintenance: self.maintenance,
        };
        request.hosts = self
            .steps(&request, inventory)?
            .iter()
            .filter_map(|step| match step {
                HostStep::Safe(HostSafe::HostCommand(c))
                | HostStep::Destructive(HostDestructive::HostCommand(c)) => Some(c.host.clone()),
                HostStep::Wait(HostWait::HostOutput(w)) => Some(w.host.clone()),
                HostStep::Safe(HostSafe::Confirm { .. }) | HostStep::Gate { .. } => None,
            })
            .collect();
        Ok(request)
    }

    /// The plan of `request`; its request is the one given, whose hosts were resolved by
    /// [`Self::request`].
    pub fn plan(
        &self,
        request: &RunbookRequest,
        inventory: &Inventory,
    ) -> Result<Plan, RunbookError> {
        Ok(Plan::runbook(
            request.clone(),
            self.steps(request, inventory)?,
            vec![format!("runbook `{}`: {}", self.name, self.description)],
        ))
    }

    /// The steps of `request`, bound to its values and unrolled over the inventory.
    fn steps(
        &self,
        request: &RunbookRequest,
        inventory: &Inventory,
    ) -> Result<Vec<HostStep>, RunbookError> {
        let values: BTreeMap<&str, &str> = request
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut steps = Vec::new();
        let mut gated = false;
        for Unrolled { spec, host } in self.unroll(inventory) {
            let mut values = values.clone();
            if let Some(host) = host {
                values.insert("host", host.as_str());
            }
            let title = spec.title.clone();
            let action = match &spec.kind {
                StepKind::Run {
                    on,
                    argv,
                    stdin,
                    timeout,
                    exit_codes,
                    output,
                    idempotent,
                    post_output,
                } => {
                    let command = HostCommand {
                        host: self.host(on, &values, inventory)?,
                        argv: argv.iter().map(|w| w.bind(&values)).collect(),
                        stdin: stdin.as_ref().map(|w| w.bind(&values)),
                        timeout_secs: timeout.as_secs(),
                        exit_codes: exit_codes.clone(),
                        output: output.as_ref().map(|r| r.as_str().to_owned()),
                        idempotent: *idempotent,
                        post_output: *post_output,
                        title,
                    };
                    if gated {
                        HostStep::Destructive(HostDestructive::HostCommand(command))
                    } else {
                        HostStep::Safe(HostSafe::HostCommand(command))
                    }
                }
                StepKind::Wait {
                    on,
                    argv,
                    until,
                    interval,
                    timeout,
                } => HostStep::Wait(HostWait::HostOutput(OutputWait {
                    host: self.host(on, &values, inventory)?,
                    argv: argv.iter().map(|w| w.bind(&values)).collect(),
                    until: until.as_str().to_owned(),
                    interval_secs: interval.as_secs(),
                    timeout_secs: timeout.as_secs(),
                    title,
                })),
                StepKind::Confirm { prompt } => HostStep::Safe(HostSafe::Confirm {
                    prompt: prompt.bind(&values),
                }),
                StepKind::Approval { reason } => {
                    gated = true;
                    HostStep::Gate {
                        reason: reason.clone(),
                    }
                }
            };
            steps.push(action);
        }
        Ok(steps)
    }

    /// The steps in the order they run: consecutive steps of one `each` group form a block,
    /// repeated for every host of the group in inventory order.
    fn unroll<'a>(&'a self, inventory: &'a Inventory) -> Vec<Unrolled<'a>> {
        let mut unrolled = Vec::new();
        let mut rest = self.steps.as_slice();
        while let Some(first) = rest.first() {
            let Some(group) = &first.each else {
                unrolled.push(Unrolled {
                    spec: first,
                    host: None,
                });
                rest = &rest[1..];
                continue;
            };
            let len = rest
                .iter()
                .take_while(|s| s.each.as_ref() == Some(group))
                .count();
            let (block, after) = rest.split_at(len);
            for host in inventory.group(group).unwrap_or_default() {
                unrolled.extend(block.iter().map(|spec| Unrolled {
                    spec,
                    host: Some(host),
                }));
            }
            rest = after;
        }
        unrolled
    }

    /// The host a step runs on: its `on` with values in place, which must name an inventory host.
    fn host(
        &self,
        on: &Template,
        values: &BTreeMap<&str, &str>,
        inventory: &Inventory,
    ) -> Result<HostName, RunbookError> {
        let text = on.bind(values).to_string();
        match HostName::parse(&text) {
            Ok(host) if inventory.contains(&host) => Ok(host),
            _ => Err(RunbookError::NotAHost {
                runbook: self.name.clone(),
                value: crate::echo::visible(&text, 40),
            }),
        }
    }
}
