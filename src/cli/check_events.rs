//! `tracectl check-events`.

use std::io::Write;

use anyhow::{Context as _, Result};
use tracectl::event::Registry;

use super::common::Context;

/// Options of `tracectl check-events`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also list events whose `print fmt` the engine cannot evaluate (they print as
    /// `field=value` pairs); these do not make the command fail
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Print the result as one JSON object (every event that fails, prints as
    /// `field=value` pairs, or whose trace text `show --json` cannot read back, with its
    /// reason)
    #[arg(long)]
    pub json: bool,
}

/// Run `tracectl check-events`: parse every `events/<system>/<event>/format` under the
/// root, list the failures with their reason, exit 1 when any fails.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let t = ctx.tracefs()?;
    let mut reg = Registry::from_source(&t)
        .with_context(|| format!("cannot index the events under {}", t.root().display()))?;
    let failures = reg.check_all();
    // What a stream would print: enum constants the kernel left as names get their values
    // from the tree's host/enums or the running kernel's BTF, as `stream` and `report` do.
    tracectl::session::resolve_enum_constants(&t, &mut reg, &[]);
    let total = reg.events().count();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let failed: Vec<serde_json::Value> = failures
            .iter()
            .map(|f| serde_json::json!({"event": f.event.to_string(), "reason": f.message.to_string()}))
            .collect();
        let mut fields = Vec::new();
        let mut raw = Vec::new();
        for (system, name, _) in reg.events() {
            let Some(s) = reg.by_name(system, name) else {
                continue;
            };
            let event = format!("{system}:{name}");
            if let Some(why) = s.print_fallback() {
                fields.push(serde_json::json!({"event": event, "reason": why}));
            }
            if let Some(why) = s.text_pattern().not_invertible() {
                raw.push(serde_json::json!({"event": event, "reason": why}));
            }
        }
        super::common::print_json(&serde_json::json!({
            "total": total,
            "parsed": total - failures.len(),
            "failed": failed,
            "field_pairs": fields,
            "text_not_invertible": raw,
        }))?;
        return Ok(if failures.is_empty() { 0 } else { 1 });
    }
    for f in &failures {
        writeln!(out, "FAIL {}: {}", f.event, f.message)?;
    }
    let mut fallbacks = 0;
    for (system, name, _) in reg.events() {
        if let Some(s) = reg.by_name(system, name) {
            if let Some(why) = s.print_fallback() {
                fallbacks += 1;
                if args.verbose {
                    writeln!(
                        out,
                        "FIELDS {system}:{name}: print fmt not evaluated ({why})"
                    )?;
                }
            }
        }
    }
    writeln!(
        out,
        "{} of {total} event formats parsed; {} failed; {fallbacks} print as field=value pairs",
        total - failures.len(),
        failures.len()
    )?;
    Ok(if failures.is_empty() { 0 } else { 1 })
}
