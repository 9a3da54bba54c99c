//! tracectl's integration tests: one crate, one module per area (the file names say what
//! each covers: `*_live` ones write the live tracefs and need root, `vm_*` ones boot
//! Debian kernels under qemu with `TRACECTL_VM=1`, the rest run anywhere), sharing
//! `support`. Run one area with `cargo test --test it MODULE::`.

mod support;

mod btf_live;
mod capture_graph_live;
mod capture_live;
mod cli_command_args;
mod cli_fixture;
mod cli_hints;
mod cli_list_regex;
mod cli_replay_trees;
mod cli_snapshot;
mod completions;
mod control_live;
mod control_vm;
mod dat_corrupt_live;
mod dat_read_live;
mod dat_synth;
mod dat_write_live;
mod event_alloc;
mod event_check_events;
mod event_fixture_oracle;
mod event_live_oracle;
mod event_mutations;
mod event_printfmt;
mod event_specs;
mod event_survey;
mod failed_start;
mod flamegraph;
mod flamegraph_funcgraph;
mod list_details_live;
mod live_trace_live;
mod merge_order;
mod oracle_context_flags;
mod oracle_fixtures;
mod oracle_graph;
mod oracle_live;
mod perf_report;
mod perf_script;
mod perf_script_live;
mod private_instances;
mod record_keep_live;
mod record_live;
mod record_opts_live;
mod report_dropped;
mod report_errors;
mod report_first_last;
mod report_funcgraph;
mod report_instances_live;
mod report_layout_live;
mod report_session;
mod report_time_shift_live;
mod report_tracecmd_live;
mod reset_semantics;
mod ring_cli;
mod ring_fixture;
mod robust_deep_print_fmt;
mod stream_opts_live;
mod tracecmd_goldens;
mod tracefs_ledger;
mod tree_readonly;
mod value_checks_live;
mod vm_capture_graph;
mod vm_kernels;
