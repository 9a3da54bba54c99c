//! Survey of the live kernel's formats: every helper function a `print fmt` calls must be
//! one the engine knows (`tracectl::event::HELPERS`), and the formats that still print as
//! `field=value` pairs are listed with their reason.

use crate::support::skips;

use std::collections::BTreeMap;
use std::path::Path;

use tracectl::event::{Registry, HELPERS};
use tracectl::tracefs::Tracefs;

use crate::support::live::TRACEFS as LIVE;

/// Names called in a print fmt, outside string literals.
fn calls(fmt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let mut j = i;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if b.get(j) == Some(&b'(') {
                out.push(fmt[s..i].to_string());
            }
            continue;
        }
        i += 1;
    }
    out
}

#[test]
fn survey_helpers_of_every_live_format() {
    if !nix::unistd::geteuid().is_root() || !Path::new(LIVE).join("events/header_page").exists() {
        skips::skip(format!("needs root and tracefs at {LIVE}"));
        return;
    }
    let t = Tracefs::at(LIVE);
    let reg = Registry::from_source(&t).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut fallbacks = Vec::new();
    for (system, name, _) in reg.events() {
        let s = reg
            .by_name(system, name)
            .unwrap_or_else(|| panic!("{system}:{name} does not parse"));
        for c in calls(&s.print_fmt) {
            *seen.entry(c).or_default() += 1;
        }
        if let Some(why) = s.print_fallback() {
            fallbacks.push(format!("{system}:{name}: {why}"));
        }
    }
    eprintln!("helpers seen in {} formats:", reg.events().count());
    for (name, n) in &seen {
        eprintln!(
            "  {name:32} {n:5} {}",
            if HELPERS.contains(&name.as_str()) {
                ""
            } else {
                "(not a helper)"
            }
        );
    }
    eprintln!("{} formats print as field=value pairs:", fallbacks.len());
    for f in &fallbacks {
        eprintln!("  {f}");
    }
    // Calls in a print fmt that are not helpers are statement expressions of a few
    // drivers (trace_seq_printf inside `({ ... })`) or arch functions; everything else
    // must be known.
    let allowed_unknown = [
        "trace_seq_printf",
        "trace_seq_buffer_ptr",
        "mc_event_error_type",
        "__builtin_expect",
    ];
    let unknown: Vec<_> = seen
        .keys()
        .filter(|n| {
            n.starts_with("__")
                && !HELPERS.contains(&n.as_str())
                && !allowed_unknown.contains(&n.as_str())
        })
        .collect();
    assert!(
        unknown.is_empty(),
        "helpers the engine does not know: {unknown:?}"
    );
    // The survey on 6.18 found 43 formats the engine cannot evaluate (unexpanded enum
    // constants, vmemmap_base, kvm's trace_seq_printf blocks); more means a regression.
    assert!(
        fallbacks.len() <= 43,
        "{} formats fall back",
        fallbacks.len()
    );
}
