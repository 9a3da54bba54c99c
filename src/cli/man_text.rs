//! What the man pages say beyond `--help`: a DESCRIPTION and EXAMPLES for each page
//! (`tracectl man`, and the pages under `man/`).

/// The long description and the examples of one page.
pub struct PageText {
    /// Paragraphs separated by blank lines.
    pub description: &'static str,
    /// `(what it does, the command line)`.
    pub examples: &'static [(&'static str, &'static str)],
}

/// The text of the page of `verb` ("" for tracectl itself).
pub fn page_text(verb: &str) -> Option<PageText> {
    let (description, examples): (&str, &[(&str, &str)]) = match verb {
        "" => (
            "tracectl drives Linux ftrace through tracefs and decodes what it records. Its \
             verbs and options are trace-cmd's: list, start, set, stop, reset, show, stat, \
             record, report, extract, stream, snapshot and the rest, with trace-cmd's option \
             names and output layout. `tracectl perf` counts and samples with perf_event_open, \
             with perf's options, and decodes tracepoint samples with the same event model as \
             ftrace records.\n\n\
             The tracefs root is the live mount (found in /proc/mounts, mounted when missing), \
             a debugfs tracing directory, or a fixture tree recorded by `tracectl capture`, \
             given with --tracefs or TRACECTL_TRACEFS. A fixture tree is a recording: commands \
             that need a live kernel refuse it, and nothing on the host is read or written.\n\n\
             Every command that changes tracefs checks all its values first, so a failed \
             command changes nothing, and commands that run a program restore every file they \
             changed when they end, on errors and on Ctrl-C too. Instances that another tool \
             made are never touched.",
            &[
                ("List the scheduler's events", "tracectl list -e 'sched:*'"),
                (
                    "Record scheduler and interrupt events while a command runs, then print them as trace-cmd does",
                    "tracectl record -e sched -e irq ls -l && tracectl report",
                ),
                (
                    "Print the man page of a subcommand",
                    "tracectl man record",
                ),
            ],
        ),
        "list" => (
            "Lists what the kernel offers: events (-e, a glob or a regular expression matched \
             against system:event as trace-cmd does), tracers (-t), clocks (-C), trace options \
             (-o), functions that can be traced (-f), instances (-B), event systems (-s), and \
             with -e: an event's fields (-F), its whole format (--full), its filter (-l) or \
             triggers (-R). -O lists the plugin options that report understands and -c the \
             compressions a trace.dat can use.",
            &[
                ("Events whose name matches a regular expression", "tracectl list -e 'sched_sw.*'"),
                ("The fields of one event", "tracectl list -e sched:sched_switch -F"),
                ("The clocks, the current one in brackets", "tracectl list -C"),
            ],
        ),
        "start" => (
            "Resets the top level (or the instance given with -B) to the kernel's defaults, \
             then configures it and turns tracing on, and exits: the events keep being \
             recorded into the ring buffer until `tracectl stop` or `tracectl reset`. A -f \
             filter or -R trigger applies to the -e before it. Every value (options, CPU \
             masks, buffer sizes, filters checked against the event's format) is checked \
             before the first write, so a failed start changes nothing.",
            &[
                (
                    "Trace context switches away from non-idle tasks, and all irq events",
                    "tracectl start -e sched:sched_switch -f 'prev_pid != 0' -e irq",
                ),
                ("Then read what was recorded", "tracectl show"),
            ],
        ),
        "set" => (
            "Configures tracing like start, without the reset first: only the files that \
             the options name change, and every value is checked before the first write.",
            &[("Add the timer events to what is being traced", "tracectl set -e timer")],
        ),
        "stop" => (
            "Stops writing to the ring buffer (tracing_on = 0) of the top level or of the \
             instance given with -B. What was recorded stays and can be read with show or \
             extract.",
            &[("Stop, then save the buffers to a file", "tracectl stop && tracectl extract -o trace.dat")],
        ),
        "restart" => (
            "Starts writing to the ring buffer again (tracing_on = 1) of the top level or of \
             the instance given with -B, after `tracectl stop`; nothing else changes.",
            &[("Resume the top-level buffer", "tracectl restart")],
        ),
        "reset" => (
            "Puts the top level back to the kernel's defaults: nop tracer, no events, no \
             filters or triggers, the local clock, the default buffer size, tracing on. As \
             with trace-cmd, instances are left alone unless -B NAME or -a names them; -t \
             resets the top level as well, -d removes the named instances, and -b sets their \
             buffer size.",
            &[
                ("Reset the top level", "tracectl reset"),
                ("Reset and remove every instance too", "tracectl reset -a -d"),
            ],
        ),
        "clear" => (
            "Empties the ring buffer of the top level or of the instance given with -B; the \
             configuration (events, filters, tracer) stays as it is.",
            &[("Empty the buffer of instance foo", "tracectl clear -B foo")],
        ),
        "show" => (
            "Prints the trace text (the kernel's `trace` file), the live trace_pipe with -p, \
             or one control file (--tracing_on, --ftrace_filter, --trigger EVENT, ...). With \
             --json each line of the trace becomes one typed JSON object.",
            &[
                ("The trace so far", "tracectl show"),
                ("Events as they arrive, as JSON", "tracectl show -p --json"),
            ],
        ),
        "stat" => (
            "Prints the whole current state of the top level and of each instance: tracer, \
             enabled events with their filters and triggers, clock, options that differ from \
             the defaults, buffer sizes.",
            &[("What is set up right now", "tracectl stat")],
        ),
        "snapshot" => (
            "Works the snapshot buffer as trace-cmd snapshot does: -s takes a snapshot (swaps \
             the live buffer with the snapshot), -r clears it, -f frees it, -c CPU limits any \
             of them to one CPU, and without flags the snapshot is printed.",
            &[
                ("Snapshot CPU 1", "tracectl snapshot -c 1 -s"),
                ("Print the snapshot", "tracectl snapshot"),
            ],
        ),
        "marker" => (
            "Writes a line to trace_marker, where it is recorded among the events as a \
             print event.",
            &[("Mark the start of a test", "tracectl marker 'test 3 starts'")],
        ),
        "record" => (
            "Records events into a trace.dat file while a command runs (or until Ctrl-C), as \
             trace-cmd record does. The recording uses a private instance that is removed \
             when it ends, so the top level and other tools' instances stay as they are; -B \
             adds named instances as extra buffers. The command may follow the options with \
             or without `--`. It starts as soon as the events are armed: the kernel's symbols \
             and the event formats are read while it runs. The file is trace-cmd's format, v7 \
             with zstd by default (--file-version 6 for older readers), and trace-cmd report \
             reads it.",
            &[
                (
                    "Record the scheduler's events while ls runs",
                    "tracectl record -e sched ls -l",
                ),
                (
                    "Record openat system calls of one command into a named file",
                    "tracectl record -e syscalls:sys_enter_openat -o open.dat -- cat /etc/hostname",
                ),
            ],
        ),
        "report" => (
            "Prints a trace.dat file exactly as trace-cmd report does, byte for byte, with \
             the same options: -t nanoseconds, -l latency flags, -R raw fields, -F filters \
             (-v to invert), --cpu, --stat, -E, --first-event, --last-event, several -i \
             files merged by time, --ts-offset, instance buffers. --style kernel prints the \
             kernel's own trace layout instead, and --json one typed object per record.",
            &[
                ("Print trace.dat", "tracectl report"),
                (
                    "Only the context switches away from ls",
                    "tracectl report -i trace.dat -F 'sched_switch:prev_comm==\"ls\"'",
                ),
                ("One JSON object per record", "tracectl report --json | jq .event"),
            ],
        ),
        "stream" => (
            "Enables events and prints the records as the kernel writes them, decoded from \
             the raw ring-buffer pages, until Ctrl-C; every file changed is put back. With \
             --tracefs and a fixture tree it replays the tree's recorded pages instead.",
            &[("Watch the scheduler live", "tracectl stream -e sched")],
        ),
        "extract" => (
            "Writes what the ring buffers hold now into a trace.dat, with the event formats, \
             kallsyms and saved command lines. On a fixture tree, the tree's own metadata is \
             used.",
            &[("Save the buffers of the top level", "tracectl extract -o trace.dat")],
        ),
        "graph" => (
            "Runs a command (or watches a running process with -p for --duration seconds) \
             under the function_graph tracer, limited to one system call (--syscall) or to \
             functions given with -g, and prints the call graph in the kernel's layout. The \
             binary sub-buffers are read while the command runs, so a long run does not \
             overwrite its own start, and lost events are reported. --summary prints the \
             calls, total, self, average and longest time of each function by self time, \
             --folded the stacks weighted by self time for `tracectl flamegraph`, and --json \
             one object per outermost call with its callees nested. Every tracefs file it \
             changes is restored when it ends.",
            &[
                (
                    "The kernel's path for openat while cat opens a file",
                    "tracectl graph --syscall openat -- cat /etc/hostname",
                ),
                (
                    "Where a running process spends its time in vfs_read, for five seconds",
                    "tracectl graph --summary -g vfs_read -p 1234 --duration 5",
                ),
                (
                    "A flame graph of one command's system calls",
                    "tracectl graph --folded -g '__x64_sys_*' -- ls | tracectl flamegraph > ls.svg",
                ),
            ],
        ),
        "check-events" => (
            "Parses the format of every event the kernel offers, compiles its print fmt, and \
             lists those that fail and why.",
            &[("Check every event format", "tracectl check-events")],
        ),
        "capture" => (
            "Copies a live tracefs tree (the files a decoder needs: formats, headers, \
             kallsyms, saved command lines, options) into a fixture directory, and with -e \
             and a command also a recorded trace, so tests can replay it anywhere.",
            &[(
                "Capture a tree with the scheduler's events of one run of ls",
                "tracectl capture fixtures/sched -e sched -- ls",
            )],
        ),
        "perf" => (
            "perf_event counting and sampling with perf's option names: `tracectl perf stat` \
             counts events while a command runs, `record` samples into a perf.data file that \
             Debian's perf reads, `script` and `report` print a perf.data as perf script and \
             perf report --stdio do. Tracepoint payloads are decoded by the same event model \
             as ftrace records. Hardware counters that the machine lacks print <not \
             supported>, as perf prints them.",
            &[
                (
                    "Count context switches system-wide for half a second",
                    "tracectl perf stat -e sched:sched_switch,context-switches -a -- sleep 0.5",
                ),
                (
                    "Profile a command with call chains and print the hottest functions",
                    "tracectl perf record -g -F 999 -- ./spin && tracectl perf report",
                ),
                (
                    "A flame graph of the profile",
                    "tracectl perf script --folded | tracectl flamegraph > profile.svg",
                ),
            ],
        ),
        "completions" => (
            "Writes a completion script for bash, zsh or fish to standard output, generated \
             from the same definitions as the options, so it never drifts from them. \
             scripts/setup.sh installs the bash one where a completion directory exists.",
            &[(
                "Install bash completion",
                "tracectl completions bash > /usr/share/bash-completion/completions/tracectl",
            )],
        ),
        "flamegraph" => (
            "Draws a flame graph as a self-contained SVG (titles on hover, click to zoom, \
             search) from folded stacks, a perf.data, or a function_graph trace.dat, where \
             each function is weighed by its self time.",
            &[
                ("From a perf.data", "tracectl flamegraph perf.data > profile.svg"),
                (
                    "From folded stacks on standard input",
                    "tracectl perf script --folded | tracectl flamegraph > profile.svg",
                ),
            ],
        ),
        "man" => (
            "Prints the man page of tracectl or of one subcommand. On a terminal the page is \
             shown with man(1); otherwise the roff source is written, and --out DIR writes \
             every page into DIR.",
            &[
                ("Read the page of report", "tracectl man report"),
                ("Install every page", "tracectl man --out /usr/local/share/man/man1"),
            ],
        ),
        "convert" => (
            "Rewrites a trace.dat in another file version or compression, as trace-cmd \
             convert does; the records are kept as they are.",
            &[(
                "Make a v6 file that older tools read",
                "tracectl convert -i trace.dat -o old.dat --file-version 6",
            )],
        ),
        "split" => (
            "Cuts the top buffer of a trace.dat into smaller files by time, record count or \
             pages, once or until the end, over all CPUs or per CPU, as trace-cmd split \
             does; each part reports as trace-cmd's part does.",
            &[
                (
                    "Parts of at most 10000 records",
                    "tracectl split -i trace.dat -e 10000 -r",
                ),
                ("The records of CPU 1 only", "tracectl split -i trace.dat -C 1"),
                (
                    "Ten milliseconds from a time report printed",
                    "tracectl split -i trace.dat -m 10 604.400140",
                ),
            ],
        ),
        "dump" => (
            "Prints the sections of a trace.dat (headers, formats, kallsyms, printk formats, \
             command lines, options, the flyrecord layout) as trace-cmd dump does.",
            &[
                ("The file's layout", "tracectl dump trace.dat"),
                ("Everything in the file", "tracectl dump --all trace.dat"),
                ("Check that a file reads to its end", "tracectl dump -v trace.dat"),
            ],
        ),
        "options" => (
            "Lists the plugin options that report understands (-O), as trace-cmd options \
             does.",
            &[("The plugin options", "tracectl options")],
        ),
        "mem" => (
            "Summarizes the kmalloc and kfree events of a trace.dat per call site, as \
             trace-cmd mem does.",
            &[(
                "Record allocations of a command and summarize them",
                "tracectl record -e kmem ls && tracectl mem",
            )],
        ),
        "hist" => (
            "Prints a histogram of the call stacks recorded in a trace.dat, as trace-cmd hist \
             does.",
            &[("The histogram of trace.dat", "tracectl hist -i trace.dat")],
        ),
        "stack" => (
            "Starts, stops or shows the kernel's stack tracer (the deepest kernel stack seen), \
             as trace-cmd stack does.",
            &[("Start it, then show the deepest stack", "tracectl stack --start && tracectl stack")],
        ),
        "profile" => (
            "Records a command and prints report --profile's summary in one step, as \
             trace-cmd profile does.",
            &[("Profile ls", "tracectl profile ls -l")],
        ),
        _ => return None,
    };
    Some(PageText {
        description,
        examples,
    })
}

/// Roff text of one line: backslashes, dashes and a leading dot or quote escaped.
pub fn roff_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    if s.starts_with('.') || s.starts_with('\'') {
        out.push_str("\\&");
    }
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            _ => out.push(c),
        }
    }
    out
}

/// The EXAMPLES section in roff.
pub fn examples_roff(examples: &[(&str, &str)]) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    for (what, cmd) in examples {
        out.push_str(".PP\n");
        out.push_str(&roff_escape(what));
        out.push_str(":\n.PP\n.RS 4\n.nf\n");
        out.push_str(&roff_escape(cmd));
        out.push_str("\n.fi\n.RE\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_roff_would_read_as_requests() {
        assert_eq!(roff_escape(".x -e a\\b"), "\\&.x \\-e a\\eb");
        assert_eq!(roff_escape("'q"), "\\&'q");
    }
}
