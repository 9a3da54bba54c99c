//! Deeply nested `print fmt` expressions: read up to the documented limits (further than
//! trace-cmd's 5,000 parentheses), refused with a message past them, and never a stack
//! overflow in any pass (parse, compile, evaluate, drop), on a thread with the default
//! 2 MiB stack as a report's decoding threads have.

use tracectl::event::{PrintEnv, PrintStyle, Record, Schema};

const FORMAT: &str = "name: sched_wakeup
ID: 300
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int pid;\toffset:8;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:12;\tsize:4;\tsigned:1;

print fmt: \"pid=%d prio=%d\", ARG, REC->prio
";

/// The text of a record (pid 7, prio 120) in both styles, on a 2 MiB thread; the
/// fallback reason when the print fmt was not compiled.
fn run(arg: String) -> (Vec<String>, Option<String>) {
    std::thread::Builder::new()
        .stack_size(3 << 19)
        .spawn(move || {
            let text = FORMAT.replace("ARG", &arg);
            let schema = Schema::parse("sched", &text, 8).expect("the format parses");
            let mut data = vec![0u8; 16];
            data[..2].copy_from_slice(&300u16.to_le_bytes());
            data[8..12].copy_from_slice(&7i32.to_le_bytes());
            data[12..16].copy_from_slice(&120i32.to_le_bytes());
            let rec = Record {
                cpu: 0,
                ts: 0,
                data: &data,
            };
            let mut lines = Vec::new();
            for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
                let env = PrintEnv {
                    kallsyms: None,
                    printk: None,
                    functions: None,
                    endian: tracectl::endian::Endianness::Little,
                    long_size: 8,
                    hz: None,
                    style,
                    time_in_ns: true,
                };
                let mut out = Vec::new();
                schema.write_text(&rec, &env, &mut out);
                lines.push(String::from_utf8_lossy(&out).into_owned());
                out.clear();
                schema.write_text_unplanned(&rec, &env, &mut out);
                lines.push(String::from_utf8_lossy(&out).into_owned());
            }
            let reason = schema.print_fallback().map(str::to_string);
            drop(schema);
            (lines, reason)
        })
        .unwrap()
        .join()
        .expect("no stack overflow or panic")
}

const MAX_NESTING: usize = 10_000;
const MAX_HEIGHT: usize = 128;

fn assert_prints(arg: String, pid: &str) {
    let (lines, reason) = run(arg);
    assert_eq!(reason, None);
    for l in lines {
        assert_eq!(l, format!("pid={pid} prio=120"));
    }
}

fn assert_refused(arg: String, why: &str) {
    let (_, reason) = run(arg);
    let reason = reason.expect("refused");
    assert!(reason.contains(why), "{reason}");
}

#[test]
fn parentheses_nest_to_the_limit_and_no_further() {
    // trace-cmd reads 5,000.
    for n in [5_000, MAX_NESTING - 1] {
        assert_prints(format!("{}REC->pid{}", "(".repeat(n), ")".repeat(n)), "7");
    }
    let n = MAX_NESTING + 1;
    assert_refused(
        format!("{}REC->pid{}", "(".repeat(n), ")".repeat(n)),
        "more than 10000 levels deep",
    );
    // Unclosed: the same message, not a stack overflow.
    assert_refused("(".repeat(1_000_000), "more than 10000 levels deep");
    assert_refused("[".repeat(1_000_000), "");
    assert_refused("{".repeat(1_000_000), "more than 10000 levels deep");
}

#[test]
fn prefix_operators_and_casts_nest_to_the_limit() {
    let h = MAX_HEIGHT - 1;
    assert_prints(format!("{}REC->pid", "!!".repeat(h / 2)), "1");
    // An odd count of `~` and `-` (the tree is one taller than the operators).
    assert_prints(format!("{}REC->pid", "~".repeat(h - 2)), "-8");
    assert_prints(format!("{}REC->pid", "(int)".repeat(h - 1)), "7");
    assert_prints(format!("{}REC->pid", "- ".repeat(h - 2)), "-7");
    assert_refused(
        format!("{}REC->pid", "~".repeat(MAX_HEIGHT)),
        "more than 128 operations deep",
    );
    assert_refused(format!("{}REC->pid", "(int)".repeat(1_000_000)), "deep");
    assert_refused(format!("{}REC->pid", "- ".repeat(1_000_000)), "deep");
    assert_refused(format!("{}REC->pid", "sizeof ".repeat(1_000_000)), "deep");
}

#[test]
fn operator_chains_grow_to_the_limit() {
    let h = MAX_HEIGHT - 2;
    assert_prints(
        format!("REC->pid{}", " + 1".repeat(h)),
        &(7 + h).to_string(),
    );
    assert_prints(format!("REC->pid{}", " * 1".repeat(h)), "7");
    assert_prints(
        format!("{}REC->pid", "1 ? ".repeat(h)) + &" : 0".repeat(h),
        "7",
    );
    assert_prints(
        format!("REC->pid{}", " + (1)".repeat(h)),
        &(7 + h).to_string(),
    );
    for chain in [" + 1", " ? 1 : 2", "[0]", ".x", "->x"] {
        assert_refused(format!("REC->pid{}", chain.repeat(1_000_000)), "deep");
    }
    assert_refused(format!("{}REC->pid", "1 ? ".repeat(1_000_000)), "deep");
    // Calls and tables: each level is a node.
    assert_refused(
        format!(
            "{}REC->pid{}",
            "__print_symbolic(".repeat(MAX_HEIGHT),
            ")".repeat(MAX_HEIGHT)
        ),
        "deep",
    );
    assert_refused(
        format!("{}1{}", "{ ".repeat(MAX_HEIGHT), " }".repeat(MAX_HEIGHT)),
        "deep",
    );
}

#[test]
fn a_statement_expression_of_deep_initialisers_is_bounded() {
    let deep = format!("{}REC->pid", "~".repeat(MAX_HEIGHT - 3));
    assert_prints(format!("({{ int a = {deep}; a; }})"), "-8");
    assert_refused(
        format!("({{ int a = {}REC->pid; a; }})", "~".repeat(MAX_HEIGHT)),
        "deep",
    );
}
