//! The three forms `fleet target` prints its reports in: `text` (one line per cluster, for people), and `json` and
//! `yaml` (the same facts as data, for scripts). Every form is a pure function of the reports, so the output is
//! byte-identical from run to run.

use std::fmt::Write;

use serde_json::{Value, json};

use super::report::{BundleReport, policy_summary};
use crate::commands::yaml_out;

/// The output formats of `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Yaml,
    Json,
}

/// Renders every report in `format`; `now` is the scheduling time.
pub fn render(format: Format, now: i64, reports: &[BundleReport]) -> String {
    match format {
        Format::Text => text(now, reports),
        Format::Json => {
            let mut out = serde_json::to_string_pretty(&data(now, reports)).unwrap_or_default();
            out.push('\n');
            out
        }
        Format::Yaml => yaml_out::to_yaml(&data(now, reports)),
    }
}

fn text(now: i64, reports: &[BundleReport]) -> String {
    let mut out = format!("# scheduled at time {now}\n");
    for report in reports {
        let _ = writeln!(
            out,
            "\nbundle {} (namespace {})",
            report.name, report.namespace
        );
        match &report.placement {
            Some(policy) => {
                let _ = writeln!(out, "  placement: {}", policy_summary(policy));
            }
            None => out.push_str("  placement: none (every targeted cluster gets the bundle)\n"),
        }
        let _ = writeln!(out, "  selected: {}", report.selected.len());
        for s in &report.selected {
            let _ = writeln!(out, "    {}", s.line);
        }
        let _ = writeln!(out, "  not selected: {}", report.unselected.len());
        for u in &report.unselected {
            let _ = writeln!(out, "    skip    {}: {}", u.cluster, u.message);
        }
        match &report.scheduled {
            Some(c) => {
                let status = if c.fulfilled { "True" } else { "False" };
                let _ = writeln!(out, "  Scheduled: {status} ({}): {}", c.reason, c.message);
            }
            None => out.push_str("  Scheduled: not applicable (no placement block)\n"),
        }
        if let Some(at) = report.requeue_at {
            let _ = writeln!(out, "  schedule again at time {at} (a toleration runs out)");
        }
        for warning in &report.warnings {
            let _ = writeln!(out, "  warning: {warning}");
        }
    }
    out
}

fn data(now: i64, reports: &[BundleReport]) -> Value {
    json!({
        "now": now,
        "bundles": reports.iter().map(bundle_data).collect::<Vec<_>>(),
    })
}

fn bundle_data(report: &BundleReport) -> Value {
    let selected: Vec<Value> = report
        .selected
        .iter()
        .map(|s| {
            let mut entry = json!({
                "cluster": s.cluster.to_string(),
                "target": s.target,
                "customizations": s.customizations,
                "deferred": s.deferred,
                "deploymentID": s.deployment_id,
            });
            if let (Some(score), Some(map)) = (s.score, entry.as_object_mut()) {
                map.insert("score".into(), json!(score));
            }
            entry
        })
        .collect();
    let unselected: Vec<Value> = report
        .unselected
        .iter()
        .map(|u| json!({"cluster": u.cluster, "reason": u.kind.name(), "message": u.message}))
        .collect();
    let scheduled = report.scheduled.as_ref().map(|c| {
        json!({
            "status": if c.fulfilled { "True" } else { "False" },
            "reason": c.reason,
            "message": c.message,
            "wanted": c.wanted,
            "found": c.found,
        })
    });
    let mut out = json!({
        "name": report.name,
        "namespace": report.namespace,
        "placement": report.placement,
        "selected": selected,
        "unselected": unselected,
        "scheduled": scheduled,
        "warnings": report.warnings,
    });
    if let (Some(at), Some(map)) = (report.requeue_at, out.as_object_mut()) {
        map.insert("requeueAt".into(), json!(at));
    }
    out
}
