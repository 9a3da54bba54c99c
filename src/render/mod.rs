//! Sinks: kernel-style text, trace-cmd-style text, JSON lines.

pub mod comm;
pub mod flamegraph;
pub mod graph;
pub mod graph_fold;
pub mod json;
pub mod kernel;
pub mod pairs;
pub mod perf_callgraph;
pub mod perf_dump;
pub mod perf_header;
pub mod perf_report;
pub mod perf_report_fields;
pub mod perf_report_filter;
pub mod perf_report_tasks;
pub mod perf_report_threads;
pub mod perf_script;
pub mod perf_script_fields;
pub mod perf_sideband;
pub mod perf_stat;
pub mod perf_stat_metric_only;
pub mod plugins;
pub mod tracecmd;

pub use comm::Comms;
pub use kernel::{latency_chars, CommonFields, KernelStyle};
pub use pairs::FieldPairs;
